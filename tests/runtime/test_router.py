"""AgentProtocolRouter and connect_with_fallback (codegen/runtime/_router.py), on in-memory pipes.

The router comes from the v2 package; tests/support/router.py names the v1
and v2 packages it joins.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.router import V1_PACKAGE, V2_PACKAGE, v1, v2
from tests.support.wire import run

acp = v2()
schema = acp.schema


# -- agents that record what they were given ---------------------------------------------


class V2Agent:
    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.initialized: list[dict[str, Any]] = []

    async def initialize(self, **kwargs: Any) -> Any:
        self.initialized.append(kwargs)
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            info=schema.Implementation(name="v2-agent", version="1"),
            capabilities=schema.AgentCapabilities(session=schema.SessionCapabilities()),
        )

    async def new_session(self, *, cwd: str, **kwargs: Any) -> Any:
        return schema.NewSessionResponse(session_id=f"v2:{cwd}")

    async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        message_id = await self.connection.echo_user_message(session_id=session_id, prompt=prompt)
        return schema.PromptResponse(message_id=message_id)


class V1Agent:
    def __init__(self, connection: Any, package: Any = None) -> None:
        self.connection = connection
        self.initialized: list[dict[str, Any]] = []
        self.schema = (package or v1()).schema

    async def initialize(self, **kwargs: Any) -> Any:
        self.initialized.append(kwargs)
        s = self.schema
        return s.InitializeResponse(
            protocol_version=1, agent_info=s.Implementation(name="v1-agent", version="1")
        )

    async def new_session(self, *, cwd: str, **kwargs: Any) -> Any:
        return self.schema.NewSessionResponse(session_id=f"v1:{cwd}")

    async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        s = self.schema
        await self.connection.session_update(
            session_id=session_id,
            update=s.AgentMessageChunkSessionUpdate(content=s.TextContentBlock(text="from v1")),
        )
        return s.PromptResponse(stop_reason="end_turn")


class Made:
    """Factories that remember each agent they made, and with which connection."""

    def __init__(self, v1_package: Any = None) -> None:
        self.agents: list[Any] = []
        self.v1_package = v1_package

    def v1(self, connection: Any) -> V1Agent:
        self.agents.append(V1Agent(connection, self.v1_package))
        return self.agents[-1]

    def v2(self, connection: Any) -> V2Agent:
        self.agents.append(V2Agent(connection))
        return self.agents[-1]


def both(made: Made) -> Any:
    return acp.AgentProtocolRouter(v1=made.v1, v2=made.v2, v1_package=v1())


class Peer:
    """The client's end of a router connection, speaking raw bytes."""

    def __init__(self, router: Any) -> None:
        inbound, self._to_router = acp.memory_pipe()
        self._from_router, outbound = acp.memory_pipe()
        self.served = asyncio.ensure_future(router.serve(inbound, outbound))

    def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self._to_router.write(data + b"\n")

    def close(self) -> None:
        self._to_router.close()

    async def recv(self, timeout: float = 5) -> Any:
        line = await asyncio.wait_for(self._from_router.readline(), timeout)
        assert line, "the router closed its output"
        return json.loads(line)

    async def nothing_within(self, seconds: float = 0.05) -> bool:
        try:
            await asyncio.wait_for(self._from_router.readline(), seconds)
        except TimeoutError:
            return True
        return False

    async def request(self, request_id: Any, method: str, params: Any = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return await self.recv()


V2_INIT = {"protocolVersion": 2, "info": {"name": "client", "version": "1"}}
V1_INIT = {"protocolVersion": 1, "clientInfo": {"name": "client", "version": "1"}}


def error_of(reply: dict[str, Any]) -> tuple[Any, int]:
    return reply["id"], reply["error"]["code"]


# -- construction ---------------------------------------------------------------------------


def test_a_router_with_neither_factory_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="needs an agent factory"):
        acp.AgentProtocolRouter()
    with pytest.raises(ValueError, match="needs an agent factory"):
        acp.AgentProtocolRouter(v1_package=acp)


