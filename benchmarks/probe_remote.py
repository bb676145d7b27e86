"""A fault probe of the remote transports (issue 25): one figure per finding, on 127.0.0.1 only.

    .venv/bin/python benchmarks/probe_remote.py                  # this checkout
    .venv/bin/python benchmarks/probe_remote.py --root /tmp/old  # another one (its generated/, examples/)
    .venv/bin/python benchmarks/probe_remote.py --only 1,5       # some findings

Run with ``--root`` on an export of an older commit (``git archive <commit> | tar -x -C /tmp/old``)
to print that code's figures with the same probe.  Each finding prints lines ``[N] what: figure``:

1. sessions one ``connect_http`` connection opens (150 asked; each call may take 10 s);
2. server RSS (start, peak) while a WebSocket client (a bare socket) sends 1,500 prompts of
   256 KiB to ``examples/remote_agent.py``'s agents and reads nothing, how many it could send,
   and whether the server closes that connection (``max_output_stall`` 5 s here; a 45 s window);
3. connections and tasks left once clients gave up during an ``initialize`` that never ends, and
   WebSocket clients that never send ``initialize`` still connected after 8 s;
4. how long a trickled header, a trickled body and a silent body are held (a 20 s window; the
   server's deadlines, where it has them, set to 3 s header, 6 s body, 2 s idle);
5. the server's stderr lines, and the longest round trip of another client, while an agent
   streams 100,000 updates without yielding to a WebSocket client that vanished after 100;
6. responses still open 5 s after ``app.close()``, one of them an SSE stream never read;
7. the smaller ones: events lost when a session stream is dropped after 20,000 of 200,000 and
   read again (without and with ``Last-Event-ID``); HTTP ``initialize`` with ``id: null``; a
   WebSocket connection's id over HTTP; a malformed POST; the client's time for one 16 MiB
   event; the liveness defaults; what a refused connect raises.

The figures are the server's and the client's as they are in the checkout given; options the
checkout does not have are left at its defaults (the line says so).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import inspect
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
PACKAGE = "acp_v2_sdk_2_3_0"
MiB = 1024 * 1024


def setup_path(root: Path) -> None:
    for entry in (str(root / "generated"), str(root)):
        if entry not in sys.path:
            sys.path.insert(0, entry)


def package() -> Any:
    return importlib.import_module(PACKAGE)


def say(finding: int, what: str, figure: str) -> None:
    print(f"[{finding}] {what}: {figure}", flush=True)


def limits(**wanted: Any) -> tuple[Any, list[str]]:
    """``ServerLimits`` with the options this checkout has; the names it lacks."""
    acp = package()
    fields = set(inspect.signature(acp.ServerLimits).parameters)
    return acp.ServerLimits(**{k: v for k, v in wanted.items() if k in fields}), sorted(set(wanted) - fields)


def rss_kib(pid: int) -> tuple[int, int]:
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


# -- agents ----------------------------------------------------------------------------------------


def agents() -> dict[str, type]:
    acp = package()
    schema = acp.schema
    info = schema.Implementation(name="probe", version="1")

    class Base:
        def __init__(self, connection: Any) -> None:
            self.connection = connection
            self.sessions = 0
            self.turns: set[asyncio.Task[None]] = set()

        async def initialize(self, **kwargs: Any) -> Any:
            return schema.InitializeResponse(protocol_version=2, info=info)

        async def new_session(self, **kwargs: Any) -> Any:
            self.sessions += 1
            return schema.NewSessionResponse(session_id=f"s-{self.sessions}")

        async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
            count = int(getattr(prompt[0], "text", "0") or 0)
            turn = asyncio.ensure_future(self.stream(session_id, count))
            self.turns.add(turn)
            turn.add_done_callback(self.turns.discard)
            return schema.PromptResponse(message_id="m-1")

        async def stream(self, session_id: str, count: int) -> None:
            """``count`` numbered chunks, then idle; no yield between sends (as a busy agent)."""
            send = self.connection.session_update
            with contextlib.suppress(ConnectionError):
                for n in range(count):
                    chunk = schema.TextContentBlock(text=str(n))
                    await send(
                        session_id=session_id,
                        update=schema.AgentMessageChunkSessionUpdate(message_id="r", content=chunk),
                    )
                await send(session_id=session_id, update=schema.EndTurnIdleStateSessionUpdate())

    class Hanging(Base):
        async def initialize(self, **kwargs: Any) -> Any:
            await asyncio.sleep(3600)
            return await super().initialize(**kwargs)

    class Big(Base):
        async def stream(self, session_id: str, count: int) -> None:
            chunk = schema.TextContentBlock(text="x" * (16 * MiB - 300))
            update = schema.AgentMessageChunkSessionUpdate(message_id="r", content=chunk)
            await self.connection.session_update(session_id=session_id, update=update)

    return {"base": Base, "hanging": Hanging, "big": Big}


@contextlib.asynccontextmanager
async def serve(app: Any, **options: Any) -> AsyncIterator[tuple[str, Any]]:
    """uvicorn in this event loop; yields (``http://127.0.0.1:PORT``, the server)."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="critical", lifespan="off", **options)
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}", server
    finally:
        server.should_exit = True
        server.force_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)


