"""JSON-RPC throughput of the generated bindings, side by side with the official TypeScript SDK.

The transports, each a client process talking to an agent process (the same
traffic for both implementations; ``bench_rpc_agent.py`` and its TypeScript
twin ``bench_rpc_agent.mjs``, ``bench_rpc_client.mjs``):

* stdio: the client spawns the agent and talks over its stdin/stdout;
* Streamable HTTP and WebSocket: the agent is served on 127.0.0.1 (uvicorn and
  the ASGI app; node http + ws and the SDK's ``AcpServer``) and the client
  connects (``connect_http``/``connect_websocket``; ``createHttpStream``/
  ``createWebSocketStream``);

each timing ``session/new`` round trips and 10,000 streamed updates.  Then two
workloads in one process over in-memory byte streams (newline-delimited JSON,
parsed and validated on both ends):

* request/response round trips: ``session/new`` called back to back;
* 10,000 ``session/update`` notifications (agent message chunks) streamed from
  the agent to the client, timed from the prompt until the client's handler
  has seen the last one.

and one row for the protocol router: the same round trips to an agent served
through ``AgentProtocolRouter`` (v2 selected) against one served directly,
measured in the same run: both connections in one event loop, taking turns
in blocks of 100 calls.

The TypeScript side is ``@agentclientprotocol/sdk`` 2.4.0 (``experimental/v2``
and its transports) from tests/interop (``make interop-deps``); the Python side
is the generated ``acp_2_0_0_alpha_8_unstable`` package.

    make bench-rpc        # or: .venv/bin/python benchmarks/bench_rpc.py [--round-trips N] [--notifications N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generated"))

import acp_2_0_0_alpha_8_unstable as acp  # noqa: E402

schema = acp.schema


class BenchAgent(acp.Agent):
    def __init__(self, connection: acp.AgentSideConnection, notifications: int) -> None:
        self.connection = connection
        self.notifications = notifications

    async def initialize(self, **kwargs: Any) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            info=schema.Implementation(name="bench-agent", version="1"),
            capabilities=schema.AgentCapabilities(session=schema.SessionCapabilities()),
        )

    async def new_session(self, **kwargs: Any) -> schema.NewSessionResponse:
        return schema.NewSessionResponse(session_id="s-1")

    async def prompt(self, *, session_id: str, **kwargs: Any) -> schema.PromptResponse:
        update = schema.AgentMessageChunkSessionUpdate(
            message_id="m", content=schema.TextContentBlock(text="chunk")
        )
        for _ in range(self.notifications):
            await self.connection.session_update(session_id=session_id, update=update)
        return schema.PromptResponse(message_id="u-1")


class BenchClient(acp.Client):
    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.received = 0
        self.done = asyncio.Event()

    async def session_update(self, **kwargs: Any) -> None:
        self.received += 1
        if self.received == self.expected:
            self.done.set()


async def python_side(round_trips: int, notifications: int) -> dict[str, float]:
    to_agent_reader, to_agent_writer = acp.memory_pipe()
    to_client_reader, to_client_writer = acp.memory_pipe()

    def make_agent(connection: acp.AgentSideConnection) -> BenchAgent:
        return BenchAgent(connection, notifications)

    acp.connect_to_client(make_agent, to_agent_reader, to_client_writer)
    client = BenchClient(notifications)
    connection = acp.connect_to_agent(client, to_client_reader, to_agent_writer)
    await connection.initialize(
        protocol_version=acp.PROTOCOL_VERSION, info=schema.Implementation(name="bench-client", version="1")
    )
    for _ in range(200):  # warm-up: validators are built on first use
        await connection.new_session(cwd="/w")
    started = time.perf_counter()
    for _ in range(round_trips):
        await connection.new_session(cwd="/w")
    round_trip_seconds = time.perf_counter() - started
    started = time.perf_counter()
    await connection.prompt(session_id="s-1", prompt=[schema.TextContentBlock(text="go")])
    await client.done.wait()
    stream_seconds = time.perf_counter() - started
    await connection.close()
    return {"roundTripSeconds": round_trip_seconds, "streamSeconds": stream_seconds}


async def router_pair(routed: bool) -> Any:
    """A client connection to an agent served directly, or through AgentProtocolRouter (v2 selected)."""
    to_agent_reader, to_agent_writer = acp.memory_pipe()
    to_client_reader, to_client_writer = acp.memory_pipe()

    def make_agent(connection: acp.AgentSideConnection) -> BenchAgent:
        return BenchAgent(connection, 0)

    serving = None
    if routed:
        router = acp.AgentProtocolRouter(v2=make_agent)
        serving = asyncio.ensure_future(router.serve(to_agent_reader, to_client_writer))
    else:
        acp.connect_to_client(make_agent, to_agent_reader, to_client_writer)
    connection = acp.connect_to_agent(BenchClient(0), to_client_reader, to_agent_writer)
    await connection.initialize(
        protocol_version=acp.PROTOCOL_VERSION, info=schema.Implementation(name="bench-client", version="1")
    )
    if serving is not None:
        assert (await serving) is not None
    for _ in range(200):  # warm-up
        await connection.new_session(cwd="/w")
    return connection


async def router_overhead(round_trips: int, block: int = 100) -> tuple[float, float]:
    """Seconds (direct, routed) for ``round_trips`` ``session/new`` calls each.

    Both connections live in one event loop and take turns in blocks of
    ``block`` calls (which goes first alternates), so that a change in the
    machine's load hits both alike.
    """
    direct, routed = await router_pair(False), await router_pair(True)
    seconds = {False: 0.0, True: 0.0}
    for index in range(max(1, round_trips // block)):
        for is_routed in (False, True) if index % 2 == 0 else (True, False):
            connection = routed if is_routed else direct
            started = time.perf_counter()
            for _ in range(block):
                await connection.new_session(cwd="/w")
            seconds[is_routed] += time.perf_counter() - started
    await direct.close()
    await routed.close()
    return seconds[False], seconds[True]


SDK = "acp-sdk-2-4"
BENCH = ROOT / "benchmarks"


def node_ready() -> bool:
    return shutil.which("node") is not None and (ROOT / "tests/interop/node_modules" / SDK).is_dir()


class Listening:
    """A server process, stopped on exit; ``port`` from its ``listening PORT`` line."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("listening "):
            self.close()
            raise RuntimeError(f"{command[:2]} did not start: {line!r}")
        self.port = int(line.split()[1])

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.terminate()
        self.process.wait(10)

    def __enter__(self) -> Listening:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def python_client(transport: str, client: BenchClient, url: str, *agent_args: str) -> tuple[Any, Any]:
    """Our client, initialized and warmed up (200 ``session/new``), connected to our agent over stdio
    (a child process run with ``agent_args``), HTTP or WebSocket; (connection, the child or ``None``)."""
    spawned = None
    if transport == "stdio":
        spawned = acp.spawn(sys.executable, str(BENCH / "bench_rpc_agent.py"), "stdio", *agent_args)
        reader, writer = await spawned.__aenter__()
        connection = acp.connect_to_agent(client, reader, writer)
    elif transport == "ws":
        connection = await acp.connect_websocket(client, url)
    else:
        connection = await acp.connect_http(client, url)
    await connection.initialize(
        protocol_version=acp.PROTOCOL_VERSION, info=schema.Implementation(name="bench-client", version="1")
    )
    for _ in range(200):
        await connection.new_session(cwd="/w")
    return connection, spawned