def test_a_factory_for_a_version_without_a_package_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"v1_package=<that package>"):
        acp.AgentProtocolRouter(v1=V1Agent)
    # the v2 package is not a v1 package
    with pytest.raises(ValueError, match="speaks ACP protocol version 2, not 1"):
        acp.AgentProtocolRouter(v1=V1Agent, v2=V2Agent, v1_package=acp)


def test_the_router_serves_its_own_version_with_its_own_package() -> None:
    router = acp.AgentProtocolRouter(v2=V2Agent)
    assert router.versions == (2,)
    assert router.package(2) is acp


def test_the_package_hands_the_router_its_own_package_and_the_base_router_knows_none() -> None:
    """Injection, no lookup: ``acp.AgentProtocolRouter`` is the bindings' subclass naming ``PACKAGE``;
    the runtime's class serves only the packages passed in."""
    assert acp.AgentProtocolRouter.own is acp.bindings.PACKAGE
    assert issubclass(acp.AgentProtocolRouter, acp._router.AgentProtocolRouter)
    assert (
        acp.bindings.PACKAGE.module is acp and acp.bindings.PACKAGE.protocol_version == acp.PROTOCOL_VERSION
    )
    with pytest.raises(ValueError, match=r"pass v2_package=<that package>"):
        acp._router.AgentProtocolRouter(v2=V2Agent)
    router = acp._router.AgentProtocolRouter(v1=V1Agent, v2=V2Agent, v1_package=v1(), v2_package=acp)
    assert (router.package(1), router.package(2)) == (v1(), acp)
    assert router.sessions == acp.bindings.SESSIONS | v1().bindings.SESSIONS


# -- routing --------------------------------------------------------------------------------


def test_a_v2_client_reaches_the_v2_agent_made_once_with_its_connection() -> None:
    async def go() -> None:
        made = Made()
        peer = Peer(acp.AgentProtocolRouter(v2=made.v2))
        reply = await peer.request(7, "initialize", V2_INIT)
        assert reply["id"] == 7 and reply["result"]["info"]["name"] == "v2-agent"
        routed = await peer.served
        assert routed.protocol_version == 2 and routed.package is acp
        assert isinstance(routed.connection, acp.AgentSideConnection)
        [agent] = made.agents
        assert agent.connection is routed.connection
        assert agent.initialized[0]["info"] == schema.Implementation(name="client", version="1")
        assert (await peer.request(8, "session/new", {"cwd": "/w"}))["result"] == {"sessionId": "v2:/w"}
        assert len(made.agents) == 1
        peer.close()
        await asyncio.wait_for(routed.wait_closed(), 5)

    run(go())


def test_a_higher_requested_version_gets_the_highest_configured_one() -> None:
    async def go() -> None:
        made = Made()
        peer = Peer(acp.AgentProtocolRouter(v2=made.v2))
        reply = await peer.request(0, "initialize", {**V2_INIT, "protocolVersion": 3})
        assert reply["result"]["protocolVersion"] == 2
        assert (await peer.served).protocol_version == 2
        peer.close()

    run(go())


def test_an_integral_float_is_the_version_it_spells() -> None:
    """``2.0`` is an integer in JSON Schema, so the router takes it as the models do."""

    async def go() -> None:
        made = Made()
        peer = Peer(acp.AgentProtocolRouter(v2=made.v2))
        reply = await peer.request(0, "initialize", {**V2_INIT, "protocolVersion": 2.0})
        assert reply["result"]["protocolVersion"] == 2
        assert (await peer.served).protocol_version == 2
        [agent] = made.agents
        assert agent.initialized[0]["protocol_version"] == 2
        peer.close()

    run(go())


