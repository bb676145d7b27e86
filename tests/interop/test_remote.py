"""Remote ACP against the official SDKs, over real sockets on 127.0.0.1: Streamable HTTP and WebSocket.

* the examples as users start them: ``examples/remote_agent.py`` served, ``examples/remote_client.py``
  against it and against the TypeScript SDK 2.4.0's ``AcpServer`` (node http + ws);
* the TypeScript SDK 2.4.0's ``createHttpStream``/``createWebSocketStream`` v1 and v2 clients against
  our ASGI app (the router);
* our newest v2 and v1 packages' clients against the TypeScript ``AcpServer`` (its router);
* the official Python SDK 0.12.1's v1 HTTP and WebSocket clients against our ASGI app (the router).

Each runs initialize, session/new, a prompt with streamed updates, a permission request the
client answers, and a cancelled prompt.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from tests.support.releases import newest_package
from tests.support.remote import INTEROP as INTEROP_DIR
from tests.support.remote import (
    RecordingClient,
    chunk_text,
    echo_app,
    is_chunk,
    is_idle,
    listening,
    node_available,
    port_of,
    run_node,
    run_python,
    serve,
)
from tests.support.wire import run

pytestmark = pytest.mark.skipif(
    not node_available(), reason="run `make interop-deps` for the TypeScript peers"
)

V2 = newest_package(2)
V1 = newest_package(1)
TRANSPORTS = ("http", "ws")
AGENT = ["examples/remote_agent.py", "--host", "127.0.0.1", "--port", "0"]


def url_of(base: str, transport: str) -> str:
    return (base.replace("http://", "ws://") if transport == "ws" else base) + "/acp"


def update_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def kinds(lines: list[dict[str, Any]]) -> list[str]:
    return [line["update"]["sessionUpdate"] + ":" + line["update"].get("state", "") for line in lines]


# -- the examples, as the checks of issue 19 run them ---------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_example_client_prompts_the_example_agent(transport: str) -> None:
    with listening([sys.executable, *AGENT]) as (_, line):
        base = f"http://127.0.0.1:{port_of(line)}"
        result = run_python("examples/remote_client.py", url_of(base, transport), timeout=60)
    assert result.returncode == 0, result.stderr
    lines = update_lines(result.stdout)
    assert kinds(lines) == [
        "user_message_chunk:",
        "state_update:running",
        "agent_message_chunk:",
        "state_update:idle",
    ]
    assert lines[0]["update"]["content"] == {"type": "text", "text": "hello"}
    assert lines[2]["update"]["content"]["text"] == "hello"
    assert lines[-1]["update"]["stopReason"] == "end_turn"
    assert {line["sessionId"] for line in lines} == {"v2-1"}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_example_client_prompts_the_typescript_acp_server(transport: str) -> None:
    with listening(["node", "remote_agent.mjs", "acp-sdk-2-4"], cwd=INTEROP_DIR) as (_, line):
        base = f"http://127.0.0.1:{port_of(line)}"
        result = run_python("examples/remote_client.py", url_of(base, transport), timeout=60)
    assert result.returncode == 0, result.stderr
    lines = update_lines(result.stdout)
    assert kinds(lines) == [
        "user_message_chunk:",
        "state_update:running",
        "agent_message_chunk:",
        "state_update:idle",
    ]
    assert (
        lines[2]["update"]["content"]["text"] == "hello" and lines[-1]["update"]["stopReason"] == "end_turn"
    )
    assert {line["sessionId"] for line in lines} == {"ts-v2-1"}


# -- the TypeScript clients against our ASGI app -----------------------------------------------


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_typescript_clients_talk_to_the_python_asgi_app(transport: str, version: str) -> None:
    with listening([sys.executable, *AGENT]) as (_, line):
        base = f"http://127.0.0.1:{port_of(line)}"
        result = run_node("remote_client.mjs", "acp-sdk-2-4", version, transport, url_of(base, transport))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert "error" not in report, report["error"]
    assert report["sessionId"] == f"{version}-1"
    assert len(report["permissions"]) == 2
    first = report["firstUpdates"]
    if version == "v2":
        assert report["initialize"]["info"]["name"] == "remote-echo-agent"
        assert [u["sessionUpdate"] for u in first[:2]] == ["user_message_chunk", "state_update"]
        assert "".join(
            u["content"]["text"] for u in first if u["sessionUpdate"] == "agent_message_chunk"
        ) == ("hello from typescript")
        assert report["end"] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
        assert report["cancelled"]["stopReason"] == "cancelled"
        assert report["permissions"][0]["options"][0]["optionId"] == "allow"
    else:
        assert report["initialize"]["agentInfo"]["name"] == "remote-echo-agent"
        assert report["prompt"] == {"stopReason": "end_turn"}
        assert report["cancelled"] == {"stopReason": "cancelled"}
        assert "".join(u["content"]["text"] for u in first[:3]) == "hello from typescript"
    assert report["updates"] < 100_000  # the cancelled turn stopped early


# -- our clients against the TypeScript AcpServer ----------------------------------------------


async def connect(package: Any, client: Any, url: str, transport: str) -> Any:
    if transport == "ws":
        return await package.connect_websocket(client, url)
    return await package.connect_http(client, url)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_our_v2_client_talks_to_the_typescript_acp_server(transport: str) -> None:
    async def go(base: str) -> None:
        client = RecordingClient(V2)
        connection = await connect(V2, client, url_of(base, transport), transport)
        hello = await connection.initialize(
            protocol_version=2, info=V2.schema.Implementation(name="py-remote", version="1")
        )
        assert hello.info.name == "ts-remote-v2"
        session = await connection.new_session(cwd="/")
        text = V2.schema.TextContentBlock
        await connection.prompt(session_id=session.session_id, prompt=[text(text="hello from python")])
        end = await client.until(is_idle)
        assert end.stop_reason == "end_turn"
        assert chunk_text(client.updates) == "hello from python"
        assert len(client.permissions) == 1 and client.permissions[0]["session_id"] == session.session_id
        client.updates.clear()
        await connection.prompt(session_id=session.session_id, prompt=[text(text="count 100000")])
        await client.until(is_chunk)
        await connection.session_cancel(session_id=session.session_id)
        assert (await client.until(is_idle)).stop_reason == "cancelled"
        assert len(client.updates) < 100_000
        await connection.close()

    with listening(["node", "remote_agent.mjs", "acp-sdk-2-4"], cwd=INTEROP_DIR) as (_, line):
        run(go(f"http://127.0.0.1:{port_of(line)}"), 60)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_our_v1_client_talks_to_the_typescript_acp_server(transport: str) -> None:
    async def go(base: str) -> None:
        client = RecordingClient(V1)
        connection = await connect(V1, client, url_of(base, transport), transport)
        hello = await connection.initialize(protocol_version=1)
        assert hello.protocol_version == 1 and hello.agent_info.name == "ts-remote-v1"
        session = await connection.new_session(cwd="/", mcp_servers=[])
        text = V1.schema.TextContentBlock
        reply = await connection.prompt(
            session_id=session.session_id, prompt=[text(text="hello from python")]
        )
        assert reply.stop_reason == "end_turn"
        await asyncio.sleep(0.1)
        assert chunk_text(client.updates) == "hello from python"
        assert len(client.permissions) == 1
        turn = asyncio.ensure_future(
            connection.prompt(session_id=session.session_id, prompt=[text(text="count 100000")])
        )
        await client.until(lambda u: is_chunk(u) and u.content.text == "1")
        await connection.session_cancel(session_id=session.session_id)
        assert (await asyncio.wait_for(turn, 20)).stop_reason == "cancelled"
        await connection.close()

    with listening(["node", "remote_agent.mjs", "acp-sdk-2-4"], cwd=INTEROP_DIR) as (_, line):
        run(go(f"http://127.0.0.1:{port_of(line)}"), 60)


# -- the official Python SDK's v1 clients against our ASGI app ----------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_python_sdk_v1_clients_talk_to_our_asgi_app(transport: str) -> None:
    official = pytest.importorskip("acp")
    from acp import schema as sdk_schema

    class SdkClient:
        def __init__(self) -> None:
            self.updates: list[Any] = []
            self.permissions: list[Any] = []

        async def request_permission(
            self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
        ) -> Any:
            self.permissions.append((session_id, [o.option_id for o in options]))
            return sdk_schema.RequestPermissionResponse(
                outcome=sdk_schema.AllowedOutcome(option_id="allow", outcome="selected")
            )

        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            self.updates.append(update)

    async def go() -> None:
        async with serve(echo_app(V2, V1)) as base:
            if transport == "ws":
                from acp.ws import create_websocket_stream

                stream = await create_websocket_stream(url_of(base, "ws"))
            else:
                from acp.http import create_http_stream

                stream = create_http_stream(url_of(base, "http"))
            client = SdkClient()
            connection = official.connect_to_agent(client, stream)
            hello = await connection.initialize(protocol_version=1)
            assert hello.protocol_version == 1 and hello.agent_info.name == "remote-echo-agent"
            session = await connection.new_session(cwd="/")
            reply = await connection.prompt(
                session_id=session.session_id,
                prompt=[sdk_schema.TextContentBlock(type="text", text="hi there")],
            )
            assert reply.stop_reason == "end_turn"
            for _ in range(100):
                if len(client.updates) >= 2:
                    break
                await asyncio.sleep(0.02)
            assert "".join(u.content.text for u in client.updates) == "hi there"
            assert client.permissions == [(session.session_id, ["allow", "reject"])]
            turn = asyncio.ensure_future(
                connection.prompt(
                    session_id=session.session_id,
                    prompt=[sdk_schema.TextContentBlock(type="text", text="count 100000")],
                )
            )
            while len(client.updates) < 3:
                await asyncio.sleep(0.01)
            await connection.cancel(session_id=session.session_id)
            assert (await asyncio.wait_for(turn, 20)).stop_reason == "cancelled"
            await connection.close()

    run(go(), 60)
