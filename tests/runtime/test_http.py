"""The Streamable HTTP wire of the ASGI app and of ``connect_http`` on 127.0.0.1 (TS SDK 2.4.0's rules)."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.support.releases import newest_package
from tests.support.remote import RecordingClient, echo_agents, echo_app, is_idle, serve
from tests.support.wire import run

acp = newest_package(2)
acp_v1 = newest_package(1)
V2EchoAgent, V1EchoAgent = echo_agents(acp, acp_v1)
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "raw", "version": "1"}},
}
JSON = {"Content-Type": "application/json"}
SSE = {"Accept": "text/event-stream"}


def call(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()


async def open_connection(http: httpx.AsyncClient, headers: dict[str, str] | None = None) -> str:
    response = await http.post("/acp", content=json.dumps(INIT), headers={**JSON, **(headers or {})})
    assert response.status_code == 200, response.text
    assert response.json()["result"]["protocolVersion"] == 2
    return response.headers["acp-connection-id"]


async def events(response: httpx.Response) -> AsyncIterator[Any]:
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            yield json.loads(line[6:])


async def next_event(stream: AsyncIterator[Any]) -> Any:
    return await asyncio.wait_for(anext(stream), 10)


def with_server(test: Any, app: Any = None, timeout: float = 30) -> None:
    async def go() -> None:
        async with serve(app or echo_app(acp, acp_v1)) as base, httpx.AsyncClient(base_url=base) as http:
            await test(http)

    run(go(), timeout)


def test_initialize_is_answered_in_its_post_with_an_unguessable_connection_id_naming_its_worker() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        first, second = await open_connection(http), await open_connection(http)
        assert first != second
        for found in (first, second):
            worker, dot, secret = found.partition(".")
            assert (worker, dot) == ("w7", ".") and len(secret) >= 43  # 256 random bits, URL-safe
            assert set(secret) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    with_server(test, echo_app(acp, acp_v1, worker="w7"))


def test_later_posts_get_202_and_their_answers_come_on_the_connection_stream() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        cid = await open_connection(http)
        headers = {**JSON, "Acp-Connection-Id": cid}
        posted = await http.post("/acp", content=call(1, "session/new", {"cwd": "/"}), headers=headers)
        assert (posted.status_code, posted.content) == (202, b"")
        # held until a reader attaches, then delivered on the session-less stream
        async with http.stream("GET", "/acp", headers={**SSE, "Acp-Connection-Id": cid}) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            reply = await next_event(events(stream))
        assert reply == {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "v2-1"}}

    with_server(test)


def test_bad_posts_get_the_status_codes_of_the_typescript_server() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        cid = await open_connection(http)
        connected = {**JSON, "Acp-Connection-Id": cid}
        new = call(1, "session/new", {"cwd": "/"})
        assert (await http.post("/acp", content=new, headers={"Acp-Connection-Id": cid})).status_code == 415
        text = {"Content-Type": "text/plain", "Acp-Connection-Id": cid}
        assert (await http.post("/acp", content=new, headers=text)).status_code == 415
        batch = await http.post("/acp", content=b"[]", headers=connected)
        assert (
            batch.status_code == 400
            and batch.json()["error"]["code"] == -32600
            and batch.json()["id"] is None
        )
        assert (await http.post("/acp", content=new, headers=JSON)).text == "Missing Acp-Connection-Id"
        unknown = {**JSON, "Acp-Connection-Id": "x" * 43}
        assert (await http.post("/acp", content=new, headers=unknown)).status_code == 404
        again = await http.post("/acp", content=json.dumps(INIT), headers=connected)
        assert (again.status_code, again.text) == (400, "Initialize not allowed on existing connection")
        assert (await http.put("/acp", content=new, headers=connected)).status_code == 405
        assert (await http.post("/elsewhere", content=json.dumps(INIT), headers=JSON)).status_code == 404

    with_server(test)


@pytest.mark.parametrize(
    ("body", "code"), [(b"{nope", -32700), (b"3", -32600), (b'"text"', -32600), (b"null", -32600)]
)
def test_a_malformed_post_is_400_with_a_json_rpc_error(body: bytes, code: int) -> None:
    """Finding 7: not plain text, as the TypeScript server answers, but what a JSON-RPC peer reads."""

    async def test(http: httpx.AsyncClient) -> None:
        cid = await open_connection(http)
        answer = await http.post("/acp", content=body, headers={**JSON, "Acp-Connection-Id": cid})
        assert answer.status_code == 400
        assert answer.headers["content-type"] == "application/json"
        assert answer.json()["id"] is None and answer.json()["error"]["code"] == code

    with_server(test)


def test_initialize_with_a_null_id_is_refused_as_over_websocket() -> None:
    """Finding 7: an initialize whose answer could not be told from an error about nothing is 400."""

    async def test(http: httpx.AsyncClient) -> None:
        refused = await http.post("/acp", content=json.dumps({**INIT, "id": None}), headers=JSON)
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == -32600
        assert "acp-connection-id" not in refused.headers

    with_server(test)


def test_a_websocket_connections_id_names_no_http_connection() -> None:
    """Finding 7: the id a WebSocket handshake gives is not a key to the HTTP side of the app."""

    async def test(http: httpx.AsyncClient) -> None:
        from websockets.asyncio.client import connect

        async with connect(str(http.base_url).replace("http://", "ws://").rstrip("/") + "/acp") as socket:
            cid = socket.response.headers["Acp-Connection-Id"]
            await socket.send(json.dumps(INIT))
            await socket.recv()
            connected = {"Acp-Connection-Id": cid}
            new = call(1, "session/new", {"cwd": "/"})
            assert (await http.post("/acp", content=new, headers={**JSON, **connected})).status_code == 404
            assert (await http.get("/acp", headers={**SSE, **connected})).status_code == 404
            assert (await http.delete("/acp", headers=connected)).status_code == 404
            await socket.send(call(2, "session/new", {"cwd": "/"}).decode())
            assert json.loads(await socket.recv())["result"] == {"sessionId": "v2-1"}  # still open

    with_server(test)


def test_a_session_id_in_the_params_needs_the_same_header() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        cid = await open_connection(http)
        connected = {**JSON, "Acp-Connection-Id": cid}
        prompt = call(2, "session/prompt", {"sessionId": "v2-1", "prompt": []})
        missing = await http.post("/acp", content=prompt, headers=connected)
        assert (missing.status_code, missing.text) == (400, "Missing Acp-Session-Id")
        other = await http.post("/acp", content=prompt, headers={**connected, "Acp-Session-Id": "v2-2"})
        assert (other.status_code, other.text) == (400, "Mismatched Acp-Session-Id")
        long_id = "s" * 1025
        too_long = call(3, "session/prompt", {"sessionId": long_id, "prompt": []})
        refused = await http.post("/acp", content=too_long, headers={**connected, "Acp-Session-Id": long_id})
        assert refused.status_code == 400 and "maxIdLength" in refused.text
        cancel = json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {}}).encode()
        assert (await http.post("/acp", content=cancel, headers=connected)).text == "Missing Acp-Session-Id"

    with_server(test)


def test_streams_need_event_stream_and_take_one_reader_each() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        cid = await open_connection(http)
        assert (await http.get("/acp", headers={"Acp-Connection-Id": cid})).status_code == 406
        assert (await http.get("/acp", headers=SSE)).status_code == 400
        assert (await http.get("/acp", headers={**SSE, "Acp-Connection-Id": "nope"})).status_code == 404
        session = {**SSE, "Acp-Connection-Id": cid, "Acp-Session-Id": "v2-1"}
        async with http.stream("GET", "/acp", headers=session) as first:
            assert first.status_code == 200  # the headers come at once, before any event
            second = await http.get("/acp", headers=session)
            assert (second.status_code, second.text) == (
                409,
                "Outbound stream already has an active receiver",
            )
        # the reader left: the stream takes a new one
        async with http.stream("GET", "/acp", headers=session) as third:
            assert third.status_code == 200

    with_server(test)


def test_a_prompt_streams_on_its_session_stream_and_a_response_may_omit_the_session_header() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        cid = await open_connection(http)
        connected = {**JSON, "Acp-Connection-Id": cid}
        await http.post("/acp", content=call(1, "session/new", {"cwd": "/"}), headers=connected)
        session = {"Acp-Connection-Id": cid, "Acp-Session-Id": "v2-1"}
        async with http.stream("GET", "/acp", headers={**SSE, **session}) as stream:
            received = events(stream)
            prompt = call(
                2, "session/prompt", {"sessionId": "v2-1", "prompt": [{"type": "text", "text": "a b"}]}
            )
            assert (await http.post("/acp", content=prompt, headers={**JSON, **session})).status_code == 202
            seen = [await next_event(received) for _ in range(4)]
            assert {"id": 2}.items() <= next(m for m in seen if "result" in m).items()
            ask = next(m for m in seen if m.get("method") == "session/request_permission")
            answer = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": ask["id"],
                    "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
                }
            ).encode()
            # the official Python SDK 0.12.1 answers without Acp-Session-Id: accepted; a wrong one is not
            wrong = await http.post("/acp", content=answer, headers={**connected, "Acp-Session-Id": "v2-9"})
            assert wrong.status_code == 400
            assert (await http.post("/acp", content=answer, headers=connected)).status_code == 202
            texts = []
            while True:
                message = await next_event(received)
                update = message.get("params", {}).get("update", {})
                if update.get("sessionUpdate") == "agent_message_chunk":
                    texts.append(update["content"]["text"])
                if update.get("state") == "idle":
                    break
        assert texts == ["a", " b"]

    with_server(test)


def test_delete_closes_the_connection() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        cid = await open_connection(http)
        assert (await http.delete("/acp")).status_code == 400
        assert (await http.delete("/acp", headers={"Acp-Connection-Id": cid})).status_code == 202
        gone = await http.post(
            "/acp", content=call(1, "session/new", {"cwd": "/"}), headers={**JSON, "Acp-Connection-Id": cid}
        )
        assert gone.status_code == 404
        assert (await http.delete("/acp", headers={"Acp-Connection-Id": cid})).status_code == 404

    with_server(test)


def test_idle_streams_get_keep_alives() -> None:
    app = acp.asgi_app(V2EchoAgent, limits=acp.ServerLimits(keep_alive=0.05), path="/acp")

    async def test(http: httpx.AsyncClient) -> None:
        cid = await open_connection(http)
        async with http.stream("GET", "/acp", headers={**SSE, "Acp-Connection-Id": cid}) as stream:
            chunk = await asyncio.wait_for(anext(stream.aiter_raw()), 5)
        assert chunk == b":\n\n"

    with_server(test, app)


# -- security ---------------------------------------------------------------------------------


def principal_app(**options: Any) -> Any:
    """Tokens ``alice`` and ``bob`` are principals; ``mallory`` is refused with 403, no token with 401."""

    def authenticate(request: Any) -> str:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        if not token:
            raise acp.AuthError(401, "token required", {"www-authenticate": "Bearer"})
        if token == "mallory":
            raise acp.AuthError(403, "not you")
        return token

    return acp.asgi_app(V2EchoAgent, authenticate=authenticate, path="/acp", **options)


def test_the_auth_hook_refuses_before_any_message_is_read() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        anonymous = await http.post("/acp", content=json.dumps(INIT), headers=JSON)
        assert (anonymous.status_code, anonymous.text) == (401, "token required")
        assert anonymous.headers["www-authenticate"] == "Bearer"
        refused = await http.post(
            "/acp", content=b"{not even json", headers={**JSON, "Authorization": "Bearer mallory"}
        )
        assert (refused.status_code, refused.text) == (403, "not you")
        assert (await http.get("/acp", headers=SSE)).status_code == 401

    with_server(test, principal_app())


def test_a_connection_id_is_bound_to_its_principal() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        alice = {"Authorization": "Bearer alice"}
        cid = await open_connection(http, alice)
        bob = {"Authorization": "Bearer bob", "Acp-Connection-Id": cid}
        # bob holds alice's connection id: he can neither read her streams, nor post, nor close it
        assert (await http.get("/acp", headers={**SSE, **bob})).status_code == 404
        assert (await http.get("/acp", headers={**SSE, **bob, "Acp-Session-Id": "v2-1"})).status_code == 404
        new = call(1, "session/new", {"cwd": "/"})
        assert (await http.post("/acp", content=new, headers={**JSON, **bob})).status_code == 404
        assert (await http.delete("/acp", headers=bob)).status_code == 404
        mine = {**alice, "Acp-Connection-Id": cid}
        assert (await http.post("/acp", content=new, headers={**JSON, **mine})).status_code == 202
        async with http.stream("GET", "/acp", headers={**SSE, **mine}) as stream:
            assert (await next_event(events(stream)))["result"] == {"sessionId": "v2-1"}

    with_server(test, principal_app())


def test_allowed_origins_refuse_other_browsers() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        token = {"Authorization": "Bearer alice"}
        evil = await http.post(
            "/acp", content=json.dumps(INIT), headers={**JSON, **token, "Origin": "https://evil.example"}
        )
        assert evil.status_code == 403
        await open_connection(http, {**token, "Origin": "https://app.example"})
        await open_connection(http, token)  # not a browser: no Origin

    with_server(test, principal_app(allowed_origins=["https://app.example"]))


# -- connect_http -------------------------------------------------------------------------------


def cookie_app(inner: Any, seen: list[tuple[str, str | None]]) -> Any:
    """Sets ``affinity=node-7`` on the initialize response and records the Cookie header of each request."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        headers = dict(scope["headers"])
        seen.append((scope["method"], headers.get(b"cookie", b"").decode() or None))

        async def send_with_cookie(message: Any) -> None:
            if message["type"] == "http.response.start" and b"acp-connection-id" in dict(message["headers"]):
                message = {
                    **message,
                    "headers": [*message["headers"], (b"set-cookie", b"affinity=node-7; Path=/")],
                }
            await send(message)

        await inner(scope, receive, send_with_cookie)

    return app