def test_messages_read_with_initialize_reach_the_selected_connection() -> None:
    """The router may read past the initialize line; what it read goes to the connection, in order."""

    async def go() -> None:
        peer = Peer(acp.AgentProtocolRouter(v2=V2Agent))
        lines = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": V2_INIT},
            {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/a"}},
            {"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": "/b"}},
        ]
        peer.send(b"\n".join(json.dumps(m).encode() for m in lines))
        replies = [await peer.recv() for _ in lines]
        assert [r["id"] for r in replies] == [1, 2, 3]
        assert [r["result"].get("sessionId") for r in replies[1:]] == ["v2:/a", "v2:/b"]
        peer.close()

    run(go())


def test_a_missing_or_malformed_v2_info_becomes_unknown() -> None:
    async def go() -> None:
        for params in ({"protocolVersion": 2}, {"protocolVersion": 2, "info": {"name": 5}}):
            made = Made()
            peer = Peer(acp.AgentProtocolRouter(v2=made.v2))
            reply = await peer.request("i", "initialize", params)
            assert reply["id"] == "i" and "result" in reply, reply
            assert made.agents[0].initialized[0]["info"] == schema.Implementation(
                name="unknown", version="unknown"
            )
            peer.close()

    run(go())


def test_a_v1_client_reaches_the_v1_agent() -> None:
    async def go() -> None:
        made = Made()
        peer = Peer(both(made))
        reply = await peer.request(0, "initialize", V1_INIT)
        assert reply["result"]["protocolVersion"] == 1
        assert reply["result"]["agentInfo"]["name"] == "v1-agent"
        routed = await peer.served
        assert routed.protocol_version == 1 and routed.package is v1()
        assert isinstance(routed.connection, v1().AgentSideConnection)
        [agent] = made.agents
        assert isinstance(agent, V1Agent) and agent.connection is routed.connection
        new = await peer.request(1, "session/new", {"cwd": "/w", "mcpServers": []})
        assert new["result"] == {"sessionId": "v1:/w"}
        peer.close()

    run(go())


def test_a_downgrade_keeps_the_id_and_the_v1_fields_that_parse() -> None:
    async def go() -> None:
        made = Made()
        peer = Peer(acp.AgentProtocolRouter(v1=made.v1, v1_package=v1()))
        params = {
            "protocolVersion": 2,
            "info": {"name": "v2-client", "version": "2.0"},
            "capabilities": {"elicitation": {"form": {}}, "auth": {"terminal": {}}},
            "_meta": {"trace": "t-1"},
            "v2Only": True,
        }
        reply = await peer.request("init-1", "initialize", params)
        assert reply["id"] == "init-1" and reply["result"]["protocolVersion"] == 1
        [agent] = made.agents
        received = agent.initialized[0]
        assert received["protocol_version"] == 1
        assert received["client_info"] == v1().schema.Implementation(name="v2-client", version="2.0")
        assert received["_meta"] == {"trace": "t-1"}
        capabilities = received["client_capabilities"].model_dump(by_alias=True, exclude_unset=True)
        # v2's auth.terminal object does not parse as v1's boolean: dropped, the rest kept
        assert capabilities == {"elicitation": {"form": {}}, "auth": {}}
        assert "v2_only" not in received and "v2Only" not in received
        peer.close()

    run(go())


def test_a_downgrade_drops_what_does_not_parse_and_omits_a_malformed_info() -> None:
    async def go() -> None:
        made = Made()
        peer = Peer(acp.AgentProtocolRouter(v1=made.v1, v1_package=v1()))
        params = {"protocolVersion": 2, "info": {"version": 3}, "capabilities": "all", "_meta": [1]}
        reply = await peer.request(3, "initialize", params)
        assert reply["id"] == 3 and "result" in reply, reply
        received = made.agents[0].initialized[0]
        assert received["client_info"] is None
        assert "_meta" not in received
        assert received["client_capabilities"] == v1().schema.ClientCapabilities()
        peer.close()

    run(go())


# -- before initialize --------------------------------------------------------------------