class Recorder:
    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.idle = asyncio.Event()

    async def session_update(self, *, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        if getattr(update, "state", None) == "idle":
            self.idle.set()

    async def request_permission(self, **kwargs: Any) -> Any:
        schema = package().schema
        return schema.RequestPermissionResponse(
            outcome=schema.SelectedRequestPermissionOutcome(option_id="a")
        )


INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "probe", "version": "1"}},
}
JSON = {"Content-Type": "application/json"}


def call(request_id: int, method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


# -- 1 ---------------------------------------------------------------------------------------------


async def probe_sessions() -> None:
    acp = package()
    async with serve(acp.asgi_app(agents()["base"], path="/acp")) as (base, _):
        connection = await acp.connect_http(Recorder(), base + "/acp")
        await connection.initialize(protocol_version=2, info=acp.schema.Implementation(name="p", version="1"))
        opened, failure, started = 0, "none", time.monotonic()
        for _ in range(150):
            try:
                await asyncio.wait_for(connection.new_session(cwd="/"), 10)
            except Exception as error:
                failure = (
                    f"{type(error).__name__}({str(error)[:60]!r}) after {time.monotonic() - started:.1f} s"
                )
                break
            opened += 1
        say(1, "sessions opened on one connect_http connection (of 150)", f"{opened}; failure: {failure}")
        with contextlib.suppress(Exception):
            await asyncio.wait_for(connection.close(), 10)


# -- 2 ---------------------------------------------------------------------------------------------


def serve_example(port: int) -> None:
    """The server of probe 2: the example's agents behind the router, ``max_output_stall`` 5 s."""

    example = importlib.import_module("examples.remote_agent")
    acp = example.acp
    fields = set(inspect.signature(acp.ServerLimits).parameters)
    server_limits = (
        acp.ServerLimits(max_output_stall=5.0) if "max_output_stall" in fields else acp.ServerLimits()
    )
    router = acp.AgentProtocolRouter(
        v1=example.V1EchoAgent, v2=example.V2EchoAgent, v1_package=example.acp_v1
    )
    run_listening(acp.asgi_app(router, path="/acp", limits=server_limits), port, "critical")


def run_listening(app: Any, port: int, log_level: str) -> None:
    """Serve ``app`` with uvicorn on 127.0.0.1 (``port`` 0: a free one), printing ``listening PORT``."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level=log_level, access_log=False)
    server = uvicorn.Server(config)

    async def main() -> None:
        task = asyncio.ensure_future(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        print(f"listening {server.servers[0].sockets[0].getsockname()[1]}", flush=True)
        await task

    asyncio.run(main())


class RawWebSocket:
    """A WebSocket client on a bare socket that reads only when told to (a client that stops reading).

    Its frames are masked with the zero key, which leaves the payload as it is.
    """

    def __init__(self, port: int, receive_buffer: int = 4096) -> None:
        self.socket = socket.socket()
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.socket.connect(("127.0.0.1", port))
        self.socket.sendall(
            b"GET /acp HTTP/1.1\r\nHost: probe\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.socket.recv(4096)
        self.buffer = self.buffer.split(b"\r\n\r\n", 1)[1]

    def send(self, text: str) -> None:
        data = text.encode()
        size = len(data)
        if size < 126:
            head = bytes([0x81, 0x80 | size])
        elif size < 65536:
            head = bytes([0x81, 0x80 | 126]) + size.to_bytes(2, "big")
        else:
            head = bytes([0x81, 0x80 | 127]) + size.to_bytes(8, "big")
        self.socket.sendall(head + b"\0\0\0\0" + data)

    def recv(self) -> Any:
        def need(count: int) -> bytes:
            while len(self.buffer) < count:
                self.buffer += self.socket.recv(65536)
            taken, self.buffer = self.buffer[:count], self.buffer[count:]
            return taken

        size = need(2)[1] & 0x7F
        if size == 126:
            size = int.from_bytes(need(2), "big")
        elif size == 127:
            size = int.from_bytes(need(8), "big")
        return json.loads(need(size))


async def probe_unread_websocket(root: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, __file__, "--root", str(root), "--serve", "example"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=root,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline().split()[1])
        await asyncio.sleep(0.5)
        start_kib = rss_kib(process.pid)[0]
        raw = RawWebSocket(port)
        raw.send(json.dumps(INIT))
        raw.recv()
        raw.send(call(1, "session/new", {"cwd": "/"}))
        session = raw.recv()["result"]["sessionId"]
        text = "x" * (256 * 1024)
        sent = 0
        peak_kib = 0

        def send_prompts() -> None:  # read nothing from here on
            nonlocal sent
            raw.socket.settimeout(30)
            with contextlib.suppress(OSError):
                for index in range(1500):
                    raw.send(
                        call(
                            10 + index,
                            "session/prompt",
                            {"sessionId": session, "prompt": [{"type": "text", "text": text}]},
                        )
                    )
                    sent += 1

        sending = asyncio.ensure_future(asyncio.to_thread(send_prompts))
        started = time.monotonic()
        closed = "no"
        while time.monotonic() - started < 45:
            await asyncio.sleep(0.25)
            peak_kib = max(peak_kib, rss_kib(process.pid)[1])
            if sending.done() and closed == "no":
                raw.socket.setblocking(False)
                try:
                    while raw.socket.recv(1 << 20):
                        pass
                    closed = f"yes, {time.monotonic() - started:.0f} s after the first prompt"
                except BlockingIOError:
                    pass
                except OSError:
                    closed = f"yes (reset), {time.monotonic() - started:.0f} s after the first prompt"
                raw.socket.setblocking(True)
                if closed != "no":
                    break
        raw.socket.close()
        await sending
        say(
            2,
            "server RSS while a WebSocket client sends 256 KiB prompts and reads nothing",
            f"{start_kib / 1024:.0f} MiB at start, peak {peak_kib / 1024:.0f} MiB; "
            f"{sent} of 1500 prompts sent",
        )
        say(2, "the server closed that connection (max_output_stall 5 s)", closed)
    finally:
        process.terminate()
        process.wait(10)


# -- 3 ---------------------------------------------------------------------------------------------


def leftover_tasks(baseline: set[asyncio.Task[Any]]) -> int:
    return len(
        {t for t in asyncio.all_tasks() - baseline if not t.done() and t is not asyncio.current_task()}
    )


async def probe_initialize_given_up() -> None:
    import httpx
    from websockets.asyncio.client import connect

    acp = package()
    chosen, missing = limits(idle_timeout=2.0)
    app = acp.asgi_app(agents()["hanging"], path="/acp", limits=chosen)
    async with serve(app) as (base, server):
        baseline = set(asyncio.all_tasks())
        for _ in range(10):
            async with httpx.AsyncClient(timeout=0.3) as http:
                with contextlib.suppress(httpx.TimeoutException):
                    await http.post(base + "/acp", content=json.dumps(INIT), headers=JSON)
        for _ in range(10):
            socket = await connect(base.replace("http", "ws") + "/acp")
            await socket.send(json.dumps(INIT))
            await asyncio.sleep(0.05)
            socket.transport.abort()
        await asyncio.sleep(3)
        say(
            3,
            "connections left 3 s after 10 HTTP and 10 WebSocket clients gave up during initialize",
            f"{app.connections} connections, {leftover_tasks(baseline)} tasks",
        )
        silent = [await connect(base.replace("http", "ws") + "/acp") for _ in range(5)]
        await asyncio.sleep(8)
        still = sum(1 for s in silent if s.state.name == "OPEN")
        note = f" (no {', '.join(missing)} here)" if missing else " (idle_timeout 2 s)"
        say(
            3,
            "WebSocket clients that never send initialize, still connected after 8 s",
            f"{still} of 5{note}",
        )
        for s in silent:
            s.transport.abort()
        del server


# -- 4 ---------------------------------------------------------------------------------------------


async def held_for(port: int, head: bytes, drip: bytes | None, window: float) -> str:
    """Send ``head``, then ``drip`` one byte a second; how long until the server answers or closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head)
    started = time.monotonic()
    answer = b""
    try:
        while time.monotonic() - started < window:
            if drip is not None:
                writer.write(drip)
            with contextlib.suppress(TimeoutError):
                answer = await asyncio.wait_for(reader.read(200), 1.0)
                break
    except OSError:
        answer = b"(reset)"
    finally:
        writer.transport.abort()
    seconds = time.monotonic() - started
    if not answer and seconds >= window:
        return f"held for the whole {window:.0f} s window"
    status = answer.split(b"\r\n", 1)[0].decode(errors="replace") or "closed"
    return f"{status!r} after {seconds:.1f} s"


