"""The router and the client fallback over real stdio subprocesses, against the TypeScript SDK.

tests/interop/package.json pins ``@agentclientprotocol/sdk`` 1.8.0 (npm alias
``acp-sdk-1-8``): ACP v1 in its main export, v2 (2.0.0-alpha.8) in
``experimental/v2``, and its ``AgentProtocolRouter``.  Both directions:

* its v1 and v2 clients (tests/interop/router_client.mjs) against the Python
  router (tests/interop/py_router_agent.py);
* the Python v1 and v2 clients, and ``connect_with_fallback``, against its
  router configured with a v1 and a v2 agent (tests/interop/router_agent.mjs);

and ``examples/router_agent.py`` driven by a v1 and a v2 Python client.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from typing import Any

import pytest

from tests.support.releases import ROOT, newest_package
from tests.support.router import TS_SDK, V1_PACKAGE, V2_PACKAGE, v1, v2
from tests.support.wire import run

INTEROP = ROOT / "tests" / "interop"

needs_node = pytest.mark.skipif(
    shutil.which("node") is None or not (INTEROP / "node_modules" / TS_SDK).is_dir(),
    reason="node or tests/interop/node_modules missing: run `make interop-deps`",
)

acp = v2()


class RecordingClient:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, *, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


def texts(updates: list[Any], kind: str) -> str:
    return "".join(u.content.text for u in updates if type(u).__name__ == kind)


@needs_node
def test_the_pinned_sdk_is_1_8_0_with_its_router() -> None:
    package = INTEROP / "node_modules" / TS_SDK
    assert json.loads((package / "package.json").read_text())["version"] == "1.8.0"
    assert (package / "dist" / "protocol-router.js").is_file()
    assert '"acp-sdk-1-8": "npm:@agentclientprotocol/sdk@1.8.0"' in (INTEROP / "package.json").read_text()


# -- the TypeScript clients against the Python router --------------------------------------


def typescript_client(version: str) -> dict[str, Any]:
    packages = [V2_PACKAGE, V1_PACKAGE]
    command = ["node", str(INTEROP / "router_client.mjs"), TS_SDK, version, sys.executable]
    command += [str(INTEROP / "py_router_agent.py"), *packages]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=90, check=True)
    report: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    assert "error" not in report, report.get("error")
    return report


@needs_node
def test_typescript_v1_client_against_the_python_router() -> None:
    report = typescript_client("v1")
    initialize = report["initialize"]
    assert initialize["protocolVersion"] == 1 and initialize["agentInfo"]["name"] == "py-router-v1"
    assert initialize["_meta"] == {"requested": 1, "client": "ts-v1-client"}
    assert report["sessionId"] == "v1-session-/workspace"
    assert report["prompt"] == {"stopReason": "end_turn"}
    chunks = [u["content"]["text"] for u in report["updates"] if u["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(chunks) == "hello from typescript"


@needs_node
def test_typescript_v2_client_against_the_python_router() -> None:
    """The SDK's v2 is alpha.8, the Python agent's alpha.7: the basic session works across the two."""
    report = typescript_client("v2")
    initialize = report["initialize"]
    assert initialize["protocolVersion"] == 2 and initialize["info"]["name"] == "py-router-v2"
    assert initialize["_meta"] == {"requested": 2, "client": "ts-v2-client"}
    assert report["sessionId"] == "v2-session-/workspace"
    message_id = report["prompt"]["messageId"]
    echo = [u for u in report["updates"] if u["sessionUpdate"] == "user_message_chunk"]
    assert [(u["messageId"], u["content"]["text"]) for u in echo] == [(message_id, "hello from typescript")]
    chunks = [u["content"]["text"] for u in report["updates"] if u["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(chunks) == "hello from typescript"


# -- the Python clients against the TypeScript router --------------------------------------


def typescript_router(versions: str = "v1,v2") -> Any:
    return acp.spawn("node", str(INTEROP / "router_agent.mjs"), TS_SDK, versions)


@needs_node
def test_python_v2_client_against_the_typescript_router() -> None:
    async def go() -> None:
        client = RecordingClient()
        async with typescript_router() as (reader, writer):
            connection = acp.connect_to_agent(client, reader, writer)
            hello = await connection.initialize(
                protocol_version=acp.PROTOCOL_VERSION,
                info=acp.schema.Implementation(name="py-v2", version="1"),
            )
            assert hello.protocol_version == 2 and hello.info.name == "ts-router-v2"
            # the TypeScript v2 agent got the request as sent
            assert hello.field_meta == {
                "received": {
                    "protocolVersion": 2,
                    "info": {"name": "py-v2", "version": "1"},
                    "capabilities": {},
                }
            }
            session = await connection.new_session(cwd="/w")
            assert session.session_id == "ts-v2-/w"
            accepted = await connection.prompt(
                session_id=session.session_id, prompt=[acp.schema.TextContentBlock(text="hi there")]
            )
            await asyncio.sleep(0.2)
            echo = [u for u in client.updates if type(u).__name__ == "UserMessageChunkSessionUpdate"]
            assert [u.message_id for u in echo] == [accepted.message_id]
            assert texts(client.updates, "AgentMessageChunkSessionUpdate") == "hi there"
            await connection.close()

    run(go(), 60)


@needs_node
def test_python_v1_client_against_the_typescript_router() -> None:
    async def go() -> None:
        acp_v1 = v1()
        client = RecordingClient()
        async with typescript_router() as (reader, writer):
            connection = acp_v1.connect_to_agent(client, reader, writer)
            hello = await connection.initialize(
                protocol_version=1, client_info=acp_v1.schema.Implementation(name="py-v1", version="1")
            )
            assert hello.protocol_version == 1 and hello.agent_info.name == "ts-router-v1"
            assert hello.field_meta["received"]["clientInfo"] == {"name": "py-v1", "version": "1"}
            session = await connection.new_session(cwd="/w", mcp_servers=[])
            assert session.session_id == "ts-v1-/w"
            response = await connection.prompt(
                session_id=session.session_id, prompt=[acp_v1.schema.TextContentBlock(text="hi there")]
            )
            assert response.stop_reason == "end_turn"
            await asyncio.sleep(0.2)
            assert texts(client.updates, "AgentMessageChunkSessionUpdate") == "hi there"
            await connection.close()

    run(go(), 60)


@needs_node
@pytest.mark.parametrize("versions", ["v1", "v1,v2"])
def test_python_fallback_client_against_the_typescript_router(versions: str) -> None:
    """Offering v2: a v2 session where the router has v2, else v1 on the same transport."""

    async def go() -> None:
        acp_v1 = v1()
        v1_client, v2_client = RecordingClient(), RecordingClient()
        async with typescript_router(versions) as (reader, writer):
            negotiated = await acp.connect_with_fallback(
                reader,
                writer,
                v2=v2_client,
                v1=v1_client,
                v1_package=acp_v1,
                info=acp.schema.Implementation(name="py-fallback", version="1"),
            )
            connection = negotiated.connection
            if versions == "v1":
                assert negotiated.protocol_version == 1
                assert negotiated.response.agent_info.name == "ts-router-v1"
                # the TypeScript router reduced the v2 request to v1: info became clientInfo
                received = negotiated.response.field_meta["received"]
                assert received["protocolVersion"] == 1
                assert received["clientInfo"] == {"name": "py-fallback", "version": "1"}
                session = await connection.new_session(cwd="/w", mcp_servers=[])
                prompt = [acp_v1.schema.TextContentBlock(text="hi there")]
                assert (
                    await connection.prompt(session_id=session.session_id, prompt=prompt)
                ).stop_reason == "end_turn"
                used, unused = v1_client, v2_client
            else:
                assert negotiated.protocol_version == 2
                assert negotiated.response.info.name == "ts-router-v2"
                session = await connection.new_session(cwd="/w")
                prompt = [acp.schema.TextContentBlock(text="hi there")]
                await connection.prompt(session_id=session.session_id, prompt=prompt)
                used, unused = v2_client, v1_client
            await asyncio.sleep(0.2)
            assert texts(used.updates, "AgentMessageChunkSessionUpdate") == "hi there"
            assert unused.updates == []
            await connection.close()

    run(go(), 60)


# -- examples/router_agent.py ----------------------------------------------------------------


class TurnClient:
    """Keeps the state of each session from its updates, and allows what the agent asks."""

    def __init__(self, package: Any) -> None:
        self.package = package
        self.states: dict[str, Any] = {}
        self.ended = asyncio.Event()

    async def session_update(self, *, session_id: str, update: Any, **kwargs: Any) -> None:
        state = self.states.setdefault(session_id, self.package.SessionState(session_id))
        if state.apply(session_id=session_id, update=update).completion is not None:
            self.ended.set()

    async def request_permission(self, *, options: list[Any], **kwargs: Any) -> Any:
        allow = next(o for o in options if o.kind == "allow_once")
        outcome = self.package.schema.SelectedRequestPermissionOutcome(option_id=allow.option_id)
        return self.package.schema.RequestPermissionResponse(outcome=outcome)


def test_the_router_example_serves_a_v1_and_a_v2_client() -> None:
    """The example joins the newest v1 and v2 packages; its v2 agent is the reference agent."""
    acp_v2, acp_v1 = newest_package(2), newest_package(1)

    async def go() -> None:
        script = str(ROOT / "examples" / "router_agent.py")
        turns = TurnClient(acp_v2)
        async with acp_v2.spawn(sys.executable, script) as (reader, writer):
            connection = acp_v2.connect_to_agent(turns, reader, writer)
            hello = await connection.initialize(
                protocol_version=2, info=acp_v2.schema.Implementation(name="v2-client", version="1")
            )
            assert hello.protocol_version == 2 and hello.info.name == "router-echo-agent"
            assert hello.capabilities.session is not None
            session = await connection.new_session(cwd="/w")
            accepted = await connection.prompt(
                session_id=session.session_id, prompt=[acp_v2.schema.TextContentBlock(text="Hello v2")]
            )
            await asyncio.wait_for(turns.ended.wait(), 20)
            state = turns.states[session.session_id]
            assert session.session_id == "v2-1" and accepted.message_id in state.messages
            replies = [m for m in state.messages.values() if isinstance(m, acp_v2.schema.AgentMessage)]
            assert [[b.text for b in m.content] for m in replies] == [["Hello", " v2"]]
            assert state.state.stop_reason == "end_turn"
            await connection.close()

        client = RecordingClient()
        async with acp_v2.spawn(sys.executable, script) as (reader, writer):
            connection = acp_v1.connect_to_agent(client, reader, writer)
            hello = await connection.initialize(
                protocol_version=1, client_info=acp_v1.schema.Implementation(name="v1-client", version="1")
            )
            assert hello.protocol_version == 1 and hello.agent_info.name == "router-echo-agent"
            assert hello.field_meta == {"client": "v1-client"}
            session = await connection.new_session(cwd="/w", mcp_servers=[])
            response = await connection.prompt(
                session_id=session.session_id, prompt=[acp_v1.schema.TextContentBlock(text="Hello v1")]
            )
            await asyncio.sleep(0.2)
            assert (session.session_id, response.stop_reason) == ("v1-1", "end_turn")
            assert texts(client.updates, "AgentMessageChunkSessionUpdate") == "Hello v1"
            await connection.close()

    run(go(), 60)


def test_the_interop_peers_exist() -> None:
    for name in ("router_client.mjs", "router_agent.mjs", "py_router_agent.py"):
        assert (INTEROP / name).is_file(), name
