"""The client side of ACP over Streamable HTTP: the channel behind ``connect_http``.

This file is written once by hand and copied unchanged into every generated
package.  It needs httpx, imported when a connection is first made
(``pip install 'httpx>=0.28,<1'``), so the package imports without it.  The wire
is the one of the official TypeScript SDK 2.4.0's ``createHttpStream``:

* the first message, ``initialize``, is POSTed without ``Acp-Connection-Id``
  and answered in that POST, with the connection's id;
* every later message is POSTed with it (and with ``Acp-Session-Id`` when its
  params name a session, or when it answers a request of a session's stream);
  answers come on SSE streams: the connection's, opened after ``initialize``,
  and one per session, opened (and waited for) before the first message of
  that session is POSTed, or when a response names a new session;
* when the connection's stream ends, the connection closes (pending calls fail
  with ``ConnectionError``); when a session's stream ends or is refused (409),
  only the requests of that session fail, and the next message reopens it;
* a request whose POST is refused fails with ``-32603`` and data
  ``{status, body}``; 401, 403, 404 and 410 close the connection instead;
* ``Set-Cookie`` is stored and sent back (httpx's cookie jar); closing the
  connection sends ``DELETE``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ._rpc import DEFAULT_MAX_MESSAGE_BYTES, RequestError, encode

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpChannel", "HttpStatusError"]

logger = logging.getLogger("acp")

INSTALL: Final = "pip install 'httpx>=0.28,<1'"
CONNECTION_HEADER: Final = "Acp-Connection-Id"
SESSION_HEADER: Final = "Acp-Session-Id"
CONNECTION_FAILURES: Final = frozenset({401, 403, 404, 410})
"""Statuses that mean the connection is unusable or gone, whatever was POSTed."""
MAX_ERROR_BODY: Final = 8 * 1024


def _httpx() -> Any:
    try:
        return importlib.import_module("httpx")
    except ImportError as error:
        raise ImportError(f"ACP over Streamable HTTP needs httpx: {INSTALL}") from error


_REATTACH: Final = frozenset({"session/load", "session/resume"})
"""Requests that reattach a session whose stream was refused."""


class HttpStatusError(ConnectionError):
    """The server refused a request of the transport itself (``initialize``, a stream): status, body."""

    def __init__(self, what: str, status: int, body: str) -> None:
        super().__init__(f"{what}: HTTP {status}" + (f": {body}" if body else ""))
        self.status = status
        self.body = body


def _key(request_id: Any) -> Any:
    return (type(request_id).__name__, request_id)


def _session_of(value: Any) -> str | None:
    session = value.get("sessionId") if isinstance(value, dict) else None
    return session if isinstance(session, str) else None


class HttpChannel:
    """A :class:`Channel` over Streamable HTTP (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        cookies: Any = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        client: httpx.AsyncClient | None = None,
        timeout: float = 30.0,
    ) -> None:
        lib = _httpx()
        self.url = url
        self.max_message_bytes = max_message_bytes
        self._headers = dict(headers or {})
        self._owns_client = client is None
        self.client: httpx.AsyncClient = client or lib.AsyncClient(
            timeout=lib.Timeout(timeout, read=None), cookies=cookies
        )
        if client is not None and cookies is not None:
            self.client.cookies.update(cookies)
        self.connection_id: str | None = None
        self._inbound: asyncio.Queue[Any] = asyncio.Queue()
        self._sessions: dict[str, asyncio.Future[None]] = {}
        """Session -> resolved once its stream is open (its headers came)."""
        self._failed: dict[str, Exception] = {}
        self._pending: dict[Any, tuple[str, Any]] = {}
        """Our requests of a session still waiting for their response: key -> (session, id)."""
        self._agent_requests: dict[Any, str] = {}
        """Requests the agent sent on a session's stream: key -> that session (for our response)."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._lock = asyncio.Lock()
        self._closed = False

    # -- the Channel

    async def receive(self) -> Any:
        return await self._inbound.get()

    async def send(self, message: Any) -> None:
        async with self._lock:  # one POST at a time: the server sees messages in the order sent
            if self._closed:
                raise ConnectionError("the HTTP connection is closed")
            if self.connection_id is None:
                await self._initialize(message)
            else:
                await self._post(message)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._inbound.put_nowait(None)
        current = asyncio.current_task()
        for task in list(self._tasks):
            if task is not current:
                task.cancel()
        if self.connection_id is not None:
            with contextlib.suppress(Exception):
                await self.client.delete(self.url, headers=self._request_headers())
        if self._owns_client:
            with contextlib.suppress(Exception):
                await self.client.aclose()

    # -- sending

    def _request_headers(self, session: str | None = None, json_body: bool = False) -> dict[str, str]:
        headers = dict(self._headers)
        if json_body:
            headers["Content-Type"] = "application/json"
        if self.connection_id is not None:
            headers[CONNECTION_HEADER] = self.connection_id
        if session is not None:
            headers[SESSION_HEADER] = session
        return headers

    async def _initialize(self, message: Any) -> None:
        if not (isinstance(message, dict) and message.get("method") == "initialize" and "id" in message):
            raise ConnectionError("the first message over Streamable HTTP must be the initialize request")
        lib = _httpx()
        try:
            response = await self.client.post(
                self.url, content=encode(message).encode(), headers=self._request_headers(json_body=True)
            )
        except lib.HTTPError as error:
            raise ConnectionError(f"initialize could not reach {self.url}: {error}") from error
        if response.status_code != 200:
            raise HttpStatusError("initialize failed", response.status_code, response.text[:MAX_ERROR_BODY])
        connection_id = response.headers.get(CONNECTION_HEADER)
        if not connection_id:
            raise HttpStatusError("the initialize response has no Acp-Connection-Id", 200, "")
        answer = json.loads(response.content)
        if not isinstance(answer, dict) or answer.get("id") != message["id"]:
            raise ConnectionError("the initialize response does not answer the initialize request")
        self.connection_id = connection_id
        self._spawn(self._read_stream(None, None))
        self._inbound.put_nowait(answer)

    async def _post(self, message: Any) -> None:
        lib = _httpx()
        is_call = isinstance(message, dict) and "method" in message
        request_id = message.get("id") if isinstance(message, dict) else None
        if is_call:
            session = _session_of(message.get("params"))
        elif isinstance(message, dict):
            session = self._agent_requests.pop(_key(request_id), None)
        else:
            session = None
        if session is not None:
            try:
                await self._open_session(session, reattach=is_call and message["method"] in _REATTACH)
            except HttpStatusError as conflict:
                if conflict.status != 409:
                    raise
                if is_call and "id" in message:
                    self._fail_request(request_id, conflict)
                return
        is_request = is_call and "id" in message
        if session is not None and is_request:
            self._pending[_key(request_id)] = (session, request_id)
        try:
            response = await self.client.post(
                self.url, content=encode(message).encode(), headers=self._request_headers(session, True)
            )
        except lib.HTTPError as failure:
            await self._lost(f"POST failed: {failure}")
            raise ConnectionError(f"POST to {self.url} failed: {failure}") from failure
        if response.status_code < 300:
            return
        status, body = response.status_code, response.text[:MAX_ERROR_BODY]
        refused = HttpStatusError("POST failed", status, body)
        still_pending = self._pending.pop(_key(request_id), None) is not None or session is None
        if session is not None and status == 409:
            self._fail_session(session, refused)
            if is_request and still_pending:
                self._fail_request(request_id, refused)
            return
        if is_request and status not in CONNECTION_FAILURES:
            if still_pending:
                self._fail_request(request_id, refused)
            return
        await self._lost(str(refused))
        raise refused

    def _fail_request(self, request_id: Any, error: HttpStatusError) -> None:
        try:
            body: Any = json.loads(error.body)
        except ValueError:
            body = error.body
        data = {"status": error.status, "body": body}
        self._inbound.put_nowait(
            {"jsonrpc": "2.0", "id": request_id, "error": RequestError(-32603, str(error), data).to_json()}
        )

    def _fail_session(self, session: str, error: Exception) -> None:
        """Fail the session's pending requests; until it is reattached, its requests fail at once."""
        if isinstance(error, HttpStatusError) and error.status == 409:
            self._failed[session] = error
        self._sessions.pop(session, None)
        for key, (owner, request_id) in list(self._pending.items()):
            if owner == session:
                del self._pending[key]
                failure = RequestError(-32603, str(error))
                self._inbound.put_nowait({"jsonrpc": "2.0", "id": request_id, "error": failure.to_json()})

    async def _lost(self, why: str) -> None:
        logger.debug("ACP HTTP connection lost: %s", why)
        if not self._closed:
            await self.close()

    # -- the streams

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _open_session(self, session: str, reattach: bool = False) -> None:
        if reattach:
            self._failed.pop(session, None)
        failure = self._failed.get(session)
        if failure is not None:
            raise failure
        ready = self._sessions.get(session)
        if ready is None:
            ready = self._sessions[session] = asyncio.get_running_loop().create_future()
            self._spawn(self._read_stream(session, ready))
        await asyncio.shield(ready)

    async def _read_stream(self, session: str | None, ready: asyncio.Future[None] | None) -> None:
        """Read one SSE stream into the inbound queue until it ends."""
        lib = _httpx()
        headers = self._request_headers(session)
        headers["Accept"] = "text/event-stream"
        error: Exception | None = None
        try:
            async with self.client.stream("GET", self.url, headers=headers) as response:
                if response.status_code != 200:
                    body = (await response.aread()).decode(errors="replace")[:MAX_ERROR_BODY]
                    raise HttpStatusError("the SSE stream was refused", response.status_code, body)
                if ready is not None and not ready.done():
                    ready.set_result(None)
                await self._read_events(response, session)
        except asyncio.CancelledError:
            raise
        except (lib.HTTPError, HttpStatusError, ValueError) as exc:
            error = exc
        finally:
            if ready is not None and not ready.done():
                ready.set_exception(error or ConnectionError("the session stream closed before it opened"))
                ready.exception()  # retrieved: the sender that waits sees it
        if self._closed:
            return
        if session is None:
            await self._lost(
                f"the connection's stream ended: {error}" if error else "the connection's stream ended"
            )
            return
        self._fail_session(session, error or ConnectionError(f"the stream of session {session!r} closed"))

    async def _read_events(self, response: httpx.Response, session: str | None) -> None:
        limit = self.max_message_bytes
        buffer = b""
        data: list[bytes] = []
        size = 0
        async for chunk in response.aiter_raw():
            buffer += chunk
            lines = buffer.split(b"\n")
            buffer = lines.pop()
            if len(buffer) > limit + 16:
                raise ValueError(f"an SSE line exceeds {limit} bytes")
            for raw in lines:
                line = raw[:-1] if raw.endswith(b"\r") else raw
                if not line:
                    if data:
                        self._deliver(b"\n".join(data), session)
                        data, size = [], 0
                    continue
                if line.startswith(b"data:"):
                    value = line[6:] if line.startswith(b"data: ") else line[5:]
                    size += len(value)
                    if size > limit:
                        raise ValueError(f"an SSE event exceeds {limit} bytes")
                    data.append(value)
        if data:
            self._deliver(b"\n".join(data), session)

    def _deliver(self, data: bytes, session: str | None) -> None:
        try:
            message = json.loads(data)
        except ValueError:
            logger.warning("an SSE event that is not JSON (%d bytes) was skipped", len(data))
            return
        if not isinstance(message, dict):
            logger.warning("an SSE event that is not a JSON object was skipped")
            return
        if "method" in message:
            if session is not None and "id" in message:
                self._agent_requests[_key(message["id"])] = session
        else:
            self._pending.pop(_key(message.get("id")), None)
            opened = _session_of(message.get("result"))
            if opened is not None and opened not in self._sessions and opened not in self._failed:
                with contextlib.suppress(RuntimeError):
                    ready = self._sessions[opened] = asyncio.get_running_loop().create_future()
                    self._spawn(self._read_stream(opened, ready))
        self._inbound.put_nowait(message)
