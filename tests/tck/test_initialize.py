"""The handshake rows of the upstream TCK: negotiation, the shape of the result, authentication.

Each probe starts a fresh agent process, as the TCK does (one ``initialize`` per connection).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tck.harness import (
    EVERY_AGENT,
    SESSION_AGENTS,
    Subject,
    initialize_params,
    new_session,
    on,
    prompt_turn,
    run,
    running,
    tck,
)
from tests.tck.schema_checks import release_schema


async def _initialize(subject: Subject, version: int = 2, **extra: Any) -> dict[str, Any]:
    async with running(subject) as peer:
        return await peer.call("initialize", initialize_params(version, **extra))


@tck("ACP-INIT-001")
@on(*EVERY_AGENT, router_in_make_test=True)
def test_initialize_gets_a_result(subject: Subject) -> None:
    reply = run(_initialize(subject))
    assert isinstance(reply.get("result"), dict) and "error" not in reply


@tck("ACP-INIT-201", "ACP-INIT-003")
@on(*EVERY_AGENT, router_in_make_test=True)
def test_a_version_not_served_is_answered_with_the_latest_and_never_echoed(subject: Subject) -> None:
    asked_for_own = run(_initialize(subject, 2))["result"]["protocolVersion"]
    asked_for_unknown = run(_initialize(subject, 0xFFFF))["result"]["protocolVersion"]
    assert asked_for_own == 2  # the version asked for, served
    assert asked_for_unknown == 2  # not 65535 echoed back: the agent's latest (ACP-INIT-003)
    assert type(asked_for_own) is int and type(asked_for_unknown) is int


@tck("ACP-INIT-202")
@on(*EVERY_AGENT, router_in_make_test=True)
def test_a_downgrade_to_v1_is_answered_never_refused(subject: Subject) -> None:
    """The router serves v1 itself; a v2-only agent answers with v2 (TS SDK 2.4.0: -32022)."""
    reply = run(_initialize(subject, 1))
    assert "error" not in reply, reply
    assert reply["result"]["protocolVersion"] == (1 if subject.name == "router" else 2)


@tck("ACP-INIT-203")
@on(*EVERY_AGENT)
def test_the_result_names_the_agent(subject: Subject) -> None:
    info = run(_initialize(subject))["result"]["info"]
    assert isinstance(info["name"], str) and info["name"]
    assert isinstance(info["version"], str) and info["version"]


def _markers(capabilities: Any, path: str = "capabilities") -> list[str]:
    """The places under ``capabilities`` holding a value that is no object (nor null)."""
    wrong = []
    for key, value in capabilities.items():
        where = f"{path}.{key}"
        if key == "_meta" or value is None:
            continue
        if not isinstance(value, dict):
            wrong.append(where)
        else:
            wrong += _markers(value, where)
    return wrong


@tck("ACP-INIT-204", "ACP-EXT-202")
@on(*EVERY_AGENT)
def test_capability_markers_are_objects_and_extensions_live_under_meta(subject: Subject) -> None:
    result = run(_initialize(subject))["result"]
    capabilities = result.get("capabilities", {})
    assert isinstance(capabilities, dict) and _markers(capabilities) == []
    schema = release_schema(subject.release)
    defined = set(schema.defs["AgentCapabilities"]["properties"])
    assert set(capabilities) <= defined  # a vendor extension goes under capabilities._meta


@tck("ACP-SCHEMA-001")
@on(*EVERY_AGENT)
def test_the_handshake_and_a_first_turn_match_the_schema(subject: Subject, tmp_path: Path) -> None:
    async def go() -> None:
        async with running(subject) as peer:
            result = (await peer.call("initialize", initialize_params()))["result"]
            if "session" in result.get("capabilities", {}):
                await prompt_turn(peer, await new_session(peer, tmp_path))
        schema = release_schema(subject.release)
        written = peer.messages()
        assert written, "the agent wrote nothing"
        for message in written:
            assert schema.issues(message, peer.sent.get(message.get("id"))) == [], message

    run(go())


# -- authentication ----------------------------------------------------------------------------


@tck("ACP-AUTH-201", "ACP-AUTH-206", "ACP-AUTH-207")
@on(*EVERY_AGENT)
def test_auth_methods_are_well_formed(subject: Subject) -> None:
    """None of our agents advertises any: the rules hold over the empty list."""
    methods = run(_initialize(subject, capabilities={"auth": {"terminal": {}}}))["result"].get(
        "authMethods", []
    )
    ids = [m["methodId"] for m in methods]
    assert len(ids) == len(set(ids))
    assert all(m.get("type") in ("agent", "terminal") or str(m.get("type")).startswith("_") for m in methods)
    for method in (m for m in methods if m.get("type") == "terminal"):
        assert all(isinstance(arg, str) for arg in method.get("args", []))
        names = [variable["name"] for variable in method.get("env", [])]
        assert len(names) == len(set(names))


@tck("ACP-AUTH-202")
@on(*EVERY_AGENT)
def test_no_terminal_auth_method_for_a_client_without_the_capability(subject: Subject) -> None:
    methods = run(_initialize(subject))["result"].get("authMethods", [])
    assert [m for m in methods if m.get("type") == "terminal"] == []


@tck("ACP-AUTH-205")
@on(*SESSION_AGENTS)
def test_without_auth_methods_a_session_needs_no_login(subject: Subject, tmp_path: Path) -> None:
    async def go() -> None:
        async with running(subject) as peer:
            result = (await peer.call("initialize", initialize_params()))["result"]
            assert not result.get("authMethods")
            reply = await peer.call("session/new", {"cwd": str(tmp_path)})
            assert "result" in reply, reply

    run(go())
