"""Serve ACP v1 and v2 on one transport: the agent's protocol router and the client's fallback.

This file is written once by hand and copied unchanged into every generated
package; it needs only the standard library and pydantic.  It joins two
generated packages, one per protocol version, that the caller names:

* the package this file is in serves its own protocol version: its bindings
  hand it over (``AgentProtocolRouter.own``, ``own=`` of
  :func:`connect_with_fallback`: their ``PACKAGE``, a :class:`GeneratedPackage`),
  so this file never looks its package up;
* the package of the other version is passed in (``v1_package=...`` or
  ``v2_package=...``), whatever name it was vendored under.

:class:`AgentProtocolRouter` (agent side) reads messages until a valid
``initialize`` request arrives, picks the requested version if it serves it and
its latest version otherwise (the spec's negotiation: a version is never
refused), and hands the transport, the ``initialize`` request first, to that
version's package: its factory is called once with that
package's ``AgentSideConnection``, and from then on only that package's strict
runtime talks (nothing is translated; the connection is never re-routed).
Before that:

* notifications and responses are ignored;
* any other request is answered ``-32600``, and a JSON array gets one
  ``-32600`` with ``id: null`` (so does a message that is not JSON-RPC 2.0;
  a line that is not JSON gets ``-32700``);
* an ``initialize`` that fails (params that are not an object, or a missing
  or malformed ``protocolVersion``) gets an error response;

and none of these close the connection.  A missing or malformed v2 ``info``
becomes ``{"name": "unknown", "version": "unknown"}``.  When a v2 request is
served by the v1 agent, its params are reduced to the v1 ``InitializeRequest``
fields (``clientCapabilities``, ``clientInfo``, ``_meta``), each kept only if
it parses under the v1 package's own model (``info`` is left out when it is
missing or malformed), and the request keeps its id.

:func:`connect_with_fallback` (client side) offers v2 and, when the agent
answers with protocol version 1, goes on with a v1 ``ClientSideConnection`` on
the same transport; see its docstring.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import operator
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar, Final, cast

from pydantic import ValidationError

from ._params import wire_params
from ._rpc import (
    DEFAULT_MAX_MESSAGE_BYTES,
    UNSUPPORTED_PROTOCOL_VERSION,
    Channel,
    GeneratedPackage,
    Prepended,
    RequestError,
    SessionRoutes,
    StreamChannel,
    Writer,
    message_kind,
)
from ._streams import stdio_streams

__all__ = [
    "AgentProtocolRouter",
    "NegotiatedConnection",
    "ReconnectRequiredError",
    "RoutedConnection",
    "connect_with_fallback",
]

logger = logging.getLogger("acp")

V1: Final = 1
V2: Final = 2
_MAX_PROTOCOL_VERSION: Final = 0xFFFF
_UNKNOWN_INFO: Final = {"name": "unknown", "version": "unknown"}
_V2_TO_V1_INITIALIZE: Final = (
    ("capabilities", "clientCapabilities"),
    ("info", "clientInfo"),
    ("_meta", "_meta"),
)
"""The initialize params fields v1 and v2 share: (v2 wire name, v1 wire name)."""
_AGENT_CAPABILITIES: Final = ("capabilities", "agentCapabilities")
"""Where an initialize result advertises the agent's capabilities: v2, v1."""
_READ_SIZE: Final = 1 << 16

AgentFactory = Callable[[Any], object]
"""Makes the agent of one connection; it is given the selected package's ``AgentSideConnection``."""


def _check_package(package: ModuleType, version: int, what: str) -> GeneratedPackage:
    found = getattr(package, "PROTOCOL_VERSION", None)
    if found != version:
        raise ValueError(
            f"{what}={package.__name__} speaks ACP protocol version {found}, not {version}: "
            f"pass the generated package of an ACP v{version} release"
        )
    return GeneratedPackage.of(package, what)


