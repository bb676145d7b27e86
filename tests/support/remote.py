"""Servers and peers for the remote-transport tests: all on 127.0.0.1, on ephemeral ports, bounded in time."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from tests.support.releases import GENERATED, ROOT

INTEROP = ROOT / "tests" / "interop"
TS_SDK = "acp-sdk-2-4"
"""The alias of TypeScript SDK 2.4.0 in tests/interop/package.json."""


def node_available() -> bool:
    from shutil import which

    return which("node") is not None and (INTEROP / "node_modules" / TS_SDK).is_dir()


@contextlib.asynccontextmanager
async def serve(app: Any) -> AsyncIterator[str]:
    """Run an ASGI app under uvicorn in this event loop; yields ``http://127.0.0.1:PORT``."""
    async with serving(app) as (base, _):
        yield base


@contextlib.asynccontextmanager
async def serving(app: Any, **options: Any) -> AsyncIterator[tuple[str, Any]]:
    """:func:`serve` with ``uvicorn.Config`` options; yields the base URL and the ``uvicorn.Server``."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off", **options)
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    task = asyncio.ensure_future(server.serve())
    try:
        async with asyncio.timeout(20):
            while not server.started:
                if task.done():
                    task.result()
                await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}", server
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)
        if not task.done():
            task.cancel()


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(GENERATED), str(ROOT), env.get("PYTHONPATH")]))
    return env


@contextlib.contextmanager
def listening(
    command: list[str], cwd: Path = ROOT, timeout: float = 30
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Start a server process and wait for its line with ``listening``; yields (process, that line).

    The process gets a pipe as stdin (closing it stops the TypeScript server) and is
    terminated, then killed, on exit.
    """
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = _read_line_with_timeout(process, timeout)
        assert (
            "listening" in line
        ), f"{command}: {line!r} {process.stderr.read() if process.poll() is not None else ''}"
        yield process, line
    finally:
        with contextlib.suppress(OSError):
            process.stdin.close()  # type: ignore[union-attr]
        stop_group(process)


