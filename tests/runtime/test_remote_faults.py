"""Faults and load on the remote transports, bounded, on 127.0.0.1 only.

The load test (200 connections each streaming 1,000 updates) takes longer than 30 s on the
2-core machine: it repeats the streaming checks of ``make test`` on 200 connections at once, so it
is marked ``sweep`` and runs in ``make test-all`` (``make test-sweeps``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
import time
from typing import Any, ClassVar

import httpx
import pytest

from tests.support.releases import newest_package
from tests.support.remote import (
    RecordingClient,
    echo_agents,
    echo_app,
    is_chunk,
    is_idle,
    listening,
    port_of,
    serve,
)
from tests.support.wire import run

acp = newest_package(2)
acp_v1 = newest_package(1)
V2EchoAgent, V1EchoAgent = echo_agents(acp, acp_v1)
INFO = acp.schema.Implementation(name="faults", version="1")
Text = acp.schema.TextContentBlock


class Watched(V2EchoAgent):
    """The example agent, recording how its turns end: cancelled, or stopped by a send that failed."""

    ended: ClassVar[list[str]] = []

    async def turn(self, session_id: str, message_id: str, prompt: list[Any]) -> None:
        try:
            await super().turn(session_id, message_id, prompt)
        except asyncio.CancelledError:
            Watched.ended.append("cancelled")
            raise
        Watched.ended.append("returned")  # early: a turn of ten million updates cannot have ended otherwise


async def settle(app: Any, baseline: set[asyncio.Task[Any]], timeout: float = 10) -> set[asyncio.Task[Any]]:
    """Wait until the app has no connection and no task is left beyond ``baseline``; return the leftovers."""
    deadline = time.monotonic() + timeout
    while True:
        extra = {
            t for t in asyncio.all_tasks() - baseline if not t.done() and t is not asyncio.current_task()
        }
        if (app.connections == 0 and not extra) or time.monotonic() > deadline:
            return extra
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_a_client_that_disconnects_mid_stream_cancels_the_agents_turn_and_leaks_no_task(
    transport: str,
) -> None:
    Watched.ended = []
    # over HTTP nobody reads the output once the client is gone: the stall limit closes the connection
    limits = acp.ServerLimits(max_buffered_bytes=64 * 1024, max_output_stall=0.5)
    app = acp.asgi_app(Watched, limits=limits)

    async def go() -> None:
        async with serve(app) as base:
            baseline = set(asyncio.all_tasks())
            client = RecordingClient(acp)
            url = (base.replace("http", "ws") if transport == "ws" else base) + "/acp"
            http = httpx.AsyncClient(timeout=httpx.Timeout(10, read=None))
            if transport == "ws":
                connection = await acp.connect_websocket(client, url)
            else:
                connection = await acp.connect_http(client, url, http_client=http)
            await connection.initialize(protocol_version=2, info=INFO)
            session = await connection.new_session(cwd="/")
            await connection.prompt(session_id=session.session_id, prompt=[Text(text="count 10000000")])
            await client.until(is_chunk)
            assert app.connections == 1
            # the client vanishes: no DELETE, no close frame
            if transport == "ws":
                connection.connection.channel.socket.transport.abort()
            else:
                await http.aclose()
            await connection.close()  # only the client's own objects now: nothing reaches the server
            leftovers = await settle(app, baseline, 15)
            assert app.connections == 0
            assert Watched.ended in (["cancelled"], ["returned"]), Watched.ended  # whichever came first
            assert leftovers == set()

    run(go(), 60)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_a_server_restart_is_a_connection_error_and_session_resume_works_on_a_new_connection(
    transport: str,
) -> None:
    port = free_port()
    command = [sys.executable, "examples/remote_agent.py", "--host", "127.0.0.1", "--port", str(port)]
    base = ("ws" if transport == "ws" else "http") + f"://127.0.0.1:{port}/acp"

    async def connect() -> tuple[Any, Any]:
        client = RecordingClient(acp)
        if transport == "ws":
            connection = await acp.connect_websocket(client, base)
        else:
            connection = await acp.connect_http(client, base)
        await connection.initialize(protocol_version=2, info=INFO)
        return client, connection

    async def before() -> tuple[Any, str]:
        _, connection = await connect()
        session = await connection.new_session(cwd="/")
        return connection, session.session_id

    async def after_stop(connection: Any) -> None:
        await asyncio.wait_for(connection.wait_closed(), 15)
        with pytest.raises(ConnectionError):
            await connection.new_session(cwd="/")

    async def after_restart(session_id: str) -> None:
        client, connection = await connect()
        await connection.resume_session(session_id=session_id, cwd="/")
        assert is_idle(await client.until(is_idle))
        await connection.close()

    loop = asyncio.new_event_loop()
    try:
        with listening(command):
            connection, session_id = loop.run_until_complete(asyncio.wait_for(before(), 30))
        loop.run_until_complete(asyncio.wait_for(after_stop(connection), 30))
        with listening(command):
            loop.run_until_complete(asyncio.wait_for(after_restart(session_id), 30))
        loop.run_until_complete(connection.close())
    finally:
        loop.close()


def test_a_session_stream_opened_twice_at_once_is_409_for_one_of_them() -> None:
    async def go() -> None:
        async with serve(echo_app(acp, acp_v1)) as base, httpx.AsyncClient(base_url=base) as http:
            from tests.runtime.test_http import JSON, SSE, open_connection

            cid = await open_connection(http)
            headers = {**SSE, "Acp-Connection-Id": cid, "Acp-Session-Id": "v2-1"}

            async def status() -> int:
                async with http.stream("GET", "/acp", headers=headers) as response:
                    if response.status_code == 200:
                        await asyncio.sleep(0.5)  # hold the stream while the other one asks
                    return response.status_code

            assert sorted(await asyncio.gather(status(), status())) == [200, 409]
            assert JSON

    run(go(), 30)


def test_a_17_mib_body_is_413_and_the_connection_goes_on() -> None:
    async def go() -> None:
        async with (
            serve(echo_app(acp, acp_v1)) as base,
            httpx.AsyncClient(base_url=base, timeout=30) as http,
        ):
            from tests.runtime.test_http import JSON, SSE, open_connection

            cid = await open_connection(http)
            headers = {**JSON, "Acp-Connection-Id": cid}
            text = "x" * (17 * 1024 * 1024)
            big = json.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "pad": text}}
            )
            refused = await http.post("/acp", content=big.encode(), headers=headers)
            assert refused.status_code == 413

            async def chunks() -> Any:  # no Content-Length: the limit is counted as the body streams in
                for start in range(0, len(big), 1 << 20):
                    yield big[start : start + (1 << 20)].encode()

            assert (await http.post("/acp", content=chunks(), headers=headers)).status_code == 413
            small = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/"}})
            assert (await http.post("/acp", content=small, headers=headers)).status_code == 202
            async with http.stream("GET", "/acp", headers={**SSE, "Acp-Connection-Id": cid}) as stream:
                async for line in stream.aiter_lines():
                    if line.startswith("data: "):
                        assert json.loads(line[6:]) == {
                            "jsonrpc": "2.0",
                            "id": 2,
                            "result": {"sessionId": "v2-1"},
                        }
                        break

    run(go(), 60)


# -- load ------------------------------------------------------------------------------------------

CONNECTIONS = 200
UPDATES = 1000


def rss_kib(pid: int) -> tuple[int, int]:
    """(current RSS, peak RSS) of a process, in KiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


