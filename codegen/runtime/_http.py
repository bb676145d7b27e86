"""The client side of ACP over Streamable HTTP: the channel behind ``connect_http``.

This file is written once by hand and copied unchanged into every generated
package.  It needs httpx, imported when a connection is first made
(``pip install 'httpx>=0.28,<1' 'sniffio>=1.3,<2'``: httpcore imports sniffio on
every request, and without it each import fails anew, searching ``sys.path``), so
the package imports without it.  The wire is the one of the official TypeScript
SDK 2.4.0's ``createHttpStream``:

* the first message, ``initialize``, is POSTed without ``Acp-Connection-Id``
  and answered in that POST, with the connection's id;
* every later message is POSTed with it (and with ``Acp-Session-Id`` when its
  params name a session, or when it answers a request of a session's stream);
  answers come on SSE streams: the connection's, opened after ``initialize``,
  and one per session, opened (and waited for) before the first message of
  that session is POSTed, or when a response names a new session; a session's
  stream is closed once a request that ends it (``SESSIONS.ends``:
  ``session/close``, ``session/delete``) succeeded;
* when the connection's stream ends, the connection closes (pending calls fail
  with ``ConnectionError``); when a session's stream ends or is refused (409),
  only the requests of that session fail, and the next message reopens it;
* a request whose POST is refused fails with ``-32603`` and data
  ``{status, body}``; 401, 403, 404, 410 and 421 close the connection instead;
  so does a POST of a notification or response that fails;
* ``Set-Cookie`` is stored and sent back (httpx's cookie jar); closing the
  connection sends ``DELETE``.

Beyond both official SDKs, streams resume: every ``GET`` carries
``Last-Event-ID`` (the id of the last event read on that stream, ``0`` at
first).  A server that numbers its events (ours: see ``_asgi``) lets a stream
that drops, or reads nothing for ``read_timeout``, be opened again where it
stopped, losing nothing, within a few seconds (``RESUME_DELAYS``); past its
replay buffer (410) the session's requests fail until a request that
reattaches it (``SESSIONS.reattach``: ``session/load``, ``session/resume``)
does (for the connection's stream, every request
fails and the connection closes), with an error that says so.  A
server that does not number them (the TypeScript SDK's, the Python SDK's) gets
the behaviour above.

The POSTs of a channel whose httpx client is its own go, for a plain ``http://`` URL with no
proxy configured and while the cookie jar is empty, over one kept-alive HTTP/1.1 connection of
the channel's own (:class:`_PostConnection`): httpx costs about ten times more CPU per
request, which was most of a round trip's.  A ``Set-Cookie`` in an answer goes into httpx's jar,
and from then on the POSTs go through httpx, which sends the cookies back.  Everything else
(``initialize``, the streams, ``DELETE``, a client of your own) goes through httpx.

Failures of the transport raise :class:`TransportError` (a ``ConnectionError``),
here and over WebSocket (``_ws``); :class:`HttpStatusError` is the one with an
HTTP status (both are defined in ``_rpc``, so that either transport can be vendored
without the other).  Our own httpx client has no limit on connections: each open
stream holds one (HTTP/1.1), so a client of your own must allow as many as the
sessions you keep open, plus the POSTs.

The methods named above are the package's ``SESSIONS`` (a :class:`SessionRoutes`
of ``bindings``): written from ``[v<N>.protocol]`` of ``codegen/knowledge.toml``
and the schema, so that a release with other session methods needs no change here.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import importlib
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final

from ._rpc import (
    DEFAULT_MAX_MESSAGE_BYTES,
    HttpStatusError,
    RequestError,
    SessionRoutes,
    TransportError,
    decode,
    encode_bytes,
)

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpChannel", "HttpStatusError", "TransportError"]

logger = logging.getLogger("acp")

INSTALL: Final = "pip install 'httpx>=0.28,<1' 'sniffio>=1.3,<2'"
CONNECTION_HEADER: Final = "Acp-Connection-Id"
SESSION_HEADER: Final = "Acp-Session-Id"
LAST_EVENT_ID: Final = "Last-Event-ID"
CONNECTION_FAILURES: Final = frozenset({401, 403, 404, 410, 421})
"""Statuses that mean the connection is unusable or gone, whatever was POSTed (421: the request
reached a worker other than the one holding the connection, see docs/deploy.md)."""
MAX_ERROR_BODY: Final = 8 * 1024
RESUME_DELAYS: Final = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)
"""Seconds before each attempt to resume a stream that dropped; then it counts as ended."""
IDLE_CONNECTIONS: Final = 16
"""Connections our httpx client keeps open between POSTs."""


def _httpx() -> Any:
    try:
        return importlib.import_module("httpx")
    except ImportError as error:
        raise ImportError(f"ACP over Streamable HTTP needs httpx: {INSTALL}") from error


def _describe(error: BaseException) -> str:
    """An exception as text that is never empty (httpx's timeouts and read errors have no message)."""
    text = str(error)
    name = type(error).__name__
    if text:
        return f"{name}: {text}"
    if name in ("ReadError", "WriteError", "RemoteProtocolError"):
        return f"the connection to the server broke ({name})"
    return name


def _key(request_id: Any) -> Any:
    return (type(request_id).__name__, request_id)


class RemoteProtocolError(ConnectionError):
    """The server broke HTTP/1.1, or closed the connection without an answer (httpx's words)."""


class _Answer:
    """What :class:`_PostConnection` read of a response."""

    __slots__ = ("content", "headers", "status_code")

    def __init__(self, status_code: int, headers: list[tuple[str, str]], content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        """(lower-case name, value), in the order received."""
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


MAX_HEAD_BYTES: Final = 64 * 1024
"""The longest status line and headers a POST's answer may have."""


class _PostConnection:
    """POSTs over one kept-alive HTTP/1.1 connection, one at a time (the channel sends one at a time).

    A connection the server closed while idle is seen closed before it is used again; one that
    it closes as the request goes out (no byte of an answer) is replaced once.  An answer that
    asks to close, ends with the connection, or did not come in time closes it.
    """

    def __init__(self, url: httpx.URL, connect_timeout: float | None, read_timeout: float | None) -> None:
        self.host = url.host
        self.port = url.port or 80
        self._head = b"POST " + url.raw_path + b" HTTP/1.1\r\nHost: " + url.netloc + b"\r\n"
        self._connect_timeout = connect_timeout
        self._write_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None

    async def post(self, body: bytes, headers: Mapping[str, str]) -> _Answer:
        """POST ``body``; raises :class:`PostTimeoutError` when the answer is late, else ``OSError``."""
        fields = b"".join(
            b"%s: %s\r\n" % (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in headers.items()
        )
        request = b"%s%sContent-Length: %d\r\n\r\n%s" % (self._head, fields, len(body), body)
        for attempt in (1, 2):
            reader, writer = self._reader, self._writer
            reused = (
                reader is not None and writer is not None and not writer.is_closing() and not reader.at_eof()
            )
            if not reused:
                self.close()
                async with asyncio.timeout(self._connect_timeout):
                    reader, writer = await asyncio.open_connection(self.host, self.port)
                self._reader, self._writer = reader, writer
            assert reader is not None and writer is not None
            try:
                writer.write(request)
                if writer.transport.get_write_buffer_size():
                    async with asyncio.timeout(self._write_timeout):
                        await writer.drain()
                try:
                    async with asyncio.timeout(self._read_timeout):
                        answer, keep = await self._answer(reader)
                except TimeoutError as late:
                    raise PostTimeoutError("the POST got no answer within read_timeout") from late
            except asyncio.IncompleteReadError as cut:
                self.close()
                if not cut.partial and reused and attempt == 1:
                    continue  # closed by the server as the request went out: it read none of it
                raise RemoteProtocolError("Server disconnected without sending a response.") from None
            except BaseException:
                self.close()
                raise
            if not keep:
                self.close()
            return answer
        raise AssertionError("unreachable")

    async def _answer(self, reader: asyncio.StreamReader) -> tuple[_Answer, bool]:
        """The response (interim 1xx ones skipped), and whether the connection may be used again."""
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.LimitOverrunError:
                raise RemoteProtocolError("the answer's headers are too long") from None
            lines = head.decode("latin-1").split("\r\n")
            version, _, rest = lines[0].partition(" ")
            code = rest[:3]
            if not version.startswith("HTTP/1.") or not code.isdigit():
                raise RemoteProtocolError(f"not an HTTP/1.1 answer: {lines[0][:80]!r}")
            status = int(code)
            headers: list[tuple[str, str]] = []
            for line in lines[1:]:
                if line:
                    name, _, value = line.partition(":")
                    headers.append((name.strip().lower(), value.strip()))
            if not 100 <= status < 200:
                break
        named = dict(headers)
        keep = version != "HTTP/1.0" and "close" not in named.get("connection", "").lower()
        encoding = named.get("transfer-encoding", "").lower()
        length = named.get("content-length")
        if "chunked" in encoding:
            content = await self._chunks(reader)
        elif length is not None:
            if not length.strip().isdigit():
                raise RemoteProtocolError(f"a malformed Content-Length: {length[:40]!r}")
            content = await reader.readexactly(int(length))
        elif status in (204, 304):
            content = b""
        else:  # the body is what comes until the server closes
            content = await reader.read()
            keep = False
        return _Answer(status, headers, content), keep

    @staticmethod
    async def _chunks(reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        while True:
            line = await reader.readuntil(b"\r\n")
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise RemoteProtocolError(f"a malformed chunk size: {size_text[:20]!r}") from None
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass  # trailers
                return b"".join(parts)
            parts.append((await reader.readexactly(size + 2))[:-2])


class PostTimeoutError(TimeoutError):
    """A POST over :class:`_PostConnection` got no answer within ``read_timeout``."""


def _own_connection_fits(url: httpx.URL) -> bool:
    """Whether POSTs to ``url`` may take :class:`_PostConnection`: plain HTTP and no proxy
    configured (httpx reads the environment's proxies; this takes none)."""
    if url.scheme != "http":
        return False
    import urllib.request  # here: httpx imports it too, but the package imports this module without httpx

    proxies = urllib.request.getproxies()
    return "http" not in proxies and "all" not in proxies


class HttpChannel:
    """A :class:`Channel` over Streamable HTTP (see the module docstring).

    ``timeout`` bounds connecting, sending and waiting for a free connection;
    ``read_timeout`` the wait for a POST's answer and for the next bytes of a
    stream (servers send a keep-alive every 15 s), ``None`` for no limit.
    ``sessions`` are the methods it routes by: unless given, :attr:`default_sessions`.
    """

    default_sessions: ClassVar[SessionRoutes | None] = None
    """What a channel routes by unless ``sessions`` is given: the package's ``SESSIONS``, set by the
    subclass its bindings define (``acp.HttpChannel``; ``connect_http`` passes ``sessions``)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        cookies: Any = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        client: httpx.AsyncClient | None = None,
        timeout: float = 30.0,
        read_timeout: float | None = 90.0,
        sessions: SessionRoutes | None = None,
    ) -> None:
        routes = sessions if sessions is not None else self.default_sessions
        if routes is None:
            raise TypeError("HttpChannel needs sessions=: its package's SESSIONS (acp.HttpChannel has them)")
        lib = _httpx()
        self.url = url
        self._target = lib.URL(url)
        """``url`` parsed once: httpx parses a string on every request."""
        self.sessions: SessionRoutes = routes
        """What the channel routes by."""
        self.max_message_bytes = max_message_bytes
        self._headers = dict(headers or {})
        self._owns_client = client is None
        self._timeout = lib.Timeout(timeout, read=read_timeout)
        self.client: httpx.AsyncClient = client or lib.AsyncClient(
            timeout=self._timeout,
            cookies=cookies,
            limits=lib.Limits(max_connections=None, max_keepalive_connections=IDLE_CONNECTIONS),
        )
        if client is not None and cookies is not None:
            self.client.cookies.update(cookies)
        self._poster: _PostConnection | None = None
        """Where the POSTs go while the jar is empty (see the module docstring), if they may."""
        if client is None and _own_connection_fits(self._target):
            self._poster = _PostConnection(self._target, timeout, read_timeout)
        self.connection_id: str | None = None
        self._inbound: asyncio.Queue[Any] = asyncio.Queue()
        self._sessions: dict[str, asyncio.Future[None]] = {}
        """Session -> resolved once its stream is open (its headers came)."""
        self._readers: dict[str | None, asyncio.Task[Any]] = {}
        """Stream (a session, ``None`` for the connection's) -> the task reading it."""
        self._failed: dict[str, Exception] = {}
        self._pending: dict[Any, tuple[str | None, Any, str]] = {}
        """Our requests still waiting for their response: key -> (session or ``None``, id, method)."""
        self._agent_requests: dict[Any, str] = {}
        """Requests the agent sent on a session's stream: key -> that session (for our response)."""
        self._last_event: dict[str | None, int] = {}
        """Stream -> the id of the last event read on it."""
        self._resumes = False
        """Whether the server numbers its events (it sent an ``id:``): streams that drop are resumed."""
        self._gap: dict[str, int] = {}
        """Session -> the id its stream goes on from once it is reattached (events before were lost)."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._lock = asyncio.Lock()
        self._closed = False
        self._failure: TransportError | None = None
        """Why the connection was lost, if it was: what ``receive`` raises at its end."""

    # -- the Channel

    async def receive(self) -> Any:
        message = await self._inbound.get()
        if message is None and self._failure is not None:
            raise copy.copy(self._failure)
        return message

    async def send(self, message: Any) -> None:
        async with self._lock:  # one POST at a time: the server sees messages in the order sent
            if self._closed:
                raise (
                    copy.copy(self._failure)
                    if self._failure
                    else TransportError("the HTTP connection is closed")
                )
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
        if self._poster is not None:
            self._poster.close()
        if self.connection_id is not None:
            with contextlib.suppress(Exception):
                await self.client.delete(self._target, headers=self._request_headers())
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
            raise TransportError("the first message over Streamable HTTP must be the initialize request")
        lib = _httpx()
        try:
            response = await self.client.post(
                self._target,
                content=encode_bytes(message),
                headers=self._request_headers(json_body=True),
                timeout=self._timeout,
            )
        except lib.HTTPError as error:
            raise TransportError(f"initialize could not reach {self.url}: {_describe(error)}") from error
        if response.status_code != 200:
            raise HttpStatusError("initialize failed", response.status_code, response.text[:MAX_ERROR_BODY])
        connection_id = response.headers.get(CONNECTION_HEADER)
        if not connection_id:
            raise HttpStatusError("the initialize response has no Acp-Connection-Id", 200, "")
        answer = decode(response.content)
        if not isinstance(answer, dict) or answer.get("id") != message["id"]:
            raise TransportError("the initialize response does not answer the initialize request")
        self.connection_id = connection_id
        self._watch(None, None)
        self._inbound.put_nowait(answer)

    async def _post(self, message: Any) -> None:
        lib = _httpx()
        is_call = isinstance(message, dict) and "method" in message
        request_id = message.get("id") if isinstance(message, dict) else None
        if is_call:
            session = self.sessions.session_of(message.get("params"))
        elif isinstance(message, dict):
            session = self._agent_requests.pop(_key(request_id), None)
        else:
            session = None
        if session is not None:
            try:
                reattach = is_call and message["method"] in self.sessions.reattach
                await self._open_session(session, reattach=reattach)
            except TransportError as failed:
                if failed.status not in (409, 410):  # the session failed; the connection did not
                    raise
                if is_call and "id" in message:
                    self._fail_request(request_id, failed)
                return
        is_request = is_call and "id" in message
        if is_request:
            self._pending[_key(request_id)] = (session, request_id, message["method"])
        try:
            if self._poster is not None and not self.client.cookies:
                response: Any = await self._poster.post(
                    encode_bytes(message), self._request_headers(session, True)
                )
                if any(name == "set-cookie" for name, _ in response.headers):
                    self._keep_cookies(response)
            else:
                response = await self.client.post(
                    self._target,
                    content=encode_bytes(message),
                    headers=self._request_headers(session, True),
                    timeout=self._timeout,
                )
        except (lib.PoolTimeout, lib.ReadTimeout, PostTimeoutError) as failure:
            if is_request:  # only this request failed: none was sent, or it got no answer in time
                why = "no free connection in the HTTP client's pool (each open stream holds one)"
                if isinstance(failure, (lib.ReadTimeout, PostTimeoutError)):
                    why = "the POST got no answer within read_timeout (the agent may still have it)"
                if self._pending.pop(_key(request_id), None) is not None:
                    self._fail_request(request_id, TransportError(why))
                return
            await self._lost(f"POST failed: {_describe(failure)}")
            raise TransportError(f"POST to {self.url} failed: {_describe(failure)}") from failure
        except (lib.HTTPError, OSError) as failure:  # OSError: _PostConnection's (a TimeoutError too)
            if self._failure is not None:  # the POST was cut by the connection's loss: say why
                raise copy.copy(self._failure) from failure
            await self._lost(f"POST failed: {_describe(failure)}")
            raise TransportError(f"POST to {self.url} failed: {_describe(failure)}") from failure
        if response.status_code < 300:
            return
        status, body = response.status_code, response.text[:MAX_ERROR_BODY]
        refused = HttpStatusError("POST failed", status, body)
        still_pending = self._pending.pop(_key(request_id), None) is not None or not is_request
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

    def _keep_cookies(self, answer: _Answer) -> None:
        """Put the answer's ``Set-Cookie`` in httpx's jar (later POSTs go through httpx, which sends them)."""
        lib = _httpx()
        response = lib.Response(
            answer.status_code, headers=answer.headers, request=lib.Request("POST", self._target)
        )
        self.client.cookies.extract_cookies(response)

    def _fail_request(self, request_id: Any, error: TransportError) -> None:
        data: Any = None
        if error.status is not None:
            try:
                body: Any = json.loads(error.body)
            except ValueError:
                body = error.body
            data = {"status": error.status, "body": body}
        self._inbound.put_nowait(
            {"jsonrpc": "2.0", "id": request_id, "error": RequestError(-32603, str(error), data).to_json()}
        )

    def _fail_session(self, session: str, error: Exception, sticky: bool = False) -> None:
        """Fail the session's pending requests; after a refusal (409) or a lost resume (``sticky``),
        its requests fail at once until it is reattached (``session/load``, ``session/resume``)."""
        if sticky or (isinstance(error, HttpStatusError) and error.status == 409):
            self._failed[session] = error
        self._sessions.pop(session, None)
        self._fail_pending(str(error), lambda owner: owner == session)

    def _fail_pending(self, why: str, which: Any) -> None:
        for key, (owner, request_id, _method) in list(self._pending.items()):
            if which(owner):
                del self._pending[key]
                failure = RequestError(-32603, why)
                self._inbound.put_nowait({"jsonrpc": "2.0", "id": request_id, "error": failure.to_json()})

    async def _lost(self, why: str) -> None:
        logger.debug("ACP HTTP connection lost: %s", why)
        if not self._closed:
            self._failure = TransportError(f"the HTTP connection was lost: {why}")
            await self.close()

    # -- the streams

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _watch(self, session: str | None, ready: asyncio.Future[None] | None) -> None:
        self._readers[session] = self._spawn(self._read_stream(session, ready))

    async def _open_session(self, session: str, reattach: bool = False) -> None:
        if reattach:  # session/load or session/resume: the agent sends the session again
            self._failed.pop(session, None)
            if session in self._gap:
                self._last_event[session] = self._gap.pop(session)
        failure = self._failed.get(session)
        if failure is not None:
            raise failure
        ready = self._sessions.get(session)
        if ready is None:
            ready = self._sessions[session] = asyncio.get_running_loop().create_future()
            self._watch(session, ready)
        await asyncio.shield(ready)

    def _end_session(self, session: str) -> None:
        """The session was closed or deleted: stop reading its stream."""
        self._sessions.pop(session, None)
        reader = self._readers.pop(session, None)
        if reader is not None:
            reader.cancel()

    async def _read_stream(self, session: str | None, ready: asyncio.Future[None] | None) -> None:
        """Read one SSE stream into the inbound queue until it ends, resuming it where it can."""
        lib = _httpx()
        attempt = 0
        while True:
            headers = self._request_headers(session)
            headers["Accept"] = "text/event-stream"
            headers[LAST_EVENT_ID] = str(self._last_event.get(session, 0))
            error: Exception | None = None
            try:
                async with self.client.stream(
                    "GET", self._target, headers=headers, timeout=self._timeout
                ) as response:
                    if response.status_code != 200:
                        body = (await response.aread()).decode(errors="replace")[:MAX_ERROR_BODY]
                        newest = response.headers.get(LAST_EVENT_ID, "")
                        if session is not None and response.status_code == 410 and newest.isdigit():
                            self._gap[session] = int(newest)  # where it goes on from, the loss accepted
                        raise HttpStatusError("the SSE stream was refused", response.status_code, body)
                    if ready is not None and not ready.done():
                        ready.set_result(None)
                    attempt = 0
                    await self._read_events(response, session)
            except asyncio.CancelledError:
                raise
            except (lib.HTTPError, HttpStatusError, ValueError) as exc:
                error = exc
            finally:
                if ready is not None and not ready.done():
                    ready.set_exception(error or TransportError("the session stream closed before it opened"))
                    ready.exception()  # retrieved: the sender that waits sees it
            if self._closed or self._readers.get(session) is not asyncio.current_task():
                return
            if not self._resumes or isinstance(error, ValueError) or attempt >= len(RESUME_DELAYS):
                break
            if isinstance(error, HttpStatusError) and error.status != 409:
                if error.status == 410:
                    await self._gone(session, error)
                    return
                break  # the connection is gone (404), or the server refuses this stream
            await asyncio.sleep(RESUME_DELAYS[attempt])
            attempt += 1
            if self._closed:
                return
        if session is None:
            why = (
                f"the connection's stream ended: {_describe(error)}"
                if error
                else "the connection's stream ended"
            )
            await self._lost(why)
            return
        self._readers.pop(session, None)
        self._fail_session(session, error or TransportError(f"the stream of session {session!r} closed"))

    async def _gone(self, session: str | None, error: HttpStatusError) -> None:
        """A stream could not be resumed (410): the events after the last one read are lost."""
        what = "the connection's stream" if session is None else f"the stream of session {session!r}"
        lost = TransportError(f"{what} dropped and lost events: {error.body}", error.status, error.body)
        logger.warning("ACP HTTP: %s", lost)
        if session is not None:
            self._readers.pop(session, None)
            self._fail_session(session, lost, sticky=True)
            return
        self._fail_pending(str(lost), lambda owner: True)
        await self._lost(str(lost))

    async def _read_events(self, response: httpx.Response, session: str | None) -> None:
        """Parse the SSE stream: each byte is looked at once, whatever the size of a line."""
        limit = self.max_message_bytes
        partial: list[bytes] = []  # the start of a line that spans chunks
        partial_size = 0
        data: list[bytes] = []
        size = 0
        event_id: int | None = None
        async for chunk in response.aiter_raw():
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                if partial:
                    partial.append(chunk[start:end])
                    line = b"".join(partial)
                    partial.clear()
                    partial_size = 0
                else:
                    line = chunk[start:end]
                start = end + 1
                if line.endswith(b"\r"):
                    line = line[:-1]
                if not line:  # the end of an event
                    if data:
                        self._deliver(b"\n".join(data), session)
                        data, size = [], 0
                    if event_id is not None:
                        self._last_event[session] = event_id
                        self._resumes = True
                        event_id = None
                    continue
                if line.startswith(b"data:"):
                    value = line[6:] if line.startswith(b"data: ") else line[5:]
                    size += len(value)
                    if size > limit:
                        raise ValueError(f"an SSE event exceeds {limit} bytes")
                    data.append(value)
                elif line.startswith(b"id:"):
                    value = line[3:].strip()
                    event_id = int(value) if value.isdigit() else None
            if start < len(chunk):
                partial.append(chunk[start:])
                partial_size += len(chunk) - start
                if partial_size > limit + 16:
                    raise ValueError(f"an SSE line exceeds {limit} bytes")
        if data:
            self._deliver(b"\n".join(data), session)

    def _deliver(self, data: bytes, session: str | None) -> None:
        try:
            message = decode(data)
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
            pending = self._pending.pop(_key(message.get("id")), None)
            if pending is not None and pending[2] in self.sessions.ends and "error" not in message:
                owner = pending[0]
                if owner is not None:
                    self._end_session(owner)
            opened = self.sessions.session_of(message.get("result"))
            if opened is not None and opened not in self._sessions and opened not in self._failed:
                with contextlib.suppress(RuntimeError):
                    ready = self._sessions[opened] = asyncio.get_running_loop().create_future()
                    self._watch(opened, ready)
        self._inbound.put_nowait(message)