def test_connect_http_keeps_cookies_and_sends_its_headers() -> None:
    seen: list[tuple[str, str | None]] = []

    async def go() -> None:
        async with serve(cookie_app(principal_app(), seen)) as base:
            client = RecordingClient(acp)
            connection = await acp.connect_http(
                client, base + "/acp", headers={"Authorization": "Bearer alice"}, cookies={"team": "blue"}
            )
            await connection.initialize(
                protocol_version=2, info=acp.schema.Implementation(name="c", version="1")
            )
            session = await connection.new_session(cwd="/")
            await connection.prompt(
                session_id=session.session_id, prompt=[acp.schema.TextContentBlock(text="x")]
            )
            await client.until(is_idle)
            await connection.close()

    run(go(), 30)
    assert seen[0] == ("POST", "team=blue")
    later = seen[1:]
    assert later and all(
        cookie is not None and "affinity=node-7" in cookie and "team=blue" in cookie for _, cookie in later
    )
    assert {method for method, _ in later} == {"GET", "POST", "DELETE"}


def test_connect_http_refused_initialize_raises_with_the_status() -> None:
    async def go() -> None:
        async with serve(principal_app()) as base:
            connection = await acp.connect_http(RecordingClient(acp), base + "/acp")
            with pytest.raises(acp.HttpStatusError) as refused:
                await connection.initialize(
                    protocol_version=2, info=acp.schema.Implementation(name="c", version="1")
                )
            assert refused.value.status == 401
            await connection.close()

    run(go(), 30)


