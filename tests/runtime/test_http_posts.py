"""``connect_http``'s POSTs over its own kept-alive connection: what httpx did for them, kept.

The channel POSTs over one HTTP/1.1 connection of its own (plain ``http://``, no proxy, no
cookie yet); these tests hold it to what httpx did: a connection the server dropped while idle
is replaced, chunked answers are read, a ``Set-Cookie`` is kept and sent back.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.releases import newest_package
from tests.support.remote import RecordingClient, echo_agents, echo_app, serve, serving
from tests.support.wire import run

acp = newest_package(2)
acp_v1 = newest_package(1)
echo_agents(acp, acp_v1)
INFO = acp.schema.Implementation(name="c", version="1")


def test_posts_go_on_after_the_server_drops_an_idle_connection() -> None:
    """uvicorn closes a kept-alive connection idle for ``timeout_keep_alive``: the next POST opens another."""

    async def go() -> None:
        async with serving(echo_app(acp, acp_v1), timeout_keep_alive=0.2) as (base, _):
            connection = await acp.connect_http(RecordingClient(acp), base + "/acp")
            await connection.initialize(protocol_version=2, info=INFO)
            for _ in range(3):
                session = await connection.new_session(cwd="/")
                assert session.session_id
                await asyncio.sleep(0.6)
            await connection.close()

    run(go(), 30)


def refusing_session_new(inner: Any) -> Any:
    """Answers a POST of ``session/new`` 400 in two chunks (no Content-Length: uvicorn sends it chunked)."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await inner(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if b'"session/new"' not in body:
            delivered = False

            async def again() -> Any:
                nonlocal delivered
                if not delivered:
                    delivered = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await inner(scope, again, send)
            return
        await send(
            {"type": "http.response.start", "status": 400, "headers": [(b"content-type", b"text/plain")]}
        )
        await send({"type": "http.response.body", "body": b"no sessions ", "more_body": True})
        await send({"type": "http.response.body", "body": b"here today", "more_body": False})

    return app


def test_a_refused_post_reads_the_chunked_answer_and_the_connection_goes_on() -> None:
    async def go() -> None:
        async with serve(refusing_session_new(echo_app(acp, acp_v1))) as base:
            connection = await acp.connect_http(RecordingClient(acp), base + "/acp")
            await connection.initialize(protocol_version=2, info=INFO)
            for _ in range(2):  # the connection it came on is read to the end: the next POST uses it
                with pytest.raises(acp.RequestError) as failed:
                    await connection.new_session(cwd="/")
                assert failed.value.code == -32603
                assert failed.value.data == {"status": 400, "body": "no sessions here today"}
            assert not connection.connection.closed
            await connection.close()

    run(go(), 30)


def cookie_on_first_post(inner: Any, seen: list[str | None]) -> Any:
    """Sets ``lb=w2`` on the answer of the first POST after ``initialize``; records each POST's Cookie."""
    posts = 0

    async def app(scope: Any, receive: Any, send: Any) -> None:
        nonlocal posts
        if scope["type"] != "http" or scope["method"] != "POST":
            await inner(scope, receive, send)
            return
        posts += 1
        seen.append(dict(scope["headers"]).get(b"cookie", b"").decode() or None)
        first_after_initialize = posts == 2

        async def send_with_cookie(message: Any) -> None:
            if first_after_initialize and message["type"] == "http.response.start":
                message = {**message, "headers": [*message["headers"], (b"set-cookie", b"lb=w2; Path=/")]}
            await send(message)

        await inner(scope, receive, send_with_cookie)

    return app


def test_a_cookie_set_on_a_post_is_sent_back_with_the_next_ones() -> None:
    seen: list[str | None] = []

    async def go() -> None:
        async with serve(cookie_on_first_post(echo_app(acp, acp_v1), seen)) as base:
            connection = await acp.connect_http(RecordingClient(acp), base + "/acp")
            await connection.initialize(protocol_version=2, info=INFO)
            for _ in range(3):
                await connection.new_session(cwd="/")
            await connection.close()

    run(go(), 30)
    assert seen[:2] == [None, None]
    assert seen[2:] and all(cookie == "lb=w2" for cookie in seen[2:])
