"""Serve ACP over Streamable HTTP and WebSocket, at one path: an ASGI application.

This file is written once by hand and copied unchanged into every generated
package; it needs only the standard library (any ASGI server runs it:
uvicorn, hypercorn; it mounts into Starlette or FastAPI).  The wire is the one
of the official TypeScript SDK 2.4.0's ``AcpServer``:

* ``POST`` an ``initialize`` without ``Acp-Connection-Id``: it is answered in
  that response (200, the JSON-RPC response, and the new ``Acp-Connection-Id``);
* later ``POST`` s carry that header and ``Content-Type: application/json``
  (415 otherwise) and get 202 with an empty body; their answers come on the
  streams;
* ``GET`` with ``Accept: text/event-stream`` (406 otherwise) opens a stream of
  server messages as SSE ``data:`` events: without ``Acp-Session-Id``, the
  connection's (session-less messages, such as the ``session/new`` response);
  with it, that session's (its updates, agent requests and prompt response).
  One reader per stream (409 for a second); messages sent before a reader
  attaches are held; headers go out at once and a keep-alive every 15 s;
* a message whose params name a ``sessionId`` needs that ``Acp-Session-Id``
  (400 when it is missing or differs); a response to an agent request may
  leave it out (the official Python SDK 0.12.1 does), but not name another;
* ``DELETE`` closes the connection;
* a WebSocket upgrade of the same path carries one JSON-RPC message per text
  frame (binary frames are ignored); the first must be ``initialize``, or the
  socket is closed with 1002.

Limits (:class:`ServerLimits`, each configurable) answer as TS 2.4.0 does: a
body over 16 MiB is 413, a session or request id over 1024 characters 400,
more than 1024 session streams nobody reads, or 64 MiB of output nobody reads
for 60 s, close the connection.  ``authenticate`` sees every request's headers
before any ACP message is read and may refuse it (:class:`AuthError`, 401 or
403); what it returns is the connection's principal, and a request of another
principal is answered as if the connection did not exist (404).  Connection
ids are 256 random bits.  ``allowed_origins`` refuses (403) a browser request
from any other ``Origin``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import json
import logging
import secrets
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Final

from ._rpc import RequestError, encode, message_kind

__all__ = ["AcpAsgiApp", "AuthError", "RequestInfo", "ServerLimits", "asgi_app"]

logger = logging.getLogger("acp")

MiB: Final = 1024 * 1024
CONNECTION_HEADER: Final = "acp-connection-id"
SESSION_HEADER: Final = "acp-session-id"
SESSION_METHODS: Final = frozenset(
    {
        "session/cancel",
        "session/close",
        "session/delete",
        "session/fork",
        "session/load",
        "session/prompt",
        "session/resume",
        "session/set_config_option",
        "session/set_mode",
        "session/set_model",
    }
)
"""Methods whose ``POST`` must carry ``Acp-Session-Id`` (the TypeScript SDK 2.4.0's list)."""
RESPONSE_ON_CONNECTION: Final = frozenset({"session/load"})
"""Requests whose response comes on the connection's stream although they name a session."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class ServerLimits:
    """What one connection may hold; the defaults are the TypeScript SDK 2.4.0's."""

    max_request_body_bytes: int = 16 * MiB
    """A larger ``POST`` body (or WebSocket frame) is refused: 413 (close 1009)."""
    max_buffered_bytes: int = 64 * MiB
    """Output nobody has read yet: past it the agent's sends wait, and requests are held."""
    max_output_stall: float = 60.0
    """Seconds the output may stay over ``max_buffered_bytes`` before the connection is closed."""
    max_buffered_session_streams: int = 1024
    """Session streams holding messages with no reader: one more closes the connection."""
    max_id_length: int = 1024
    """The longest session id or string request id: a longer one is 400."""
    keep_alive: float = 15.0
    """Seconds between SSE keep-alive comments on an idle stream."""

    def __post_init__(self) -> None:
        for name in ("max_request_body_bytes", "max_buffered_bytes", "max_buffered_session_streams"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.max_id_length <= 0 or self.max_output_stall <= 0 or self.keep_alive <= 0:
            raise ValueError("max_id_length, max_output_stall and keep_alive must be positive")


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


def _session_of(params: Any) -> str | None:
    session = params.get("sessionId") if isinstance(params, dict) else None
    return session if isinstance(session, str) else None


class _Mailbox:
    """One outbound stream: SSE events waiting for their reader."""

    __slots__ = ("connection", "finished", "queue", "reader", "session", "wake")

    def __init__(self, connection: _ServerConnection, session: str | None) -> None:
        self.connection = connection
        self.session = session
        self.queue: deque[bytes] = deque()
        self.reader = False
        self.finished = False
        self.wake = asyncio.Event()

    def push(self, event: bytes) -> None:
        if self.finished:
            return
        self.queue.append(event)
        self.connection.buffered_bytes += len(event)
        self.wake.set()

    def take_all(self, limit: int = 1 << 20) -> bytes:
        """Queued events, up to about ``limit`` bytes, as one chunk."""
        parts: list[bytes] = []
        size = 0
        queue = self.queue
        while queue and size < limit:
            event = queue.popleft()
            parts.append(event)
            size += len(event)
        self.connection.taken(size)
        return b"".join(parts)

    def finish(self) -> None:
        self.finished = True
        self.wake.set()


class _ServerConnection:
    """One ACP connection of the server: the :class:`Channel` its agent talks through."""

    def __init__(
        self, app: AcpAsgiApp, principal: Any, websocket: Send | None = None, connection_id: str | None = None
    ) -> None:
        self.app = app
        self.limits = app.limits
        self.id = connection_id or secrets.token_urlsafe(32)
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
        self.progress = asyncio.Event()
        self.initial: asyncio.Future[Any] | None = None
        self.initial_id: Any = None
        self.closed = False
        self.done = asyncio.Event()
        self.task: asyncio.Task[Any] | None = None

    # -- the agent's channel

    async def receive(self) -> Any:
        return await self.inbound.get()

    async def send(self, message: Any) -> None:
        if self.closed:
            raise ConnectionError("the connection is closed")
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
            logger.warning("closing ACP connection: %s", error)
            await self.shutdown()
            raise ConnectionError(str(error)) from None
        mailbox.push(b"data: " + encode(message).encode() + b"\n\n")
        if self.buffered_bytes >= self.limits.max_buffered_bytes:
            await self.wait_for_room()

    async def close(self) -> None:
        await self.shutdown()

    async def _send_frame(self, message: Any) -> None:
        assert self.websocket is not None
        try:
            await self.websocket({"type": "websocket.send", "text": encode(message)})
        except OSError as error:  # the ASGI server's "client disconnected"
            await self.shutdown()
            raise ConnectionError(f"the WebSocket closed: {error}") from None

    # -- routing the agent's output

    def _route(self, message: Any) -> _Mailbox:
        if not isinstance(message, dict):
            return self.stream
        if "method" not in message:  # a response
            route = self.pending_routes.pop(_key(message.get("id")), None)
            self._check_id(_session_of(message.get("result")))
            return self.stream if route is None else self.session(route)
        session = _session_of(message.get("params"))
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

    def attach(self, mailbox: _Mailbox) -> bool:
        if mailbox.reader or mailbox.finished:
            return False
        mailbox.reader = True
        if mailbox.session is not None:
            self.unread_sessions -= 1
        return True

    def detach(self, mailbox: _Mailbox) -> None:
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

    async def wait_for_room(self) -> None:
        """Wait while nobody reads the output; close the connection if that lasts ``max_output_stall``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.max_output_stall
        while not self.closed and self.buffered_bytes >= self.limits.max_buffered_bytes:
            self.progress.clear()
            try:
                await asyncio.wait_for(self.progress.wait(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                logger.warning(
                    "closing ACP connection: output stalled for max_output_stall (%ss)",
                    self.limits.max_output_stall,
                )
                await self.shutdown()
                raise ConnectionError("the client read none of the output in time") from None
            deadline = loop.time() + self.limits.max_output_stall

    # -- lifetime

    def feed(self, message: Any) -> None:
        if not self.closed:
            self.inbound.put_nowait(message)

    async def shutdown(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.app._connections.pop(self.id, None)
        self.inbound.put_nowait(None)
        self.stream.finish()
        for mailbox in self.sessions.values():
            mailbox.finish()
        self.progress.set()
        if self.initial is not None and not self.initial.done():
            self.initial.set_exception(ConnectionError("the agent closed before answering initialize"))
        self.done.set()


_Target = Callable[[Any], Awaitable[Any]]


def _own_package() -> Any:
    if not __package__:
        raise RuntimeError("the ASGI app must be imported from its generated package")
    return importlib.import_module(__package__)


class AcpAsgiApp:
    """What :func:`asgi_app` returns: an ASGI application; ``close()`` ends every connection."""

    def __init__(
        self,
        serve: _Target,
        *,
        authenticate: Authenticate | None = None,
        allowed_origins: Iterable[str] | None = None,
        limits: ServerLimits = ServerLimits(),
        path: str | None = None,
    ) -> None:
        self._serve = serve
        self.authenticate = authenticate
        self.allowed_origins = None if allowed_origins is None else frozenset(allowed_origins)
        self.limits = limits
        self.path = path
        self._connections: dict[str, _ServerConnection] = {}

    @property
    def connections(self) -> int:
        """How many ACP connections are open."""
        return len(self._connections)

    async def close(self) -> None:
        """Close every connection (pending streams end; agents see the transport close)."""
        for connection in list(self._connections.values()):
            await connection.shutdown()

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

    async def _admit(self, scope: Scope, method: str) -> tuple[Any, AuthError | None]:
        """The request's principal, or why it is refused (the origin, then ``authenticate``)."""
        headers = _headers(scope)
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
        connection = self._connections.get(headers.get(CONNECTION_HEADER, ""))
        if connection is None or connection.closed or connection.principal != principal:
            return None
        return connection

    async def _named(
        self, headers: Mapping[str, str], principal: Any, send: Send
    ) -> _ServerConnection | None:
        """The live connection of this principal the request names; else it is answered 400 or 404."""
        if CONNECTION_HEADER not in headers:
            await _text(send, 400, "Missing Acp-Connection-Id")
            return None
        connection = self._find(headers, principal)
        if connection is None:
            await _text(send, 404, "Unknown Acp-Connection-Id")
        return connection

    # -- HTTP

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"]
        principal, refused = await self._admit(scope, method)
        if refused is not None:
            await _text(send, refused.status, refused.message, refused.headers)
            return
        headers = _headers(scope)
        if method == "POST":
            await self._post(headers, principal, receive, send)
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

    async def _post(self, headers: Mapping[str, str], principal: Any, receive: Receive, send: Send) -> None:
        content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type != "application/json":
            await _text(send, 415, "Unsupported Media Type")
            return
        body = await _read_body(headers, receive, self.limits.max_request_body_bytes)
        if body is None:
            await _text(send, 413, f"Request body exceeds {self.limits.max_request_body_bytes} bytes")
            return
        try:
            message = json.loads(body)
        except ValueError:
            await _text(send, 400, "Invalid JSON")
            return
        if isinstance(message, list):
            error = RequestError.invalid_request({"reason": "JSON-RPC batches are not supported"})
            await _json(send, 400, {"jsonrpc": "2.0", "id": None, "error": error.to_json()})
            return
        if not isinstance(message, dict):
            await _text(send, 400, "Invalid JSON-RPC message")
            return
        kind = message_kind(message)
        if kind == "request" and message.get("method") == "initialize":
            if CONNECTION_HEADER in headers:
                await _text(send, 400, "Initialize not allowed on existing connection")
                return
            await self._initialize(message, principal, send)
            return
        connection = await self._named(headers, principal, send)
        if connection is None:
            return
        problem = self._check_route(connection, message, kind, headers.get(SESSION_HEADER))
        if problem is not None:
            await _text(send, 400, problem)
            return
        if kind == "request":
            with contextlib.suppress(ConnectionError):
                await connection.wait_for_room()
        if connection.closed:
            await _text(send, 404, "Unknown Acp-Connection-Id")
            return
        connection.feed(message)
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
        session = _session_of(message.get("params"))
        if header is None and (session is not None or method in SESSION_METHODS):
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
            connection.pending_routes[_key(request_id)] = None if method in RESPONSE_ON_CONNECTION else route
        return None

    async def _initialize(self, message: dict[str, Any], principal: Any, send: Send) -> None:
        connection = self._open(principal, None, message)
        try:
            answer = await connection.initial  # type: ignore[misc]
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
            await connection.shutdown()

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
        if not connection.attach(mailbox):
            await _text(send, 409, "Outbound stream already has an active receiver")
            return
        try:
            await _stream(mailbox, receive, send, self.limits.keep_alive)
        finally:
            connection.detach(mailbox)

    # -- WebSocket

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        principal, refused = await self._admit(scope, "WEBSOCKET")
        if refused is not None:
            if "websocket.http.response" in scope.get("extensions", {}):
                await send(
                    _start(refused.status, "text/plain", refused.headers, "websocket.http.response.start")
                )
                await send({"type": "websocket.http.response.body", "body": refused.message.encode()})
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        connection_id = secrets.token_urlsafe(32)  # sent in the handshake, as TS SDK 2.4.0 does
        await send(
            {"type": "websocket.accept", "headers": [(CONNECTION_HEADER.encode(), connection_id.encode())]}
        )
        connection: _ServerConnection | None = None
        limit = self.limits.max_request_body_bytes
        try:
            while True:
                event = await receive()
                if event["type"] == "websocket.disconnect":
                    return
                text = event.get("text")
                if text is None:
                    continue  # binary frames are ignored
                if len(text) > limit:
                    await send({"type": "websocket.close", "code": 1009, "reason": "Message too large"})
                    return
                try:
                    message = json.loads(text)
                except ValueError:
                    await _ws_error(send, RequestError.parse_error())
                    continue
                if isinstance(message, list):
                    reason = {"reason": "JSON-RPC batches are not supported"}
                    await _ws_error(send, RequestError.invalid_request(reason))
                    continue
                if not isinstance(message, dict):
                    await _ws_error(send, RequestError.invalid_request())
                    continue
                kind = message_kind(message)
                if connection is None:
                    if kind == "response":
                        continue
                    if kind != "request" or message.get("method") != "initialize" or message["id"] is None:
                        why = "First message must be initialize"
                        await send({"type": "websocket.close", "code": 1002, "reason": why})
                        return
                    connection = self._open(principal, send, message, connection_id)
                    try:
                        await connection.initial  # type: ignore[misc]
                    except ConnectionError:
                        await send({"type": "websocket.close", "code": 1011, "reason": "Initialize failed"})
                        return
                    continue
                if kind == "request" and message.get("method") == "initialize":
                    error = RequestError.invalid_request("Initialize not allowed on existing connection")
                    await send(
                        {
                            "type": "websocket.send",
                            "text": encode({"jsonrpc": "2.0", "id": message["id"], "error": error.to_json()}),
                        }
                    )
                    continue
                connection.feed(message)
        finally:
            if connection is not None:
                await connection.shutdown()


def asgi_app(
    agent: Any,
    *,
    authenticate: Authenticate | None = None,
    allowed_origins: Iterable[str] | None = None,
    limits: ServerLimits = ServerLimits(),
    path: str | None = None,
    package: Any = None,
) -> AcpAsgiApp:
    """An ASGI application serving ``agent`` on Streamable HTTP and WebSocket at one path.

    ``agent`` is an agent factory (a class or function given each connection's
    ``AgentSideConnection``, as for ``run_agent``) of this package's protocol
    version (or ``package``'s), or an ``AgentProtocolRouter`` serving v1 and v2
    clients.  ``path`` restricts the app to one path (others are 404); by default
    it answers wherever it is mounted.  See the module docstring for the wire,
    ``authenticate``, ``allowed_origins`` and ``limits``.
    """
    serve = getattr(agent, "serve", None)
    if callable(serve) and hasattr(agent, "versions"):  # an AgentProtocolRouter of any package

        async def routed(channel: Any) -> Any:
            return await serve(channel)

        target: _Target = routed
    else:
        own = package if package is not None else _own_package()
        if not callable(agent) and not hasattr(agent, "initialize"):
            raise TypeError("asgi_app needs an agent factory, an agent or an AgentProtocolRouter")

        async def direct(channel: Any) -> Any:
            return own.connect_to_client(agent, channel)

        target = direct
    return AcpAsgiApp(
        target, authenticate=authenticate, allowed_origins=allowed_origins, limits=limits, path=path
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
    await send({"type": "http.response.body", "body": encode(value).encode()})


async def _empty(send: Send, status: int) -> None:
    await send(_start(status, None, {"content-length": "0"}))
    await send({"type": "http.response.body", "body": b""})


async def _ws_error(send: Send, error: RequestError) -> None:
    await send(
        {"type": "websocket.send", "text": encode({"jsonrpc": "2.0", "id": None, "error": error.to_json()})}
    )


async def _read_body(headers: Mapping[str, str], receive: Receive, limit: int) -> bytes | None:
    """The request body, or ``None`` once it is over ``limit`` bytes (the rest is not read)."""
    declared = headers.get("content-length", "").strip()
    if declared.isdigit() and int(declared) > limit:
        return None
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b""
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


async def _stream(mailbox: _Mailbox, receive: Receive, send: Send, keep_alive: float) -> None:
    """Send the mailbox's events as an SSE response until it finishes or the client leaves."""
    await send(_start(200, "text/event-stream", {"cache-control": "no-cache", "x-accel-buffering": "no"}))
    await send({"type": "http.response.body", "body": b"", "more_body": True})
    gone = False
    idle = False

    async def watch() -> None:
        nonlocal gone
        while (await receive())["type"] != "http.disconnect":
            pass
        gone = True
        mailbox.wake.set()

    loop = asyncio.get_running_loop()
    timer: asyncio.TimerHandle | None = None

    def tick() -> None:
        nonlocal idle, timer
        idle = True
        mailbox.wake.set()
        timer = loop.call_later(keep_alive, tick)

    watcher = asyncio.ensure_future(watch())
    timer = loop.call_later(keep_alive, tick)
    try:
        while not gone:
            if mailbox.queue:
                await send({"type": "http.response.body", "body": mailbox.take_all(), "more_body": True})
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
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        if timer is not None:
            timer.cancel()
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await watcher