async def python_remote(
    transport: str, round_trips: int, notifications: int, url: str = ""
) -> dict[str, float]:
    """The Python client against the Python agent: over stdio (a child process), HTTP or WebSocket."""
    client = BenchClient(notifications)
    connection, spawned = await python_client(transport, client, url)
    started = time.perf_counter()
    for _ in range(round_trips):
        await connection.new_session(cwd="/w")
    round_trip_seconds = time.perf_counter() - started
    started = time.perf_counter()
    await connection.prompt(session_id="s-1", prompt=[schema.TextContentBlock(text=str(notifications))])
    await client.done.wait()
    stream_seconds = time.perf_counter() - started
    await connection.close()
    if spawned is not None:
        await spawned.__aexit__(None, None, None)
    return {"roundTripSeconds": round_trip_seconds, "streamSeconds": stream_seconds}


def node_json(script: str, *args: str) -> Any:
    """Run ``benchmarks/<script>`` with node, the SDK's alias first; its last line, as JSON."""
    run = subprocess.run(
        ["node", str(BENCH / script), SDK, *args], capture_output=True, text=True, check=True, timeout=600
    )
    return json.loads(run.stdout.strip().splitlines()[-1])


def typescript_remote(
    transport: str, round_trips: int, notifications: int, target: list[str]
) -> dict[str, float]:
    result: dict[str, float] = node_json(
        "bench_rpc_client.mjs", transport, str(round_trips), str(notifications), *target
    )
    return result


def best(runs: list[dict[str, float]]) -> dict[str, float]:
    """The fastest of several passes, per measure (the pass the shared machine disturbed least)."""
    return {key: min(run[key] for run in runs) for key in runs[0]}