def test_notifications_and_responses_before_initialize_are_ignored() -> None:
    async def go() -> None:
        peer = Peer(acp.AgentProtocolRouter(v2=V2Agent))
        peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}})
        peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}})
        peer.send({"jsonrpc": "2.0", "id": 4, "result": {}})
        peer.send({"jsonrpc": "2.0", "id": 5, "error": {"code": 1, "message": "x"}})
        assert await peer.nothing_within()
        assert not peer.served.done()
        reply = await peer.request(0, "initialize", V2_INIT)
        assert reply["id"] == 0 and "result" in reply
        peer.close()

    run(go())


def test_other_requests_before_initialize_get_invalid_request_and_the_connection_stays() -> None:
    async def go() -> None:
        peer = Peer(acp.AgentProtocolRouter(v2=V2Agent))
        reply = await peer.request(1, "session/new", {"cwd": "/w"})
        assert error_of(reply) == (1, -32600)
        assert "initialized before 'session/new'" in reply["error"]["data"]
        assert error_of(await peer.request("x", "_vendor/thing", {})) == ("x", -32600)
        reply = await peer.request(2, "initialize", V2_INIT)
        assert reply["id"] == 2 and "result" in reply
        peer.close()

    run(go())


def test_an_array_gets_one_invalid_request_with_a_null_id() -> None:
    async def go() -> None:
        peer = Peer(acp.AgentProtocolRouter(v2=V2Agent))
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": V2_INIT}
        for batch in ([initialize], [initialize, {"jsonrpc": "2.0", "method": "x"}], []):
            peer.send(json.dumps(batch).encode())
            assert error_of(await peer.recv()) == (None, -32600)
            assert await peer.nothing_within()
        assert "result" in await peer.request(1, "initialize", V2_INIT)
        peer.close()

    run(go())


def test_bad_lines_before_initialize_are_answered_and_the_connection_stays() -> None:
    async def go() -> None:
        peer = Peer(acp.AgentProtocolRouter(v2=V2Agent, max_message_bytes=1000))
        peer.send(b"{not json")
        assert error_of(await peer.recv()) == (None, -32700)
        peer.send(b"\xff\xfe")
        assert error_of(await peer.recv()) == (None, -32700)
        peer.send({"jsonrpc": "1.0", "id": 9, "method": "initialize"})
        assert error_of(await peer.recv()) == (9, -32600)
        peer.send(b'{"jsonrpc":"2.0","method":"x","params":"' + b"a" * 5000 + b'"}')
        reply = await peer.recv()
        assert error_of(reply) == (None, -32600) and reply["error"]["data"]["reason"] == "message too large"
        assert "result" in await peer.request(1, "initialize", V2_INIT)
        peer.close()

    run(go())


def test_a_failed_initialize_is_answered_and_can_be_retried_on_the_same_connection() -> None:
    async def go() -> None:
        made = Made()
        peer = Peer(acp.AgentProtocolRouter(v2=made.v2))
        assert error_of(await peer.request(1, "initialize")) == (1, -32602)
        assert error_of(await peer.request(2, "initialize", {"info": V2_INIT["info"]})) == (2, -32602)
        assert error_of(await peer.request(3, "initialize", {**V2_INIT, "protocolVersion": "2"})) == (
            3,
            -32602,
        )
        assert error_of(await peer.request(4, "initialize", {**V2_INIT, "protocolVersion": -1})) == (
            4,
            -32602,
        )
        for bad in (True, 2.5, None):  # JSON Schema refuses them as an integer, as the models do
            assert error_of(await peer.request(4, "initialize", {**V2_INIT, "protocolVersion": bad})) == (
                4,
                -32602,
            )
        assert not peer.served.done() and made.agents == []
        reply = await peer.request(6, "initialize", V2_INIT)
        assert reply["id"] == 6 and "result" in reply
        assert len(made.agents) == 1
        peer.close()

    run(go())


