"""The WebSocket wire of the ASGI app and of ``connect_websocket`` on 127.0.0.1 (TS SDK 2.4.0's rules)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.runtime.test_http import INIT, principal_app
from tests.support.releases import newest_package
from tests.support.remote import RecordingClient, echo_agents, echo_app, is_idle, serve
from tests.support.wire import run

acp = newest_package(2)
acp_v1 = newest_package(1)
V2EchoAgent, V1EchoAgent = echo_agents(acp, acp_v1)


def ws_url(base: str) -> str:
    return base.replace("http://", "ws://") + "/acp"


def with_socket(test: Any, app: Any = None, headers: dict[str, str] | None = None) -> None:
    async def go() -> None:
        async with (
            serve(app or echo_app(acp, acp_v1)) as base,
            connect(ws_url(base), additional_headers=headers or {}) as socket,
        ):
            await test(socket)

    run(go(), 30)


async def recv_json(socket: Any) -> Any:
    return json.loads(await asyncio.wait_for(socket.recv(), 10))


def test_the_handshake_carries_the_connection_id_and_no_subprotocol() -> None:
    async def test(socket: Any) -> None:
        assert len(socket.response.headers["Acp-Connection-Id"]) >= 43
        assert socket.subprotocol is None
        await socket.send(json.dumps(INIT))
        assert (await recv_json(socket))["result"]["protocolVersion"] == 2

    with_socket(test)


def test_the_first_frame_must_be_initialize() -> None:
    async def test(socket: Any) -> None:
        await socket.send(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}})
        )
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(socket.recv(), 10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1002

    with_socket(test)


def test_bad_frames_are_answered_and_binary_frames_ignored() -> None:
    async def test(socket: Any) -> None:
        await socket.send(b"\x00binary before initialize is ignored")
        await socket.send("{not json")
        assert (await recv_json(socket))["error"]["code"] == -32700
        await socket.send("[1, 2]")
        reply = await recv_json(socket)
        assert reply["id"] is None and reply["error"]["code"] == -32600
        await socket.send(json.dumps(INIT))
        assert "result" in await recv_json(socket)
        await socket.send(json.dumps({**INIT, "id": 5}))
        again = await recv_json(socket)
        assert again["id"] == 5 and again["error"]["code"] == -32600
        await socket.send(
            json.dumps({"jsonrpc": "2.0", "id": 6, "method": "session/new", "params": {"cwd": "/"}})
        )
        assert (await recv_json(socket)) == {"jsonrpc": "2.0", "id": 6, "result": {"sessionId": "v2-1"}}

    with_socket(test)


def test_the_auth_hook_and_the_origins_refuse_the_handshake() -> None:
    async def go() -> None:
        async with serve(principal_app(allowed_origins=["https://app.example"])) as base:
            with pytest.raises(InvalidStatus) as anonymous:
                await connect(ws_url(base))
            assert anonymous.value.response.status_code == 401
            with pytest.raises(InvalidStatus) as refused:
                await connect(ws_url(base), additional_headers={"Authorization": "Bearer mallory"})
            assert refused.value.response.status_code == 403
            with pytest.raises(InvalidStatus) as foreign:
                await connect(
                    ws_url(base),
                    additional_headers={"Authorization": "Bearer a", "Origin": "https://evil.example"},
                )
            assert foreign.value.response.status_code == 403
            ok = await connect(
                ws_url(base),
                additional_headers={"Authorization": "Bearer a", "Origin": "https://app.example"},
            )
            await ok.close()

    run(go(), 30)


def test_connect_websocket_runs_a_session_with_cookies_in_the_handshake() -> None:
    seen: list[str | None] = []

    def authenticate(request: Any) -> None:
        seen.append(request.headers.get("cookie"))

    app = acp.asgi_app(V2EchoAgent, authenticate=authenticate)

    async def go() -> None:
        async with serve(app) as base:
            client = RecordingClient(acp)
            connection = await acp.connect_websocket(client, ws_url(base), cookies={"affinity": "node-7"})
            await connection.initialize(
                protocol_version=2, info=acp.schema.Implementation(name="c", version="1")
            )
            session = await connection.new_session(cwd="/")
            await connection.prompt(
                session_id=session.session_id, prompt=[acp.schema.TextContentBlock(text="a b")]
            )
            assert (await client.until(is_idle)).stop_reason == "end_turn"
            assert len(client.permissions) == 1
            await connection.close()

    run(go(), 30)
    assert seen == ["affinity=node-7"]


def test_connect_websocket_keeps_the_handshakes_set_cookie() -> None:
    inner = acp.asgi_app(V2EchoAgent)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        async def send_with_cookie(message: Any) -> None:
            if message["type"] == "websocket.accept":
                message = {
                    **message,
                    "headers": [*message["headers"], (b"set-cookie", b"affinity=node-3; Path=/")],
                }
            await send(message)

        await inner(scope, receive, send_with_cookie)

    async def go() -> None:
        async with serve(app) as base:
            connection = await acp.connect_websocket(
                RecordingClient(acp), ws_url(base), cookies={"team": "blue"}
            )
            channel = connection.connection.channel
            assert channel.cookies == {
                "team": "blue",
                "affinity": "node-3",
            }  # pass them to the next connection
            assert channel.connection_id is not None and len(channel.connection_id) >= 43
            await connection.close()

    run(go(), 30)