def fake_server(session_stream: str) -> Any:
    """A hand-written server: initialize works; session streams close at once or are refused (409)."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break

        async def respond(status: int, content: bytes = b"", extra: list[Any] | None = None) -> None:
            await send({"type": "http.response.start", "status": status, "headers": extra or []})
            await send({"type": "http.response.body", "body": content})

        if scope["method"] == "POST" and "acp-connection-id" not in headers:
            answer = {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {"protocolVersion": 2, "info": {"name": "f", "version": "1"}},
            }
            await respond(200, json.dumps(answer).encode(), [(b"acp-connection-id", b"c-1")])
        elif scope["method"] == "GET" and "acp-session-id" not in headers:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            await send({"type": "http.response.body", "body": b"", "more_body": True})
            while (await receive())["type"] != "http.disconnect":
                pass
        elif scope["method"] == "GET":
            if session_stream == "409":
                await respond(409, b"Outbound stream already has an active receiver")
            else:
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")],
                    }
                )
                await send({"type": "http.response.body", "body": b"", "more_body": True})
                await asyncio.sleep(0.2)
                await send({"type": "http.response.body", "body": b""})
        else:
            await respond(202)

    return app


@pytest.mark.parametrize("how", ["closed", "409"])
def test_a_session_stream_that_ends_fails_only_that_sessions_requests(how: str) -> None:
    async def go() -> None:
        async with serve(fake_server(how)) as base:
            connection = await acp.connect_http(RecordingClient(acp), base + "/acp")
            await connection.initialize(
                protocol_version=2, info=acp.schema.Implementation(name="c", version="1")
            )
            with pytest.raises(acp.RequestError) as failed:
                await asyncio.wait_for(
                    connection.prompt(session_id="s-1", prompt=[acp.schema.TextContentBlock(text="x")]), 10
                )
            assert failed.value.code == -32603
            assert not connection.connection.closed  # the connection itself goes on
            await connection.close()

    run(go(), 30)


class Slow(V2EchoAgent):  # type: ignore[misc, valid-type]
    """``session/new`` waits until it is cancelled."""

    cancelled: asyncio.Event | None = None

    async def new_session(self, **kwargs: Any) -> Any:
        assert Slow.cancelled is not None
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            Slow.cancelled.set()
            raise
        return await super().new_session(**kwargs)


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_cancelling_a_call_cancels_the_agents_handler_over_the_remote_transports(transport: str) -> None:
    async def go() -> None:
        Slow.cancelled = asyncio.Event()
        async with serve(acp.asgi_app(Slow, path="/acp")) as base:
            client = RecordingClient(acp)
            if transport == "ws":
                connection = await acp.connect_websocket(client, base.replace("http", "ws") + "/acp")
            else:
                connection = await acp.connect_http(client, base + "/acp")
            await connection.initialize(
                protocol_version=2, info=acp.schema.Implementation(name="c", version="1")
            )
            call = asyncio.ensure_future(connection.new_session(cwd="/"))
            await asyncio.sleep(0.2)
            call.cancel()  # sends $/cancel_request
            await asyncio.wait_for(Slow.cancelled.wait(), 10)
            assert call.cancelled()
            await connection.close()

    run(go(), 30)


def test_too_many_session_streams_without_a_reader_close_the_connection() -> None:
    app = echo_app(acp, acp_v1, limits=acp.ServerLimits(max_buffered_session_streams=2))

    async def test(http: httpx.AsyncClient) -> None:
        cid = await open_connection(http)
        connected = {**JSON, "Acp-Connection-Id": cid}
        for index in (1, 2, 3):
            await http.post("/acp", content=call(index, "session/new", {"cwd": "/"}), headers=connected)
        for index in (1, 2, 3):  # each prompt's output goes to a session stream nobody reads
            session = f"v2-{index}"
            prompt = call(10 + index, "session/prompt", {"sessionId": session, "prompt": []})
            await http.post("/acp", content=prompt, headers={**connected, "Acp-Session-Id": session})
        for _ in range(100):
            if app.connections == 0:
                break
            await asyncio.sleep(0.02)
        assert app.connections == 0
        gone = await http.post("/acp", content=call(20, "session/new", {"cwd": "/"}), headers=connected)
        assert gone.status_code == 404

    with_server(test, app)


# -- resuming a stream (Last-Event-ID) ------------------------------------------------------------


async def raw_events(response: httpx.Response) -> AsyncIterator[tuple[int | None, Any]]:
    """(id, message) of each event; a bare ``id:`` (the head of a resumed stream) has ``None`` as message."""
    event_id: int | None = None
    async for line in response.aiter_lines():
        if line.startswith("id: "):
            event_id = int(line[4:])
        elif line.startswith("data: "):
            yield event_id, json.loads(line[6:])
            event_id = None
        elif not line and event_id is not None:
            yield event_id, None
            event_id = None


async def new_sessions(http: httpx.AsyncClient, cid: str, first: int, count: int) -> None:
    for index in range(first, first + count):
        new = call(index, "session/new", {"cwd": "/"})
        assert (
            await http.post("/acp", content=new, headers={**JSON, "Acp-Connection-Id": cid})
        ).status_code == 202


async def answers_waiting(http: httpx.AsyncClient, count: int) -> dict[str, str]:
    """A new connection with ``count`` ``session/new`` answers held for its stream; that stream's headers."""
    cid = await open_connection(http)
    await new_sessions(http, cid, 1, count)
    return {**SSE, "Acp-Connection-Id": cid}