@pytest.mark.parametrize("requested", [0, 1])
def test_a_version_the_router_does_not_serve_gets_its_latest_never_an_error(requested: int) -> None:
    """The spec's negotiation (TS SDK 2.4.0's router answers -32022 here): the client decides."""

    async def go() -> None:
        made = Made()
        peer = Peer(acp.AgentProtocolRouter(v2=made.v2))
        reply = await peer.request(5, "initialize", {**V1_INIT, "protocolVersion": requested})
        assert reply["id"] == 5 and reply["result"]["protocolVersion"] == 2
        routed = await asyncio.wait_for(peer.served, 5)
        assert routed.protocol_version == 2 and len(made.agents) == 1
        # a v1 request names no v2 `info`: the agent is told the client is unknown
        (given,) = made.agents[0].initialized
        assert given["protocol_version"] == requested
        assert given["info"] == schema.Implementation(name="unknown", version="unknown")
        peer.close()

    run(go())


@pytest.mark.parametrize(("requested", "selected"), [(0, 2), (1, 1), (2, 2), (3, 2), (0xFFFF, 2)])
def test_the_router_serves_the_version_asked_for_or_its_latest(requested: int, selected: int) -> None:
    async def go() -> None:
        made = Made()
        peer = Peer(both(made))
        params = V1_INIT if requested == 1 else {**V2_INIT, "protocolVersion": requested}
        reply = await peer.request(0, "initialize", params)
        assert reply["result"]["protocolVersion"] == selected
        assert (await asyncio.wait_for(peer.served, 5)).protocol_version == selected
        assert [type(agent).__name__ for agent in made.agents] == [f"V{selected}Agent"]
        peer.close()

    run(go())


def test_a_client_that_leaves_before_initialize_ends_serve_with_none() -> None:
    async def go() -> None:
        made = Made()
        peer = Peer(acp.AgentProtocolRouter(v2=made.v2))
        peer.send({"jsonrpc": "2.0", "method": "ping"})
        peer.close()
        assert await asyncio.wait_for(peer.served, 5) is None
        assert made.agents == []
        assert await asyncio.wait_for(peer._from_router.read(), 5) == b""  # the router closed its output

    run(go())


class BrokenWriter:
    """A writer to a client that went away."""

    def __init__(self) -> None:
        self.closed = False

    def write(self, data: bytes) -> None:
        raise BrokenPipeError("the client went away")

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self.closed = True


def test_a_client_that_cannot_be_answered_before_initialize_ends_serve_with_none() -> None:
    async def go() -> None:
        inbound, to_router = acp.memory_pipe()
        to_router.write(b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}\n')
        writer = BrokenWriter()
        assert await acp.AgentProtocolRouter(v2=V2Agent).serve(inbound, writer) is None
        assert writer.closed

    run(go())


# -- after routing: the selected runtime, strict -------------------------------------------


def test_a_v1_message_on_a_v2_connection_gets_the_v2_runtimes_error_and_the_connection_stays() -> None:
    async def go() -> None:
        made = Made()
        peer = Peer(both(made))
        assert "result" in await peer.request(0, "initialize", V2_INIT)
        # v1 methods that v2 does not have: method not found, from the v2 runtime
        reply = await peer.request(1, "authenticate", {"methodId": "x"})
        assert error_of(reply) == (1, -32601)
        reply = await peer.request(2, "session/load", {"sessionId": "s", "cwd": "/w", "mcpServers": []})
        assert error_of(reply) == (2, -32601)
        assert (await peer.request(3, "session/new", {"cwd": "/w"}))["result"] == {"sessionId": "v2:/w"}
        # a repeated initialize, even a v1 one, is the v2 runtime's to answer: never re-routed
        reply = await peer.request(4, "initialize", V1_INIT)
        assert error_of(reply) == (4, -32600)
        assert "must not be repeated after other requests" in reply["error"]["data"]
        assert len(made.agents) == 1 and isinstance(made.agents[0], V2Agent)
        peer.close()

    run(go())


