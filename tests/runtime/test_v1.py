"""A protocol v1 package end to end: its handshake names, its capability gates, its session updates.

Protocol v1 advertises capabilities as ``clientCapabilities`` (initialize params) and
``agentCapabilities`` (initialize result), where v2 says ``capabilities`` for both; each side's
connection must read the field its peer wrote.
"""

from __future__ import annotations

import asyncio
import json
import re
from types import ModuleType
from typing import Any

import pytest

from tests.support.releases import SURFACES, package_of, surface_id, surface_of
from tests.support.wire import run

V1 = [s for s in SURFACES if surface_of(*s).protocol_version == 1]
acp = package_of("1.21.0", True)
schema = acp.schema


def test_the_locked_releases_include_protocol_v1() -> None:
    assert {release for release, _ in V1} == {"1.20.0", "1.21.0", "v1-sdk-2.3.0"}


@pytest.mark.parametrize("which", V1, ids=surface_id)
def test_a_v1_package_says_its_protocol_version_and_has_no_echo_helper(which: tuple[str, bool]) -> None:
    package = package_of(*which)
    assert package.PROTOCOL_VERSION == 1
    assert not hasattr(package.AgentSideConnection, "echo_user_message")
    assert "client_capabilities" in package.schema.InitializeRequest.model_fields
    assert "agent_capabilities" in package.schema.InitializeResponse.model_fields


class Agent(acp.Agent):
    def __init__(self, connection: Any) -> None:
        self.connection = connection

    async def initialize(self, **kwargs: Any) -> Any:
        return schema.InitializeResponse(
            protocol_version=1,
            agent_capabilities=schema.AgentCapabilities(
                load_session=True, session_capabilities=schema.SessionCapabilities(fork={})
            ),
            agent_info=schema.Implementation(name="agent", version="1"),
        )

    async def fork_session(self, **kwargs: Any) -> Any:
        return schema.ForkSessionResponse(session_id="forked")


class BareAgent(acp.Agent):
    def __init__(self, connection: Any) -> None:
        self.connection = connection

    async def initialize(self, **kwargs: Any) -> Any:
        return schema.InitializeResponse(protocol_version=1)


class Client(acp.Client):
    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.received = asyncio.Event()

    async def session_update(self, *, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self.received.set()

    async def read_text_file(self, *, session_id: str, path: str, **kwargs: Any) -> Any:
        return schema.ReadTextFileResponse(content=f"contents of {path}")


async def _pair(package: ModuleType, client: Any, factory: Any) -> tuple[Any, Any]:
    to_agent_reader, to_agent = package.memory_pipe()
    to_client_reader, to_client = package.memory_pipe()
    agent_side = package.connect_to_client(factory, to_agent_reader, to_client)
    client_side = package.connect_to_agent(client, to_client_reader, to_agent)
    return client_side, agent_side


def test_each_side_reads_the_capabilities_its_peer_advertised() -> None:
    async def go() -> None:
        client = Client()
        client_side, agent_side = await _pair(acp, client, Agent)
        capabilities = schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=True), plan={}
        )
        response = await client_side.initialize(protocol_version=1, client_capabilities=capabilities)
        assert response.agent_capabilities.load_session is True
        assert client_side.peer_capabilities == {"loadSession": True, "sessionCapabilities": {"fork": {}}}
        assert agent_side.peer_capabilities == {"fs": {"readTextFile": True}, "plan": {}}
        forked = await client_side.fork_session(session_id="s", cwd="/w")
        assert forked.session_id == "forked"
        read = await agent_side.read_text_file(session_id="s", path="/w/a.py")
        assert read.content == "contents of /w/a.py"
        await client_side.close()
        await agent_side.close()

    run(go())


def test_v1_gates_name_v1_capabilities() -> None:
    async def go() -> None:
        client_side, agent_side = await _pair(acp, Client(), BareAgent)
        # the agent advertises nothing: session/fork needs its sessionCapabilities.fork
        await client_side.initialize(protocol_version=1)
        with pytest.raises(acp.CapabilityError, match=re.escape("'sessionCapabilities.fork'")):
            await client_side.fork_session(session_id="s", cwd="/w")
        # the client advertised nothing: plan_update needs its `plan`
        plan = schema.PlanUpdateSessionUpdate(plan=schema.ItemsPlanUpdateContent(plan_id="p", entries=[]))
        with pytest.raises(acp.CapabilityError, match=re.escape("'plan'")):
            await agent_side.session_update(session_id="s", update=plan)
        await client_side.close()
        await agent_side.close()

    run(go())


def test_session_updates_are_events_delivered_as_they_come() -> None:
    """tool_call creates, tool_call_update changes: the client gets both, in order, as sent."""

    async def go() -> None:
        client = Client()
        client_side, agent_side = await _pair(acp, client, Agent)
        await client_side.initialize(
            protocol_version=1, client_capabilities=schema.ClientCapabilities(plan={})
        )
        events = [
            {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read a.py", "status": "pending"},
            {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"},
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "done"}},
            {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": []}},
        ]
        for event in events:
            update = schema.SessionNotification.model_validate({"sessionId": "s", "update": event}).update
            await agent_side.session_update(session_id="s", update=update)
        while len(client.updates) < len(events):
            client.received.clear()
            await asyncio.wait_for(client.received.wait(), 5)
        got = [json.loads(u.model_dump_json(by_alias=True, exclude_unset=True)) for u in client.updates]
        assert got == events
        assert [type(u).__name__ for u in client.updates] == [
            "ToolCallSessionUpdate",
            "ToolCallUpdateSessionUpdate",
            "AgentMessageChunkSessionUpdate",
            "PlanUpdateSessionUpdate",
        ]
        await client_side.close()
        await agent_side.close()

    run(go())