def stop_group(process: subprocess.Popen[Any], grace: float = 10) -> None:
    """Terminate the process group of ``process`` (started with ``start_new_session``), killing it
    after ``grace`` seconds; close its pipes."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def _read_line_with_timeout(process: subprocess.Popen[str], timeout: float) -> str:
    import selectors

    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    try:
        if not selector.select(timeout):
            raise TimeoutError(f"no 'listening' line from {process.args} within {timeout}s")
        return process.stdout.readline()
    finally:
        selector.close()


def port_of(line: str) -> int:
    """The port in a ``listening`` line (``listening 1234`` or ``... http://127.0.0.1:1234/acp ...``)."""
    import re

    found = re.search(r"(?:127\.0\.0\.1:|listening )(\d+)", line)
    assert found, line
    return int(found.group(1))


def run_python(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=timeout
    )


def run_node(script: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", str(INTEROP / script), *args], cwd=INTEROP, capture_output=True, text=True, timeout=timeout
    )


def echo_agents(v2: Any, v1: Any) -> tuple[type, type]:
    """The agents of ``examples/remote_agent.py``, built on any v2 and v1 packages (the newest, in tests).

    Each prompt asks the client's permission, then echoes the prompt's words (``count N``: 1 to N)
    and ends the turn; ``session/cancel`` ends it early.  The example itself is fixed to the packages
    it imports, as a user's code is; the tests run the same behaviour on the newest releases.
    """
    schema, schema_v1 = v2.schema, v1.schema

    def reply_words(prompt: list[Any]) -> list[str]:
        words = " ".join(getattr(block, "text", "") for block in prompt).split()
        if len(words) == 2 and words[0] == "count" and words[1].isdigit():
            return [str(n) for n in range(1, int(words[1]) + 1)]
        return words

    class V2EchoAgent:
        def __init__(self, connection: Any) -> None:
            self.connection = connection
            self.sessions = 0
            self.turns: dict[str, asyncio.Task[None]] = {}
            self.watcher = asyncio.ensure_future(self.cancel_turns_on_close())

        async def cancel_turns_on_close(self) -> None:
            await self.connection.wait_closed()
            for turn in self.turns.values():
                turn.cancel()

        async def initialize(self, **kwargs: Any) -> Any:
            return schema.InitializeResponse(
                protocol_version=v2.PROTOCOL_VERSION,
                info=schema.Implementation(name="remote-echo-agent", version="1.0.0"),
                capabilities=schema.AgentCapabilities(session=schema.SessionCapabilities()),
            )

        async def new_session(self, **kwargs: Any) -> Any:
            self.sessions += 1
            return schema.NewSessionResponse(session_id=f"v2-{self.sessions}")

        async def resume_session(self, *, session_id: str, **kwargs: Any) -> Any:
            await self.connection.session_update(
                session_id=session_id, update=schema.NoneIdleStateSessionUpdate()
            )
            return schema.ResumeSessionResponse()

        async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
            message_id = await self.connection.echo_user_message(session_id=session_id, prompt=prompt)
            self.turns[session_id] = asyncio.ensure_future(self.turn(session_id, message_id, prompt))
            return schema.PromptResponse(message_id=message_id)

        async def session_cancel(self, *, session_id: str, **kwargs: Any) -> None:
            turn = self.turns.get(session_id)
            if turn is not None:
                turn.cancel()

        async def turn(self, session_id: str, message_id: str, prompt: list[Any]) -> None:
            update = self.connection.session_update
            try:
                await update(session_id=session_id, update=schema.RunningStateSessionUpdate())
                try:
                    decision = await self.connection.request_permission(
                        session_id=session_id,
                        title="Echo the prompt back?",
                        options=[
                            schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                            schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                        ],
                    )
                except v2.RequestError:  # no permission handler, or it failed: a rejection
                    allowed = False
                else:
                    allowed = getattr(decision.outcome, "option_id", None) == "allow"
                for index, word in enumerate(reply_words(prompt) if allowed else ["(not", "allowed)"]):
                    chunk = schema.TextContentBlock(text=word if index == 0 else " " + word)
                    await update(
                        session_id=session_id,
                        update=schema.AgentMessageChunkSessionUpdate(
                            message_id=f"reply-{message_id}", content=chunk
                        ),
                    )
                    await asyncio.sleep(0)
                await update(session_id=session_id, update=schema.EndTurnIdleStateSessionUpdate())
            except asyncio.CancelledError:
                if not self.connection.connection.closed:
                    await update(session_id=session_id, update=schema.CancelledIdleStateSessionUpdate())
                raise
            except ConnectionError:
                return
            finally:
                self.turns.pop(session_id, None)

    class V1EchoAgent:
        def __init__(self, connection: Any) -> None:
            self.connection = connection
            self.sessions = 0
            self.cancelled: set[str] = set()

        async def initialize(self, **kwargs: Any) -> Any:
            return schema_v1.InitializeResponse(
                protocol_version=v1.PROTOCOL_VERSION,
                agent_info=schema_v1.Implementation(name="remote-echo-agent", version="1.0.0"),
            )

        async def new_session(self, **kwargs: Any) -> Any:
            self.sessions += 1
            return schema_v1.NewSessionResponse(session_id=f"v1-{self.sessions}")

        async def session_cancel(self, *, session_id: str, **kwargs: Any) -> None:
            self.cancelled.add(session_id)

        async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
            self.cancelled.discard(session_id)
            try:
                decision = await self.connection.request_permission(
                    session_id=session_id,
                    tool_call=schema_v1.ToolCallUpdate(tool_call_id="echo", title="Echo the prompt back?"),
                    options=[
                        schema_v1.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                        schema_v1.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                    ],
                )
            except v1.RequestError:  # no permission handler, or it failed: a rejection
                allowed = False
            else:
                allowed = getattr(decision.outcome, "option_id", None) == "allow"
            for index, word in enumerate(reply_words(prompt) if allowed else ["(not", "allowed)"]):
                if session_id in self.cancelled:
                    return schema_v1.PromptResponse(stop_reason="cancelled")
                await self.connection.session_update(
                    session_id=session_id,
                    update=schema_v1.AgentMessageChunkSessionUpdate(
                        content=schema_v1.TextContentBlock(text=word if index == 0 else " " + word)
                    ),
                )
                await asyncio.sleep(0)
            return schema_v1.PromptResponse(
                stop_reason="cancelled" if session_id in self.cancelled else "end_turn"
            )

    return V2EchoAgent, V1EchoAgent


def echo_app(v2: Any, v1: Any, **options: Any) -> Any:
    """The ASGI app of ``examples/remote_agent.py`` (the router, v1 and v2) on the given packages."""
    v2_agent, v1_agent = echo_agents(v2, v1)
    router = v2.AgentProtocolRouter(v1=v1_agent, v2=v2_agent, v1_package=v1)
    return v2.asgi_app(router, path="/acp", **options)


class RecordingClient:
    """A client of either package: records updates, allows every permission request."""

    def __init__(self, package: Any) -> None:
        self.package = package
        self.updates: list[Any] = []
        self.permissions: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

    async def session_update(self, *, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self.changed.set()

    async def request_permission(self, **kwargs: Any) -> Any:
        self.permissions.append(kwargs)
        schema = self.package.schema
        outcome_type = getattr(schema, "SelectedRequestPermissionOutcome", None) or schema.AllowedOutcome
        return schema.RequestPermissionResponse(outcome=outcome_type(option_id="allow", outcome="selected"))

    async def until(self, predicate: Any, timeout: float = 20) -> Any:
        async with asyncio.timeout(timeout):
            while True:
                for update in self.updates:
                    if predicate(update):
                        return update
                self.changed.clear()
                await self.changed.wait()


def is_idle(update: Any) -> bool:
    return (
        getattr(update, "session_update", None) == "state_update" and getattr(update, "state", None) == "idle"
    )


def is_chunk(update: Any) -> bool:
    return getattr(update, "session_update", None) == "agent_message_chunk"


def chunk_text(updates: list[Any]) -> str:
    return "".join(u.content.text for u in updates if is_chunk(u))


class RawWebSocket:
    """A WebSocket client on a bare socket that reads only when asked: a client that stops reading.

    Its receive buffer is small and its reader stops taking bytes past ``receive_buffer``, so the
    server's output waits once a few KiB are unread.  Frames are masked with the zero key, which
    leaves the payload as it is.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, base: str, receive_buffer: int = 4096) -> RawWebSocket:
        reader, writer = await slow_reader(base, receive_buffer)
        writer.write(
            b"GET /acp HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        assert head.startswith(b"HTTP/1.1 101"), head
        return cls(reader, writer)

    async def send(self, message: Any) -> None:
        data = json.dumps(message).encode()
        size = len(data)
        if size < 126:
            head = bytes([0x81, 0x80 | size])
        elif size < 65536:
            head = bytes([0x81, 0x80 | 126]) + size.to_bytes(2, "big")
        else:
            head = bytes([0x81, 0x80 | 127]) + size.to_bytes(8, "big")
        self.writer.write(head + b"\0\0\0\0" + data)
        await self.writer.drain()

    async def recv(self) -> Any:
        """The next text frame's message."""

        async def take(count: int) -> bytes:
            return await asyncio.wait_for(self.reader.readexactly(count), 10)

        size = (await take(2))[1] & 0x7F
        if size == 126:
            size = int.from_bytes(await take(2), "big")
        elif size == 127:
            size = int.from_bytes(await take(8), "big")
        return json.loads(await take(size))

    async def ended(self, within: float = 5) -> bool:
        return await closed_by_server(self.reader, within)

    def abort(self) -> None:
        self.writer.transport.abort()


async def slow_reader(
    base: str, receive_buffer: int = 4096
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A TCP connection to the server whose reading side takes in a few KiB, then waits to be read."""
    import socket

    host, port = base.removeprefix("http://").split(":")
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    raw.setblocking(False)
    await asyncio.get_running_loop().sock_connect(raw, (host, int(port)))
    return await asyncio.open_connection(sock=raw, limit=receive_buffer)


async def closed_by_server(reader: asyncio.StreamReader, within: float = 5) -> bool:
    """Whether the server closes (or resets) the connection within ``within`` s (what it sent is dropped)."""
    try:
        while await asyncio.wait_for(reader.read(1 << 20), within):
            pass
    except TimeoutError:
        return False
    except OSError:
        pass
    return True
