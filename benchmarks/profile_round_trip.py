"""Where a round trip's time goes: ``session/new`` from our client to our agent, under cProfile.

Client and agent run in one process and one event loop (stdio: an in-memory byte pipe; HTTP and
WebSocket: the ASGI app under uvicorn on 127.0.0.1), so one profile holds both ends.  Each
function's own time is put in one bucket:

* read/decode: reading bytes, splitting lines or frames, ``json.loads``;
* validate: pydantic (params, results, model construction);
* dispatch: the runtime's routing of a message to its handler or pending call, the handlers;
* encode: ``model_dump`` and ``json`` encoding;
* write: handing bytes to the transport;
* HTTP client / server / WebSocket library: httpx, httpcore, h11, anyio / uvicorn, httptools /
  websockets;
* event loop: asyncio's scheduling, tasks, futures, selectors and sockets.

    .venv/bin/python benchmarks/profile_round_trip.py [--calls 2000] [--uvloop]

Printed: µs per round trip without the profiler, wall-clock and CPU (both ends are this process,
so the CPU time is the whole round trip's work, which the rest of the machine's load stretches
little, unlike the wall-clock time), then each bucket's share under the profiler.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

from bench_rpc import BenchAgent, BenchClient, acp, schema  # noqa: E402

BUCKETS: list[tuple[str, tuple[str, ...]]] = [
    ("HTTP client library", ("/httpx/", "/httpcore/", "/h11/", "/anyio/", "/sniffio/")),
    ("ASGI server (uvicorn)", ("/uvicorn/", "httptools")),
    ("WebSocket library", ("/websockets/",)),
    ("validate", ("pydantic", "_base.py", "validate_python", "_params.py:build")),
    ("encode", ("json/encoder", "model_dump", "_params.py", "encode' of")),
    ("read/decode", ("json/decoder", "loads", "_split", "_decode", "receive", "_read_events", "_deliver")),
    ("write", ("send", "write", "drain", "_stream", "take_all", "push")),
    ("dispatch", ("_rpc.py", "_asgi.py", "_http.py", "_ws.py", "bindings.py", "bench_rpc.py")),
    ("event loop", ("asyncio", "selectors", "socket", "select", "contextvars", "Context", "uvloop")),
]


def bucket_of(where: str) -> str:
    for name, needles in BUCKETS:
        if any(needle in where for needle in needles):
            return name
    return "other"


async def pair(transport: str) -> tuple[Any, Callable[[], Awaitable[None]]]:
    """A client connection to our agent over ``transport``, and how to stop both."""
    client = BenchClient(0)
    if transport == "stdio":
        to_agent_reader, to_agent_writer = acp.memory_pipe()
        to_client_reader, to_client_writer = acp.memory_pipe()
        acp.connect_to_client(lambda c: BenchAgent(c, 0), to_agent_reader, to_client_writer)
        connection = acp.connect_to_agent(client, to_client_reader, to_agent_writer)

        async def stop() -> None:
            await connection.close()

        return connection, stop
    from tests.support.remote import serving

    served = serving(acp.asgi_app(lambda c: BenchAgent(c, 0)), ws_per_message_deflate=False)
    base, _ = await served.__aenter__()
    url = f"{base}/acp"
    if transport == "ws":
        connection = await acp.connect_websocket(client, url.replace("http://", "ws://"))
    else:
        connection = await acp.connect_http(client, url)

    async def stop_remote() -> None:
        await connection.close()
        await served.__aexit__(None, None, None)

    return connection, stop_remote


async def round_trips(transport: str, calls: int, profile: cProfile.Profile | None) -> tuple[float, float]:
    """µs per call: wall-clock, and this process's CPU time."""
    connection, stop = await pair(transport)
    await connection.initialize(
        protocol_version=acp.PROTOCOL_VERSION, info=schema.Implementation(name="profile", version="1")
    )
    for _ in range(300):
        await connection.new_session(cwd="/w")
    if profile is not None:
        profile.enable()
    started = time.perf_counter()
    cpu = time.process_time()
    for _ in range(calls):
        await connection.new_session(cwd="/w")
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu
    if profile is not None:
        profile.disable()
    await stop()
    return seconds / calls * 1e6, cpu_seconds / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--uvloop", action="store_true", help="on uvloop's event loop")
    args = parser.parse_args()
    if args.uvloop:
        import uvloop

        run: Callable[[Any], Any] = uvloop.run
    else:
        run = asyncio.run
    names = [name for name, _ in BUCKETS] + ["other"]
    found: dict[str, tuple[tuple[float, float], dict[str, float]]] = {}
    for transport in ("stdio", "http", "ws"):
        plain = run(round_trips(transport, args.calls, None))
        profile = cProfile.Profile()
        run(round_trips(transport, args.calls, profile))
        shares = dict.fromkeys(names, 0.0)
        stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
        for (filename, line, function), (_, _, own, _, _) in stats.items():
            shares[bucket_of(f"{filename}:{line}({function}) {function}")] += own
        total = sum(shares.values()) or 1.0
        found[transport] = (plain, {name: shares[name] / total for name in names})
    print(f"{'share of a round trip':24}" + "".join(f"{t:>10}" for t in found))
    print(f"{'µs per call (no profiler)':24}" + "".join(f"{found[t][0][0]:10.0f}" for t in found))
    print(f"{'CPU µs per call':24}" + "".join(f"{found[t][0][1]:10.0f}" for t in found))
    for name in names:
        print(f"{name:24}" + "".join(f"{found[t][1][name]:10.0%}" for t in found))


if __name__ == "__main__":
    main()
