"""A black-box ACP client for the TCK-keyed tests: an agent as a subprocess, raw JSON lines over its stdio.

The upstream TCK (``agentclientprotocol/acp-tck``) judges an agent only by what it writes to
stdout; so do these tests.  :class:`Peer` starts the agent of a :class:`Subject`, writes
requests and notifications (or any bytes), keeps every line the agent writes, and answers the
agent's own requests as a client would: ``session/request_permission`` by its ``permission``
policy, anything else ``-32601`` (the client advertises no capability).  :func:`prompt_turn`
drives one v2 prompt turn to its end, which in v2 is the idle ``state_update`` that follows
the turn's ``running`` (the ``session/prompt`` response only says the message was inserted).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.support.releases import GENERATED, ROOT

Permission = Literal["allow", "reject", "refuse", "hold"]
"""How the client answers a permission request: its allow option, its reject option, ``-32601``,
or not at all (the test answers, or cancels)."""

TIMEOUT = 20.0
"""The longest any single wait of these tests lasts before it fails."""
QUIET = 0.3
"""How long "nothing more arrives" is watched for."""

STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled")
"""The stop reasons v2 defines (a custom one begins with ``_``)."""


@dataclass(frozen=True)
class Subject:
    """An agent under test: how it is started, and the release its package was generated from."""

    name: str
    command: tuple[str, ...]
    release: str
    advertises_session: bool = True

    def __str__(self) -> str:
        return self.name


def _script(*parts: str) -> tuple[str, ...]:
    return (sys.executable, str(ROOT.joinpath(*parts)))


REFERENCE = Subject("reference", _script("examples", "agent.py"), "v2-sdk-2.3.0")
"""``examples/agent.py``: the reference agent on the newest v2 release."""
ROUTER = Subject("router", _script("examples", "router_agent.py"), "v2-sdk-2.3.0")
"""``examples/router_agent.py``: the same v2 agent behind ``AgentProtocolRouter``, with a v1 agent."""
CAREFUL = Subject(
    "careful", (*_script("tests", "tck", "careful_agent.py"), "acp_v2_sdk_2_3_0"), "v2-sdk-2.3.0", False
)
"""The agent a careful user writes from the README and docs/runtime.md, on the newest v2 release."""
CAREFUL_WITH_BATCHES = Subject(
    "careful-v2-sdk-2.1.0",
    (*_script("tests", "tck", "careful_agent.py"), "acp_v2_sdk_2_1_0"),
    "v2-sdk-2.1.0",
    False,
)
"""The same agent on v2-sdk-2.1.0, the newest release whose schema has JSON-RPC batches."""


@dataclass
class Line:
    """One line the agent wrote: its bytes and, if they are JSON, the value."""

    raw: bytes
    value: Any = None
    json: bool = False

    def messages(self) -> list[dict[str, Any]]:
        """The JSON-RPC objects of the line: itself, or the objects of a batch array."""
        if isinstance(self.value, dict):
            return [self.value]
        if isinstance(self.value, list):
            return [item for item in self.value if isinstance(item, dict)]
        return []


def initialize_params(version: int = 2, **extra: Any) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "info": {"name": "tck-client", "version": "1.0.0"},
        "capabilities": {},
        **extra,
    }


class Peer:
    """The client's end of one agent process."""

    def __init__(self, process: asyncio.subprocess.Process, permission: Permission) -> None:
        self.process = process
        self.permission = permission
        self.lines: list[Line] = []
        """Every line the agent wrote, in order."""
        self.sent: dict[Any, str] = {}
        """The method of each request this client sent, by id."""
        self.held: list[dict[str, Any]] = []
        """Permission requests left unanswered (``permission="hold"``)."""
        self.ended = False
        self.stderr_text = ""
        """What the agent wrote to stderr, once it exited."""
        self._next_id = 0
        self._changed = asyncio.Condition()
        assert process.stdout is not None and process.stdin is not None
        self._stdin = process.stdin
        self._pump = asyncio.ensure_future(self._read(process.stdout))

    # -- writing

    async def send_raw(self, data: str | bytes) -> None:
        self._stdin.write((data.encode() if isinstance(data, str) else data) + b"\n")
        await self._stdin.drain()

    async def send(self, message: Any) -> None:
        await self.send_raw(json.dumps(message))

    async def request(self, method: str, params: Any = None, *, request_id: Any = None) -> Any:
        """Send a request (``params`` ``None``: left out) and return its id."""
        if request_id is None:
            request_id, self._next_id = self._next_id, self._next_id + 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.sent[request_id] = method
        await self.send(message)
        return request_id

    async def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def call(self, method: str, params: Any = None, *, timeout: float = TIMEOUT) -> dict[str, Any]:
        """A request and its response message."""
        return await self.response(await self.request(method, params), timeout=timeout)

    async def answer(self, request: dict[str, Any], result: Any) -> None:
        await self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    # -- reading

    async def _read(self, stdout: asyncio.StreamReader) -> None:
        try:
            while line := await stdout.readline():
                entry = Line(line.rstrip(b"\n"))
                with contextlib.suppress(ValueError):
                    entry.value, entry.json = json.loads(entry.raw.decode("utf-8")), True
                self.lines.append(entry)
                for message in entry.messages():
                    if (
                        isinstance(message.get("method"), str)
                        and "id" in message
                        and not self._stdin.is_closing()
                    ):
                        with contextlib.suppress(ConnectionError):  # the client has left
                            await self._serve(message)
                async with self._changed:
                    self._changed.notify_all()
        finally:
            self.ended = True
            async with self._changed:
                self._changed.notify_all()

    async def _serve(self, request: dict[str, Any]) -> None:
        """Answer a request of the agent as the client would."""
        if request["method"] != "session/request_permission" or self.permission == "refuse":
            error = {"code": -32601, "message": "Method not found"}
            await self.send({"jsonrpc": "2.0", "id": request["id"], "error": error})
        elif self.permission == "hold":
            self.held.append(request)
        else:
            kinds = ("allow_once", "allow_always") if self.permission == "allow" else ("reject_once",)
            options = request.get("params", {}).get("options", [])
            chosen = next(o for o in options if o.get("kind") in kinds)
            await self.answer(request, {"outcome": {"outcome": "selected", "optionId": chosen["optionId"]}})

    def messages(self, start: int = 0) -> list[dict[str, Any]]:
        """The JSON-RPC objects of the lines from line ``start`` on."""
        return [m for line in self.lines[start:] for m in line.messages()]

    async def wait_for(
        self, found: Callable[[dict[str, Any]], bool], *, start: int = 0, timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        """The first message from line ``start`` on that ``found`` accepts (``TimeoutError``: none came)."""

        def match() -> dict[str, Any] | None:
            return next((m for m in self.messages(start) if found(m)), None)

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: match() is not None or self.ended), timeout)
        got = match()
        if got is None:
            raise EOFError("the agent ended its output")
        return got

    async def response(self, request_id: Any, *, timeout: float = TIMEOUT) -> dict[str, Any]:
        return await self.wait_for(lambda m: "method" not in m and m.get("id") == request_id, timeout=timeout)

    async def replies_within(self, seconds: float = QUIET, *, start: int | None = None) -> list[Line]:
        """The lines holding a reply (an object without ``method``) written within ``seconds``."""
        first = len(self.lines) if start is None else start
        await asyncio.sleep(seconds)
        return [line for line in self.lines[first:] if any("method" not in m for m in line.messages())]

    async def more(self, start: int, count: int) -> None:
        """Wait until the lines from ``start`` on hold more than ``count`` messages, or the output ends."""
        async with self._changed:
            await self._changed.wait_for(lambda: len(self.messages(start)) > count or self.ended)

    async def close(self) -> int:
        """Close the agent's stdin and wait for it to exit; its exit status."""
        if not self._stdin.is_closing():
            self._stdin.close()
        try:
            status = await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            status = await self.process.wait()
        await self._pump
        return status


