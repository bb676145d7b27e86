"""A conductor and a proxy on the generated bindings of the newest releases, over an in-memory stream pair.

The proxy side (``x-side: "proxy"``, **UNSTABLE** from v2-sdk-2.3.0 and
v1-sdk-2.3.0) gets bindings from ``[connections]`` of codegen/knowledge.toml like
the agent and the client: ``ProxySideConnection`` serves a ``Proxy`` (an agent's
handlers plus the proxy methods) and ``ConductorSideConnection`` a ``Conductor``.
The chain here is one conductor, one proxy and, behind the conductor, a pretend
successor (the conductor's handler answers what the proxy forwards to it).  The
proxy forwards its handshake to the successor before answering, as the schema
requires, so ``proxy/successor`` travels during the handshake.
"""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest

from tests.support.releases import newest, package_of, surface_of
from tests.support.wire import run

MAJORS = [1, 2]


def capabilities_fields(major: int) -> tuple[str, str]:
    """(client capabilities field of initialize's params, agent capabilities field of its result)."""
    return ("capabilities", "capabilities") if major == 2 else ("clientCapabilities", "agentCapabilities")


@pytest.fixture(params=MAJORS, ids=lambda major: newest(major))
def acp(request: pytest.FixtureRequest) -> ModuleType:
    return package_of(newest(request.param), True)


def major_of(acp: ModuleType) -> int:
    return int(acp.PROTOCOL_VERSION)


class Successor:
    """What the conductor's handler plays: the agent behind the proxy, answering forwarded requests."""

    def __init__(self, major: int) -> None:
        self.major = major
        self.forwarded: list[tuple[str, Any]] = []

    def answer(self, method: str, params: Any) -> Any:
        self.forwarded.append((method, params))
        if method == "initialize":
            _, agent_field = capabilities_fields(self.major)
            info = "agentInfo" if self.major == 1 else "info"
            return {
                "protocolVersion": params["protocolVersion"],
                info: {"name": "final-agent", "version": "1"},
                agent_field: {"successorFeature": {}} if self.major == 2 else {"loadSession": True},
            }
        if method == "session/new":
            return {"sessionId": f"agent-session-for-{params['cwd']}"}
        raise AssertionError(f"unexpected forwarded request {method}")


def conductor_handler(acp: ModuleType, successor: Successor, received: list[Any]) -> Any:
    class ConductorHandler(acp.Conductor):
        async def successor_proxy(self, *, method: str, params: Any = None, **kwargs: Any) -> Any:
            return successor.answer(method, params)

        async def proxy_successor(self, *, method: str, params: Any = None, **kwargs: Any) -> None:
            successor.forwarded.append((method, params))

        async def session_update(self, **kwargs: Any) -> None:
            received.append(kwargs)

    return ConductorHandler()


def proxy_handler(acp: ModuleType, log: list[str]) -> Any:
    class ProxyHandler(acp.Proxy):
        def __init__(self, connection: Any) -> None:
            self.connection = connection

        async def initialize_proxy(self, **arguments: Any) -> Any:
            log.append("initialize_proxy")
            request = acp.schema.InitializeRequest(**arguments)
            # "Before answering successfully, the proxy MUST forward an initialize request to its successor"
            answer = await self.connection.successor_proxy(
                method="initialize", params=request.model_dump(by_alias=True, exclude_unset=True, mode="json")
            )
            log.append("successor answered")
            return acp.schema.InitializeProxyResponse.model_validate(answer)

        async def new_session(self, **arguments: Any) -> Any:
            request = acp.schema.NewSessionRequest(**arguments)
            answer = await self.connection.successor_proxy(
                method="session/new",
                params=request.model_dump(by_alias=True, exclude_unset=True, mode="json"),
            )
            return acp.schema.NewSessionResponse.model_validate(answer)

        async def proxy_successor(self, *, method: str, params: Any = None, **kwargs: Any) -> None:
            # a notification from the successor: send it on upstream, as the agent would
            log.append(f"from successor: {method}")
            if method == "session/update":
                update = acp.bindings.CLIENT_NOTIFICATIONS[method].params.model_validate(params)
                await self.connection.session_update(session_id=update.session_id, update=update.update)

    return ProxyHandler