def _packages(
    own: GeneratedPackage | None, v1_package: ModuleType | None, v2_package: ModuleType | None
) -> dict[int, GeneratedPackage]:
    """Version -> package: ``own`` (handed over by the bindings) for its version, and the ones passed in."""
    packages: dict[int, GeneratedPackage] = {} if own is None else {own.protocol_version: own}
    if v1_package is not None:
        packages[V1] = _check_package(v1_package, V1, "v1_package")
    if v2_package is not None:
        packages[V2] = _check_package(v2_package, V2, "v2_package")
    return packages


def _missing_package(version: int) -> ValueError:
    return ValueError(
        f"a v{version} side needs the generated ACP v{version} package: "
        f"pass v{version}_package=<that package> (any name it is vendored under)"
    )


# -- reading lines without reading past them --------------------------------------------


class _TooLarge:
    __slots__ = ()


_TOO_LARGE: Final = _TooLarge()


class _Lines:
    """The lines of a stream, read until a connection takes the stream over (:meth:`handover`)."""

    def __init__(self, reader: asyncio.StreamReader, limit: int) -> None:
        self._reader = reader
        self._limit = limit
        self._buffer = bytearray()
        self._scanned = 0
        self._skipping = False

    async def next(self) -> bytes | _TooLarge | None:
        """The next line (without its newline), ``_TOO_LARGE``, or ``None`` at the end of the stream."""
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end != -1:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._scanned = 0
                if self._skipping:  # the tail of an over-long line
                    self._skipping = False
                    continue
                return _TOO_LARGE if len(line) > self._limit else line
            if self._skipping:
                self._buffer.clear()
            elif len(self._buffer) > self._limit:
                self._buffer.clear()
                self._skipping = True
                self._scanned = 0
                return _TOO_LARGE
            self._scanned = len(self._buffer)
            chunk = await self._reader.read(_READ_SIZE)
            if not chunk:
                if self._buffer and not self._skipping:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line
                return None
            self._buffer += chunk

    def handover(self, head: bytes) -> asyncio.StreamReader:
        """A reader that yields ``head``, then what was read but not consumed, then the stream."""
        reader = _Prepended(head + bytes(self._buffer), self._reader)
        self._buffer.clear()
        # a connection only calls read(); see _Prepended
        return cast(asyncio.StreamReader, reader)


class _Prepended:
    """``head``, then ``reader``: all a connection needs of an :class:`asyncio.StreamReader` (``read``).

    Once ``head`` is used up, ``read`` is the stream's own ``read``, so the
    connection reads through no extra layer.
    """

    def __init__(self, head: bytes, reader: asyncio.StreamReader) -> None:
        self._head = head
        self._reader = reader
        self.read: Callable[[int], Awaitable[bytes]] = self._read_head if head else reader.read

    async def _read_head(self, n: int = -1) -> bytes:
        head = self._head
        if 0 <= n < len(head):
            self._head = head[n:]
            return head[:n]
        self._head = b""
        self.read = self._reader.read
        return head

    def at_eof(self) -> bool:
        return not self._head and self._reader.at_eof()


def _valid_id(message: Any) -> int | str | None:
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, (int, str)) and not isinstance(request_id, bool):
        return request_id
    return None


