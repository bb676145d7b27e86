"""JSON-RPC throughput of the generated bindings, side by side with the official TypeScript SDK.

Two workloads, the same traffic for both implementations, each an agent and a
client in one process over in-memory byte streams (newline-delimited JSON,
parsed and validated on both ends):

* request/response round trips: ``session/new`` called back to back;
* 10,000 ``session/update`` notifications (agent message chunks) streamed from
  the agent to the client, timed from the prompt until the client's handler
  has seen the last one.

and one row for the protocol router: the same round trips to an agent served
through ``AgentProtocolRouter`` (v2 selected) against one served directly,
measured in the same run: both connections in one event loop, taking turns
in blocks of 100 calls.

The TypeScript side is ``@agentclientprotocol/sdk`` 1.8.0 (``experimental/v2``)
from tests/interop (``make interop-deps``); the Python side is the generated
``acp_2_0_0_alpha_8_unstable`` package, the same schema.

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


def typescript_side(round_trips: int, notifications: int) -> dict[str, float] | None:
    if shutil.which("node") is None or not (ROOT / "tests/interop/node_modules/acp-sdk-1-8").is_dir():
        return None
    script = ROOT / "benchmarks" / "bench_rpc_ts.mjs"
    run = subprocess.run(
        ["node", str(script), "acp-sdk-1-8", str(round_trips), str(notifications)],
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
    args = parser.parse_args()
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, {os.cpu_count()} cores, Python {platform.python_version()}")
    node = (
        subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        if shutil.which("node")
        else "-"
    )
    print(f"node {node}; {args.round_trips} round trips, {args.notifications} notifications\n")
    py = asyncio.run(python_side(args.round_trips, args.notifications))
    ts = typescript_side(args.round_trips, args.notifications)
    rows = [
        ("round trip (session/new)", "roundTripSeconds", args.round_trips, "us/call"),
        (f"{args.notifications} session/update, one way", "streamSeconds", args.notifications, "us/msg"),
    ]
    print(f"{'workload':38} {'python':>14} {'typescript':>14} {'python/ts':>10}")
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