@pytest.mark.sweep
@pytest.mark.parametrize("transport", ["http", "ws"])
def test_200_connections_each_stream_1000_updates_once_and_in_order(transport: str) -> None:
    command = [sys.executable, "examples/remote_agent.py", "--host", "127.0.0.1", "--port", "0"]
    expected = [str(n) if n == 1 else f" {n}" for n in range(1, UPDATES + 1)]

    async def one(base: str, gate: asyncio.Semaphore) -> list[str]:
        client = RecordingClient(acp)
        async with gate:  # connect in waves; the streams then all run at once
            if transport == "ws":
                connection = await acp.connect_websocket(client, base.replace("http", "ws") + "/acp")
            else:
                connection = await acp.connect_http(client, base + "/acp")
            await connection.initialize(protocol_version=2, info=INFO)
            session = await connection.new_session(cwd="/")
        await connection.prompt(session_id=session.session_id, prompt=[Text(text=f"count {UPDATES}")])
        await client.until(is_idle, timeout=240)
        await connection.close()
        return [u.content.text for u in client.updates if is_chunk(u)]

    async def go(base: str, pid: int) -> tuple[list[list[str]], list[int]]:
        samples: list[int] = []

        async def sample() -> None:
            while True:
                samples.append(rss_kib(pid)[0])
                await asyncio.sleep(0.25)

        sampler = asyncio.ensure_future(sample())
        gate = asyncio.Semaphore(20)
        try:
            results = await asyncio.gather(*(one(base, gate) for _ in range(CONNECTIONS)))
        finally:
            sampler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sampler
        return results, samples

    with listening(command) as (process, line):
        base = f"http://127.0.0.1:{port_of(line)}"
        started_kib = rss_kib(process.pid)[0]
        started = time.monotonic()
        results, samples = run(go(base, process.pid), 300)
        seconds = time.monotonic() - started
        ended_kib, peak_kib = rss_kib(process.pid)
    assert len(results) == CONNECTIONS
    assert all(texts == expected for texts in results)  # every update once, in order
    growth = peak_kib - started_kib
    print(
        f"\nload over {transport}: {CONNECTIONS} connections x {UPDATES} updates in {seconds:.1f} s; "
        f"server RSS {started_kib / 1024:.1f} MiB at start, peak {peak_kib / 1024:.1f} MiB, "
        f"{ended_kib / 1024:.1f} MiB at the end"
    )
    # flat: what 200 live connections hold, not what 200,000 updates would (each ~200 bytes on the wire)
    assert growth < 150 * 1024, f"server memory grew by {growth / 1024:.0f} MiB"
    assert max(samples) <= peak_kib
