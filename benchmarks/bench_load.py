"""Remote agents under load, and one client's round trips: our server beside the TypeScript SDK 2.4.0's.

Load: ``--clients`` clients of the official TypeScript SDK (``bench_load_client.mjs``, one node
process) connect at once over Streamable HTTP or WebSocket, open a session each, then prompt
together; each prompt streams ``--updates`` updates stamped with the time the agent sent them.
Printed per server and transport: updates per second (first prompt to last update), the latency
of an update at p50 and p99 (sent by the agent -> handled by the client), and the server's peak
RSS.  The servers are ``bench_rpc_agent.py serve`` (uvicorn, no WebSocket compression) and
``bench_rpc_agent.mjs serve`` (the SDK's ``AcpServer`` on node http + ws), a fresh process per
pass; with uvloop installed, a third row serves ours on uvloop's event loop.

Round trip: ``session/new`` called back to back by one client, each implementation's client
against its own agent (Python: ``connect_to_agent`` over a child's stdio, ``connect_http``,
``connect_websocket``; TypeScript: ``bench_rpc_client.mjs``), p50 and p99 of one call.

Each measure runs ``--passes`` times per side, the sides taking turns (which goes first
alternates), and the median pass is printed: a burst of load from the rest of the machine then
hits both alike.  Over WebSocket a fourth row serves ours with uvicorn's default compression
(``permessage-deflate``, which the ``ws`` client offers): what the issue 34 probe measured.

    .venv/bin/python benchmarks/bench_load.py                 # 200 clients x 500 updates, 3 passes
    .venv/bin/python benchmarks/bench_load.py --clients 50 --updates 200 --passes 1 --round-trips 500
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib.util
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from bench_rpc import SDK, BenchClient, Listening, node_json, node_ready, python_client  # noqa: E402

HAS_UVLOOP = importlib.util.find_spec("uvloop") is not None


def run_loop(work: Any, uvloop: bool) -> Any:
    if uvloop:
        import uvloop as fast

        return fast.run(work)
    return asyncio.run(work)


def rss_peak_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def server_command(side: str) -> list[str]:
    if side == "ts":
        return ["node", str(BENCH / "bench_rpc_agent.mjs"), SDK, "serve"]
    command = [sys.executable, str(BENCH / "bench_rpc_agent.py"), "serve"]
    return command + {"uvloop": ["uvloop"], "deflate": ["--ws-deflate"]}.get(side, [])


def load_pass(transport: str, clients: int, updates: int, side: str) -> dict[str, float]:
    """One load run against a fresh server: updates/s, p50 and p99 in ms, peak RSS in MiB."""
    with Listening(server_command(side)) as server:
        url = f"{transport}://127.0.0.1:{server.port}/acp"
        found = run_load(url, transport, clients, updates)
        rss = rss_peak_kib(server.process.pid) / 1024
    return {**found, "rss": rss}


def run_load(url: str, transport: str, clients: int, updates: int) -> dict[str, float]:
    """bench_load_client.mjs against ``url``: updates/s, p50 and p99 (ms), and the clients that failed
    (their first error is printed: the TypeScript client's own fetch fails under load on a busy machine)."""
    what = f"{transport} {url}"
    result = node_json("bench_load_client.mjs", transport, url, str(clients), str(updates))
    if result["failures"]:
        print(f"  ({what}: {result['failures']} clients failed: {result['failure']})", flush=True)
    rate = result["updates"] / result["seconds"] if result["seconds"] > 0 else 0.0
    return {"rate": rate, "p50": result["p50"], "p99": result["p99"], "failed": result["failures"]}


async def python_round_trips(transport: str, calls: int, url: str, uvloop: bool) -> dict[str, float]:
    """p50 and p99 (µs) of ``session/new`` from our client to our agent (stdio: both on uvloop, or not)."""
    loop = ["uvloop"] if uvloop else []
    connection, spawned = await python_client(transport, BenchClient(0), url, *loop)
    times: list[float] = []
    clock = time.perf_counter
    for _ in range(calls):
        started = clock()
        await connection.new_session(cwd="/w")
        times.append(clock() - started)
    await connection.close()
    if spawned is not None:
        await spawned.__aexit__(None, None, None)
    times.sort()
    return {
        "p50": times[len(times) // 2] * 1e6,
        "p99": times[min(len(times) - 1, int(len(times) * 0.99))] * 1e6,
    }


def typescript_round_trips(transport: str, calls: int, target: list[str]) -> dict[str, float]:
    result = node_json("bench_rpc_client.mjs", transport, str(calls), "0", *target)
    return {"p50": result["roundTripP50"], "p99": result["roundTripP99"]}


def round_trip_pass(transport: str, calls: int, ports: dict[str, int], side: str) -> dict[str, float]:
    if side == "ts":
        target = (
            ["node", str(BENCH / "bench_rpc_agent.mjs"), SDK, "stdio"]
            if transport == "stdio"
            else [f"{transport}://127.0.0.1:{ports['ts']}/acp"]
        )
        return typescript_round_trips(transport, calls, target)
    url = f"{transport}://127.0.0.1:{ports[side]}/acp"
    return run_loop(python_round_trips(transport, calls, url, side == "uvloop"), side == "uvloop")


def interleaved(
    sides: list[str], passes: int, run: Callable[[str], dict[str, float]]
) -> dict[str, dict[str, float]]:
    """Each side ``passes`` times, taking turns (the order rotates); the median of each measure."""
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    for index in range(passes):
        order = sides[index % len(sides) :] + sides[: index % len(sides)]
        for side in order:
            runs[side].append(run(side))
    return {
        side: {key: statistics.median(r[key] for r in found) for key in found[0]}
        for side, found in runs.items()
    }


NAMES = {"py": "ours", "uvloop": "ours, uvloop", "deflate": "ours, deflate", "ts": "TypeScript"}
TRANSPORTS = {"stdio": "stdio", "http": "HTTP", "ws": "WebSocket"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--updates", type=int, default=500, help="updates each client's prompt streams")
    parser.add_argument("--round-trips", type=int, default=2000, help="session/new calls per pass")
    parser.add_argument("--passes", type=int, default=3, help="passes per side (the median is printed)")
    parser.add_argument("--only", choices=("load", "round-trip"), help="one of the two parts")
    args = parser.parse_args()
    if not node_ready():
        sys.exit("bench_load.py needs node and the TypeScript SDK: run `make interop-deps`")
    sides = ["py", "ts"] + (["uvloop"] if HAS_UVLOOP else [])
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(f"{machine}, load {os.getloadavg()[0]:.2f}")
    uvloop = "installed" if HAS_UVLOOP else "not installed"
    print(f"median of {args.passes} interleaved passes; uvloop {uvloop}\n")
    if args.only != "round-trip":
        print(f"load: {args.clients} TypeScript clients x {args.updates} streamed updates")
        columns = f"{'updates/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'RSS MiB':>8} {'failed':>6}"
        print(f"{'server':26} {columns}   to TS: rate p50 p99")
        for transport in ("http", "ws"):
            load_sides = sides + (["deflate"] if transport == "ws" else [])
            one = functools.partial(load_pass, transport, args.clients, args.updates)
            found = interleaved(load_sides, args.passes, one)
            for side in load_sides:
                row = found[side]
                label = f"{NAMES[side]}, {TRANSPORTS[transport]}"
                figures = f"{row['rate']:10,.0f} {row['p50']:8.0f} {row['p99']:8.0f} {row['rss']:8.0f}"
                figures += f" {row['failed']:6.0f}"
                print(f"{label:26} {figures}{ratios(row, found['ts'], ('rate', 'p50', 'p99'))}", flush=True)
        print()
    if args.only != "load":
        print(
            f"round trip: session/new, one client, {args.round_trips} calls per pass (each side's own client)"
        )
        print(f"{'transport':26} {'p50 us':>10} {'p99 us':>10}   to TS: p50 p99")
        servers = {side: Listening(server_command(side)) for side in sides}
        try:
            ports = {side: server.port for side, server in servers.items()}
            for transport in ("stdio", "http", "ws"):
                one = functools.partial(round_trip_pass, transport, args.round_trips, ports)
                found = interleaved(sides, args.passes, one)
                for side in sides:
                    row = found[side]
                    label = f"{TRANSPORTS[transport]}, {NAMES[side]}"
                    ratio = ratios(row, found["ts"], ("p50", "p99"))
                    print(f"{label:26} {row['p50']:10.0f} {row['p99']:10.0f}{ratio}", flush=True)
        finally:
            for server in servers.values():
                server.close()


def ratios(row: dict[str, float], ts: dict[str, float], keys: tuple[str, ...]) -> str:
    """The row's figures over TypeScript's ('' for TypeScript's own row)."""
    if row is ts:
        return ""
    return "   " + " ".join(f"{row[key] / ts[key]:.2f}x" for key in keys)


if __name__ == "__main__":
    main()
