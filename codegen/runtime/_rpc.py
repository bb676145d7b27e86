"""JSON-RPC 2.0 over newline-delimited JSON, as ACP uses it.

This file is written once by hand and copied unchanged into every generated
package; it needs only the standard library and pydantic.  The generated
``bindings`` module gives it a route table (which wire method goes to which
handler attribute, with which params and result types) and the capability
gates of the release; everything here is release-independent:

* one :class:`Connection` per stream pair: requests are correlated by id,
  incoming requests run as tasks (so the peer may send live traffic at any
  time), incoming notifications are handled one after another in arrival order;
* strict validation in both directions: bad params are answered with
  ``-32602`` and the validation details, an unimplemented request with
  ``-32601``; unimplemented notifications are ignored;
* no traffic but the handshake (``initialize``, or the one the end names) until
  it succeeded, except the methods the release lets both ends exchange during it;
* batches only where the release's schema defines them, otherwise a JSON
  array gets one ``-32600`` with ``id: null``;
* ``$/cancel_request`` both ways, a maximum message size, and a clean stop
  when the peer closes the stream.

A connection talks through a :class:`Channel`, one decoded JSON-RPC message
at a time: :class:`StreamChannel` is newline-delimited JSON over a byte stream
pair (stdio, a child process, memory); the HTTP and WebSocket transports
(``_http``, ``_ws``, ``_asgi``) are channels too, so everything above the
transport is the same on all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import inspect
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final, Protocol, cast

from pydantic import TypeAdapter, ValidationError
from pydantic_core import from_json, to_json

from ._params import expand, wire_params

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "CapabilityError",
    "Channel",
    "Connection",
    "GeneratedPackage",
    "HttpStatusError",
    "ProtocolNames",
    "RequestError",
    "Route",
    "SessionRoutes",
    "StreamChannel",
    "TransportError",
    "current_request_id",
    "decode",
    "encode",
    "encode_bytes",
]

logger = logging.getLogger("acp")

DEFAULT_MAX_MESSAGE_BYTES: Final = 32 * 1024 * 1024
"""The default limit on one message, the same as the official TypeScript SDK's."""

JsonId = int | str | None

_json_encode: Final[Callable[[Any], str]] = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def encode_bytes(message: Any) -> bytes:
    """One message as compact UTF-8 JSON: pydantic-core's encoder, several times the ``json`` module's.

    What it refuses (a value JSON has no form for, a lone surrogate) goes through ``json``, so
    that it fails as it always did (``TypeError``, ``ValueError``, ``UnicodeEncodeError``).
    """
    try:
        return to_json(message)
    except ValueError:
        return _json_encode(message).encode()


def encode(message: Any) -> str:
    """One message as compact JSON text (:func:`encode_bytes`, decoded)."""
    try:
        return to_json(message).decode()
    except ValueError:
        return _json_encode(message)


def decode(data: bytes | str) -> Any:
    """One JSON text as a value: pydantic-core's parser, about twice the ``json`` module's.

    Input it refuses is parsed again by ``json.loads``, which either takes it (nesting deeper
    than pydantic-core's limit, lone surrogates, bytes in UTF-16) or raises its own
    ``ValueError``: errors read as they always did.
    """
    try:
        return from_json(data)
    except ValueError:
        return json.loads(data)


class Writer(Protocol):
    """The part of :class:`asyncio.StreamWriter` a connection uses."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


class Channel(Protocol):
    """A message transport: what a :class:`Connection` reads from and writes to.

    ``receive`` returns the next decoded message (any JSON value but ``null``;
    the connection validates it), an exception with ``to_json()`` (a
    :class:`RequestError`) for input that could not be decoded, which the
    connection answers with ``id: null``, or ``None`` once the peer is gone.
    Only plain values cross it, so a channel of one generated package serves a
    connection of another (the router hands its channel to the v1 package).
    ``send`` delivers one message (a JSON-able value) and may wait while the
    peer is behind; it raises ``ConnectionError`` once the transport is gone.
    """

    async def receive(self) -> Any: ...

    async def send(self, message: Any) -> None: ...

    async def close(self) -> None: ...


class RequestError(Exception):
    """A JSON-RPC error: raised by a handler to answer with it, or by a call the peer refused."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})" + (f": {data}" if isinstance(data, str) else ""))
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def parse_error(cls, data: Any = None) -> RequestError:
        return cls(-32700, "Parse error", data)

    @classmethod
    def invalid_request(cls, data: Any = None) -> RequestError:
        return cls(-32600, "Invalid request", data)

    @classmethod
    def method_not_found(cls, method: str) -> RequestError:
        return cls(-32601, "Method not found", {"method": method})

    @classmethod
    def invalid_params(cls, data: Any = None) -> RequestError:
        return cls(-32602, "Invalid params", data)

    @classmethod
    def internal_error(cls, data: Any = None) -> RequestError:
        return cls(-32603, "Internal error", data)

    @classmethod
    def request_cancelled(cls, data: Any = None) -> RequestError:
        return cls(-32800, "Request cancelled", data)

    @classmethod
    def unsupported_protocol_version(
        cls, requested: int, supported: Sequence[int], data_type: Any = None
    ) -> RequestError:
        """``-32022``, as the TypeScript SDK 2.4.0 answers an ``initialize`` it cannot serve.

        The data lists the version asked for and the versions served; ``data_type`` is the
        release's ``UnsupportedProtocolVersionErrorData`` model, when its schema has one.
        """
        data: dict[str, Any] = {"requested": requested, "supported": list(supported)}
        if data_type is not None:
            data = wire_params(data_type.model_validate(data))
        return cls(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data)


UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
"""The code of the unsupported-version error (the schema's ``ErrorCode`` from ACP v2 of TS SDK 2.4.0 on)."""


_current_request: contextvars.ContextVar[JsonId] = contextvars.ContextVar("acp_current_request")


def current_request_id() -> JsonId:
    """The JSON-RPC id of the request whose handler is running (``LookupError`` outside one).

    An elicitation in request scope names the request it belongs to with this id.
    """
    return _current_request.get()


class TransportError(ConnectionError):
    """A remote transport failed (Streamable HTTP or WebSocket).

    ``status`` and ``body`` are the server's answer when there was one (``None`` and ``""``
    when it could not be reached, or the connection broke).
    """

    def __init__(self, message: str, status: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body

    def __reduce__(self) -> Any:  # copy.copy: a failure raised in several tasks is a copy in each
        return (type(self), (str(self), self.status, self.body))


class HttpStatusError(TransportError):
    """The server refused a request of the transport itself (``initialize``, a stream, a handshake)."""

    status: int

    def __init__(self, what: str, status: int, body: str) -> None:
        super().__init__(f"{what}: HTTP {status}" + (f": {body}" if body else ""), status, body)
        self.what = what

    def __reduce__(self) -> Any:
        return (type(self), (self.what, self.status, self.body))


class CapabilityError(RuntimeError):
    """An operation the peer did not advertise the capability for; nothing was sent."""


@dataclass(frozen=True)
class Route:
    """One method a side handles: its wire name, the handler attribute and its types."""

    method: str
    attribute: str
    params: Any
    result: Any = None


@dataclass(frozen=True)
class ProtocolNames:
    """The wire names the connection itself relies on."""

    initialize: str
    """The handshake method (``initialize``, or another an end opens with); nothing else may be sent
    before it succeeds but ``during_handshake``."""
    cancel_request: str
    """The notification either side sends to cancel one of its requests."""
    request_id: str
    """The field of ``cancel_request`` params naming the request."""
    capabilities: str
    """The field advertising capabilities: in the handshake's params (client) and result (agent)."""
    protocol_version: str = "protocolVersion"
    """The field of the handshake's params and result naming the protocol version."""
    client_info: str = "info"
    """The field of the handshake's params naming the client."""
    repeat_initialize: str = "before-other-requests"
    """When the agent takes the handshake again: ``always``, or ``before-other-requests``, as the
    TypeScript SDK 2.4.0 does for each version."""
    version: int = 0
    """The protocol version of the package (``PROTOCOL_VERSION``): every handshake answer names it."""
    unsupported_version_data: Any = None
    """The release's model of the unsupported-version error's data, if its schema has one
    (:meth:`RequestError.unsupported_protocol_version`; the runtime itself never refuses a version)."""
    during_handshake: frozenset[str] = frozenset()
    """Methods both ends may send before the handshake has succeeded (a proxy reaches its successor)."""

    def allows(self, method: str) -> bool:
        """Whether ``method`` may be exchanged before the handshake has succeeded."""
        return method == self.initialize or method in self.during_handshake


@dataclass(frozen=True)
class SessionRoutes:
    """What the remote transports route by (the bindings' ``SESSIONS``, from ``[v<N>.protocol]`` of
    ``codegen/knowledge.toml`` and the schema)."""

    field: str
    """The field of params and results naming a session: a message naming one goes on its stream."""
    scoped: frozenset[str] = frozenset()
    """Methods the agent handles whose params require ``field``: a POST of one must carry
    ``Acp-Session-Id``."""
    reattach: frozenset[str] = frozenset()
    """Requests that reattach a session whose stream was lost: the client opens the stream again."""
    ends: frozenset[str] = frozenset()
    """Requests after whose success the session's stream is closed."""
    response_on_connection: frozenset[str] = frozenset()
    """Requests whose response comes on the connection's stream although they name a session."""

    def session_of(self, value: Any) -> str | None:
        """The session ``value`` (params or a result) names, if it is an object that names one."""
        session = value.get(self.field) if isinstance(value, dict) else None
        return session if isinstance(session, str) else None

    def __or__(self, other: SessionRoutes) -> SessionRoutes:
        """The routes of a server that serves both releases (an ``AgentProtocolRouter``)."""
        if other.field != self.field:
            raise ValueError(f"the releases name a session differently: {self.field!r}, {other.field!r}")
        return SessionRoutes(
            self.field,
            self.scoped | other.scoped,
            self.reattach | other.reattach,
            self.ends | other.ends,
            self.response_on_connection | other.response_on_connection,
        )

    @classmethod
    def adopt(cls, routes: Any) -> SessionRoutes:
        """``routes`` as this runtime's class: another package's ``SESSIONS`` has the same fields."""
        if isinstance(routes, SessionRoutes):
            return routes
        return cls(routes.field, routes.scoped, routes.reattach, routes.ends, routes.response_on_connection)


@dataclass(frozen=True)
class GeneratedPackage:
    """What the runtime needs of a generated package, handed to it: never looked up by the runtime.

    Each package's bindings build theirs (``bindings.PACKAGE``) and pass it to the
    router (``_router``) and the ASGI app (``_asgi``), so every edge from the runtime
    to the bindings is a typed parameter.  A package passed in by the caller
    (``v1_package=acp_v1``) is read with :meth:`of`.
    """

    module: ModuleType
    """The package itself: what ``RoutedConnection.package`` and ``NegotiatedConnection.package`` are."""
    protocol_version: int
    """Its ``PROTOCOL_VERSION``."""
    schema: ModuleType
    """Its models (``schema.InitializeRequest``, ``schema.Implementation``...)."""
    sessions: SessionRoutes
    """Its bindings' ``SESSIONS``: what the remote transports route by."""
    connect_to_agent: Callable[..., Any]
    """Its ``connect_to_agent``: a client's connection to an agent."""
    connect_to_client: Callable[..., Any]
    """Its ``connect_to_client``: an agent's connection to a client."""

    @classmethod
    def of(cls, package: ModuleType, what: str) -> GeneratedPackage:
        """The record of a package module passed as ``what`` (any acp-codegen's, under any name)."""
        for name in ("PROTOCOL_VERSION", "connect_to_agent", "connect_to_client", "schema", "bindings"):
            if not hasattr(package, name):
                raise ValueError(
                    f"{what}={package.__name__} has no {name}: pass a generated package with bindings"
                )
        return cls(
            package,
            package.PROTOCOL_VERSION,
            package.schema,
            SessionRoutes.adopt(package.bindings.SESSIONS),
            package.connect_to_agent,
            package.connect_to_client,
        )


@dataclass(frozen=True)
class Gate:
    """Sending a method with ``field`` (a dotted wire path, ``=value`` optional) needs ``capability``."""

    field: str
    capability: str

    def applies(self, params: Mapping[str, Any]) -> bool:
        if not self.field:
            return True
        path, _, expected = self.field.partition("=")
        found = _lookup(params, path)
        return found is not None and (not expected or found == expected)


def _lookup(data: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


_adapters: dict[Any, TypeAdapter[Any]] = {}


def adapter(type_: Any) -> TypeAdapter[Any]:
    """A cached :class:`TypeAdapter` (models are built lazily, on first use)."""
    found = _adapters.get(type_)
    if found is None:
        found = _adapters[type_] = TypeAdapter(type_)
    return found


def _error_details(error: ValidationError) -> list[dict[str, Any]]:
    return [
        {"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]}
        for e in error.errors(include_url=False, include_context=False, include_input=False)
    ]


_NOT_JSON_RPC: Final = RequestError.invalid_request({"reason": "not a JSON-RPC 2.0 message"})
_UNKNOWN_CLIENT: Final = {"name": "unknown", "version": "unknown"}
"""Who an older client is, when its handshake does not name itself in the package's field."""


class StreamChannel:
    """Newline-delimited JSON over a byte stream pair: the stdio transport.

    A line over ``max_message_bytes`` is skipped and answered ``-32600``; a line
    that is not UTF-8 JSON is answered ``-32700``.
    """

    def __init__(
        self, reader: asyncio.StreamReader, writer: Writer, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.max_message_bytes = max_message_bytes
        self._ready: deque[Any] = deque()
        self._buffer = bytearray()
        self._skipping = False
        self._ended = False

    async def receive(self) -> Any:
        ready = self._ready
        while not ready:
            if self._ended:
                return None
            chunk = await self.reader.read(1 << 16)
            if chunk:
                self._split(chunk)
            else:
                self._ended = True
                if self._buffer and not self._skipping:
                    self._decode(bytes(self._buffer))
                self._buffer.clear()
        return ready.popleft()

    def _split(self, chunk: bytes) -> None:
        buffer = self._buffer
        limit = self.max_message_bytes
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            piece = chunk[start:end]
            start = end + 1
            if self._skipping:
                self._skipping = False
            elif len(buffer) + len(piece) > limit:
                self._ready.append(self._too_large())
            elif buffer:
                buffer += piece
                self._decode(bytes(buffer))
            else:
                self._decode(piece)
            buffer.clear()
        if not self._skipping:
            buffer += chunk[start:]
            if len(buffer) > limit:
                buffer.clear()
                self._skipping = True
                self._ready.append(self._too_large())

    def _too_large(self) -> RequestError:
        return RequestError.invalid_request(
            {"reason": "message too large", "maxMessageBytes": self.max_message_bytes}
        )

    def _decode(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = from_json(line)
        except ValueError:  # refused by the fast parser: json's says why, or takes it (see decode)
            self._decode_slowly(line)
            return
        self._ready.append(message if message is not None else _NOT_JSON_RPC)

    def _decode_slowly(self, line: bytes) -> None:
        try:
            message = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            self._ready.append(RequestError.parse_error({"reason": "the message is not valid UTF-8"}))
        except ValueError as error:
            self._ready.append(RequestError.parse_error({"reason": str(error)}))
        else:
            self._ready.append(message if message is not None else _NOT_JSON_RPC)

    async def send(self, message: Any) -> None:
        writer = self.writer
        writer.write(encode_bytes(message) + b"\n")
        await writer.drain()

    async def close(self) -> None:
        self.writer.close()


class Prepended:
    """``head`` (one message), then what ``channel`` receives: how a router hands a channel over.

    Once ``head`` is taken, ``receive`` is the channel's own, so the connection
    reads through no extra layer.
    """

    def __init__(self, head: Any, channel: Channel) -> None:
        self._head = head
        self.channel = channel
        self.send: Callable[[Any], Awaitable[None]] = channel.send
        self.close: Callable[[], Awaitable[None]] = channel.close
        self.receive: Callable[[], Awaitable[Any]] = self._receive_head

    async def _receive_head(self) -> Any:
        self.receive = self.channel.receive
        head, self._head = self._head, None
        return head

    def as_channel(self) -> Channel:
        """This object as the :class:`Channel` it behaves as (its methods are attributes, for speed)."""
        return cast(Channel, self)


def as_channel(
    reader: asyncio.StreamReader | Channel, writer: Writer | None, max_message_bytes: int
) -> Channel:
    """A channel over a byte stream pair, or ``reader`` itself if it is a channel (``writer`` ``None``)."""
    if writer is None:
        if not hasattr(reader, "receive") or not hasattr(reader, "send"):
            raise TypeError("pass a reader and a writer, or a Channel alone")
        return cast(Channel, reader)
    return StreamChannel(cast(asyncio.StreamReader, reader), writer, max_message_bytes)


class Connection:
    """One side of an ACP connection over a pair of byte streams.

    ``requests`` and ``notifications`` map the wire names this side handles to
    handler attributes of ``handler``; ``protocol`` names the handshake method (handled by the
    agent, sent by the client) and the cancel notification; ``gates`` lists what the peer must have
    advertised before an experimental operation is sent; ``batches`` tells
    which JSON-RPC batches the schema lets the peer send.
    """

    def __init__(
        self,
        handler: Any,
        reader: asyncio.StreamReader | Channel,
        writer: Writer | None = None,
        *,
        requests: Mapping[str, Route],
        notifications: Mapping[str, Route],
        protocol: ProtocolNames,
        gates: Mapping[str, tuple[Gate, ...]] = {},
        batches: frozenset[str] = frozenset(),
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.handler = handler
        self.channel: Channel = as_channel(reader, writer, max_message_bytes)
        """The transport: a :class:`StreamChannel` over ``reader``/``writer``, or the channel given."""
        self._requests = requests
        self._notifications_routes = notifications
        self._protocol = protocol
        self._gates = gates
        self._batches = batches
        self.max_message_bytes = max_message_bytes
        self.initialized = False
        self.peer_capabilities: dict[str, Any] = {}
        """What the peer advertised in the handshake, as wire JSON."""
        self._handles_initialize = protocol.initialize in requests
        self._next_id = 0
        self._pending: dict[JsonId, tuple[asyncio.Future[Any], str]] = {}
        self._incoming: dict[JsonId, asyncio.Task[Any]] = {}
        self._abandoned: set[JsonId] = set()
        """Ids of our requests cancelled locally: their late responses are dropped quietly."""
        self._notifications: asyncio.Queue[tuple[Route, Any] | None] = asyncio.Queue()
        self._initializing = False
        self._other_request_seen = False
        self._closed = asyncio.Event()
        self.lost: ConnectionError | None = None
        """Why the transport ended, when it failed (the channel's error, a ``TransportError`` for the
        remote transports): what pending and later calls fail with."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reader_task = asyncio.get_running_loop().create_task(self._read_loop())
        self._worker_task = asyncio.get_running_loop().create_task(self._notification_worker())

    # -- lifetime -------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        """Wait until the peer closed the stream or :meth:`close` was called."""
        await self._closed.wait()

    async def close(self) -> None:
        """Stop reading, fail pending calls, cancel running handlers and close the writer."""
        if self._closed.is_set():
            return
        self._closed.set()
        current = asyncio.current_task()
        for task in (self._reader_task, self._worker_task, *self._incoming.values(), *self._tasks):
            if task is not current:
                task.cancel()
        self._fail_pending()
        with contextlib.suppress(Exception):
            await self.channel.close()

    def _fail_pending(self) -> None:
        for future, _method in self._pending.values():
            if not future.done():
                future.set_exception(
                    copy.copy(self.lost)
                    if self.lost
                    else ConnectionError("the connection closed before the response arrived")
                )
        self._pending.clear()

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- sending ----------------------------------------------------------------------

    def _closed_error(self) -> ConnectionError:
        return copy.copy(self.lost) if self.lost else ConnectionError("the connection is closed")

    async def _write(self, message: Any) -> None:
        if self._closed.is_set():
            raise self._closed_error()
        await self.channel.send(message)

    def _check_can_send(self, method: str, params: Mapping[str, Any]) -> None:
        if self._closed.is_set():
            raise self._closed_error()
        if not self.initialized and not self._protocol.allows(method):
            raise RequestError.invalid_request(f"the connection must be initialized before '{method}'")
        for gate in self._gates.get(method, ()):
            advertised = _lookup(self.peer_capabilities, gate.capability)
            if gate.applies(params) and (advertised is None or advertised is False):
                what = f"{method} with {gate.field}" if gate.field else method
                raise CapabilityError(
                    f"the peer did not advertise '{gate.capability}', so {what} was not sent"
                )

    async def send_request(self, method: str, params: Any, result: Any) -> Any:
        """Send a request, wait for its response and validate it into ``result``.

        Cancelling the task that awaits this sends a best-effort ``$/cancel_request`` before the
        cancellation goes on.
        """
        payload = wire_params(params)
        self._check_can_send(method, payload)
        raw = await self._call(method, payload)
        return adapter(result).validate_python(raw)

    async def send_notification(self, method: str, params: Any) -> None:
        payload = wire_params(params)
        self._check_can_send(method, payload)
        await self._write({"jsonrpc": "2.0", "method": method, "params": payload})

    async def send_extension_request(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Call an extension method (its name must start with ``_``); returns the raw result."""
        _check_extension(method)
        self._check_can_send(method, params or {})
        return await self._call(method, params)

    async def send_extension_notification(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send an extension notification (its name must start with ``_``)."""
        _check_extension(method)
        self._check_can_send(method, params or {})
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        await self._write(message)

    async def _call(self, method: str, params: Mapping[str, Any] | None) -> Any:
        request_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (future, method)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = dict(params)
        try:
            await self._write(message)
            return await future
        except ConnectionError:
            if future.done() and not future.cancelled():
                future.exception()  # failed by the connection's loss while this write failed: retrieved
            raise
        except asyncio.CancelledError:
            if self._pending.pop(request_id, None) is not None and not self._closed.is_set():
                self._abandoned.add(request_id)
                # written before the caller goes on, so the peer reads it before what the caller
                # sends next (an agent's cancelled idle after its cancelled permission request)
                await self._send_cancel(request_id)
            raise
        finally:
            self._pending.pop(request_id, None)

    async def _send_cancel(self, request_id: JsonId) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            cancel = self._protocol
            await self._write(
                {"jsonrpc": "2.0", "method": cancel.cancel_request, "params": {cancel.request_id: request_id}}
            )

    # -- receiving --------------------------------------------------------------------

    async def _read_loop(self) -> None:
        channel = self.channel
        collected = False
        try:
            while (message := await channel.receive()) is not None:
                if isinstance(message, Exception):  # undecodable input: a RequestError of any package
                    await self._write({"jsonrpc": "2.0", "id": None, "error": message.to_json()})  # type: ignore[attr-defined]
                else:
                    await self._receive_message(message)
        except (ConnectionError, OSError) as error:
            logger.debug("connection lost: %s", error)
            self.lost = error if isinstance(error, ConnectionError) else ConnectionError(str(error))
        except GeneratorExit:
            # the task was dropped with its loop still pending on it and is being garbage
            # collected: its loop is gone, so nothing can be scheduled or awaited any more
            collected = True
            raise
        finally:
            if not collected and not self._closed.is_set():
                self._notifications.put_nowait(None)
                await self._finish()

    async def _finish(self) -> None:
        """The peer closed the stream: no response can come; let queued notifications run, then close."""
        self._fail_pending()
        with contextlib.suppress(asyncio.CancelledError):
            await self._worker_task
        await self.close()

    async def _receive_message(self, message: Any) -> None:
        if not isinstance(message, list):
            reply = self._receive(message)
            if isinstance(reply, dict):
                await self._write(reply)
            elif reply is not None:
                self._spawn(self._send_reply(reply))
            return
        # JSON-RPC 2.0 batches, where the schema has them: one reply array holding the answers to
        # the requests (none for a batch of notifications or responses), an invalid entry answered
        # in it on its own; a batch the schema does not let the peer send is one -32600
        kinds = {message_kind(m) for m in message}
        wanted = "response" if kinds == {"response"} else "call"
        if wanted not in self._batches or ("response" in kinds and len(kinds) > 1):
            await self._reply_error(
                None, RequestError.invalid_request({"reason": "a batch is not accepted here"})
            )
            return
        if not message:
            await self._reply_error(None, RequestError.invalid_request({"reason": "an empty batch"}))
            return
        replies = [self._receive(m, batch=True) for m in message]
        self._spawn(self._send_batch_reply(replies))

    async def _send_reply(self, reply: Awaitable[dict[str, Any] | None]) -> None:
        answer = await reply
        if answer is not None:
            await self._write(answer)

    async def _send_batch_reply(
        self, replies: list[Awaitable[dict[str, Any] | None] | dict[str, Any] | None]
    ) -> None:
        answers = [await r if isinstance(r, Awaitable) else r for r in replies]
        found = [a for a in answers if a is not None]
        if found:
            await self._write(found)

    def _receive(
        self, message: Any, batch: bool = False
    ) -> Awaitable[dict[str, Any] | None] | dict[str, Any] | None:
        """Handle one message: the reply, a reply still being computed, or ``None``.

        A request outside a batch is answered by the task that runs its handler (``None``
        here): one task per request, which ``$/cancel_request`` cancels.
        """
        kind = message_kind(message)
        if kind == "response":
            self._resolve(message)
            return None
        if kind == "invalid":
            request_id = message.get("id") if isinstance(message, dict) else None
            if not isinstance(request_id, (int, str)) or isinstance(request_id, bool):
                request_id = None
            return _error_reply(
                request_id, RequestError.invalid_request({"reason": "not a JSON-RPC 2.0 message"})
            )
        method = message["method"]
        params = message.get("params")
        if kind == "notification":
            self._receive_notification(method, params)
            return None
        request_id = message["id"]
        context = contextvars.copy_context()
        context.run(_current_request.set, request_id)
        loop = asyncio.get_running_loop()
        if not batch:
            self._incoming[request_id] = loop.create_task(
                self._serve_request(request_id, method, params), context=context
            )
            return None
        task = loop.create_task(self._handle_request(method, params), context=context)
        self._incoming[request_id] = task
        return self._answer(request_id, method, task)

    async def _serve_request(self, request_id: JsonId, method: str, params: Any) -> None:
        """Run one request's handler and write its answer (``-32800`` if ``$/cancel_request`` cancels it)."""
        task = asyncio.current_task()
        try:
            answer = {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": await self._handle_request(method, params),
            }
        except asyncio.CancelledError:
            if self._closed.is_set():
                raise
            answer = _error_reply(request_id, RequestError.request_cancelled())
        except RequestError as error:
            answer = _error_reply(request_id, error)
        except Exception:
            logger.exception("handler of %r failed", method)
            answer = _error_reply(request_id, RequestError.internal_error())
        finally:
            if self._incoming.get(request_id) is task:
                del self._incoming[request_id]
        with contextlib.suppress(ConnectionError, OSError):
            await self._write(answer)

    async def _answer(
        self, request_id: JsonId, method: str, task: asyncio.Task[Any]
    ) -> dict[str, Any] | None:
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.cancelled() or self._closed.is_set():
                raise
            return _error_reply(request_id, RequestError.request_cancelled())
        except RequestError as error:
            return _error_reply(request_id, error)
        except Exception:
            logger.exception("handler of %r failed", method)
            return _error_reply(request_id, RequestError.internal_error())
        finally:
            if self._incoming.get(request_id) is task:
                del self._incoming[request_id]
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _resolve(self, message: dict[str, Any]) -> None:
        entry = self._pending.pop(message.get("id"), None)
        if entry is None:
            if message.get("id") in self._abandoned:
                self._abandoned.discard(message.get("id"))
            elif "error" in message:
                logger.warning("error response to no pending request: %r", message.get("error"))
            else:
                reply = _error_reply(
                    None,
                    RequestError.invalid_request(
                        {"reason": "no request with this id is pending", "id": message.get("id")}
                    ),
                )
                self._spawn(self._write(reply))
            return
        future, method = entry
        if future.done():
            return
        error = message.get("error")
        if method == self._protocol.initialize and error is None:
            result = message.get("result")
            capabilities = result.get(self._protocol.capabilities) if isinstance(result, dict) else None
            self.peer_capabilities = capabilities if isinstance(capabilities, dict) else {}
            self.initialized = True
        if error is not None:
            if isinstance(error, dict) and isinstance(error.get("code"), int):
                future.set_exception(
                    RequestError(error["code"], str(error.get("message", "")), error.get("data"))
                )
            else:
                future.set_exception(RequestError.internal_error({"reason": "malformed error response"}))
        else:
            future.set_result(message.get("result"))

    def _receive_notification(self, method: str, params: Any) -> None:
        if method == self._protocol.cancel_request:
            if self.initialized and isinstance(params, dict):
                task = self._incoming.get(params.get(self._protocol.request_id))
                if task is not None:
                    task.cancel()
            route = self._notifications_routes.get(method)
            if route is not None and self.initialized:
                self._notifications.put_nowait((route, params))
            return
        if not self.initialized and method not in self._protocol.during_handshake:
            logger.warning("notification %r before initialize ignored", method)
            return
        route = self._notifications_routes.get(method)
        if route is None:
            if method.startswith("_"):
                self._notifications.put_nowait((Route(method, "ext_notification", None), params))
            return
        self._notifications.put_nowait((route, params))

    async def _notification_worker(self) -> None:
        while (item := await self._notifications.get()) is not None:
            route, params = item
            function = getattr(self.handler, route.attribute, None)
            if function is None:
                continue
            try:
                if route.params is None:  # an extension notification
                    await function(route.method, params if isinstance(params, dict) else {})
                else:
                    value = adapter(route.params).validate_python({} if params is None else params)
                    await function(**expand(value))
            except ValidationError as error:
                logger.warning("invalid %r notification ignored: %s", route.method, error)
            except Exception:
                logger.exception("notification handler of %r failed", route.method)

    async def _handle_request(self, method: str, params: Any) -> Any:
        handshake = method == self._protocol.initialize and self._handles_initialize
        if handshake:
            self._check_initialize()
        elif not self.initialized and method not in self._protocol.during_handshake:
            raise RequestError.invalid_request(f"the connection must be initialized before '{method}'")
        elif self.initialized:
            self._other_request_seen = True
        if not handshake:
            return await self._dispatch(method, params)
        self._initializing = True
        try:
            return await self._dispatch(method, self._negotiable(params), handshake=True)
        finally:
            self._initializing = False

    def _check_initialize(self) -> None:
        """Refuse a handshake the agent cannot take now.

        Once initialized, ``always`` takes a repeat at any time (v1);
        ``before-other-requests`` takes one only before any other request (v2), as
        the TypeScript SDK 2.4.0 does.  A repeat that fails leaves the first
        handshake in effect.  The version asked for is never a reason to refuse:
        see :meth:`_negotiable`.
        """
        protocol = self._protocol
        if self._initializing:
            raise RequestError.invalid_request(f"'{protocol.initialize}' is already in progress")
        if self.initialized and protocol.repeat_initialize != "always" and self._other_request_seen:
            raise RequestError.invalid_request(
                f"'{protocol.initialize}' must not be repeated after other requests"
            )

    def _negotiable(self, params: Any) -> Any:
        """The handshake params the handler is given, whatever version they ask for.

        The spec's negotiation: an agent answers a version it supports with that
        version, and any other with the latest version it supports, never with an
        error; a package speaks one version, so its answer is always its own
        (:meth:`_check_answered_version`).  A client of an older version names
        itself with another field (v1's ``clientInfo``): when the package's own
        field is missing or malformed in such a request, it becomes
        ``{"name": "unknown", "version": "unknown"}`` (as the router makes it), so
        the request still reaches the handler, which sees the version asked for.
        """
        protocol = self._protocol
        requested = _version_of(params.get(protocol.protocol_version)) if isinstance(params, dict) else None
        if requested is None or requested >= protocol.version:
            return params
        info = protocol.client_info
        route = self._requests[protocol.initialize]
        try:
            adapter(route.params).validate_python(params)
        except ValidationError as error:
            if any(e["loc"][:1] == (info,) for e in error.errors()):
                return {**params, info: dict(_UNKNOWN_CLIENT)}
        return params

    def _check_answered_version(self, answer: Any) -> None:
        """A handshake answer names the package's own protocol version, or it is an internal error.

        The package speaks that version and no other, so the handler that answered another
        (the version asked for, echoed back) broke the negotiation: the client would read a
        result of one version as another.
        """
        protocol = self._protocol
        found = answer.get(protocol.protocol_version) if isinstance(answer, dict) else None
        if found is not None and _version_of(found) != protocol.version:
            logger.error(
                "the handler of %r answered %s %r: this package speaks version %d, so it must answer %d",
                protocol.initialize,
                protocol.protocol_version,
                found,
                protocol.version,
                protocol.version,
            )
            raise RequestError.internal_error()

    async def _dispatch(self, method: str, params: Any, handshake: bool = False) -> Any:
        route = self._requests.get(method)
        if route is None:
            if method.startswith("_") and hasattr(self.handler, "ext_method"):
                return await self.handler.ext_method(method, params if isinstance(params, dict) else {})
            raise RequestError.method_not_found(method)
        function: Callable[..., Awaitable[Any]] | None = getattr(self.handler, route.attribute, None)
        if function is None:
            raise RequestError.method_not_found(method)
        try:
            # JSON-RPC lets params be omitted: that is {}, valid when no field is required
            value = adapter(route.params).validate_python({} if params is None else params)
        except ValidationError as error:
            raise RequestError.invalid_params(_error_details(error)) from None
        result = await function(**expand(value))
        if result is None and route.result is not Any:
            result = {}  # a handler of an empty result may return nothing
        try:
            answer = wire_params(adapter(route.result).validate_python(result))
        except ValidationError as error:
            logger.error("handler of %r returned an invalid result: %s", method, error)
            raise RequestError.internal_error() from None
        if handshake:
            self._check_answered_version(answer)
        if method == self._protocol.initialize:
            capabilities = params.get(self._protocol.capabilities) if isinstance(params, dict) else None
            self.peer_capabilities = capabilities if isinstance(capabilities, dict) else {}
            self.initialized = True
        return answer

    async def _reply_error(self, request_id: JsonId, error: RequestError) -> None:
        await self._write(_error_reply(request_id, error))


def handler_of(value: Any, connection: Any) -> Any:
    """``value`` itself, or what it returns for ``connection`` if it is a factory (a class or function)."""
    return value(connection) if isinstance(value, type) or inspect.isroutine(value) else value


def message_kind(message: Any) -> str:
    """``request``, ``notification``, ``response`` or ``invalid``: what a decoded message is."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "invalid"
    method = message.get("method")
    has_id = "id" in message
    request_id = message.get("id")
    valid_id = request_id is None or (isinstance(request_id, (int, str)) and not isinstance(request_id, bool))
    if has_id and not valid_id:
        return "invalid"
    if isinstance(method, str):
        params = message.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            return "invalid"
        return "request" if has_id else "notification"
    if has_id and ("result" in message) != ("error" in message):
        return "response"
    return "invalid"


def _version_of(value: Any) -> int | None:
    """``value`` as a protocol version (an integer from 0 to 65535; ``2.0`` is ``2``), else ``None``."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # an integer in JSON Schema, as the models read it
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0xFFFF:
        return value
    return None


def _error_reply(request_id: JsonId, error: RequestError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_json()}


def _check_extension(method: str) -> None:
    if not method.startswith("_"):
        raise ValueError(f"extension method names must start with '_': {method!r}")