def _encode(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


async def _send(writer: Writer, message: Any) -> None:
    writer.write(_encode(message) + b"\n")
    await writer.drain()


async def _reply_error(channel: Channel, request_id: int | str | None, error: RequestError) -> None:
    await channel.send({"jsonrpc": "2.0", "id": request_id, "error": error.to_json()})


def _answered_version(answer: Mapping[str, Any]) -> Any:
    """The ``protocolVersion`` of an ``initialize`` answer, as sent (``None`` if there is none)."""
    result = answer.get("result")
    return result.get("protocolVersion") if isinstance(result, dict) else None


def _protocol_version(value: Any) -> int | None:
    """``value`` as a protocol version (an integer from 0 to 65535; ``2.0`` is ``2``), else ``None``."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # an integer in JSON Schema, as the models read it
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_PROTOCOL_VERSION:
        return value
    return None


# -- the agent side -----------------------------------------------------------------------


@dataclass(frozen=True)
class RoutedConnection:
    """A connection the router handed to one protocol version."""

    protocol_version: int
    """The version selected: 1 or 2."""
    package: ModuleType
    """The generated package that serves it."""
    connection: Any
    """That package's ``AgentSideConnection``."""

    async def wait_closed(self) -> None:
        """Wait until the client closed the stream or the connection was closed."""
        await self.connection.wait_closed()

    async def close(self) -> None:
        await self.connection.close()


class AgentProtocolRouter:
    """Serves ACP v1 and v2 clients: each connection goes to the agent of the version it asks for.

    ``v1`` and ``v2`` are agent factories, each called once per connection with
    the selected package's ``AgentSideConnection`` (return a fresh agent from
    each call).  The package this router comes from serves its own protocol
    version; the other version's generated package is passed in, under
    whatever name it is vendored::

        from myproj._vendor import acp, acp_v1     # a v2 and a v1 package

        router = acp.AgentProtocolRouter(
            v1=lambda connection: V1Agent(connection),
            v2=lambda connection: V2Agent(connection),
            v1_package=acp_v1,
        )
        await router.run()                         # stdio; or run(reader, writer)

    ``v1_package``/``v2_package`` may also replace the router's own package for
    its version.  The selected runtime stays strict: after ``initialize``,
    every message goes to it unchanged, and a repeated ``initialize`` is its
    to answer.  The rules before ``initialize`` are in the module docstring.
    """

    own: ClassVar[GeneratedPackage | None] = None
    """The package serving the router's own version: each package's bindings subclass the router
    with theirs (``acp.AgentProtocolRouter``).  Here ``None``: this class serves only the packages
    passed in."""

    def __init__(
        self,
        *,
        v1: AgentFactory | None = None,
        v2: AgentFactory | None = None,
        v1_package: ModuleType | None = None,
        v2_package: ModuleType | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        factories = {version: f for version, f in ((V1, v1), (V2, v2)) if f is not None}
        if not factories:
            raise ValueError("AgentProtocolRouter needs an agent factory: v1=..., v2=... or both")
        for version, factory in factories.items():
            if not callable(factory):
                raise TypeError(f"v{version} must be a factory: given the connection, it returns an agent")
        packages = _packages(self.own, v1_package, v2_package)
        for version in factories:
            if version not in packages:
                raise _missing_package(version)
        self._factories: dict[int, AgentFactory] = factories
        self._packages = packages
        self.max_message_bytes = max_message_bytes

    @property
    def versions(self) -> tuple[int, ...]:
        """The protocol versions this router serves, lowest first."""
        return tuple(sorted(self._factories))

    def package(self, version: int) -> ModuleType:
        """The generated package that serves ``version``."""
        if version not in self._factories:
            raise KeyError(version)
        return self._packages[version].module

    @property
    def sessions(self) -> SessionRoutes:
        """What a remote transport serving this router routes by: the union of its versions' ``SESSIONS``."""
        return functools.reduce(operator.or_, (self._packages[v].sessions for v in self.versions))

    async def run(
        self, reader: asyncio.StreamReader | Channel | None = None, writer: Writer | None = None
    ) -> None:
        """Serve one connection until the client closes it: stdio, ``reader``/``writer`` or a channel."""
        if reader is None:
            if writer is not None:
                raise ValueError("pass both reader and writer, or neither (stdin and stdout)")
            reader, writer = await stdio_streams()
        routed = await self.serve(reader, writer)
        if routed is not None:
            await routed.wait_closed()

    async def serve(
        self, reader: asyncio.StreamReader | Channel, writer: Writer | None = None
    ) -> RoutedConnection | None:
        """Wait for a valid ``initialize`` and hand the connection to its version; don't wait for the end.

        ``reader``/``writer`` are a byte stream pair, or ``reader`` is a :class:`Channel`
        (the HTTP and WebSocket server use this).  Returns the routed connection (it is
        already answering ``initialize``), or ``None`` when the client closed the stream
        first (the transport is then closed).
        """
        channel: Channel
        if writer is None:
            if not hasattr(reader, "receive"):
                raise ValueError("pass both reader and writer, or a Channel alone")
            channel = cast(Channel, reader)
        else:
            channel = StreamChannel(cast(asyncio.StreamReader, reader), writer, self.max_message_bytes)
        try:
            return await self._serve(channel)
        except (ConnectionError, OSError) as exc:  # the client went away while it was answered
            logger.debug("connection lost before initialize: %s", exc)
            with contextlib.suppress(Exception):
                await channel.close()
            return None

    async def _serve(self, channel: Channel) -> RoutedConnection | None:
        while True:
            message = await channel.receive()
            if message is None:
                with contextlib.suppress(Exception):
                    await channel.close()
                return None
            if isinstance(message, Exception):  # not JSON, not UTF-8, or too large
                await channel.send({"jsonrpc": "2.0", "id": None, "error": message.to_json()})  # type: ignore[attr-defined]
                continue
            if isinstance(message, list):
                reason = {"reason": "a batch is not accepted before initialize"}
                await _reply_error(channel, None, RequestError.invalid_request(reason))
                continue
            kind = message_kind(message)
            if kind in ("notification", "response"):
                logger.warning("%s before initialize ignored", kind)
                continue
            if kind == "invalid":
                reason = {"reason": "not a JSON-RPC 2.0 message"}
                await _reply_error(channel, _valid_id(message), RequestError.invalid_request(reason))
                continue
            request_id = message["id"]
            method = message["method"]
            if method != "initialize":
                error = RequestError.invalid_request(f"the connection must be initialized before '{method}'")
                await _reply_error(channel, request_id, error)
                continue
            try:
                version, params = self._route(message.get("params"))
            except RequestError as exc:
                await _reply_error(channel, request_id, exc)
                continue
            head = message if params is None else {**message, "params": params}
            return self._hand_over(version, Prepended(head, channel).as_channel())

    def _hand_over(self, version: int, channel: Channel) -> RoutedConnection:
        package = self._packages[version]
        factory = self._factories[version]

        def make(connection: Any) -> object:  # a function, so the bindings call it exactly once
            return factory(connection)

        connection = package.connect_to_client(make, channel, max_message_bytes=self.max_message_bytes)
        return RoutedConnection(version, package.module, connection)

    def _route(self, params: Any) -> tuple[int, dict[str, Any] | None]:
        """The version serving these ``initialize`` params, and the params to send (``None``: unchanged)."""
        if not isinstance(params, dict):
            raise RequestError.invalid_params({"reason": "initialize params must be an object"})
        requested = _protocol_version(params.get("protocolVersion"))
        if requested is None:
            raise RequestError.invalid_params(
                {"reason": "initialize.protocolVersion must be a valid ACP protocol version (0 to 65535)"}
            )
        # the spec's negotiation: the version asked for if it is served, otherwise the latest one
        selected = requested if requested in self._factories else max(self._factories)
        if selected == V1:
            return V1, (self._downgrade(params) if requested > V1 else None)
        if "info" in params and self._valid_info(params["info"]):
            return selected, None
        return selected, {**params, "info": dict(_UNKNOWN_INFO)}

    def _valid_info(self, info: Any) -> bool:
        package = self._packages.get(V2) or self._packages[V1]
        try:
            package.schema.Implementation.model_validate(info)
        except ValidationError:
            return False
        return True

    def _downgrade(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """v2 ``initialize`` params reduced to the v1 fields that parse under the v1 package's model."""
        model = self._packages[V1].schema.InitializeRequest
        out: dict[str, Any] = {"protocolVersion": V1}
        for v2_name, v1_name in _V2_TO_V1_INITIALIZE:
            if v2_name not in params or (v2_name == "info" and not self._valid_info(params[v2_name])):
                continue
            try:
                parsed = model.model_validate({"protocolVersion": V1, v1_name: params[v2_name]})
            except ValidationError:
                continue
            # a lenient field that did not parse falls back to its default and is no longer "set"
            dumped = parsed.model_dump(by_alias=True, exclude_unset=True, mode="json")
            if v1_name in dumped:
                out[v1_name] = dumped[v1_name]
        return out


# -- the client side ----------------------------------------------------------------------


class ReconnectRequiredError(ConnectionError):
    """The agent cannot be talked to on this transport: close it and connect again.

    ``agent_version`` is the protocol version the agent answered with (``None``
    if it did not answer with one); ``error`` is its error response, if any.
    """

    def __init__(
        self, message: str, *, agent_version: int | None = None, error: RequestError | None = None
    ) -> None:
        super().__init__(message)
        self.agent_version = agent_version
        self.error = error


@dataclass(frozen=True)
class NegotiatedConnection:
    """The client's connection after :func:`connect_with_fallback`: initialized, in the agent's version."""

    protocol_version: int
    """The version the agent answered with: 1 or 2."""
    package: ModuleType
    """The generated package of that version."""
    connection: Any
    """That package's ``ClientSideConnection``, already initialized."""
    response: Any
    """The agent's ``initialize`` result, as that package's ``schema.InitializeResponse``."""


_VERSION_WORDS: Final = re.compile(r"protocol.?version|version", re.IGNORECASE)


def _refuses_version(error: RequestError) -> bool:
    """Whether an error answering ``initialize`` says the agent does not speak the version offered."""
    if error.code == UNSUPPORTED_PROTOCOL_VERSION:
        return True
    text = f"{error.message} {json.dumps(error.data, default=str)}"
    return error.code in (-32600, -32602) and _VERSION_WORDS.search(text) is not None


async def connect_with_fallback(
    reader: asyncio.StreamReader,
    writer: Writer,
    *,
    v2: Any,
    v1: Any = None,
    info: Any,
    capabilities: Any = None,
    v1_capabilities: Any = None,
    v1_package: ModuleType | None = None,
    v2_package: ModuleType | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    own: GeneratedPackage | None = None,
) -> NegotiatedConnection:
    """Initialize a connection to an agent offering ACP v2, and fall back to v1 on the same transport.

    ``v2`` and ``v1`` are the client handlers (``Client`` of each package) the
    connection serves; ``info`` (an ``Implementation`` or its wire JSON) and
    ``capabilities`` (v2 ``ClientCapabilities``) are what the v2 ``initialize``
    offers.  The packages are chosen as for :class:`AgentProtocolRouter`: ``own``
    (what the package's bindings pass) serves its version, the other one is passed in.

    The helper sends ``initialize`` itself (id 0) and reads up to its answer:

    * the agent answers with protocol version 2: the result is a v2
      ``ClientSideConnection``;
    * it answers with protocol version 1 (it speaks v1, or a router sent the
      request to its v1 agent): the agent is initialized for v1 already, so the
      helper goes on with a v1 ``ClientSideConnection`` on the same transport,
      started in the initialized state with that response.  The agent only knew
      what v1 and v2 share of the request: the v1 fields ``clientInfo`` and
      ``clientCapabilities`` were not in it (a router maps them; a plain v1
      agent assumes the v1 defaults);
    * it answers with an error that says it does not support the version
      (``-32022``, or ``-32600``/``-32602`` mentioning the version): the connection is
      not initialized, so the helper sends a v1 ``initialize`` (id 1, with
      ``clientInfo`` from ``info`` and ``v1_capabilities``) on the same
      transport and goes on with v1 if the agent accepts it.

    Raises :class:`ReconnectRequiredError` when the protocol does not allow going on
    here: the agent closed the stream before answering (some agents close after
    refusing a version), answered with a version the client was not given a
    handler for, or refused v1 too.  Any other error answer is raised as the
    ``RequestError`` it is.  Updates the agent sends after the answer reach the
    selected handler.
    """
    packages = _packages(own, v1_package, v2_package)
    if V2 not in packages:
        raise _missing_package(V2)
    if v1 is not None and V1 not in packages:
        raise _missing_package(V1)
    lines = _Lines(reader, max_message_bytes)
    held: list[bytes] = []
    offer = packages[V2].schema.InitializeRequest.model_validate(
        {
            "protocolVersion": V2,
            "info": wire_params(info),
            **({} if capabilities is None else {"capabilities": wire_params(capabilities)}),
        }
    )
    answer = await _exchange(lines, writer, held, 0, wire_params(offer))
    answered = _answered_version(answer)
    if "error" in answer:
        error = _request_error(answer["error"])
        if v1 is None or not _refuses_version(error):
            raise error
        params: dict[str, Any] = {"protocolVersion": V1, "clientInfo": wire_params(info)}
        if v1_capabilities is not None:
            params["clientCapabilities"] = wire_params(v1_capabilities)
        retry = packages[V1].schema.InitializeRequest.model_validate(params)
        answer = await _exchange(lines, writer, held, 1, wire_params(retry), refused=error)
        if "error" in answer:
            raise ReconnectRequiredError(
                "the agent refused ACP v2 and v1 on this connection", error=_request_error(answer["error"])
            )
        answered = _answered_version(answer)
    version = _protocol_version(answered)
    handler = {V1: v1, V2: v2}.get(version) if version is not None else None
    if handler is None or version not in packages:
        raise ReconnectRequiredError(
            f"the agent answered initialize with protocol version {answered!r}, which this client was not "
            "given a handler for: close the connection and connect again with that version",
            agent_version=version,
        )
    package = packages[version]
    result = answer["result"]
    response = package.schema.InitializeResponse.model_validate(result)
    head = b"".join(line + b"\n" for line in held)
    connection = package.connect_to_agent(
        handler, lines.handover(head), writer, max_message_bytes=max_message_bytes
    )
    connection.connection.initialized = True
    advertised: dict[str, Any] = next(
        (result[k] for k in _AGENT_CAPABILITIES if isinstance(result.get(k), dict)), {}
    )
    connection.connection.peer_capabilities = advertised
    return NegotiatedConnection(version, package.module, connection, response)


async def _exchange(
    lines: _Lines,
    writer: Writer,
    held: list[bytes],
    request_id: int,
    params: Any,
    refused: RequestError | None = None,
) -> dict[str, Any]:
    """Send ``initialize`` and read up to its response; other lines are kept in ``held``."""
    try:
        await _send(writer, {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params})
        while True:
            line = await lines.next()
            if line is None:
                break
            if isinstance(line, _TooLarge) or not line.strip():
                continue
            try:
                message = json.loads(line.decode("utf-8"))
            except ValueError:
                held.append(line)
                continue
            if message_kind(message) == "response" and message.get("id") == request_id:
                if "result" in message and not isinstance(message["result"], dict):
                    raise RequestError.internal_error({"reason": "the initialize result is not an object"})
                return cast(dict[str, Any], message)
            held.append(line)
    except (ConnectionError, OSError) as exc:
        raise ReconnectRequiredError(f"the connection broke during initialize: {exc}", error=refused) from exc
    raise ReconnectRequiredError(
        "the agent closed the connection before answering initialize"
        + (f" (it had refused ACP v2: {refused.message})" if refused else ""),
        error=refused,
    )


def _request_error(error: Any) -> RequestError:
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return RequestError(error["code"], str(error.get("message", "")), error.get("data"))
    return RequestError.internal_error({"reason": "malformed error response"})