def test_without_last_event_id_the_stream_is_the_typescript_servers_wire() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        cid = await open_connection(http)
        await new_sessions(http, cid, 1, 1)
        async with http.stream("GET", "/acp", headers={**SSE, "Acp-Connection-Id": cid}) as stream:
            chunk = await asyncio.wait_for(anext(stream.aiter_raw()), 10)
        assert chunk == b'data: {"jsonrpc":"2.0","id":1,"result":{"sessionId":"v2-1"}}\n\n'

    with_server(test)


def test_a_stream_read_again_with_last_event_id_loses_nothing_and_repeats_nothing() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        stream = await answers_waiting(http, 5)
        async with http.stream("GET", "/acp", headers={**stream, "Last-Event-ID": "0"}) as first:
            read = raw_events(first)
            assert await next_event(read) == (
                0,
                None,
            )  # a resumable stream starts with the id it resumes from
            seen = [await next_event(read), await next_event(read)]  # then it drops, three events unread
        assert [(i, m["id"]) for i, m in seen] == [(1, 1), (2, 2)]
        async with http.stream("GET", "/acp", headers={**stream, "Last-Event-ID": "2"}) as again:
            read = raw_events(again)
            assert await next_event(read) == (2, None)
            replayed = [await next_event(read) for _ in range(3)]
            await new_sessions(http, stream["Acp-Connection-Id"], 6, 1)
            later = await next_event(read)
        assert [(i, m["result"]["sessionId"]) for i, m in [*replayed, later]] == [
            (3, "v2-3"),
            (4, "v2-4"),
            (5, "v2-5"),
            (6, "v2-6"),
        ]

    with_server(test)