def test_a_repeated_initialize_is_handled_by_the_selected_runtime() -> None:
    async def go() -> None:
        made = Made()
        peer = Peer(acp.AgentProtocolRouter(v2=made.v2))
        assert "result" in await peer.request(0, "initialize", V2_INIT)
        # as in TS SDK 2.4.0: a v2 repeat before any other request is taken again, by the same agent;
        # it negotiates as the first one did, so a lower version is answered with v2 (never re-routed)
        assert "result" in await peer.request(1, "initialize", V2_INIT)
        reply = await peer.request(2, "initialize", {**V2_INIT, "protocolVersion": 1})
        assert reply["result"]["protocolVersion"] == 2
        assert (await peer.request(3, "session/new", {"cwd": "/w"}))["result"] == {"sessionId": "v2:/w"}
        reply = await peer.request(4, "initialize", V2_INIT)
        assert error_of(reply) == (4, -32600)
        assert "must not be repeated after other requests" in reply["error"]["data"]
        assert len(made.agents) == 1
        peer.close()

    run(go())


def test_run_serves_a_reader_and_writer_until_the_client_closes() -> None:
    async def go() -> None:
        inbound, to_router = acp.memory_pipe()
        from_router, outbound = acp.memory_pipe()
        running = asyncio.ensure_future(acp.AgentProtocolRouter(v2=V2Agent).run(inbound, outbound))
        to_router.write(
            json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": V2_INIT}).encode()
        )
        to_router.write(b"\n")
        assert json.loads(await from_router.readline())["result"]["protocolVersion"] == 2
        assert not running.done()
        to_router.close()
        await asyncio.wait_for(running, 5)
        with pytest.raises(ValueError, match="both reader and writer"):
            await acp.AgentProtocolRouter(v2=V2Agent).run(inbound)

    run(go())


# -- vendored under other names ------------------------------------------------------------


def test_the_router_joins_packages_vendored_under_any_names(tmp_path: Path) -> None:
    vendor = tmp_path / "myproj" / "_vendor"
    for name, package in (("acp", v2()), ("acp_v1", v1())):
        shutil.copytree(Path(package.__file__).parent, vendor / name)
    (tmp_path / "myproj" / "__init__.py").write_text("")
    (vendor / "__init__.py").write_text("")
    sys.path.insert(0, str(tmp_path))
    try:
        vendored = importlib.import_module("myproj._vendor.acp")
        vendored_v1 = importlib.import_module("myproj._vendor.acp_v1")
        assert vendored is not acp

        async def go() -> None:
            made = Made(vendored_v1)
            router = vendored.AgentProtocolRouter(v1=made.v1, v2=made.v2, v1_package=vendored_v1)
            peer = Peer(router)
            assert (await peer.request(0, "initialize", V1_INIT))["result"]["protocolVersion"] == 1
            routed = await peer.served
            assert routed.package is vendored_v1
            assert isinstance(routed.connection, vendored_v1.AgentSideConnection)
            peer.close()

        run(go())
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "myproj" or m.startswith("myproj.")]:
            del sys.modules[name]


# -- the client's fallback -------------------------------------------------------------------


class RecordingClient:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, *, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


BACKGROUND: set[asyncio.Future[Any]] = set()
"""Routers serving the fallback tests, kept referenced while they run."""


def pipes() -> tuple[Any, Any, Any, Any]:
    """(agent reader, agent writer, client reader, client writer)."""
    to_agent_reader, to_agent_writer = acp.memory_pipe()
    to_client_reader, to_client_writer = acp.memory_pipe()
    return to_agent_reader, to_client_writer, to_client_reader, to_agent_writer


async def fallback(router: Any, **options: Any) -> tuple[Any, RecordingClient, RecordingClient]:
    agent_reader, agent_writer, reader, writer = pipes()
    BACKGROUND.add(asyncio.ensure_future(router.run(agent_reader, agent_writer)))
    v2_client, v1_client = RecordingClient(), RecordingClient()
    extra = {"v1": v1_client, "v1_package": v1()} if "v1" not in options else {}
    negotiated = await acp.connect_with_fallback(
        reader,
        writer,
        v2=v2_client,
        info=schema.Implementation(name="fallback-client", version="1"),
        **extra,
        **options,
    )
    return negotiated, v2_client, v1_client