def transport_rows(
    round_trips: int, notifications: int, passes: int
) -> list[tuple[str, float, float | None, str]]:
    """(label, python µs, typescript µs, unit) of the stdio, HTTP and WebSocket rows.

    Each transport runs ``passes`` times per implementation, the two taking turns (which goes
    first alternates), and each measure keeps its best pass: a burst of load from the rest of
    the machine then hits both alike instead of one row of one side.
    """
    ts_ready = node_ready()
    stdio_agent = ["node", str(BENCH / "bench_rpc_agent.mjs"), SDK, "stdio"]
    runs: dict[str, tuple[list[dict[str, float]], list[dict[str, float]]]] = {
        t: ([], []) for t in ("stdio", "http", "ws")
    }
    with Listening([sys.executable, str(BENCH / "bench_rpc_agent.py"), "serve"]) as py_server:
        ts_server = (
            Listening(["node", str(BENCH / "bench_rpc_agent.mjs"), SDK, "serve"]) if ts_ready else None
        )
        try:
            for index in range(passes):
                for transport in ("stdio", "http", "ws"):
                    py_url = f"{transport}://127.0.0.1:{py_server.port}/acp"
                    order = ("py", "ts") if index % 2 == 0 else ("ts", "py")
                    for side in order:
                        if side == "py":
                            url = py_url if transport != "stdio" else ""
                            runs[transport][0].append(
                                asyncio.run(python_remote(transport, round_trips, notifications, url))
                            )
                        elif ts_server is not None:
                            target = (
                                stdio_agent
                                if transport == "stdio"
                                else [f"{transport}://127.0.0.1:{ts_server.port}/acp"]
                            )
                            runs[transport][1].append(
                                typescript_remote(transport, round_trips, notifications, target)
                            )
        finally:
            if ts_server is not None:
                ts_server.close()
    rows: list[tuple[str, float, float | None, str]] = []
    names = {"stdio": "stdio", "http": "Streamable HTTP", "ws": "WebSocket"}
    for transport, (py_runs, ts_runs) in runs.items():
        py, ts = best(py_runs), (best(ts_runs) if ts_runs else None)
        rows.append(
            (
                f"{names[transport]}: round trip",
                py["roundTripSeconds"] / round_trips * 1e6,
                ts["roundTripSeconds"] / round_trips * 1e6 if ts else None,
                "us/call",
            )
        )
        rows.append(
            (
                f"{names[transport]}: {notifications} updates",
                py["streamSeconds"] / notifications * 1e6,
                ts["streamSeconds"] / notifications * 1e6 if ts else None,
                "us/msg",
            )
        )
    return rows


def typescript_side(round_trips: int, notifications: int) -> dict[str, float] | None:
    if not node_ready():
        return None
    script = ROOT / "benchmarks" / "bench_rpc_ts.mjs"
    run = subprocess.run(
        ["node", str(script), SDK, str(round_trips), str(notifications)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, float] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--round-trips", type=int, default=5000)
    parser.add_argument("--notifications", type=int, default=10_000)
    parser.add_argument("--passes", type=int, default=3, help="passes per transport and side (best kept)")
    args = parser.parse_args()
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, {os.cpu_count()} cores, Python {platform.python_version()}")
    node = (
        subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        if shutil.which("node")
        else "-"
    )
    print(f"node {node}; {args.round_trips} round trips, {args.notifications} notifications\n")
    heading = f"between processes (best of {args.passes})"
    print(f"{heading:38} {'python':>14} {'typescript':>14} {'python/ts':>10}")
    for label, py_us, ts_us, unit in transport_rows(args.round_trips, args.notifications, args.passes):
        ts_text = f"{ts_us:8.1f} {unit}" if ts_us else "n/a"
        ratio = f"{py_us / ts_us:9.2f}x" if ts_us else "n/a"
        print(f"{label:38} {py_us:8.1f} {unit} {ts_text:>14} {ratio:>10}")
    py = asyncio.run(python_side(args.round_trips, args.notifications))
    ts = typescript_side(args.round_trips, args.notifications)
    rows = [
        ("round trip (session/new)", "roundTripSeconds", args.round_trips, "us/call"),
        (f"{args.notifications} session/update, one way", "streamSeconds", args.notifications, "us/msg"),
    ]
    print(f"\n{'in one process, in memory':38} {'python':>14} {'typescript':>14} {'python/ts':>10}")
    for label, key, count, unit in rows:
        py_us = py[key] / count * 1e6
        ts_us = ts[key] / count * 1e6 if ts else None
        ts_text = f"{ts_us:8.1f} {unit}" if ts_us else "n/a"
        ratio = f"{py_us / ts_us:9.2f}x" if ts_us else "n/a"
        print(f"{label:38} {py_us:8.1f} {unit} {ts_text:>14} {ratio:>10}")
    direct, routed = asyncio.run(router_overhead(args.round_trips))
    calls = max(1, args.round_trips // 100) * 100
    direct_us, routed_us = direct / calls * 1e6, routed / calls * 1e6
    print(f"\n{'protocol router (same run, interleaved)':38} {'direct':>14} {'routed':>14} {'ratio':>10}")
    print(
        f"{'round trip (session/new) via router':38} {direct_us:8.1f} us/call {routed_us:8.1f} us/call "
        f"{routed_us / direct_us:9.2f}x"
    )
    print(f"\ntotals: python {py['roundTripSeconds']:.2f}s + {py['streamSeconds']:.2f}s", end="")
    if ts:
        print(f", typescript {ts['roundTripSeconds']:.2f}s + {ts['streamSeconds']:.2f}s")
    else:
        print(" (TypeScript SDK not installed: run `make interop-deps`)")


if __name__ == "__main__":
    main()