def test_a_resume_takes_the_stream_over_from_a_reader_the_server_still_sees() -> None:
    async def test(http: httpx.AsyncClient) -> None:
        cid = await open_connection(http)
        stream = {**SSE, "Acp-Connection-Id": cid, "Acp-Session-Id": "v2-1"}
        async with http.stream("GET", "/acp", headers={**stream, "Last-Event-ID": "0"}) as old:
            assert old.status_code == 200
            assert (await http.get("/acp", headers=stream)).status_code == 409  # no resume: as before
            async with http.stream("GET", "/acp", headers={**stream, "Last-Event-ID": "0"}) as new:
                assert new.status_code == 200
                assert await asyncio.wait_for(old.aread(), 10) == b"id: 0\n\n"  # the old one ended

    with_server(test)


def test_a_resume_past_the_replay_buffer_is_410_and_says_so() -> None:
    app = echo_app(acp, acp_v1, limits=acp.ServerLimits(replay_buffer_bytes=100))

    async def test(http: httpx.AsyncClient) -> None:
        stream = await answers_waiting(http, 5)
        async with http.stream("GET", "/acp", headers={**stream, "Last-Event-ID": "0"}) as first:
            read = raw_events(first)
            for _ in range(6):  # the head, then the five answers (about 60 bytes each)
                await next_event(read)
        gone = await http.get("/acp", headers={**stream, "Last-Event-ID": "2"})
        assert gone.status_code == 410
        assert gone.text.startswith("Cannot resume the stream: events after 2 are gone")
        assert (await http.get("/acp", headers={**stream, "Last-Event-ID": "x"})).status_code == 400
        async with http.stream("GET", "/acp", headers={**stream, "Last-Event-ID": "4"}) as kept:
            read = raw_events(kept)
            assert [await next_event(read) for _ in range(2)][1][0] == 5  # the one the buffer still has

    with_server(test, app)


