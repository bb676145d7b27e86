"""Faults and load on the remote transports, bounded, on 127.0.0.1 only.

The findings of the fault probe of issue 25 (``benchmarks/probe_remote.py`` prints their figures)
each have a test here, with limits and deadlines made small so that each takes a few seconds.
The load test (200 connections each streaming 1,000 updates) takes longer than 30 s on the
2-core machine: it repeats the streaming checks of ``make test`` on 200 connections at once, so it
is marked ``sweep`` and runs in ``make test-all`` (``make test-sweeps``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any, ClassVar

import httpx
import pytest

from tests.support import flood
from tests.support.releases import ROOT, newest_package
from tests.support.remote import (
    RawWebSocket,
    RecordingClient,
    closed_by_server,
    echo_agents,
    echo_app,
    environment,
    is_chunk,
    is_idle,
    listening,
    port_of,
    serve,
    serving,
    slow_reader,
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


# -- the fault probe's findings (issue 25) ------------------------------------------------------


def ws_of(base: str) -> str:
    return base.replace("http://", "ws://") + "/acp"


class Closing(V2EchoAgent):  # type: ignore[misc, valid-type]
    async def close_session(self, **kwargs: Any) -> Any:
        return acp.schema.CloseSessionResponse()


def test_one_http_connection_opens_more_sessions_than_httpxs_default_pool_of_100() -> None:
    """Finding 1: each session's stream holds a connection; the client's own pool has no limit."""

    async def go() -> None:
        async with (
            serve(acp.asgi_app(Closing, path="/acp")) as base,
            httpx.AsyncClient(base_url=base) as http,
        ):
            connection = await acp.connect_http(RecordingClient(acp), base + "/acp")
            await connection.initialize(protocol_version=2, info=INFO)
            sessions = [
                (await asyncio.wait_for(connection.new_session(cwd="/"), 10)).session_id for _ in range(110)
            ]
            assert len(set(sessions)) == 110
            # closing a session closes its stream: its stream then takes a new reader (no 409)
            await connection.close_session(session_id=sessions[0])
            cid = connection.connection.channel.connection_id
            stream = {"Accept": "text/event-stream", "Acp-Connection-Id": cid, "Acp-Session-Id": sessions[0]}
            for _ in range(100):
                async with http.stream("GET", "/acp", headers=stream) as response:
                    if response.status_code == 200:
                        break
                await asyncio.sleep(0.02)
            assert response.status_code == 200
            open_stream = {**stream, "Acp-Session-Id": sessions[1]}
            assert (
                await http.get("/acp", headers=open_stream)
            ).status_code == 409  # still read by the client
            await connection.close()

    run(go(), 60)


def test_a_websocket_client_that_reads_nothing_is_held_to_the_output_limit_then_closed() -> None:
    """Finding 2: frames wait for room as HTTP requests do, and the stall limit closes the connection."""
    limits = acp.ServerLimits(max_buffered_bytes=256 * 1024, max_output_stall=1.0)
    app = acp.asgi_app(V2EchoAgent, limits=limits, path="/acp")
    text = "x" * (64 * 1024)

    async def go() -> None:
        async with serve(app) as base:
            baseline = set(asyncio.all_tasks())
            raw = await RawWebSocket.open(base)
            await raw.send(INIT_MESSAGE)
            await raw.recv()
            await raw.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}})
            await raw.recv()
            sent = 0

            async def prompts() -> None:  # 400 echoes of 64 KiB, 25 MiB, and no reading
                nonlocal sent
                prompt = {"sessionId": "v2-1", "prompt": [{"type": "text", "text": text}]}
                with contextlib.suppress(OSError):
                    for index in range(400):
                        await raw.send(
                            {"jsonrpc": "2.0", "id": 10 + index, "method": "session/prompt", "params": prompt}
                        )
                        sent += 1

            sending = asyncio.ensure_future(prompts())
            leftovers = await settle(app, baseline | {sending}, 20)
            assert app.connections == 0 and leftovers == set()
            assert await raw.ended()
            sending.cancel()
            assert sent < 400, "the server read every prompt"
            raw.abort()

    run(go(), 60)


TYPESCRIPT_FLOOD_GROWTH = 109 * 1024 * 1024
"""What the TypeScript SDK 2.4.0 server grew by under issue 34's flood (the held-out probe's figure;
``python -m tests.support.flood`` prints ours beside it under the same client)."""


def test_a_websocket_flood_of_prompts_whose_output_nobody_reads_grows_the_server_less_than_typescript() -> (
    None
):
    """Issue 34's flood: 1,500 prompts of 200 kB, each echoed (200 kB of output), the client reading
    nothing.  The server stops reading once the output and the requests it is answering reach
    ``max_buffered_bytes`` (64 MiB), and closes the connection ``max_output_stall`` later."""
    stall = 2.0
    with listening(flood.ours_command(stall)) as (process, line):
        found = run(flood.flood(process.pid, port_of(line), window=30), 60)
    assert found.growth <= TYPESCRIPT_FLOOD_GROWTH, found.describe()
    assert found.sent < 1500, found.describe()
    assert found.closed_after is not None and found.closed_after < 20, found.describe()


class Hanging(V2EchoAgent):  # type: ignore[misc, valid-type]
    async def initialize(self, **kwargs: Any) -> Any:
        await asyncio.sleep(3600)


INIT_MESSAGE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "faults", "version": "1"}},
}


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_a_client_that_gives_up_during_initialize_leaves_no_connection_and_no_task(transport: str) -> None:
    """Finding 3: the answer never comes, the client leaves: its connection and the agent's task end."""
    app = acp.asgi_app(Hanging, path="/acp")

    async def go() -> None:
        async with serve(app) as base:
            baseline = set(asyncio.all_tasks())
            for _ in range(3):
                if transport == "http":
                    async with httpx.AsyncClient(timeout=0.3) as http:
                        with pytest.raises(httpx.TimeoutException):
                            await http.post(base + "/acp", json=INIT_MESSAGE)
                else:
                    raw = await RawWebSocket.open(base)
                    await raw.send(INIT_MESSAGE)
                    await asyncio.sleep(0.2)
                    raw.abort()
            leftovers = await settle(app, baseline, 10)
            assert app.connections == 0 and leftovers == set()

    run(go(), 30)


