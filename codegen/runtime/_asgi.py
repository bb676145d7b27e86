"""Serve ACP over Streamable HTTP and WebSocket, at one path: an ASGI application.

This file is written once by hand and copied unchanged into every generated
package; it needs only the standard library (any ASGI server runs it:
uvicorn, hypercorn; it mounts into Starlette or FastAPI).  The wire is the one
of the official TypeScript SDK 2.4.0's ``AcpServer``:

* ``POST`` an ``initialize`` without ``Acp-Connection-Id``: it is answered in
  that response (200, the JSON-RPC response, and the new ``Acp-Connection-Id``);
  one with ``id: null`` is 400; a client that leaves before the answer ends the
  connection it opened;
* later ``POST`` s carry that header and ``Content-Type: application/json``
  (415 otherwise) and get 202 with an empty body; their answers come on the
  streams.  A body that is not JSON, or not a JSON-RPC object, is 400 with a
  JSON-RPC error (``-32700``, ``-32600``, ``id: null``);
* ``GET`` with ``Accept: text/event-stream`` (406 otherwise) opens a stream of
  server messages as SSE ``data:`` events: without ``Acp-Session-Id``, the
  connection's (session-less messages, such as the ``session/new`` response);
  with it, that session's (its updates, agent requests and prompt response).
  One reader per stream (409 for a second); messages sent before a reader
  attaches are held; headers go out at once and a keep-alive every 15 s;
* a message whose params name a ``sessionId`` needs that ``Acp-Session-Id``
  (400 when it is missing or differs), and so does one of the methods whose
  params require it (``SESSIONS.scoped``); a response to an agent request may
  leave it out (the official Python SDK 0.12.1 does), but not name another.
  A response comes on the stream of the session its request named, except for
  ``SESSIONS.response_on_connection`` (v1's ``session/load``);
* ``DELETE`` closes the connection;
* a WebSocket upgrade of the same path carries one JSON-RPC message per text
  frame (binary frames are ignored); the first must be ``initialize``, or the
  socket is closed with 1002.  A WebSocket connection's id is not one of the
  HTTP connections' (404 there).

Beyond both official SDKs, a stream can be resumed: a ``GET`` carrying
``Last-Event-ID`` (``0`` the first time) gets events with ``id:`` fields (the
stream starts with ``id: <that number>``) and the connection keeps the last
:attr:`ServerLimits.replay_buffer_bytes` of written events; a ``GET`` with the
last id its client read replays what came after it, taking the stream over from
a reader that is gone.  Past the buffer it is 410, with the stream's newest id
as ``Last-Event-ID``: a client that accepts the loss resumes from there.
Without ``Last-Event-ID`` the wire is the TypeScript server's, byte for byte.

Limits (:class:`ServerLimits`, each configurable) answer as TS 2.4.0 does: a
body over 16 MiB is 413, a session or request id over 1024 characters 400,
more than 1024 session streams nobody reads, or 64 MiB of output nobody reads
for 60 s, close the connection, on both transports.  A request is taken in (a
WebSocket reads on, a ``POST`` is forwarded) only while that output and the
requests still being answered hold less than the limit: a client that reads
nothing cannot make the server hold more.  A body that takes over 300 s, or sends
nothing for 60 s, is 408; so is a WebSocket that sends no ``initialize`` for
60 s (closed, 1008).  The ASGI server reads the headers before the app sees a
request: give it a header deadline (``examples/remote_agent.py`` does for
uvicorn).  ``authenticate`` sees every request's headers before any ACP
message is read and may refuse it (:class:`AuthError`, 401 or 403); what it
returns is the connection's principal, and a request of another principal is
answered as if the connection did not exist (404).  A connection's id is its
worker's name and 256 random bits; a request naming another worker's connection
is 421 (:class:`AcpAsgiApp`).  ``allowed_origins`` refuses (403) a browser
request from any other ``Origin``.

``SESSIONS`` is the served package's :class:`SessionRoutes` (``bindings``), the
union of both for an ``AgentProtocolRouter``: written from ``[v<N>.protocol]`` of
``codegen/knowledge.toml`` and the schema, not named here.  The package's bindings
hand it over with the package (``own=``, a :class:`GeneratedPackage`): this file never
looks its package up.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import re
import secrets
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Final

from ._rpc import GeneratedPackage, RequestError, SessionRoutes, decode, encode, encode_bytes, message_kind

__all__ = ["AcpAsgiApp", "AuthError", "RequestInfo", "ServerLimits", "asgi_app"]

logger = logging.getLogger("acp")

MiB: Final = 1024 * 1024
CONNECTION_HEADER: Final = "acp-connection-id"
SESSION_HEADER: Final = "acp-session-id"
LAST_EVENT_ID_HEADER: Final = "last-event-id"
_NO_BATCHES: Final = "JSON-RPC batches are not supported"
WORKER_ENV: Final = "ACP_WORKER"
"""The environment variable naming this process's worker, when ``asgi_app`` is not given ``worker``."""
WORKER_HEADER: Final = "acp-worker"
_WORKER_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
DEPLOY_DOC: Final = "acp-codegen's docs/deploy.md"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class ServerLimits:
    """What one connection may hold, and how long a client may take; the defaults are TS 2.4.0's.

    ``body_timeout`` is node's ``requestTimeout`` behind the TypeScript server;
    ``idle_timeout`` and ``replay_buffer_bytes`` have no TypeScript counterpart.
    """

    max_request_body_bytes: int = 16 * MiB
    """A larger ``POST`` body (or WebSocket frame) is refused: 413 (close 1009)."""
    max_buffered_bytes: int = 64 * MiB
    """Output nobody has read yet: past it the agent's sends wait.  Requests are held (a WebSocket
    stops reading) while that output and the requests still being answered reach it together."""
    max_output_stall: float = 60.0
    """Seconds the output may stay over ``max_buffered_bytes`` before the connection is closed."""
    max_buffered_session_streams: int = 1024
    """Session streams holding messages with no reader: one more closes the connection."""
    max_id_length: int = 1024
    """The longest session id or string request id: a longer one is 400."""
    keep_alive: float = 15.0
    """Seconds between SSE keep-alive comments on an idle stream."""
    body_timeout: float = 300.0
    """Seconds a ``POST`` body may take, from when the app gets the request: 408 after."""
    idle_timeout: float = 60.0
    """Seconds a ``POST`` body may send nothing (408), or a WebSocket no ``initialize`` (close 1008)."""
    replay_buffer_bytes: int = 8 * MiB
    """Written events a connection keeps for clients that resume a stream (``Last-Event-ID``); 0: none."""

    def __post_init__(self) -> None:
        for name in ("max_request_body_bytes", "max_buffered_bytes", "max_buffered_session_streams"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        for name in ("max_id_length", "max_output_stall", "keep_alive", "body_timeout", "idle_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.replay_buffer_bytes < 0:
            raise ValueError("replay_buffer_bytes must not be negative")


class AuthError(Exception):
    """Raised by ``authenticate`` to refuse a request: its status (401 or 403) and text."""

    def __init__(self, status: int = 401, message: str = "Unauthorized", headers: Mapping[str, str] = {}):
        super().__init__(message)
        if status not in (401, 403):
            raise ValueError("a refused request is answered 401 or 403")
        self.status = status
        self.message = message
        self.headers = dict(headers)


@dataclass(frozen=True)
class RequestInfo:
    """What ``authenticate`` sees of a request, before any ACP message is read."""

    method: str
    """``GET``, ``POST``, ``DELETE``..., or ``WEBSOCKET`` for an upgrade."""
    path: str
    headers: Mapping[str, str]
    """Lower-case names; a repeated header's values joined with ``, ``."""
    client: tuple[str, int] | None


Authenticate = Callable[[RequestInfo], Any]
"""Returns the request's principal (or an awaitable of it); raises :class:`AuthError` to refuse it."""


class _LimitError(Exception):
    pass


def _key(request_id: Any) -> Any:
    """A request id as a dict key that keeps ``1`` and ``"1"`` apart."""
    return (type(request_id).__name__, request_id)


CHUNK_BYTES: Final = 64 * 1024
"""The most of a stream's queued events written in one piece: about what uvicorn buffers before it
waits for the client, so that a stream that drops has few events in flight."""
CLOSE_GRACE: Final = 1.0
"""Seconds a stream (or socket) that must end may still wait for its client to read, before it is
cut (see :func:`_cut`)."""
PACE: Final = 5
"""Under a server that hides its transport: WebSocket sends in a row without the event loop
running before the next one waits a turn of the loop.

A send that does not have to wait for the client returns at once, so an agent sending in a loop
would never let the loop see that the client went away, and would write the rest of its turn into
the dead socket (asyncio logs a warning per write from the sixth after the failed one on) while
every other client waits.  Where the transport can be seen (uvicorn, see :func:`_transport_of`),
a send first asks it whether it is closing, which a failed write makes it at once; elsewhere
every fifth send in a row gives the loop a turn, which keeps the warnings at none."""


class _Mailbox:
    """One outbound stream: SSE events waiting for their reader."""

    __slots__ = (
        "connection",
        "finished",
        "generation",
        "on_finish",
        "queue",
        "reader",
        "resumable",
        "session",
        "wake",
    )

    def __init__(self, connection: _ServerConnection, session: str | None) -> None:
        self.connection = connection
        self.session = session
        self.queue: deque[bytes] = deque()
        self.reader = False
        self.generation = 0
        """Counts the readers attached: a reader whose number is no longer this one was taken over."""
        self.resumable = False
        """Events get ``id:`` fields and are kept for a resume (a reader asked with ``Last-Event-ID``)."""
        self.finished = False
        self.on_finish: Callable[[], None] | None = None
        self.wake = asyncio.Event()

    def push(self, event: bytes) -> None:
        if self.finished:
            return
        self.queue.append(event)
        self.connection.buffered_bytes += len(event)
        self.wake.set()

    def take_all(self, limit: int = CHUNK_BYTES) -> bytes:
        """Queued events, up to about ``limit`` bytes, as one chunk (numbered and kept if resumable)."""
        parts: list[bytes] = []
        size = 0
        queue = self.queue
        connection = self.connection
        if self.resumable:
            while queue and size < limit:
                event = queue.popleft()
                parts.append(b"id: %d\n" % connection.retain(self.session, event))
                parts.append(event)
                size += len(event)
        else:
            while queue and size < limit:
                event = queue.popleft()
                parts.append(event)
                size += len(event)
        connection.taken(size)
        return b"".join(parts)

    def finish(self) -> None:
        self.finished = True
        self.wake.set()
        if self.on_finish is not None:
            self.on_finish()


class _FrameTooLargeError(Exception):
    """A WebSocket frame ended its connection (it was too large)."""


class _ReplayGoneError(Exception):
    """A resume asked for events the replay buffer no longer holds; ``written`` is the stream's newest."""

    def __init__(self, message: str, written: int) -> None:
        super().__init__(message)
        self.written = written


class _ServerConnection:
    """One ACP connection of the server: the :class:`Channel` its agent talks through."""

    def __init__(
        self, app: AcpAsgiApp, principal: Any, websocket: Send | None = None, connection_id: str | None = None
    ) -> None:
        self.app = app
        self.limits = app.limits
        self.id = connection_id or app.new_connection_id()
        self.principal = principal
        self.websocket = websocket
        self.inbound: asyncio.Queue[Any] = asyncio.Queue()
        self.stream = _Mailbox(self, None)
        self.sessions: dict[str, _Mailbox] = {}
        self.unread_sessions = 0
        self.pending_routes: dict[Any, str | None] = {}
        """Client request id -> the session stream its response goes to (``None``: the connection's)."""
        self.agent_request_routes: dict[Any, str | None] = {}
        """Agent request id -> the session its client's response belongs to."""
        self.buffered_bytes = 0
        """Output not yet written: events no reader has taken, WebSocket frames still being sent."""
        self.answering: dict[Any, int] = {}
        """Client request id -> the size of the request, until its response is sent."""
        self.answering_bytes = 0
        """The requests the agent is still answering: what their handlers hold, counted with the output
        before another request is taken in (a client that reads nothing sends requests whose answers
        cannot go out: each holds its input and its answer)."""
        self.progress = asyncio.Event()
        self.replay: deque[tuple[int, str | None, bytes]] = deque()
        """Written events of resumable streams, oldest first: (event id, session or ``None``, event)."""
        self.replay_bytes = 0
        self.replay_dropped: dict[str | None, int] = {}
        """Stream -> the newest event id the replay buffer had to drop."""
        self.replay_written: dict[str | None, int] = {}
        """Stream -> the newest event id written on it (a client that accepts a loss resumes from it)."""
        self.next_event_id = 1
        self.initial: asyncio.Future[Any] | None = None
        self.initial_id: Any = None
        self.closed = False
        self.close_code = 1000
        """The WebSocket close code once the connection ends: 1008 for a limit, 1001 when the app closes."""
        self.close_reason = ""
        self.on_shutdown: Callable[[], None] | None = None
        self.done = asyncio.Event()
        self.task: asyncio.Task[Any] | None = None
        self.transport = None if websocket is None else _transport_of(websocket)
        self._burst = 0

    # -- the agent's channel

    async def receive(self) -> Any:
        return await self.inbound.get()

    async def send(self, message: Any) -> None:
        if self.closed:
            raise ConnectionError("the connection is closed")
        if self.answering and isinstance(message, dict) and "method" not in message:
            self.answered(message.get("id"))
        initial = self.initial
        if (
            initial is not None
            and isinstance(message, dict)
            and "method" not in message
            and message.get("id") == self.initial_id
            and not initial.done()
        ):
            self.initial = None
            if self.websocket is not None:
                await self._send_frame(message)
            initial.set_result(message)
            return
        if self.websocket is not None:
            await self._send_frame(message)
            return
        try:
            mailbox = self._route(message)
        except _LimitError as error:
            await self._close_for_limit(str(error))
            raise ConnectionError(str(error)) from None
        mailbox.push(b"data: " + encode_bytes(message) + b"\n\n")
        if self.buffered_bytes >= self.limits.max_buffered_bytes:
            await self.wait_for_room()

    async def close(self) -> None:
        await self.shutdown()

    async def _send_frame(self, message: Any) -> None:
        """One frame to the client; over ``max_buffered_bytes`` of frames still being sent, it waits first."""
        assert self.websocket is not None
        if self.buffered_bytes >= self.limits.max_buffered_bytes:
            await self.wait_for_room()
        transport = self.transport
        if transport is not None and transport.is_closing():  # a write failed: the client is gone
            await self.shutdown()
            raise ConnectionError("the WebSocket closed")
        text = encode(message)
        size = len(text)
        self.buffered_bytes += size  # until the server has taken it: a client that reads nothing holds it
        try:
            await self.websocket({"type": "websocket.send", "text": text})
        except OSError as error:  # the ASGI server's "client disconnected"
            await self.shutdown()
            raise ConnectionError(f"the WebSocket closed: {error or type(error).__name__}") from None
        except RuntimeError:  # a send that waited while the app closed the socket
            if not self.closed:
                raise
            raise ConnectionError("the WebSocket closed") from None
        finally:
            self.taken(size)
        if transport is None:
            self._burst += 1
            if self._burst == 1:
                asyncio.get_running_loop().call_soon(self._end_burst)
            elif self._burst >= PACE:
                await asyncio.sleep(0)

    def _end_burst(self) -> None:
        self._burst = 0

    # -- routing the agent's output

    def _route(self, message: Any) -> _Mailbox:
        if not isinstance(message, dict):
            return self.stream
        if "method" not in message:  # a response
            route = self.pending_routes.pop(_key(message.get("id")), None)
            self._check_id(self.app.sessions.session_of(message.get("result")))
            return self.stream if route is None else self.session(route)
        session = self.app.sessions.session_of(message.get("params"))
        if "id" in message:
            self.agent_request_routes[_key(message["id"])] = session
        return self.stream if session is None else self.session(session)

    def _check_id(self, value: str | None) -> None:
        if value is not None and len(value) > self.limits.max_id_length:
            raise _LimitError(f"an id exceeds max_id_length ({self.limits.max_id_length})")

    def session(self, session: str) -> _Mailbox:
        """The session's stream; a new one holds messages until its reader comes."""
        found = self.sessions.get(session)
        if found is not None:
            return found
        self._check_id(session)
        if self.unread_sessions >= self.limits.max_buffered_session_streams:
            raise _LimitError(
                f"more than max_buffered_session_streams ({self.limits.max_buffered_session_streams}) "
                "session streams have no reader"
            )
        created = self.sessions[session] = _Mailbox(self, session)
        self.unread_sessions += 1
        return created

    def attach(self, mailbox: _Mailbox, take_over: bool = False) -> int | None:
        """Make a new reader the stream's; its number, or ``None`` (409) if another one reads it.

        ``take_over`` (a resume) replaces a reader still attached: a client resumes when its
        stream dropped, before the server may have seen the old one go.
        """
        if mailbox.finished or (mailbox.reader and not take_over):
            return None
        if not mailbox.reader:
            mailbox.reader = True
            if mailbox.session is not None:
                self.unread_sessions -= 1
        mailbox.generation += 1
        mailbox.wake.set()  # a reader taken over sees it is no longer the stream's
        return mailbox.generation

    def detach(self, mailbox: _Mailbox, generation: int) -> None:
        if mailbox.generation != generation:
            return  # taken over: the stream is its new reader's
        mailbox.reader = False
        if mailbox.session is None or self.closed:
            return
        if not mailbox.queue:
            self.sessions.pop(mailbox.session, None)
            mailbox.finish()
            return
        self.unread_sessions += 1

    def taken(self, size: int) -> None:
        self.buffered_bytes -= size
        self.progress.set()

    # -- resuming

    def retain(self, session: str | None, event: bytes) -> int:
        """Number a written event and keep it for a resume; drop the oldest past the buffer."""
        event_id = self.next_event_id
        self.next_event_id = event_id + 1
        self.replay_written[session] = event_id
        replay = self.replay
        replay.append((event_id, session, event))
        self.replay_bytes += len(event)
        limit = self.limits.replay_buffer_bytes
        while self.replay_bytes > limit:
            dropped_id, stream, dropped = replay.popleft()
            self.replay_bytes -= len(dropped)
            self.replay_dropped[stream] = dropped_id
        return event_id

    def resume(self, mailbox: _Mailbox, last: int) -> list[tuple[int, bytes]]:
        """The written events of the stream after ``last`` (``_ReplayGoneError``: some were dropped).

        The ones up to ``last`` arrived: they are let go.
        """
        session = mailbox.session
        dropped = self.replay_dropped.get(session, 0)
        if dropped > last:
            raise _ReplayGoneError(
                f"events after {last} are gone: the replay buffer keeps "
                f"{self.limits.replay_buffer_bytes} bytes and dropped up to event {dropped}",
                self.replay_written.get(session, dropped),
            )
        kept: deque[tuple[int, str | None, bytes]] = deque()
        again: list[tuple[int, bytes]] = []
        for entry in self.replay:
            event_id, stream, event = entry
            if stream != session:
                kept.append(entry)
            elif event_id > last:
                kept.append(entry)
                again.append((event_id, event))
            else:
                self.replay_bytes -= len(event)
        self.replay = kept
        mailbox.resumable = True
        return again

    # -- flow

    def full(self, taking_requests: bool = False) -> bool:
        """Whether the output is at ``max_buffered_bytes`` (for a new request: with those being answered)."""
        held = self.buffered_bytes + (self.answering_bytes if taking_requests else 0)
        return held >= self.limits.max_buffered_bytes

    async def wait_for_room(self, taking_requests: bool = False) -> None:
        """Wait while nobody reads the output; close the connection if it stays still ``max_output_stall``.

        ``taking_requests``: before a request is taken in, the requests being answered count too;
        while none of the output waits for the client, that wait has no deadline.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.max_output_stall
        while not self.closed and self.full(taking_requests):
            self.progress.clear()
            timeout = max(0.0, deadline - loop.time()) if self.buffered_bytes > 0 else None
            try:
                await asyncio.wait_for(self.progress.wait(), timeout)
            except TimeoutError:
                stall = self.limits.max_output_stall
                await self._close_for_limit(f"output stalled for max_output_stall ({stall}s)")
                raise ConnectionError("the client read none of the output in time") from None
            deadline = loop.time() + self.limits.max_output_stall

    # -- lifetime

    def feed(self, message: Any, size: int = 0) -> None:
        """Hand a client message to the agent; a request's ``size`` counts until it is answered."""
        if self.closed:
            return
        if size and "method" in message and "id" in message:
            key = _key(message["id"])
            self.answering_bytes += size - self.answering.get(key, 0)
            self.answering[key] = size
        self.inbound.put_nowait(message)

    def answered(self, request_id: Any) -> None:
        size = self.answering.pop(_key(request_id), 0)
        if size:
            self.answering_bytes -= size
            self.progress.set()

    async def _close_for_limit(self, why: str) -> None:
        logger.warning("closing ACP connection: %s", why)
        await self.shutdown(1008, why[:120])

    async def shutdown(self, code: int = 1000, reason: str = "") -> None:
        if self.closed:
            return
        self.closed = True
        self.close_code, self.close_reason = code, reason
        self.app._connections.pop(self.id, None)
        self.inbound.put_nowait(None)
        self.stream.finish()
        for mailbox in self.sessions.values():
            mailbox.finish()
        self.progress.set()
        self.replay.clear()
        if self.initial is not None and not self.initial.done():
            self.initial.set_exception(ConnectionError("the agent closed before answering initialize"))
        self.done.set()
        if self.on_shutdown is not None:
            self.on_shutdown()


_Target = Callable[[Any], Awaitable[Any]]


class AcpAsgiApp:
    """What :func:`asgi_app` returns: an ASGI application; ``close()`` ends every connection.

    A connection lives in the process that answered its ``initialize``.  Its id starts with
    the name of that process's worker (``<worker>.<256 random bits>``): ``worker``, else the
    ``ACP_WORKER`` environment variable, else one made of the process id and 16 random bits.
    A request naming another worker's connection is answered ``421 Misdirected Request``,
    naming the worker that holds it, so that several workers behind one address without a
    balancer that routes by that name (``uvicorn --workers N``) fail loudly, never silently.
    docs/deploy.md shows HAProxy in front of N workers.
    """

    def __init__(
        self,
        serve: _Target,
        *,
        authenticate: Authenticate | None = None,
        allowed_origins: Iterable[str] | None = None,
        limits: ServerLimits = ServerLimits(),
        path: str | None = None,
        sessions: SessionRoutes,
        worker: str | None = None,
    ) -> None:
        name = worker or os.environ.get(WORKER_ENV) or f"{os.getpid()}-{secrets.token_hex(2)}"
        if not _WORKER_NAME.fullmatch(name):
            raise ValueError(f"a worker name is 1 to 64 letters, digits, '-' or '_': {name!r}")
        self.worker = name
        """This process's name among the workers: the first part of its connections' ids."""
        self._serve = serve
        self.sessions = sessions
        """What the app routes by: the served package's ``SESSIONS``."""
        self.authenticate = authenticate
        self.allowed_origins = None if allowed_origins is None else frozenset(allowed_origins)
        self.limits = limits
        self.path = path
        self._connections: dict[str, _ServerConnection] = {}

    def new_connection_id(self) -> str:
        return f"{self.worker}.{secrets.token_urlsafe(32)}"

    @property
    def connections(self) -> int:
        """How many ACP connections are open."""
        return len(self._connections)

    async def close(self) -> None:
        """Close every connection (pending streams end; agents see the transport close)."""
        for connection in list(self._connections.values()):
            await connection.shutdown(1001, "Server shutting down")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif self.path is not None and scope.get("path") != self.path:
            if kind == "http":
                await _text(send, 404, "Not Found")
            else:
                await send({"type": "websocket.close", "code": 1008})
        elif kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _admit(
        self, scope: Scope, method: str, headers: Mapping[str, str]
    ) -> tuple[Any, AuthError | None]:
        """The request's principal, or why it is refused (the origin, then ``authenticate``)."""
        origin = headers.get("origin")
        if self.allowed_origins is not None and origin is not None and origin not in self.allowed_origins:
            return None, AuthError(403, "Origin not allowed")
        if self.authenticate is None:
            return None, None
        client = scope.get("client")
        info = RequestInfo(method, str(scope.get("path", "")), headers, tuple(client) if client else None)
        try:
            principal = self.authenticate(info)
            if inspect.isawaitable(principal):
                principal = await principal
        except AuthError as refused:
            return None, refused
        return principal, None

    def _find(self, headers: Mapping[str, str], principal: Any) -> _ServerConnection | None:
        """The HTTP connection a request names (a WebSocket's id names none here)."""
        connection = self._connections.get(headers.get(CONNECTION_HEADER, ""))
        if (
            connection is None
            or connection.closed
            or connection.websocket is not None
            or connection.principal != principal
        ):
            return None
        return connection

    async def _named(
        self, headers: Mapping[str, str], principal: Any, send: Send
    ) -> _ServerConnection | None:
        """The live connection of this principal the request names; else it is answered 400 or 404."""
        if CONNECTION_HEADER not in headers:
            await _text(send, 400, "Missing Acp-Connection-Id")
            return None
        holder, dot, _ = headers[CONNECTION_HEADER].partition(".")
        if dot and holder != self.worker:
            why = (
                f"Misdirected Request: the Acp-Connection-Id is of worker {holder}, and this is worker "
                f"{self.worker}: every request of a connection must reach the worker that answered its "
                f"initialize, or that worker is gone (see {DEPLOY_DOC})"
            )
            await _text(send, 421, why, {WORKER_HEADER: self.worker})
            return None
        connection = self._find(headers, principal)
        if connection is None:
            await _text(send, 404, "Unknown Acp-Connection-Id")
        return connection

    # -- HTTP

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = asyncio.get_running_loop().time()
        method = scope["method"]
        headers = _headers(scope)
        principal, refused = await self._admit(scope, method, headers)
        if refused is not None:
            await _text(send, refused.status, refused.message, refused.headers)
            return
        if method == "POST":
            await self._post(headers, principal, receive, send, started)
        elif method == "GET":
            await self._get(headers, principal, receive, send)
        elif method == "DELETE":
            connection = await self._named(headers, principal, send)
            if connection is None:
                return
            await connection.shutdown()
            await _empty(send, 202)
        else:
            await _text(send, 405, "Method Not Allowed", {"allow": "GET, POST, DELETE"})

    async def _post(
        self, headers: Mapping[str, str], principal: Any, receive: Receive, send: Send, started: float
    ) -> None:
        content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type != "application/json":
            await _text(send, 415, "Unsupported Media Type")
            return
        try:
            body = await _read_body(headers, receive, self.limits, started)
        except _RequestTimeoutError as late:
            await _text(send, 408, f"Request Timeout: {late}", {"connection": "close"})
            return
        if body is None:
            await _text(send, 413, f"Request body exceeds {self.limits.max_request_body_bytes} bytes")
            return
        try:
            message = decode(body)
        except ValueError:
            await _json_rpc_error(send, RequestError.parse_error())
            return
        if isinstance(message, list):
            await _json_rpc_error(send, RequestError.invalid_request({"reason": _NO_BATCHES}))
            return
        if not isinstance(message, dict):
            await _json_rpc_error(send, RequestError.invalid_request({"reason": "not a JSON-RPC message"}))
            return
        kind = message_kind(message)
        if kind == "request" and message.get("method") == "initialize":
            if CONNECTION_HEADER in headers:
                await _text(send, 400, "Initialize not allowed on existing connection")
                return
            if message["id"] is None:
                reason = {"reason": "Initialize request must include an ID"}
                await _json_rpc_error(send, RequestError.invalid_request(reason))
                return
            await self._initialize(message, principal, receive, send)
            return
        connection = await self._named(headers, principal, send)
        if connection is None:
            return
        problem = self._check_route(connection, message, kind, headers.get(SESSION_HEADER))
        if problem is not None:
            await _text(send, 400, problem)
            return
        if kind == "request" and connection.full(taking_requests=True):
            with contextlib.suppress(ConnectionError):
                await connection.wait_for_room(taking_requests=True)
        if connection.closed:
            await _text(send, 404, "Unknown Acp-Connection-Id")
            return
        connection.feed(message, len(body))
        await _empty(send, 202)

    def _check_route(
        self, connection: _ServerConnection, message: dict[str, Any], kind: str, header: str | None
    ) -> str | None:
        """Why the message cannot go where its headers say (``None``: it can), recording its route."""
        limit = self.limits.max_id_length
        if kind == "response":
            expected = connection.agent_request_routes.pop(_key(message.get("id")), None)
            if header is not None and expected is not None and header != expected:
                return "Mismatched Acp-Session-Id"
            return None
        method = message.get("method")
        session = self.sessions.session_of(message.get("params"))
        if header is None and (session is not None or method in self.sessions.scoped):
            return "Missing Acp-Session-Id"
        if header is not None and session is not None and header != session:
            return "Mismatched Acp-Session-Id"
        route = header if header is not None else session
        if route is not None and len(route) > limit:
            return f"Session ID exceeds maxIdLength ({limit})"
        request_id = message.get("id")
        if isinstance(request_id, str) and len(request_id) > limit:
            return f"Request ID exceeds maxIdLength ({limit})"
        if kind == "request":
            on_connection = method in self.sessions.response_on_connection
            connection.pending_routes[_key(request_id)] = None if on_connection else route
        return None

    async def _initialize(
        self, message: dict[str, Any], principal: Any, receive: Receive, send: Send
    ) -> None:
        connection = self._open(principal, None, message)
        initial = connection.initial
        assert initial is not None
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait((initial, gone), return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if not initial.done():  # the client gave up: nobody will use or delete the connection
            await connection.shutdown()
            return
        try:
            answer = initial.result()
        except ConnectionError as error:
            await connection.shutdown()
            failure = {"code": -32603, "message": "Initialize failed", "data": str(error)}
            await _json(send, 500, {"jsonrpc": "2.0", "id": message["id"], "error": failure})
            return
        await _json(send, 200, answer, {CONNECTION_HEADER: connection.id})

    def _open(
        self,
        principal: Any,
        websocket: Send | None,
        initialize: dict[str, Any],
        connection_id: str | None = None,
    ) -> _ServerConnection:
        connection = _ServerConnection(self, principal, websocket, connection_id)
        connection.initial = asyncio.get_running_loop().create_future()
        connection.initial_id = initialize["id"]
        self._connections[connection.id] = connection
        connection.feed(initialize)
        connection.task = asyncio.ensure_future(self._run(connection))
        return connection

    async def _run(self, connection: _ServerConnection) -> None:
        try:
            await self._serve(connection)
        except Exception:
            logger.exception("the ACP agent of a connection failed to start")
            await connection.shutdown(1011, "Agent failed to start")

    async def _get(self, headers: Mapping[str, str], principal: Any, receive: Receive, send: Send) -> None:
        if "text/event-stream" not in headers.get("accept", "").lower():
            await _text(send, 406, "Not Acceptable")
            return
        connection = await self._named(headers, principal, send)
        if connection is None:
            return
        session = headers.get(SESSION_HEADER)
        try:
            mailbox = connection.stream if session is None else connection.session(session)
        except _LimitError as error:
            await _text(send, 400, str(error))
            return
        last = headers.get(LAST_EVENT_ID_HEADER)
        resume = last is not None and self.limits.replay_buffer_bytes > 0
        again: list[tuple[int, bytes]] = []
        if resume:
            assert last is not None
            if not last.strip().isdigit():
                await _text(send, 400, "Last-Event-ID must be an event id this server sent, or 0")
                return
            try:
                again = connection.resume(mailbox, int(last))
            except _ReplayGoneError as gone:
                # where a client that accepts the loss (it reattaches the session) resumes from
                where = {LAST_EVENT_ID_HEADER: str(gone.written)}
                await _text(send, 410, f"Cannot resume the stream: {gone}", where)
                return
        generation = connection.attach(mailbox, take_over=resume)
        if generation is None:
            await _text(send, 409, "Outbound stream already has an active receiver")
            return
        head = b"id: %d\n\n" % int(last) if resume and last is not None else b""
        try:
            await _stream(mailbox, generation, head, again, receive, send, self.limits.keep_alive)
        finally:
            connection.detach(mailbox, generation)

    # -- WebSocket

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        principal, refused = await self._admit(scope, "WEBSOCKET", _headers(scope))
        if refused is not None:
            if "websocket.http.response" in scope.get("extensions", {}):
                await send(
                    _start(refused.status, "text/plain", refused.headers, "websocket.http.response.start")
                )
                await send({"type": "websocket.http.response.body", "body": refused.message.encode()})
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        connection_id = self.new_connection_id()  # sent in the handshake, as TS SDK 2.4.0 does
        await send(
            {"type": "websocket.accept", "headers": [(CONNECTION_HEADER.encode(), connection_id.encode())]}
        )
        await _WebSocket(self, principal, receive, send, connection_id).run()


class _WebSocket:
    """One accepted WebSocket: its frames go to its connection until either side ends.

    Frames are read by a task of their own, so that a connection that ends (its agent closed it,
    a limit, ``app.close()``) closes the socket at once, whatever the reading waits for.
    """

    def __init__(self, app: AcpAsgiApp, principal: Any, receive: Receive, send: Send, connection_id: str):
        self.app = app
        self.principal = principal
        self.receive = receive
        self.send = send
        self.connection_id = connection_id
        self.connection: _ServerConnection | None = None
        self.disconnected = False
        self.frame_size = 0
        """The length of the last text frame read."""
        self.ended = False
        """Whether this side chose the close code (the first message, initialize, a frame's size)."""
        self.close_code, self.close_reason = 1000, ""

    async def run(self) -> None:
        reader = asyncio.ensure_future(self._read())
        try:
            await asyncio.wait((reader,))
        finally:
            reader.cancel()
            if self.connection is not None:
                await self.connection.shutdown(self.close_code, self.close_reason)
        if not reader.cancelled() and reader.exception() is not None:
            logger.error("an ACP WebSocket failed", exc_info=reader.exception())
            self._ended(1011, "Internal error")
        if self.connection is not None and not self.ended:
            self.close_code, self.close_reason = self.connection.close_code, self.connection.close_reason
        if not self.disconnected:
            await self._close()

    def _stop_reading(self, reader: asyncio.Task[Any]) -> None:
        if reader is not asyncio.current_task():
            reader.cancel()

    async def _close(self) -> None:
        """The close frame; a client that has not read it ``CLOSE_GRACE`` later is cut (:func:`_cut`)."""
        message = {"type": "websocket.close", "code": self.close_code, "reason": self.close_reason}
        try:
            await asyncio.wait_for(self.send(message), CLOSE_GRACE)
        except TimeoutError:
            _cut(self.send, answer_due=True)
        except OSError:
            pass  # gone already
        else:
            _cut_later(self.send, answer_due=True)

    def _ended(self, code: int, reason: str) -> None:
        self.ended = True
        self.close_code, self.close_reason = code, reason

    async def _next(self) -> MutableMapping[str, Any]:
        event = await self.receive()
        if event["type"] == "websocket.disconnect":
            self.disconnected = True
        return event

    async def _read(self) -> None:
        with contextlib.suppress(_FrameTooLargeError):
            await self._read_frames()

    async def _read_frames(self) -> None:
        limits = self.app.limits
        deadline = asyncio.get_running_loop().time() + limits.idle_timeout
        while self.connection is None:  # up to initialize, within idle_timeout
            try:
                async with asyncio.timeout_at(deadline):
                    message = await self._next_message()
            except TimeoutError:
                self._ended(1008, "No initialize within idle_timeout")
                return
            if message is None:
                return
            kind = message_kind(message)
            if kind == "response":
                continue
            if kind != "request" or message.get("method") != "initialize" or message["id"] is None:
                self._ended(1002, "First message must be initialize")
                return
            if not await self._initialize(message):
                return
        connection = self.connection
        while (message := await self._next_message()) is not None:
            kind = message_kind(message)
            if kind == "request" and message.get("method") == "initialize":
                error = RequestError.invalid_request("Initialize not allowed on existing connection")
                reply = {"jsonrpc": "2.0", "id": message["id"], "error": error.to_json()}
                await self.send({"type": "websocket.send", "text": encode(reply)})
                continue
            if kind == "request" and connection.full(taking_requests=True):
                try:  # an answer adds output: wait until the client reads some of it
                    await connection.wait_for_room(taking_requests=True)
                except ConnectionError:
                    return
            connection.feed(message, self.frame_size)

    async def _next_message(self) -> dict[str, Any] | None:
        """The next message a frame carries (others are skipped or answered); ``None``: the client left."""
        while True:
            event = await self._next()
            if self.disconnected:
                return None
            message = await self._decode(event)
            if message is not None:
                return message

    async def _initialize(self, message: dict[str, Any]) -> bool:
        """Open the connection; wait for its answer while watching for the client leaving."""
        connection = self.app._open(self.principal, self.send, message, self.connection_id)
        self.connection = connection
        reader = asyncio.current_task()
        assert reader is not None and connection.initial is not None
        connection.on_shutdown = lambda: self._stop_reading(reader)
        initial = connection.initial
        held: list[Any] = []
        held_bytes = 0
        while not initial.done():
            event = asyncio.ensure_future(self._next())
            try:
                await asyncio.wait((initial, event), return_when=asyncio.FIRST_COMPLETED)
            finally:
                if not event.done():
                    event.cancel()
            if not event.done() or event.cancelled():
                continue
            if self.disconnected:
                return False
            held.append(event.result())  # frames sent before the answer: handled after it
            held_bytes += len(event.result().get("text") or "")
            if held_bytes > self.app.limits.max_buffered_bytes:
                self._ended(1008, "Too much input before initialize was answered")
                return False
        if initial.exception() is not None:
            self._ended(1011, "Initialize failed")
            return False
        for event in held:
            decoded = await self._decode(event)
            if decoded is not None:
                connection.feed(decoded)
        return True

    async def _decode(self, event: MutableMapping[str, Any]) -> dict[str, Any] | None:
        """The frame's message, or ``None`` (ignored, or answered with an error)."""
        text = event.get("text")
        if text is None:
            return None  # binary frames are ignored
        self.frame_size = len(text)
        if len(text) > self.app.limits.max_request_body_bytes:
            self._ended(1009, "Message too large")
            if self.connection is not None:
                await self.connection.shutdown(1009, "Message too large")
            raise _FrameTooLargeError
        try:
            message = decode(text)
        except ValueError:
            await _ws_error(self.send, RequestError.parse_error())
            return None
        if isinstance(message, list):
            await _ws_error(self.send, RequestError.invalid_request({"reason": _NO_BATCHES}))
            return None
        if not isinstance(message, dict):
            await _ws_error(self.send, RequestError.invalid_request())
            return None
        return message


def asgi_app(
    agent: Any,
    *,
    authenticate: Authenticate | None = None,
    allowed_origins: Iterable[str] | None = None,
    limits: ServerLimits = ServerLimits(),
    path: str | None = None,
    package: Any = None,
    own: GeneratedPackage | None = None,
    worker: str | None = None,
) -> AcpAsgiApp:
    """An ASGI application serving ``agent`` on Streamable HTTP and WebSocket at one path.

    ``agent`` is an agent factory (a class or function given each connection's
    ``AgentSideConnection``, as for ``run_agent``) of the package ``own`` (what its
    bindings' ``asgi_app`` passes: their ``PACKAGE``) or ``package`` (the package
    module itself), or an ``AgentProtocolRouter`` serving v1 and v2 clients (it
    knows its packages).  ``path`` restricts the app to one path (others are 404);
    by default it answers wherever it is mounted.  ``worker`` names this process
    among the workers serving the same address (see :class:`AcpAsgiApp`).  See the
    module docstring for the wire, ``authenticate``, ``allowed_origins`` and ``limits``.
    """
    serve = getattr(agent, "serve", None)
    if callable(serve) and hasattr(agent, "versions"):  # an AgentProtocolRouter of any package

        async def routed(channel: Any) -> Any:
            return await serve(channel)

        target: _Target = routed
        sessions = SessionRoutes.adopt(agent.sessions)
    else:
        served = own
        if served is None and package is not None:
            served = GeneratedPackage.of(package, "package")
        if served is None:
            raise TypeError(
                "asgi_app needs the package it serves: call the package's asgi_app (acp.asgi_app)"
            )
        if not callable(agent) and not hasattr(agent, "initialize"):
            raise TypeError("asgi_app needs an agent factory, an agent or an AgentProtocolRouter")
        connect = served.connect_to_client

        async def direct(channel: Any) -> Any:
            return connect(agent, channel)

        target = direct
        sessions = served.sessions
    return AcpAsgiApp(
        target,
        authenticate=authenticate,
        allowed_origins=allowed_origins,
        limits=limits,
        path=path,
        sessions=sessions,
        worker=worker,
    )


# -- ASGI plumbing ----------------------------------------------------------------------


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def _start(
    status: int, content_type: str | None, headers: Mapping[str, str] = {}, kind: str = "http.response.start"
) -> dict[str, Any]:
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    if content_type is not None:
        raw.append((b"content-type", content_type.encode("latin-1")))
    return {"type": kind, "status": status, "headers": raw}


async def _text(send: Send, status: int, text: str, headers: Mapping[str, str] = {}) -> None:
    await send(_start(status, "text/plain; charset=utf-8", headers))
    await send({"type": "http.response.body", "body": text.encode()})


async def _json(send: Send, status: int, value: Any, headers: Mapping[str, str] = {}) -> None:
    await send(_start(status, "application/json", headers))
    await send({"type": "http.response.body", "body": encode_bytes(value)})


async def _empty(send: Send, status: int) -> None:
    await send(_start(status, None, {"content-length": "0"}))
    await send({"type": "http.response.body", "body": b""})


async def _json_rpc_error(send: Send, error: RequestError) -> None:
    """400 with a JSON-RPC error (``id: null``) for a body that is no JSON-RPC message."""
    await _json(send, 400, {"jsonrpc": "2.0", "id": None, "error": error.to_json()})


async def _ws_error(send: Send, error: RequestError) -> None:
    await send(
        {"type": "websocket.send", "text": encode({"jsonrpc": "2.0", "id": None, "error": error.to_json()})}
    )


class _RequestTimeoutError(Exception):
    """A request body that came too slowly (408)."""


async def _read_body(
    headers: Mapping[str, str], receive: Receive, limits: ServerLimits, started: float
) -> bytes | None:
    """The request body, or ``None`` once it is over the size limit (the rest is not read).

    It must come within ``body_timeout`` of ``started`` (when the app got the request), with no
    gap of ``idle_timeout``: ``_RequestTimeoutError`` otherwise.
    """
    limit = limits.max_request_body_bytes
    declared = headers.get("content-length", "").strip()
    if declared.isdigit() and int(declared) > limit:
        return None
    loop = asyncio.get_running_loop()
    deadline = started + limits.body_timeout
    parts: list[bytes] = []
    size = 0
    while True:
        now = loop.time()
        idle = now + limits.idle_timeout
        try:
            async with asyncio.timeout_at(min(deadline, idle)):
                message = await receive()
        except TimeoutError:
            raise _RequestTimeoutError(
                f"no body for {limits.idle_timeout} s"
                if idle < deadline
                else f"body over {limits.body_timeout} s"
            ) from None
        if message["type"] == "http.disconnect":
            return b""
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


async def _disconnected(receive: Receive) -> None:
    """Return once the client is gone (after its body: nothing else comes)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _transport_of(send: Send) -> asyncio.WriteTransport | None:
    """The asyncio transport of the connection ``send`` writes to, where the server lets it be seen.

    ASGI hides the connection: a response (or socket) that must end while its client reads
    nothing would wait for it for ever, and the server would wait for that at shutdown; a send
    into a socket whose client vanished is not told so until the event loop runs.  uvicorn's
    ``send`` is a method of an object holding the transport, which answers both.
    """
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    return transport if isinstance(transport, asyncio.WriteTransport) else None


def _cut(send: Send, answer_due: bool = False) -> bool:
    """Cut the connection under ``send`` if its client has not taken all that was sent to it (or, with
    ``answer_due``, has not answered a WebSocket close); whether the server lets that be known.

    Aborting the transport ends a waiting send as the client leaving does.  Under other servers
    the connection is closed once the client has read it.
    """
    transport = _transport_of(send)
    if transport is None:
        return False
    if transport.get_write_buffer_size() > 0 or (answer_due and not transport.is_closing()):
        transport.abort()
    return True


def _cut_later(send: Send, answer_due: bool = False) -> None:
    """:func:`_cut` after ``CLOSE_GRACE`` seconds: what a client that reads takes in that time is not lost."""
    asyncio.get_running_loop().call_later(CLOSE_GRACE, _cut, send, answer_due)


async def _stream(
    mailbox: _Mailbox,
    generation: int,
    head: bytes,
    again: list[tuple[int, bytes]],
    receive: Receive,
    send: Send,
    keep_alive: float,
) -> None:
    """Send the mailbox's events as an SSE response until it finishes, the client leaves, or a
    resume takes the stream over; ``head`` and the events ``again`` (a resume's) go first."""
    await send(_start(200, "text/event-stream", {"cache-control": "no-cache", "x-accel-buffering": "no"}))
    await send({"type": "http.response.body", "body": b"", "more_body": True})
    gone = False
    idle = False
    sending = False
    cut = False

    async def watch() -> None:
        nonlocal gone
        while (await receive())["type"] != "http.disconnect":
            pass
        gone = True
        mailbox.wake.set()

    loop = asyncio.get_running_loop()
    timer: asyncio.TimerHandle | None = None
    task = asyncio.current_task()
    assert task is not None

    def tick() -> None:
        nonlocal idle, timer
        idle = True
        mailbox.wake.set()
        timer = loop.call_later(keep_alive, tick)

    def stuck() -> None:
        """The stream had to end ``CLOSE_GRACE`` ago: cut it if its client has not taken it."""
        nonlocal cut
        if not _cut(send) and sending and not gone:
            cut = True  # a server that does not let the connection be cut: leave the response
            task.cancel()

    def finishing() -> None:
        loop.call_later(CLOSE_GRACE, stuck)

    watcher = asyncio.ensure_future(watch())
    timer = loop.call_later(keep_alive, tick)
    mailbox.on_finish = finishing
    try:
        first = head + b"".join(b"id: %d\n%s" % (event_id, event) for event_id, event in again)
        if first:
            sending = True
            await send({"type": "http.response.body", "body": first, "more_body": True})
            sending = False
        while not gone and mailbox.generation == generation:
            if mailbox.queue:
                sending = True
                await send({"type": "http.response.body", "body": mailbox.take_all(), "more_body": True})
                sending = False
                idle = False
                continue
            if mailbox.finished:
                break
            if idle:
                idle = False
                await send({"type": "http.response.body", "body": b":\n\n", "more_body": True})
                continue
            mailbox.wake.clear()
            await mailbox.wake.wait()
        if not gone:
            sending = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            sending = False
    except asyncio.CancelledError:
        if not cut:
            raise
        task.uncancel()  # this stream's own cut: the response stays unfinished, the server closes it
    finally:
        if mailbox.on_finish is finishing:
            mailbox.on_finish = None
        if timer is not None:
            timer.cancel()
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await watcher