def test_a_server_without_a_replay_buffer_ignores_last_event_id() -> None:
    app = echo_app(acp, acp_v1, limits=acp.ServerLimits(replay_buffer_bytes=0))

    async def test(http: httpx.AsyncClient) -> None:
        cid = await open_connection(http)
        await new_sessions(http, cid, 1, 1)
        headers = {**SSE, "Acp-Connection-Id": cid, "Last-Event-ID": "0"}
        async with http.stream("GET", "/acp", headers=headers) as stream:
            chunk = await asyncio.wait_for(anext(stream.aiter_raw()), 10)
        assert chunk.startswith(b"data: ")

    with_server(test, app)


# -- the client's SSE reading --------------------------------------------------------------------


class Chunks:
    """What ``HttpChannel`` reads of a response: its raw chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


async def parsed(chunks: list[bytes]) -> tuple[list[Any], dict[Any, int]]:
    channel = acp.HttpChannel("http://127.0.0.1:9/acp")
    try:
        await channel._read_events(Chunks(chunks), "s-1")  # type: ignore[arg-type]
        messages = []
        while not channel._inbound.empty():
            messages.append(channel._inbound.get_nowait())
        return messages, dict(channel._last_event)
    finally:
        await channel.client.aclose()


def test_the_client_reads_sse_events_however_the_bytes_are_cut() -> None:
    stream = (
        b": keep-alive\r\n\r\nid: 7\r\n\r\n"
        b'id: 8\ndata: {"jsonrpc":"2.0","method":"_a",\ndata: "params":{}}\n\n'
        b'data: {"jsonrpc":"2.0","id":1,"result":{}}\r\n\r\n'
        b'id: 9\r\ndata: {"jsonrpc":"2.0","method":"_b"}\r\n'  # no end: the stream stops mid-event
    )
    whole = [{"jsonrpc": "2.0", "method": "_a", "params": {}}, {"jsonrpc": "2.0", "id": 1, "result": {}}]

    async def go() -> None:
        for cut in range(len(stream) + 1):
            for pieces in ([stream[:cut], stream[cut:]], [stream[i : i + 1] for i in range(len(stream))]):
                messages, last = await parsed(pieces)
                assert messages[:2] == whole and last == {"s-1": 8}, cut

    run(go(), 60)


def test_the_client_reads_a_16_mib_event_cut_in_1_kib_chunks_in_one_pass() -> None:
    """Finding 7: each byte is looked at once (the old parser split the whole line again for every chunk)."""
    text = "x" * (16 * 1024 * 1024 - 100)
    data = b'data: {"jsonrpc":"2.0","method":"_big","params":{"t":"' + text.encode() + b'"}}\n\n'
    chunks = [data[i : i + 1024] for i in range(0, len(data), 1024)]

    async def go() -> None:
        messages, _ = await parsed(chunks)
        assert len(messages) == 1 and len(messages[0]["params"]["t"]) == len(text)

    run(go(), 10)  # what an old pass took over a minute for


# -- what the transports route by: the package's SESSIONS, not names in the runtime -----------------


def test_the_app_and_connect_http_route_by_their_packages_sessions() -> None:
    app = echo_app(acp, acp_v1)
    # the router's app serves both releases: v1's session/load (from [v1.protocol]) and v2's methods
    assert app.sessions == acp.bindings.SESSIONS | acp_v1.bindings.SESSIONS
    assert "session/load" in app.sessions.response_on_connection
    assert "session/load" not in acp.bindings.SESSIONS.scoped  # v2 has none
    channel = acp.HttpChannel("http://127.0.0.1:9/acp")
    assert channel.sessions is acp.bindings.SESSIONS
    run(channel.client.aclose(), 5)


def test_the_runtime_routes_by_what_the_bindings_hand_it_and_looks_nothing_up() -> None:
    """``acp.HttpChannel`` is the bindings' subclass naming ``SESSIONS``; the runtime's own classes
    and ``_asgi.asgi_app`` route by what they are given, or refuse in one line."""
    assert acp.HttpChannel.default_sessions is acp.bindings.SESSIONS
    with pytest.raises(TypeError, match="HttpChannel needs sessions="):
        acp._http.HttpChannel("http://127.0.0.1:9/acp")
    with pytest.raises(TypeError, match=r"call the package's asgi_app \(acp.asgi_app\)"):
        acp._asgi.asgi_app(V2EchoAgent)
    by_module = importlib.import_module(f"{acp_v1.__name__}._asgi").asgi_app(V1EchoAgent, package=acp_v1)
    assert by_module.sessions == acp_v1.bindings.SESSIONS
    assert acp.asgi_app(V2EchoAgent).sessions is acp.bindings.SESSIONS


@pytest.mark.parametrize("on_connection", [True, False])
def test_a_response_comes_on_the_connection_stream_only_for_the_methods_sessions_names(
    on_connection: bool,
) -> None:
    """v1's ``session/load`` is answered on the connection's stream (TS SDK 2.4.0), as SESSIONS says."""
    app = echo_app(acp, acp_v1)
    if not on_connection:
        app.sessions = dataclasses.replace(app.sessions, response_on_connection=frozenset())
    init_v1 = {**INIT, "params": {"protocolVersion": 1, "clientCapabilities": {}}}

    async def test(http: httpx.AsyncClient) -> None:
        response = await http.post("/acp", content=json.dumps(init_v1), headers=JSON)
        cid = response.headers["acp-connection-id"]
        load = call(2, "session/load", {"sessionId": "v1-9", "cwd": "/", "mcpServers": []})
        session = {"Acp-Connection-Id": cid, "Acp-Session-Id": "v1-9"}
        assert (await http.post("/acp", content=load, headers={**JSON, **session})).status_code == 202
        # held until a reader attaches: only the stream SESSIONS names gets it
        stream_headers = {**SSE, "Acp-Connection-Id": cid} if on_connection else {**SSE, **session}
        async with http.stream("GET", "/acp", headers=stream_headers) as stream:
            reply = await next_event(events(stream))
        assert reply["id"] == 2

    with_server(test, app)


@pytest.mark.parametrize("ends", [False, True])
def test_connect_http_closes_a_session_stream_after_a_request_sessions_names_as_its_end(ends: bool) -> None:
    """After ``session/close`` succeeds the session's stream is closed; here ``session/prompt`` is named."""

    async def go() -> None:
        async with serve(echo_app(acp, acp_v1)) as base:
            routes = acp.bindings.SESSIONS
            if ends:
                routes = dataclasses.replace(routes, ends=routes.ends | {"session/prompt"})
            client = RecordingClient(acp)
            channel = acp.HttpChannel(base + "/acp", sessions=routes)
            connection = acp.ClientSideConnection(client, channel)
            await connection.initialize(
                protocol_version=2, info=acp.schema.Implementation(name="c", version="1")
            )
            session = (await connection.new_session(cwd="/")).session_id
            await connection.prompt(session_id=session, prompt=[acp.schema.TextContentBlock(text="hi")])
            assert (session in channel._sessions) is not ends
            await connection.close()

    run(go(), 30)