def test_a_websocket_that_sends_no_initialize_is_closed_after_idle_timeout() -> None:
    """Finding 3: a client that connects and sends nothing does not hold its socket forever."""
    app = acp.asgi_app(V2EchoAgent, path="/acp", limits=acp.ServerLimits(idle_timeout=0.5))

    async def go() -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed

        async with serve(app) as base, connect(ws_of(base)) as socket_:
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(socket_.recv(), 10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008

    run(go(), 30)


async def answer_of(port: int, head: bytes, drip: bytes | None, every: float = 0.1) -> bytes:
    """Send ``head``, then ``drip`` every ``every`` seconds until the server answers; its status line."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head)
    try:
        while True:
            if drip is not None:
                writer.write(drip)
            with contextlib.suppress(TimeoutError):
                answer = await asyncio.wait_for(reader.read(200), every)
                return answer.split(b"\r\n", 1)[0]
    finally:
        writer.transport.abort()


def test_slow_clients_get_408_from_the_body_deadlines_and_the_examples_header_deadline() -> None:
    """Finding 4: a trickled header, a trickled body and a silent body are answered 408."""
    from examples.remote_agent import uvicorn_options

    limits = acp.ServerLimits(body_timeout=1.0, idle_timeout=0.4)
    app = acp.asgi_app(V2EchoAgent, path="/acp", limits=limits)

    async def go() -> None:
        async with serving(app, **uvicorn_options(header_timeout=0.5)) as (base, _):
            port = int(base.rsplit(":", 1)[1])
            header = b"POST /acp HTTP/1.1\r\nHost: test\r\n"
            body = header + b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            answers = await asyncio.wait_for(
                asyncio.gather(
                    answer_of(port, header, b"X-Pad: 1\r\n"),  # headers that never end
                    answer_of(port, body, b" "),  # a body trickled faster than idle_timeout
                    answer_of(port, body, None),  # a body that never comes
                ),
                10,
            )
            assert answers == [b"HTTP/1.1 408 Request Timeout"] * 3
            # a request that is not slow is answered as before, on the same server
            async with httpx.AsyncClient(base_url=base) as http:
                assert (await http.post("/acp", json=INIT_MESSAGE)).status_code == 200

    run(go(), 30)


@pytest.mark.parametrize("server", ["uvicorn", "transport hidden"])
def test_an_agent_that_never_yields_sees_a_vanished_websocket_client_and_logs_nothing(server: str) -> None:
    """Finding 5: a send sees the transport closing (or gives the event loop a turn where the server
    hides it), so the disconnect is seen; no warning per write into the dead socket."""
    errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 - a pipe nobody reads would stop the server
    hide = ["--hide-transport"] if server == "transport hidden" else []
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.firehose", *hide],
        cwd=ROOT,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
    )

    async def go(url: str) -> None:
        from websockets.asyncio.client import connect

        socket_ = await connect(url, max_queue=None)  # reads all it is sent, until it vanishes
        await socket_.send(json.dumps(INIT_MESSAGE))
        await socket_.recv()
        await socket_.send(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}})
        )
        await socket_.recv()
        prompt = {"sessionId": "s-1", "prompt": [{"type": "text", "text": "100000"}]}
        await socket_.send(
            json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
        )
        for _ in range(100):
            await socket_.recv()
        socket_.transport.abort()  # gone, without a close frame

    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        run(go(f"ws://127.0.0.1:{port_of(line)}/acp"), 30)
        report = asyncio.run(asyncio.wait_for(asyncio.to_thread(process.stdout.readline), 30))
    finally:
        process.terminate()
        process.wait(10)
    sent, total = (int(n) for n in report.split()[2::2])
    assert total == 100_000 and sent < total, report  # the turn stopped at the disconnect
    errors.seek(0)
    logged = errors.read()
    errors.close()
    assert logged.count("socket.send() raised exception") == 0, logged[-2000:]


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_app_close_ends_a_stream_whose_client_reads_nothing(transport: str) -> None:
    """Finding 6: a response (or socket) stuck on a client that reads nothing ends after ``app.close()``."""
    from tests.support.firehose import Firehose

    app = acp.asgi_app(Firehose, path="/acp")
    prompt = {"sessionId": "s-1", "prompt": [{"type": "text", "text": "200000"}]}

    async def go() -> None:
        async with serving(app) as (base, server), httpx.AsyncClient(base_url=base) as http:
            if transport == "ws":
                raw = await RawWebSocket.open(base)
                await raw.send(INIT_MESSAGE)
                await raw.recv()
                await raw.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}})
                await raw.recv()
                await raw.send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
            else:
                cid = (await http.post("/acp", json=INIT_MESSAGE)).headers["acp-connection-id"]
                new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}}
                await http.post("/acp", json=new, headers={"Acp-Connection-Id": cid})
                reader, writer = await slow_reader(base)
                writer.write(
                    b"GET /acp HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\nAcp-Session-Id: s-1\r\n"
                    b"Acp-Connection-Id: " + cid.encode() + b"\r\n\r\n"
                )
                await asyncio.sleep(0.2)
                ask = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}
                await http.post("/acp", json=ask, headers={"Acp-Connection-Id": cid, "Acp-Session-Id": "s-1"})
            await asyncio.sleep(1)  # the stream's output now waits for a client that reads nothing
            assert len(server.server_state.tasks) == 1  # that stream's (or socket's) response
            await app.close()
            for _ in range(100):
                if not server.server_state.tasks:
                    break
                await asyncio.sleep(0.05)
            assert not server.server_state.tasks
            if transport == "ws":
                reader = raw.reader
            assert await closed_by_server(reader), "the server left the client's connection open"

    run(go(), 30)


def cut_first_session_stream(app: Any, after: int) -> Any:
    """The app behind a proxy that ends the first session stream once ``after`` events passed it.

    What was written after that is lost on the way, as when a connection drops: the chunk that
    crossed the mark, and what the app writes before it sees the client gone.
    """
    state = {"cut": False}

    async def proxy(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers", ()))
        if (
            scope["type"] != "http"
            or scope["method"] != "GET"
            or b"acp-session-id" not in headers
            or state["cut"]
        ):
            await app(scope, receive, send)
            return
        state["cut"] = True
        dropped = asyncio.Event()
        passed = 0

        async def cut_send(message: Any) -> None:
            nonlocal passed
            if dropped.is_set():
                return
            if message["type"] == "http.response.body":
                passed += message.get("body", b"").count(b"data: ")
                if passed >= after:
                    dropped.set()
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return
            await send(message)

        async def cut_receive() -> Any:
            waiting = asyncio.ensure_future(receive())
            cut = asyncio.ensure_future(dropped.wait())
            await asyncio.wait((waiting, cut), return_when=asyncio.FIRST_COMPLETED)
            cut.cancel()
            if waiting.done():
                return waiting.result()
            waiting.cancel()
            return {"type": "http.disconnect"}

        await app(scope, cut_receive, cut_send)

    return proxy


def test_connect_http_resumes_a_session_stream_that_drops_and_loses_no_update() -> None:
    """Beyond both SDKs: the stream is read again from its last event id; each update comes once, in order."""
    app = cut_first_session_stream(echo_app(acp, acp_v1), after=200)

    async def go() -> None:
        async with serve(app) as base:
            client = RecordingClient(acp)
            connection = await acp.connect_http(client, base + "/acp")
            await connection.initialize(protocol_version=2, info=INFO)
            session = await connection.new_session(cwd="/")
            await connection.prompt(session_id=session.session_id, prompt=[Text(text="count 3000")])
            assert (await client.until(is_idle, timeout=30)).stop_reason == "end_turn"
            texts = [u.content.text for u in client.updates if is_chunk(u)]
            assert texts == [str(n) if n == 1 else f" {n}" for n in range(1, 3001)]
            await connection.close()

    run(go(), 60)


def test_connect_http_fails_a_session_that_lost_events_past_the_replay_buffer_until_it_is_resumed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limits = acp.ServerLimits(replay_buffer_bytes=100)  # less than one event: each is dropped once written
    app = cut_first_session_stream(echo_app(acp, acp_v1, limits=limits), after=200)

    async def go() -> None:
        async with serve(app) as base:
            client = RecordingClient(acp)
            connection = await acp.connect_http(client, base + "/acp")
            await connection.initialize(protocol_version=2, info=INFO)
            session_id = (await connection.new_session(cwd="/")).session_id
            await connection.prompt(session_id=session_id, prompt=[Text(text="count 3000")])
            for _ in range(200):
                if "lost events" in caplog.text:
                    break
                await asyncio.sleep(0.05)
            with pytest.raises(acp.RequestError) as failed:
                await connection.prompt(session_id=session_id, prompt=[Text(text="again")])
            assert failed.value.code == -32603 and "dropped and lost events" in failed.value.message
            assert "events after" in failed.value.message  # the server's words: which ones are gone
            client.updates.clear()
            await connection.resume_session(session_id=session_id, cwd="/")
            assert is_idle(await client.until(is_idle))
            await connection.close()

    with caplog.at_level("WARNING", logger="acp"):
        run(go(), 60)


def hanging_posts() -> Any:
    """A server that opens connections and streams (keep-alives every 0.1 s) but never answers a POST."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope["headers"])
        while (await receive()).get("more_body"):
            pass
        if scope["method"] == "POST" and b"acp-connection-id" not in headers:
            answer = {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {"protocolVersion": 2, "info": {"name": "h", "version": "1"}},
            }
            start = {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"acp-connection-id", b"c-1")],
            }
            await send(start)
            await send({"type": "http.response.body", "body": json.dumps(answer).encode()})
        elif scope["method"] == "GET":
            start = {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
            await send(start)
            while True:
                await send({"type": "http.response.body", "body": b":\n\n", "more_body": True})
                await asyncio.sleep(0.1)
        elif scope["method"] == "POST":
            await asyncio.sleep(3600)
        else:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})

    return app