async def _chain(acp: ModuleType) -> dict[str, Any]:
    major = major_of(acp)
    successor = Successor(major)
    received: list[Any] = []
    log: list[str] = []
    down_reader, down_writer = acp.memory_pipe()
    up_reader, up_writer = acp.memory_pipe()
    conductor = acp.connect_to_proxy(conductor_handler(acp, successor, received), up_reader, down_writer)
    proxy = acp.connect_to_conductor(proxy_handler(acp, log), down_reader, up_writer)
    out: dict[str, Any] = {"log": log, "forwarded": successor.forwarded, "received": received}
    with pytest.raises(acp.RequestError, match="must be initialized before 'session/new'"):
        await conductor.new_session(cwd="/early", mcp_servers=[])
    me = acp.schema.Implementation(name="conductor", version="1")
    if major == 1:
        handshake = {"client_info": me, "client_capabilities": {"fs": {"readTextFile": True}}}
    else:
        handshake = {"info": me, "capabilities": {"auth": {}}}
    out["init"] = await conductor.initialize_proxy(protocol_version=acp.PROTOCOL_VERSION, **handshake)
    out["initialized"] = (conductor.initialized, proxy.initialized)
    out["peers"] = (conductor.peer_capabilities, proxy.peer_capabilities)
    out["session"] = await conductor.new_session(cwd="/w", mcp_servers=[])
    update = {
        "sessionId": out["session"].session_id,
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "from the agent"},
            **({"messageId": "m1"} if major == 2 else {}),
        },
    }
    await conductor.proxy_successor(method="session/update", params=update)
    for _ in range(100):
        if received:
            break
        await asyncio.sleep(0.01)
    await proxy.proxy_successor(method="session/cancel", params={"sessionId": "agent-session-for-/w"})
    for _ in range(100):
        if successor.forwarded[-1][0] == "session/cancel":
            break
        await asyncio.sleep(0.01)
    await conductor.close()
    await proxy.close()
    return out


def test_the_stable_packages_have_no_proxy_classes() -> None:
    for major in MAJORS:
        stable = package_of(newest(major), False)
        assert not hasattr(stable, "Proxy") and not hasattr(stable, "ConductorSideConnection")
        assert stable.ClientSideConnection and stable.AgentSideConnection


def test_the_proxy_and_the_conductor_extend_the_agent_and_the_client(acp: ModuleType) -> None:
    assert acp.Agent in acp.Proxy.__mro__ and acp.Client in acp.Conductor.__mro__
    assert issubclass(acp.ProxySideConnection, acp.AgentSideConnection)
    assert issubclass(acp.ConductorSideConnection, acp.ClientSideConnection)
    bindings = acp.bindings
    assert set(bindings.PROXY_REQUESTS) == set(bindings.AGENT_REQUESTS) | {
        "proxy/initialize",
        "proxy/successor",
    }
    assert set(bindings.CONDUCTOR_REQUESTS) == set(bindings.CLIENT_REQUESTS) | {"proxy/successor"}
    assert set(bindings.PROXY_NOTIFICATIONS) - set(bindings.AGENT_NOTIFICATIONS) == {"proxy/successor"}
    assert bindings.PROXY_SIDE_PROTOCOL.initialize == "proxy/initialize"
    assert bindings.PROXY_SIDE_PROTOCOL.during_handshake == {"proxy/successor"}
    surface = surface_of(newest(major_of(acp)), True)
    assert {(m.side, m.wire_name, m.kind) for m in surface.methods if m.side == "proxy"} == {
        ("proxy", "proxy/initialize", "request"),
        ("proxy", "proxy/successor", "request"),
        ("proxy", "proxy/successor", "notification"),
    }


def test_a_conductor_and_a_proxy_run_the_chain(acp: ModuleType) -> None:
    out = run(_chain(acp))
    major = major_of(acp)
    # the proxy forwarded initialize through proxy/successor before it answered proxy/initialize
    assert out["log"][:2] == ["initialize_proxy", "successor answered"]
    method, forwarded = out["forwarded"][0]
    assert method == "initialize" and forwarded["protocolVersion"] == acp.PROTOCOL_VERSION
    assert out["initialized"] == (True, True)
    # each end read what its peer advertised: the conductor in the proxy's answer, the proxy in the params
    conductor_sees, proxy_sees = out["peers"]
    assert conductor_sees == ({"successorFeature": {}} if major == 2 else {"loadSession": True})
    assert proxy_sees == ({"fs": {"readTextFile": True}} if major == 1 else {"auth": {}})
    assert out["init"].protocol_version == acp.PROTOCOL_VERSION
    assert out["session"].session_id == "agent-session-for-/w"
    assert [m for m, _ in out["forwarded"]] == ["initialize", "session/new", "session/cancel"]
    # the successor's notification came down wrapped, and went back up as a session/update
    assert out["log"][-1] == "from successor: session/update"
    [update] = out["received"]
    assert update["update"].content.text == "from the agent"


def test_the_ordinary_handshake_is_not_the_conductors(acp: ModuleType) -> None:
    async def attempt() -> None:
        reader, writer = acp.memory_pipe()
        _, sink = acp.memory_pipe()
        conductor = acp.connect_to_proxy(type("Nothing", (acp.Conductor,), {})(), reader, sink)
        info = acp.schema.Implementation(name="c", version="1")
        key = "client_info" if major_of(acp) == 1 else "info"
        with pytest.raises(acp.RequestError, match="must be initialized before 'initialize'"):
            await conductor.initialize(protocol_version=acp.PROTOCOL_VERSION, **{key: info})
        await conductor.close()
        writer.close()

    run(attempt())