async def probe_slow_clients(root: Path) -> None:
    acp = package()
    chosen, missing = limits(body_timeout=6.0, idle_timeout=2.0)
    app = acp.asgi_app(agents()["base"], path="/acp", limits=chosen)
    options: dict[str, Any] = {}
    example = importlib.import_module("examples.remote_agent")
    with_header_deadline = getattr(example, "uvicorn_options", None)
    if with_header_deadline is not None:
        options = with_header_deadline(header_timeout=3.0)
    else:
        missing.append("a header deadline")
    window = 20.0
    async with serve(app, **options) as (base, _):
        port = int(base.rsplit(":", 1)[1])
        header = b"POST /acp HTTP/1.1\r\nHost: probe\r\n"
        body_head = header + b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
        results = await asyncio.gather(
            held_for(port, header, b"X", window),
            held_for(port, body_head, b" ", window),
            held_for(port, body_head, None, window),
        )
    note = f" (no {', '.join(missing)} here)" if missing else ""
    say(4, "a trickled header (a byte a second)" + note, results[0])
    say(4, "a trickled body (a byte a second)", results[1])
    say(4, "a body that never comes", results[2])
    del root


# -- 5 ---------------------------------------------------------------------------------------------


def serve_firehose(port: int) -> None:
    """The server of probe 5: the probe's agent, whose turns stream without yielding."""
    run_listening(package().asgi_app(agents()["base"], path="/acp"), port, "warning")