def test_connect_http_fails_a_request_whose_post_gets_no_answer_within_read_timeout() -> None:
    """Finding 7: liveness on HTTP; the request fails, the connection goes on."""

    async def go() -> None:
        async with serve(hanging_posts()) as base:
            connection = await acp.connect_http(RecordingClient(acp), base + "/acp", read_timeout=0.5)
            await connection.initialize(protocol_version=2, info=INFO)
            with pytest.raises(acp.RequestError) as failed:
                await asyncio.wait_for(connection.new_session(cwd="/"), 10)
            assert failed.value.code == -32603 and "read_timeout" in failed.value.message
            await asyncio.sleep(1)  # the streams' keep-alives come within read_timeout: they stay open
            assert not connection.connection.closed
            await connection.close()

    run(go(), 30)


async def silent_websocket_server() -> tuple[asyncio.Server, int]:
    """A server that accepts the WebSocket handshake and then answers nothing, pings included."""
    import base64
    import hashlib

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        key = next(
            line.split(b":", 1)[1].strip()
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"sec-websocket-key:")
        )
        accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
        writer.write(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n"
        )
        await asyncio.sleep(3600)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def test_connect_websocket_pings_and_closes_a_socket_whose_server_stopped_answering() -> None:
    """Finding 7: liveness on WebSocket; configurable, on by default (20 s)."""

    async def go() -> None:
        server, port = await silent_websocket_server()
        async with server:
            url = f"ws://127.0.0.1:{port}/acp"
            default = await acp.connect_websocket(RecordingClient(acp), url)
            assert default.connection.channel.socket.ping_interval == 20.0
            await default.close()
            connection = await acp.connect_websocket(
                RecordingClient(acp), url, ping_interval=0.2, ping_timeout=0.2
            )
            await asyncio.wait_for(connection.wait_closed(), 10)
            with pytest.raises(ConnectionError):
                await connection.initialize(protocol_version=2, info=INFO)

    run(go(), 30)


