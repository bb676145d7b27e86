"""codegen/knowledge.toml sections used by the bindings cover every release."""

from __future__ import annotations

from codegen.api.protocol import experimental_operations, gates, prompt_echo
from codegen.knowledge import section
from codegen.schema.ir import ApiSurface, ObjectType, Ref, strip_nullable
from tests.support.releases import SURFACES, surface_of

CAPABILITIES = {"agent": "AgentCapabilities", "client": "ClientCapabilities"}


def test_every_experimental_operation_of_every_release_is_covered() -> None:
    table = section("capability_gates")
    missing = set()
    found = 0
    for release, unstable in SURFACES:
        for side, key in experimental_operations(surface_of(release, unstable)):
            found += 1
            if key not in table[side]:
                missing.add(f"[capability_gates.{side}] {key!r} ({release})")
    assert found > 20
    assert not missing, "codegen/knowledge.toml does not cover:\n" + "\n".join(sorted(missing))


def _capability_exists(surface: ApiSurface, type_name: str, path: str) -> bool:
    current = type_name
    for key in path.split("."):
        obj = surface.types.get(current)
        if not isinstance(obj, ObjectType):
            return False
        found = next((f for f in surface.all_fields(current) if f.wire_name == key), None)
        if found is None:
            return False
        inner = strip_nullable(found.type)
        current = inner.name if isinstance(inner, Ref) else ""
    return True


def test_every_gate_names_a_capability_the_release_defines() -> None:
    """A gate that applies to a release must point at a real capability of that release."""
    checked = 0
    for release, unstable in SURFACES:
        surface = surface_of(release, unstable)
        for side in ("agent", "client"):
            for gate in gates(surface, side):
                checked += 1
                assert _capability_exists(surface, CAPABILITIES[side], gate.capability), (release, gate)
    assert checked > 0


def test_gates_only_name_methods_of_their_side() -> None:
    table = section("capability_gates")
    everywhere = {(m.side, m.wire_name) for r, u in SURFACES for m in surface_of(r, u).methods}
    for side in ("agent", "client"):
        for key in table[side]:
            method = key.split(" ")[0]
            assert (side, method) in everywhere, key


def test_the_protocol_methods_exist_in_every_release() -> None:
    protocol = section("protocol")
    for release, unstable in SURFACES:
        surface = surface_of(release, unstable)
        initialize = [m for m in surface.methods if m.wire_name == protocol["initialize"]]
        assert [(m.side, m.kind) for m in initialize] == [("agent", "request")]
        cancel = [m for m in surface.methods if m.wire_name == protocol["cancel_request"]]
        assert [(m.side, m.kind) for m in cancel] == [("protocol", "notification")]
        params = surface.object(cancel[0].params)
        assert "requestId" in {f.wire_name for f in params.fields}


def test_prompt_echo_applies_exactly_where_prompt_responses_carry_a_message_id() -> None:
    facts = section("prompt_echo")
    with_echo = []
    for release, unstable in SURFACES:
        surface = surface_of(release, unstable)
        prompt = next(m for m in surface.methods if m.wire_name == facts["method"])
        assert prompt.result is not None
        has_id = any(f.wire_name == facts["response_field"] for f in surface.all_fields(prompt.result))
        echo = prompt_echo(surface)
        assert (echo is not None) == has_id
        if echo is not None:
            with_echo.append(release)
            assert echo.update_class == "UserMessageChunkSessionUpdate"
    assert "2.0.0-alpha.7" in with_echo and "2.0.0-alpha.1" not in with_echo