async def probe_flood_after_disconnect(root: Path) -> None:
    from websockets.asyncio.client import connect

    acp = package()
    errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 - a pipe nobody reads would stop the server
    process = subprocess.Popen(
        [sys.executable, __file__, "--root", str(root), "--serve", "firehose"],
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        cwd=root,
    )
    try:
        assert process.stdout is not None
        url = f"ws://127.0.0.1:{int(process.stdout.readline().split()[1])}/acp"
        other = await acp.connect_websocket(Recorder(), url)
        await other.initialize(protocol_version=2, info=acp.schema.Implementation(name="o", version="1"))
        worst = 0.0
        stop = asyncio.Event()

        async def ping() -> None:
            nonlocal worst
            while not stop.is_set():
                started = time.monotonic()
                await other.new_session(cwd="/")
                worst = max(worst, time.monotonic() - started)
                await asyncio.sleep(0.02)

        pinger = asyncio.ensure_future(ping())
        socket = await connect(url, max_queue=None)  # it reads all it is sent, until it vanishes
        await socket.send(json.dumps(INIT))
        await socket.recv()
        await socket.send(call(1, "session/new", {"cwd": "/"}))
        session = json.loads(await socket.recv())["result"]["sessionId"]
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "100000"}]}
        await socket.send(call(2, "session/prompt", prompt))
        for _ in range(100):
            await socket.recv()
        socket.transport.abort()  # gone, without a close frame
        await asyncio.sleep(6)
        stop.set()
        await pinger
        await other.close()
    finally:
        process.terminate()
        process.wait(10)
        errors.seek(0)
        lines = len(errors.read().splitlines())
        errors.close()
    say(5, "server stderr lines after a WebSocket client vanished mid-stream (100,000 updates)", str(lines))
    say(5, "another client's longest round trip meanwhile", f"{worst:.2f} s")


# -- 6 ---------------------------------------------------------------------------------------------