@contextlib.asynccontextmanager
async def running(subject: Subject, permission: Permission = "allow") -> AsyncIterator[Peer]:
    """The agent of ``subject`` running, as a :class:`Peer`; on exit its stdin is closed.

    The agent's stderr is kept in ``peer.stderr_text`` once it exited; it must have exited on
    its own, with status 0, and written nothing to stderr (no traceback, no unretrieved task).
    """
    env = {**os.environ, "PYTHONPATH": str(GENERATED)}
    process = await asyncio.create_subprocess_exec(
        *subject.command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    peer = Peer(process, permission)
    stderr = asyncio.ensure_future(process.stderr.read()) if process.stderr else None
    try:
        yield peer
    finally:
        status = await peer.close()
        peer.stderr_text = (await stderr).decode(errors="replace") if stderr else ""
    assert status == 0 and peer.stderr_text == "", f"exit {status}: {peer.stderr_text}"


async def initialized(peer: Peer, **capabilities: Any) -> dict[str, Any]:
    """``initialize`` asking for v2; the result."""
    reply = await peer.call("initialize", initialize_params(capabilities=capabilities))
    assert "result" in reply, reply
    return reply["result"]  # type: ignore[no-any-return]


async def new_session(peer: Peer, cwd: Path | str, **params: Any) -> str:
    reply = await peer.call("session/new", {"cwd": str(cwd), **params})
    assert "result" in reply, reply
    session_id = reply["result"]["sessionId"]
    assert isinstance(session_id, str) and session_id
    return session_id


# -- a prompt turn ------------------------------------------------------------------------------


def update_of(message: dict[str, Any], session_id: str | None = None) -> dict[str, Any] | None:
    """The ``update`` of a ``session/update`` notification (for ``session_id``, if given)."""
    if message.get("method") != "session/update" or "id" in message:
        return None
    params = message.get("params")
    if not isinstance(params, dict) or (session_id is not None and params.get("sessionId") != session_id):
        return None
    update = params.get("update")
    return update if isinstance(update, dict) else None


@dataclass
class Turn:
    """What one prompt turn showed on the wire."""

    session_id: str
    response: dict[str, Any]
    """The ``session/prompt`` response: the acceptance receipt (or the error that refused it)."""
    start: int
    """The index of the first line written after the prompt was sent."""
    end: int
    """The index after the line that ended the turn."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """Everything the agent wrote during the turn."""
    cancelled_at: int | None = None
    """The line count when ``session/cancel`` (or the action) was sent, if it was."""

    @property
    def message_id(self) -> Any:
        return self.response.get("result", {}).get("messageId")

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The updates for ``session_id`` (every session's with ``None``), in order."""
        return [u for m in self.messages if (u := update_of(m, session_id)) is not None]

    def states(self) -> list[dict[str, Any]]:
        return [u for u in self.updates(self.session_id) if u.get("sessionUpdate") == "state_update"]

    @property
    def idle(self) -> dict[str, Any] | None:
        """The idle state update that ended the turn."""
        ends = [s for s in self.states() if s.get("state") == "idle"]
        return ends[-1] if ends else None

    @property
    def stop_reason(self) -> Any:
        return self.idle.get("stopReason") if self.idle else None

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """The agent's requests and notifications other than ``session/update`` during the turn."""
        return [
            m
            for m in self.messages
            if isinstance(m.get("method"), str)
            and m["method"] != "session/update"
            and (method is None or m["method"] == method)
        ]


async def prompt_turn(
    peer: Peer,
    session_id: str,
    blocks: list[dict[str, Any]] | None = None,
    *,
    extra: dict[str, Any] | None = None,
    on_running: Callable[[], Awaitable[None]] | None = None,
    timeout: float = TIMEOUT,
) -> Turn:
    """Send one ``session/prompt`` and read until its turn has ended.

    The turn ends with the prompt's error response, or with an idle ``state_update`` for the
    session that follows its ``running`` (or carries a ``stopReason``): an idle that only says the
    session is ready ends nothing.  ``on_running`` runs once, when ``running`` first shows (to
    cancel the turn, say).
    """
    start = len(peer.lines)
    blocks = blocks if blocks is not None else [{"type": "text", "text": "hi"}]
    params = {"sessionId": session_id, "prompt": blocks, **(extra or {})}
    request_id = await peer.request("session/prompt", params)
    turn = Turn(session_id, {}, start, start)
    running = ended = False
    seen = 0
    async with asyncio.timeout(timeout):
        while True:
            messages = peer.messages(start)
            for message in messages[seen:]:
                if "method" not in message and message.get("id") == request_id:
                    turn.response = message
                    ended = ended or "error" in message
                state = update_of(message, session_id)
                if state is None or state.get("sessionUpdate") != "state_update":
                    continue
                if state.get("state") == "running" and not running:
                    running = True
                    if on_running is not None:
                        turn.cancelled_at = len(peer.lines)
                        await on_running()
                elif state.get("state") == "idle" and (running or "stopReason" in state):
                    ended = True
            seen = len(messages)
            if ended and turn.response:
                turn.messages, turn.end = messages, len(peer.lines)
                return turn
            if peer.ended:
                raise EOFError(f"the agent ended its output during the turn: {messages}")
            await peer.more(start, seen)


# -- which agents a test judges -------------------------------------------------------------------

SESSION_AGENTS = (REFERENCE, ROUTER)
"""The agents that advertise ``capabilities.session``: every row judges them."""
EVERY_AGENT = (REFERENCE, ROUTER, CAREFUL)
"""The mandatory rows judge the careful user's agent too."""


def on(*subjects: Subject, router_in_make_test: bool = False) -> pytest.MarkDecorator:
    """Parametrize a test's ``subject`` with these agents.

    The router's v2 agent is the reference agent, so a check of it repeats what the reference's
    check shows: it is marked ``sweep`` (``make test-all``) unless ``router_in_make_test`` (the
    handshake rows, where routing is what is judged).
    """
    params = [
        pytest.param(
            subject,
            id=subject.name,
            marks=(pytest.mark.sweep,) if subject is ROUTER and not router_in_make_test else (),
        )
        for subject in subjects
    ]
    return pytest.mark.parametrize("subject", params, indirect=True)


def tck(*ids: str) -> pytest.MarkDecorator:
    """The upstream TCK requirements a test judges (``tests/tck/registry.py``)."""
    return pytest.mark.tck(*ids)


def run(coro: Awaitable[Any], timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))  # type: ignore[arg-type]
