"""The client side of ACP over WebSocket: the channel behind ``connect_websocket``.

This file is written once by hand and copied unchanged into every generated
package.  It needs websockets, imported when a connection is first opened
(``pip install 'websockets>=15,<17'``), so the package imports without it.  The
wire is the one of the official TypeScript SDK 2.4.0's ``createWebSocketStream``:
no subprotocol, one JSON-RPC message per text frame, binary frames ignored; a
frame that is not JSON is answered ``-32700`` and a JSON array ``-32600``.
``cookies`` go in the handshake's ``Cookie`` header, and the ``Set-Cookie`` of
its response is kept in :attr:`WebSocketChannel.cookies`.

Liveness: a ping every ``ping_interval`` seconds (20 by default, as websockets
and uvicorn do), and a socket that answers none within ``ping_timeout`` is
closed, waiting at most that long again for the close handshake (``None``
turns either off).  Failures raise the package's
:class:`TransportError`, as over Streamable HTTP: a refused handshake is an
:class:`HttpStatusError` with its status, a server that cannot be reached or a
socket that broke a ``TransportError``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from http.cookies import SimpleCookie
from typing import Any, Final

from ._rpc import DEFAULT_MAX_MESSAGE_BYTES, HttpStatusError, RequestError, TransportError, decode, encode

__all__ = ["WebSocketChannel", "open_websocket"]

INSTALL: Final = "pip install 'websockets>=15,<17'"
MAX_ERROR_BODY: Final = 8 * 1024


def _websockets() -> Any:
    try:
        return importlib.import_module("websockets.asyncio.client")
    except ImportError as error:
        raise ImportError(f"ACP over WebSocket needs websockets: {INSTALL}") from error


class WebSocketChannel:
    """A :class:`Channel` over one WebSocket connection."""

    def __init__(self, socket: Any, cookies: dict[str, str]) -> None:
        self.socket = socket
        self.cookies = cookies
        """The cookies sent in the handshake, updated by its response's ``Set-Cookie``."""
        self.connection_id: str | None = None
        headers = getattr(getattr(socket, "response", None), "headers", None)
        if headers is not None:
            self.connection_id = headers.get("Acp-Connection-Id")
            for value in headers.get_all("Set-Cookie"):
                parsed: SimpleCookie = SimpleCookie()
                parsed.load(value)
                self.cookies.update({name: morsel.value for name, morsel in parsed.items()})
        self._closed_error: type[Exception] = importlib.import_module(
            "websockets.exceptions"
        ).ConnectionClosed
        self._closing = False

    async def receive(self) -> Any:
        while True:
            try:
                frame = await self.socket.recv()
            except self._closed_error as error:
                if self._closing:
                    return None
                raise TransportError(f"the WebSocket closed: {error}") from None
            if not isinstance(frame, str):
                continue  # binary frames carry nothing in ACP
            try:
                message = decode(frame)
            except ValueError:
                return RequestError.parse_error()
            if isinstance(message, list):
                return RequestError.invalid_request({"reason": "JSON-RPC batches are not supported"})
            if not isinstance(message, dict):
                return RequestError.invalid_request()
            return message

    async def send(self, message: Any) -> None:
        try:
            await self.socket.send(encode(message))
        except self._closed_error as error:
            raise TransportError(f"the WebSocket closed: {error}") from None

    async def close(self) -> None:
        self._closing = True
        await self.socket.close()


async def open_websocket(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    cookies: Mapping[str, str] | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    open_timeout: float = 10.0,
    ping_interval: float | None = 20.0,
    ping_timeout: float | None = 20.0,
) -> WebSocketChannel:
    """Open a WebSocket to ``url`` for ACP: no subprotocol, no compression."""
    client = _websockets()
    errors = importlib.import_module("websockets.exceptions")
    extra = dict(headers or {})
    jar = dict(cookies or {})
    if jar:
        extra["Cookie"] = "; ".join(f"{name}={value}" for name, value in jar.items())
    try:
        socket = await client.connect(
            url,
            additional_headers=extra,
            max_size=max_message_bytes,
            compression=None,
            open_timeout=open_timeout,
            ping_interval=ping_interval,
            ping_timeout=ping_timeout,
            # a peer that answers no ping will not answer a close either: do not wait 10 s for it
            close_timeout=10.0 if ping_timeout is None else min(10.0, ping_timeout),
        )
    except errors.InvalidStatus as refused:
        response = refused.response
        body = bytes(response.body or b"").decode(errors="replace")[:MAX_ERROR_BODY]
        raise HttpStatusError("the WebSocket handshake was refused", response.status_code, body) from None
    except (OSError, TimeoutError, errors.WebSocketException) as error:
        text = str(error) or type(error).__name__
        raise TransportError(f"could not open a WebSocket to {url}: {text}") from error
    return WebSocketChannel(socket, jar)