async def probe_unread_sse_after_close() -> None:
    import httpx

    acp = package()
    app = acp.asgi_app(agents()["base"], path="/acp")
    async with serve(app) as (base, server), httpx.AsyncClient(base_url=base) as http:
        port = int(base.rsplit(":", 1)[1])
        initialized = await http.post("/acp", content=json.dumps(INIT), headers=JSON)
        cid = initialized.headers["acp-connection-id"]
        connected = {**JSON, "Acp-Connection-Id": cid}
        await http.post("/acp", content=call(1, "session/new", {"cwd": "/"}), headers=connected)
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.connect(("127.0.0.1", port))
        raw.sendall(
            f"GET /acp HTTP/1.1\r\nHost: probe\r\nAccept: text/event-stream\r\n"
            f"Acp-Connection-Id: {cid}\r\nAcp-Session-Id: s-1\r\n\r\n".encode()
        )
        prompt = call(
            2, "session/prompt", {"sessionId": "s-1", "prompt": [{"type": "text", "text": "100000"}]}
        )
        await http.post("/acp", content=prompt, headers={**connected, "Acp-Session-Id": "s-1"})
        await asyncio.sleep(2)  # the stream's writes now wait for a reader that never reads
        streams_before = len(server.server_state.tasks)
        await app.close()
        await asyncio.sleep(5)
        left = len(server.server_state.tasks)
        raw.setblocking(False)
        ended = "no"
        with contextlib.suppress(BlockingIOError):
            while True:
                data = raw.recv(1 << 20)
                if not data:
                    ended = "yes (end of stream)"
                    break
        with contextlib.suppress(OSError):
            raw.recv(1)
        raw.close()
    say(
        6,
        "ASGI responses still open 5 s after app.close(), one SSE stream never read",
        f"{left} (of {streams_before} before); the client saw its stream end: {ended}",
    )


# -- 7 ---------------------------------------------------------------------------------------------


async def dropped_stream_loss(resume: bool) -> tuple[int, int]:
    """(events lost, events received twice) when a session stream is dropped after 20,000 of 200,000."""
    import httpx

    acp = package()
    total = 200_000
    app = acp.asgi_app(agents()["base"], path="/acp")
    async with serve(app) as (base, _), httpx.AsyncClient(base_url=base, timeout=60) as http:
        cid = (await http.post("/acp", content=json.dumps(INIT), headers=JSON)).headers["acp-connection-id"]
        connected = {**JSON, "Acp-Connection-Id": cid}
        await http.post("/acp", content=call(1, "session/new", {"cwd": "/"}), headers=connected)
        stream = {"Accept": "text/event-stream", "Acp-Connection-Id": cid, "Acp-Session-Id": "s-1"}
        seen: list[int] = []
        last_id = "0"
        done = False

        async def read(headers: dict[str, str], limit: int | None) -> None:
            nonlocal last_id, done
            async with http.stream("GET", "/acp", headers=headers) as response:
                if response.status_code != 200:
                    raise RuntimeError(f"stream refused: {response.status_code}")
                if limit is not None:
                    prompt = {"sessionId": "s-1", "prompt": [{"type": "text", "text": str(total)}]}
                    posted = call(2, "session/prompt", prompt)
                    await http.post("/acp", content=posted, headers={**connected, "Acp-Session-Id": "s-1"})
                async for line in response.aiter_lines():
                    if line.startswith("id:"):
                        last_id = line[3:].strip()
                    if not line.startswith("data:"):
                        continue
                    update = json.loads(line[5:]).get("params", {}).get("update", {})
                    if update.get("sessionUpdate") == "agent_message_chunk":
                        seen.append(int(update["content"]["text"]))
                    if update.get("state") == "idle":
                        done = True
                        return
                    if limit is not None and len(seen) >= limit:
                        return  # dropped: the connection closes with the response unread

        await read({**stream, "Last-Event-ID": "0"} if resume else stream, 20_000)
        for _ in range(100):
            try:
                await read({**stream, "Last-Event-ID": last_id} if resume else stream, None)
                break
            except RuntimeError:
                await asyncio.sleep(0.05)  # 409 until the server sees the first reader gone
        assert done, "the turn did not end"
    return total - len(set(seen)), len(seen) - len(set(seen))