def test_fallback_stays_on_v2_when_the_agent_speaks_v2() -> None:
    async def go() -> None:
        negotiated, client, _ = await fallback(acp.AgentProtocolRouter(v2=V2Agent), v1=None)
        assert negotiated.protocol_version == 2 and negotiated.package is acp
        assert isinstance(negotiated.response, schema.InitializeResponse)
        assert negotiated.response.info.name == "v2-agent"
        connection = negotiated.connection
        assert isinstance(connection, acp.ClientSideConnection) and connection.initialized
        assert connection.peer_capabilities == {"session": {}}
        session = await connection.new_session(cwd="/w")
        accepted = await connection.prompt(
            session_id=session.session_id, prompt=[schema.TextContentBlock(text="hi")]
        )
        await asyncio.sleep(0.05)
        assert [u.message_id for u in client.updates] == [accepted.message_id]
        await connection.close()

    run(go())


def test_fallback_goes_on_with_v1_on_the_same_transport_when_the_agent_answers_v1() -> None:
    async def go() -> None:
        made = Made()
        router = acp.AgentProtocolRouter(v1=made.v1, v1_package=v1())
        negotiated, v2_client, v1_client = await fallback(router)
        assert negotiated.protocol_version == 1 and negotiated.package is v1()
        assert negotiated.response.agent_info.name == "v1-agent"
        connection = negotiated.connection
        assert isinstance(connection, v1().ClientSideConnection) and connection.initialized
        # the v1 agent got the downgraded request: the v2 info as clientInfo
        assert made.agents[0].initialized[0]["client_info"].name == "fallback-client"
        session = await connection.new_session(cwd="/w", mcp_servers=[])
        assert session.session_id == "v1:/w"
        response = await connection.prompt(
            session_id=session.session_id, prompt=[v1().schema.TextContentBlock(text="hi")]
        )
        assert response.stop_reason == "end_turn"
        await asyncio.sleep(0.05)
        assert [u.content.text for u in v1_client.updates] == ["from v1"] and v2_client.updates == []
        await connection.close()

    run(go())


async def scripted_agent(reader: Any, writer: Any, answers: list[Any]) -> list[Any]:
    """A raw agent: answers each request with the next of ``answers`` (``"close"`` closes the stream)."""
    seen: list[Any] = []
    for answer in answers:
        line = await reader.readline()
        if not line:
            break
        message = json.loads(line)
        seen.append(message)
        if answer == "close":
            writer.close()
            return seen
        writer.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **answer}).encode() + b"\n")
    return seen


V1_RESULT = {
    "result": {
        "protocolVersion": 1,
        "agentInfo": {"name": "old", "version": "0"},
        "agentCapabilities": {"loadSession": True},
    }
}
REFUSED = {"error": {"code": -32602, "message": "Invalid params", "data": "unsupported protocolVersion 2"}}
REFUSED_AS_TS = {
    "error": {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"requested": 2, "supported": [1]},
    }
}
"""How the TypeScript SDK 2.4.0 refuses a version it does not serve (the spec answers its latest instead)."""