def test_both_transports_fail_with_the_packages_transport_error() -> None:
    """Finding 7: one error type for WebSocket and HTTP failures, with the status of a refusal."""
    from tests.runtime.test_http import principal_app

    async def go() -> None:
        closed = f"127.0.0.1:{free_port()}/acp"
        with pytest.raises(acp.TransportError) as unreachable:
            await acp.connect_websocket(RecordingClient(acp), "ws://" + closed)
        assert unreachable.value.status is None and "could not open a WebSocket" in str(unreachable.value)
        connection = await acp.connect_http(RecordingClient(acp), "http://" + closed)
        with pytest.raises(acp.TransportError) as unreachable:
            await connection.initialize(protocol_version=2, info=INFO)
        assert unreachable.value.status is None
        await connection.close()
        async with serve(principal_app()) as base:
            with pytest.raises(acp.HttpStatusError) as refused:
                await acp.connect_websocket(RecordingClient(acp), ws_of(base))
            assert isinstance(refused.value, acp.TransportError)
            assert (refused.value.status, refused.value.body) == (401, "token required")

    run(go(), 30)


class NoPermissions:
    """A client without a permission handler: it answers ``session/request_permission`` with -32601."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, *, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


@pytest.mark.parametrize(("transport", "version"), [("http", 2), ("ws", 2), ("ws", 1)])
def test_the_example_agent_takes_a_failed_permission_request_as_a_rejection(
    transport: str, version: int
) -> None:
    """Issue 25: the turn ends ("(not allowed)", then idle), and no task's exception goes unretrieved."""
    command = [sys.executable, "examples/remote_agent.py", "--host", "127.0.0.1", "--port", "0"]
    package = acp if version == 2 else acp_v1

    async def go(base: str) -> list[Any]:
        client = NoPermissions()
        url = ws_of(base) if transport == "ws" else base + "/acp"
        connect = package.connect_websocket if transport == "ws" else package.connect_http
        connection = await connect(client, url)
        if version == 2:
            await connection.initialize(protocol_version=2, info=INFO)
            session = await connection.new_session(cwd="/")
            await connection.prompt(session_id=session.session_id, prompt=[Text(text="hello")])
            while not any(is_idle(u) for u in client.updates):
                await asyncio.sleep(0.02)
        else:
            await connection.initialize(protocol_version=1)
            session = await connection.new_session(cwd="/", mcp_servers=[])
            text = acp_v1.schema.TextContentBlock(text="hello")
            assert (
                await connection.prompt(session_id=session.session_id, prompt=[text])
            ).stop_reason == "end_turn"
            await asyncio.sleep(0.1)
        await connection.close()
        return client.updates

    with listening(command) as (process, line):
        updates = run(go(f"http://127.0.0.1:{port_of(line)}"), 30)
        process.terminate()
        process.wait(10)
        assert process.stderr is not None
        errors = process.stderr.read()
    assert "".join(u.content.text for u in updates if is_chunk(u)) == "(not allowed)"
    assert "never retrieved" not in errors and "Traceback" not in errors, errors


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
        ended_kib, high_water_kib = rss_kib(process.pid)
    # Linux records VmHWM only at some points (an munmap, say): memory handed back another way
    # (madvise) leaves a past peak only in the samples, so the peak is the higher of the two
    assert len(samples) >= 10, "the sampler ran through the load"
    peak_kib = max(high_water_kib, *samples)
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