async def probe_small_ones(root: Path) -> None:
    import httpx
    from websockets.asyncio.client import connect

    acp = package()
    lost, twice = await dropped_stream_loss(resume=False)
    say(7, "events lost when a session stream is dropped at 20,000 of 200,000, as the TS client", f"{lost}")
    lost, twice = await dropped_stream_loss(resume=True)
    say(7, "the same, reading again with Last-Event-ID", f"{lost} lost, {twice} twice")

    async with (
        serve(acp.asgi_app(agents()["base"], path="/acp")) as (base, _),
        httpx.AsyncClient(base_url=base) as http,
    ):
        null_id = await http.post("/acp", content=json.dumps({**INIT, "id": None}), headers=JSON)
        say(7, "HTTP initialize with id: null", f"{null_id.status_code} {null_id.text[:60]!r}")
        async with connect(base.replace("http", "ws") + "/acp") as ws:
            ws_id = ws.response.headers["Acp-Connection-Id"]
            await ws.send(json.dumps(INIT))
            await ws.recv()
            headers = {**JSON, "Acp-Connection-Id": ws_id}
            over_http = await http.post("/acp", content=call(5, "session/new", {"cwd": "/"}), headers=headers)
            say(7, "a WebSocket connection's id in an HTTP POST", str(over_http.status_code))
        cid = (await http.post("/acp", content=json.dumps(INIT), headers=JSON)).headers["acp-connection-id"]
        bad = await http.post("/acp", content=b"{nope", headers={**JSON, "Acp-Connection-Id": cid})
        say(
            7,
            "a malformed POST",
            f"{bad.status_code} {bad.headers.get('content-type')} {bad.text[:80]!r}",
        )

    async with serve(acp.asgi_app(agents()["big"], path="/acp")) as (base, _):
        client = Recorder()
        connection = await acp.connect_http(client, base + "/acp")
        await connection.initialize(protocol_version=2, info=acp.schema.Implementation(name="p", version="1"))
        session = await connection.new_session(cwd="/")
        started = time.monotonic()
        await connection.prompt(session_id=session.session_id, prompt=[acp.schema.TextContentBlock(text="1")])
        while not client.updates:
            await asyncio.sleep(0.005)
        say(
            7,
            "connect_http: one 16 MiB event, from the prompt to the client's handler",
            f"{time.monotonic() - started:.2f} s",
        )
        await connection.close()

        socket_ = await acp.connect_websocket(Recorder(), base.replace("http", "ws") + "/acp")
        ping = socket_.connection.channel.socket.ping_interval
        await socket_.close()
        channel = acp.HttpChannel(base + "/acp")
        read = getattr(channel, "_timeout", channel.client.timeout).read
        await channel.client.aclose()
    say(7, "liveness: connect_websocket's ping interval, connect_http's read timeout", f"{ping}, {read}")
    port = free_port()
    failures = []
    for name, attempt in (
        ("connect_websocket", lambda: acp.connect_websocket(Recorder(), f"ws://127.0.0.1:{port}/acp")),
        ("connect_http + initialize", lambda: http_initialize(acp, f"http://127.0.0.1:{port}/acp")),
    ):
        try:
            await attempt()
        except Exception as error:
            own = getattr(acp, "TransportError", None)
            kind = "the package's TransportError" if own and isinstance(error, own) else "not the package's"
            failures.append(f"{name}: {type(error).__module__}.{type(error).__name__} ({kind})")
    say(7, "a refused connect raises", "; ".join(failures))
    del root


async def http_initialize(acp: Any, url: str) -> None:
    connection = await acp.connect_http(Recorder(), url)
    try:
        await connection.initialize(protocol_version=2, info=acp.schema.Implementation(name="p", version="1"))
    finally:
        await connection.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- main ------------------------------------------------------------------------------------------

PROBES: dict[int, Callable[[Path], Any]] = {
    1: lambda root: probe_sessions(),
    2: probe_unread_websocket,
    3: lambda root: probe_initialize_given_up(),
    4: probe_slow_clients,
    5: probe_flood_after_disconnect,
    6: lambda root: probe_unread_sse_after_close(),
    7: probe_small_ones,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to probe (default: this one)")
    parser.add_argument("--only", default="", help="comma-separated finding numbers")
    parser.add_argument("--serve", choices=["example", "firehose"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = args.root.resolve()
    setup_path(root)
    os.chdir(root)
    if args.serve:
        (serve_example if args.serve == "example" else serve_firehose)(0)
        return
    wanted = [int(n) for n in args.only.split(",") if n] or sorted(PROBES)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    print(f"probing {root} ({commit.stdout.strip() or 'not a git checkout'}), package {PACKAGE}", flush=True)
    for number in wanted:
        asyncio.run(PROBES[number](root))


if __name__ == "__main__":
    main()