@pytest.mark.parametrize("refusal", [REFUSED, REFUSED_AS_TS], ids=["invalid-params", "ts-32022"])
def test_fallback_retries_v1_on_the_same_transport_after_a_version_error(refusal: Any) -> None:
    async def go() -> None:
        agent_reader, agent_writer, reader, writer = pipes()
        script = asyncio.ensure_future(scripted_agent(agent_reader, agent_writer, [refusal, V1_RESULT]))
        negotiated = await acp.connect_with_fallback(
            reader,
            writer,
            v2=RecordingClient(),
            v1=RecordingClient(),
            v1_package=v1(),
            info={"name": "c", "version": "1"},
            v1_capabilities=v1().schema.ClientCapabilities(terminal=True),
        )
        seen = await script
        assert [m["params"]["protocolVersion"] for m in seen] == [2, 1]
        assert seen[1]["params"]["clientInfo"] == {"name": "c", "version": "1"}
        assert seen[1]["params"]["clientCapabilities"] == {"terminal": True}
        assert negotiated.protocol_version == 1
        assert negotiated.connection.peer_capabilities == {"loadSession": True}

    run(go())


def test_fallback_asks_to_reconnect_when_the_agent_closes_after_refusing() -> None:
    async def go() -> None:
        agent_reader, agent_writer, reader, writer = pipes()
        script = asyncio.ensure_future(scripted_agent(agent_reader, agent_writer, [REFUSED, "close"]))
        with pytest.raises(acp.ReconnectRequiredError, match="closed the connection") as caught:
            await acp.connect_with_fallback(
                reader,
                writer,
                v2=RecordingClient(),
                v1=RecordingClient(),
                v1_package=v1(),
                info={"name": "c", "version": "1"},
            )
        assert caught.value.error is not None and caught.value.error.code == -32602
        assert len(await script) == 2

    run(go())


def test_fallback_asks_to_reconnect_for_a_version_it_has_no_client_for() -> None:
    async def go() -> None:
        for answer, version in (({"result": {"protocolVersion": 3}}, 3), (V1_RESULT, 1)):
            agent_reader, agent_writer, reader, writer = pipes()
            script = asyncio.ensure_future(scripted_agent(agent_reader, agent_writer, [answer]))
            with pytest.raises(acp.ReconnectRequiredError, match="connect again") as caught:
                await acp.connect_with_fallback(
                    reader, writer, v2=RecordingClient(), info={"name": "c", "version": "1"}
                )
            assert caught.value.agent_version == version
            assert len(await script) == 1

    run(go())


def test_fallback_reads_an_integral_float_version_and_refuses_a_string_one() -> None:
    async def go() -> None:
        answer = {"result": {"protocolVersion": 1.0, "agentInfo": {"name": "old", "version": "0"}}}
        agent_reader, agent_writer, reader, writer = pipes()
        script = asyncio.ensure_future(scripted_agent(agent_reader, agent_writer, [answer]))
        with pytest.raises(acp.ReconnectRequiredError, match=r"version 1\.0") as caught:
            await acp.connect_with_fallback(
                reader, writer, v2=RecordingClient(), info={"name": "c", "version": "1"}
            )
        assert caught.value.agent_version == 1
        await script
        agent_reader, agent_writer, reader, writer = pipes()
        script = asyncio.ensure_future(
            scripted_agent(agent_reader, agent_writer, [{"result": {"protocolVersion": "2"}}])
        )
        with pytest.raises(acp.ReconnectRequiredError, match="version '2'") as caught:
            await acp.connect_with_fallback(
                reader, writer, v2=RecordingClient(), info={"name": "c", "version": "1"}
            )
        assert caught.value.agent_version is None
        await script

    run(go())


def test_fallback_raises_other_errors_as_they_are() -> None:
    async def go() -> None:
        agent_reader, agent_writer, reader, writer = pipes()
        boom = {"error": {"code": -32603, "message": "Internal error"}}
        script = asyncio.ensure_future(scripted_agent(agent_reader, agent_writer, [boom]))
        with pytest.raises(acp.RequestError) as caught:
            await acp.connect_with_fallback(
                reader, writer, v2=RecordingClient(), info={"name": "c", "version": "1"}
            )
        assert caught.value.code == -32603
        assert len(await script) == 1

    run(go())


def test_the_constants_name_the_packages() -> None:
    assert acp.__name__ == V2_PACKAGE and acp.PROTOCOL_VERSION == 2
    assert V1_PACKAGE.startswith("acp_1_")
