"""apply_patch and merge_meta: the patch rules, exactly, on the real releases."""

from __future__ import annotations

import ast
import base64
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from codegen.emit.patches import EXPORTS, UpsertPlan, session_plan
from codegen.schema.ir import AliasType, ApiSurface, Field, Ref, Scalar, TypeExpr, strip_nullable
from tests.support.instances import example
from tests.support.releases import GENERATED, package_of, surface_id, surface_of, surfaces_with

acp = package_of("2.0.0-alpha.7", True)
schema = acp.schema
UPDATES: TypeAdapter[Any] = TypeAdapter(schema.SessionUpdate)
OMIT: Any = object()
PATCHED = surfaces_with("patches")
"""The surfaces with patch helpers: their protocol version has [patches] in codegen/knowledge.toml."""


def update(tag: str, **wire: Any) -> Any:
    """A validated session update; ``meta=`` stands for ``_meta``."""
    if "meta" in wire:
        wire["_meta"] = wire.pop("meta")
    return UPDATES.validate_python({"sessionUpdate": tag, **wire})


def tool(**wire: Any) -> Any:
    return update("tool_call_update", toolCallId="t1", **wire)


def wire(model: Any) -> Any:
    return model.model_dump(by_alias=True, exclude_unset=True, mode="json")


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


@pytest.mark.parametrize("which", PATCHED, ids=surface_id)
def test_the_package_exports_what_patches_exports_and_shadows_nothing(which: tuple[str, bool]) -> None:
    package = package_of(*which)
    init = ast.parse((GENERATED / package.__name__ / "__init__.py").read_text())
    imported = [
        a.asname or a.name for node in ast.walk(init) if isinstance(node, ast.ImportFrom) for a in node.names
    ]
    assert sorted(imported) == sorted(set(imported))
    assert all(getattr(package, name) is getattr(package.patches, name) for name in EXPORTS)
    assert set(EXPORTS) <= set(package.patches.__all__) <= set(package.__all__)


# --- omitted, null, value -------------------------------------------------------------


def test_a_new_entity_holds_what_its_first_upsert_sent() -> None:
    state = acp.apply_patch(None, tool(title="Read", name=None))
    assert type(state) is schema.ToolCallUpdate
    assert wire(state) == {"toolCallId": "t1", "title": "Read", "name": None}


def test_an_omitted_field_keeps_its_value() -> None:
    state = acp.apply_patch(acp.apply_patch(None, tool(title="Read", name="read")), tool(status="pending"))
    assert wire(state) == {"toolCallId": "t1", "title": "Read", "name": "read", "status": "pending"}


def test_null_clears_a_field() -> None:
    state = acp.apply_patch(acp.apply_patch(None, tool(title="Read", name="read")), tool(name=None))
    assert state.name is None
    assert wire(state) == {"toolCallId": "t1", "title": "Read", "name": None}


def test_a_value_replaces_a_list_whole() -> None:
    first = acp.apply_patch(None, tool(locations=[{"path": "/a"}, {"path": "/b"}]))
    state = acp.apply_patch(first, tool(locations=[{"path": "/c"}]))
    assert wire(state)["locations"] == [{"path": "/c"}]


def test_an_invalid_value_is_an_omission_not_a_clear() -> None:
    state = acp.apply_patch(
        acp.apply_patch(None, tool(title="Read", status="pending")), tool(title=5, status=7)
    )
    assert wire(state) == {"toolCallId": "t1", "title": "Read", "status": "pending"}


def test_unknown_fields_follow_the_same_rules() -> None:
    state = acp.apply_patch(None, tool(vendorCount=1, vendorName="x"))
    state = acp.apply_patch(state, tool(vendorCount=None))
    assert wire(state) == {"toolCallId": "t1", "vendorCount": None, "vendorName": "x"}


def test_apply_patch_leaves_its_arguments_alone() -> None:
    current = acp.apply_patch(None, tool(title="Read", meta={"a": 1}))
    patch = tool(title=None, meta={"a": None, "b": 2})
    before = (wire(current), wire(patch))
    acp.apply_patch(current, patch)
    assert (wire(current), wire(patch)) == before


def test_an_update_without_its_tag_patches_too() -> None:
    state = acp.apply_patch(None, schema.ToolCallUpdate(tool_call_id="t1", title="Read"))
    state = acp.apply_patch(state, schema.ToolCallSessionUpdate(tool_call_id="t1", name=None))
    assert wire(state) == {"toolCallId": "t1", "title": "Read", "name": None}


def test_a_tagged_update_given_as_the_state_is_stored_without_its_tag() -> None:
    state = acp.apply_patch(tool(title="Read"), tool(status="completed"))
    assert type(state) is schema.ToolCallUpdate
    assert wire(state) == {"toolCallId": "t1", "title": "Read", "status": "completed"}


def test_the_session_has_one_session_info() -> None:
    first = acp.apply_patch(None, update("session_info_update", title="Fix the bug"))
    state = acp.apply_patch(first, update("session_info_update", updatedAt="2026-01-01T00:00:00Z"))
    assert wire(state) == {"title": "Fix the bug", "updatedAt": "2026-01-01T00:00:00Z"}


def test_a_required_field_besides_the_key_is_replaced_every_time() -> None:
    started = acp.apply_patch(None, update("compaction_update", compactionId="c1", status="in_progress"))
    done = acp.apply_patch(started, update("compaction_update", compactionId="c1", status="completed"))
    assert wire(done) == {"compactionId": "c1", "status": "completed"}


# --- the _meta rule ----------------------------------------------------------------------


META_CASES = [
    # (stored _meta, top-level _meta of the upsert, stored _meta afterwards)
    ({"a": 1}, OMIT, {"a": 1}),
    ({"a": 1}, None, None),
    ({"a": 1}, {}, {"a": 1}),
    (OMIT, {}, OMIT),
    (None, {}, None),
    ({"a": 1, "b": 2}, {"a": None}, {"b": 2}),
    ({"a": 1}, {"a": None}, {}),
    (OMIT, {"a": None}, OMIT),
    ({"a": {"x": 1, "y": 2}}, {"a": {"y": 3}}, {"a": {"y": 3}}),
    ({"a": 1}, {"b": [1, 2]}, {"a": 1, "b": [1, 2]}),
    (None, {"a": 1}, {"a": 1}),
    (OMIT, {"a": 1, "b": None}, {"a": 1}),
]


@pytest.mark.parametrize("stored, patch, expected", META_CASES)
def test_meta_is_patched_by_key(stored: Any, patch: Any, expected: Any) -> None:
    current = acp.apply_patch(None, tool() if stored is OMIT else tool(meta=stored))
    state = acp.apply_patch(current, tool() if patch is OMIT else tool(meta=patch))
    assert wire(state).get("_meta", OMIT) == expected
    assert acp.apply_patch(state, tool() if patch is OMIT else tool(meta=patch)) == state, "not idempotent"


@pytest.mark.parametrize("stored, patch, expected", [case for case in META_CASES if case[1] is not OMIT])
def test_merge_meta_is_the_rule(stored: Any, patch: Any, expected: Any) -> None:
    merged = acp.merge_meta(None if stored is OMIT else stored, patch)
    if merged is acp.UNCHANGED:
        merged = stored
    assert merged == expected


def test_meta_of_a_chunk_does_not_patch_its_entity() -> None:
    message = acp.apply_patch(None, update("agent_message", messageId="m1", meta={"a": 1}))
    chunk = update("agent_message_chunk", messageId="m1", content=text("hi"), meta={"a": None, "b": 2})
    assert wire(acp.apply_patch(message, chunk)) == {
        "messageId": "m1",
        "_meta": {"a": 1},
        "content": [text("hi")],
    }


# --- chunks -----------------------------------------------------------------------------


def test_chunks_append_and_a_content_upsert_replaces_what_they_built() -> None:
    def chunk(value: str) -> Any:
        return update("agent_message_chunk", messageId="m1", content=text(value))

    state = acp.apply_patch(acp.apply_patch(None, chunk("Hel")), chunk("lo"))
    assert wire(state) == {"messageId": "m1", "content": [text("Hel"), text("lo")]}
    state = acp.apply_patch(state, update("agent_message", messageId="m1", content=[text("Hello!")]))
    state = acp.apply_patch(state, chunk(" Bye"))
    assert wire(state)["content"] == [text("Hello!"), text(" Bye")]
    assert type(state) is schema.AgentMessage


def test_a_chunk_after_content_was_cleared_starts_it_again() -> None:
    state = acp.apply_patch(None, update("user_message", messageId="u1", content=None))
    state = acp.apply_patch(state, update("user_message_chunk", messageId="u1", content=text("x")))
    assert wire(state) == {"messageId": "u1", "content": [text("x")]}


def test_a_message_chunk_for_a_new_message_starts_it() -> None:
    state = acp.apply_patch(None, update("agent_thought_chunk", messageId="m9", content=text("hm")))
    assert type(state) is schema.AgentThought
    assert wire(state) == {"messageId": "m9", "content": [text("hm")]}


@pytest.mark.parametrize(
    "chunk",
    [
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "t1",
            "content": {"type": "content", "content": text("x")},
        },
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "term", "data": "aGk="},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1", "content": text("x")},
    ],
    ids=lambda chunk: chunk["sessionUpdate"],
)
def test_a_chunk_for_an_entity_never_created_is_an_error(chunk: dict[str, Any]) -> None:
    with pytest.raises(acp.UnknownEntityError, match="unknown"):
        acp.apply_patch(None, UPDATES.validate_python(chunk))


def test_tool_call_content_chunks_append_to_the_content() -> None:
    state = acp.apply_patch(None, tool(content=[{"type": "content", "content": text("a")}]))
    chunk = update(
        "tool_call_content_chunk", toolCallId="t1", content={"type": "content", "content": text("b")}
    )
    state = acp.apply_patch(state, chunk)
    assert [item["content"]["text"] for item in wire(state)["content"]] == ["a", "b"]


def test_terminal_output_chunks_append_bytes() -> None:
    state = acp.apply_patch(None, update("terminal_update", terminalId="term", command="ls"))
    for data in (b"hel", b"lo\n"):
        chunk = update("terminal_output_chunk", terminalId="term", data=base64.b64encode(data).decode())
        state = acp.apply_patch(state, chunk)
    assert base64.b64decode(state.output.data) == b"hello\n"
    assert wire(state) == {"terminalId": "term", "command": "ls", "output": {"data": "aGVsbG8K"}}


def test_terminal_output_chunks_keep_the_snapshot_metadata() -> None:
    state = acp.apply_patch(
        None, update("terminal_update", terminalId="term", output={"data": "", "_meta": {"k": 1}})
    )
    state = acp.apply_patch(state, update("terminal_output_chunk", terminalId="term", data="aGk="))
    assert wire(state)["output"] == {"data": "aGk=", "_meta": {"k": 1}}


def test_terminal_output_that_is_not_base64_is_an_error() -> None:
    state = acp.apply_patch(None, update("terminal_update", terminalId="term", output={"data": "aGk="}))
    with pytest.raises(acp.InvalidUpdateError, match="not valid base64"):
        acp.apply_patch(state, update("terminal_output_chunk", terminalId="term", data="h!"))
    assert wire(state)["output"] == {"data": "aGk="}


def test_compaction_summary_chunks_append_to_the_summary() -> None:
    state = acp.apply_patch(None, update("compaction_update", compactionId="c1", status="in_progress"))
    state = acp.apply_patch(state, update("compaction_summary_chunk", compactionId="c1", content=text("s")))
    assert wire(state) == {"compactionId": "c1", "status": "in_progress", "summary": [text("s")]}


def test_session_message_identities_survive_null() -> None:
    first = update("session_message", messageId="m1", senderSessionId="a", recipientSessionId="b")
    state = acp.apply_patch(None, first)
    state = acp.apply_patch(
        state, update("session_message", messageId="m1", senderSessionId=None, content=[])
    )
    assert wire(state) == {
        "messageId": "m1",
        "senderSessionId": "a",
        "recipientSessionId": "b",
        "content": [],
    }
    chunk = update(
        "session_message_chunk",
        messageId="m1",
        recipientSessionId="c",
        senderSessionId=None,
        content=text("x"),
    )
    state = acp.apply_patch(state, chunk)
    assert (state.sender_session_id, state.recipient_session_id, len(state.content)) == ("a", "c", 1)


def test_a_session_message_chunk_starts_its_message_with_its_identities() -> None:
    chunk = update("session_message_chunk", messageId="m1", senderSessionId="a", content=text("x"))
    assert wire(acp.apply_patch(None, chunk)) == {
        "messageId": "m1",
        "senderSessionId": "a",
        "content": [text("x")],
    }


# --- the wrong entity -------------------------------------------------------------------


def test_an_update_for_another_id_is_an_error() -> None:
    with pytest.raises(acp.EntityMismatchError, match="'t2', not 't1'"):
        acp.apply_patch(acp.apply_patch(None, tool()), update("tool_call_update", toolCallId="t2"))


def test_an_update_for_another_kind_of_entity_is_an_error() -> None:
    user = acp.apply_patch(None, update("user_message", messageId="m1"))
    with pytest.raises(acp.EntityMismatchError, match="AgentMessage, not to a UserMessage"):
        acp.apply_patch(user, update("agent_message_chunk", messageId="m1", content=text("x")))


@pytest.mark.parametrize(
    "what",
    [
        {"sessionUpdate": "usage_update", "used": 1, "size": 2},
        {"sessionUpdate": "state_update", "state": "idle"},
    ],
)
def test_only_upserts_and_chunks_patch_an_entity(what: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match="not an upsert or a chunk"):
        acp.apply_patch(None, UPDATES.validate_python(what))


# --- every patch field of every release -------------------------------------------------


def patch_field_cases() -> list[Any]:
    cases = []
    for release, unstable in PATCHED:
        for rule in session_plan(surface_of(release, unstable)).of_role("upsert"):
            assert isinstance(rule, UpsertPlan)
            for field in rule.patch_fields:
                label = f"{surface_id((release, unstable))}-{rule.tag}-{field.wire_name}"
                cases.append(pytest.param(release, unstable, rule, field, id=label))
    return cases


def resolved(surface: ApiSurface, expr: TypeExpr) -> TypeExpr:
    expr = strip_nullable(expr)
    while isinstance(expr, Ref) and isinstance(surface.types[expr.name], AliasType):
        target = surface.types[expr.name]
        assert isinstance(target, AliasType)
        expr = strip_nullable(target.target)
    return expr


def wrong_value(surface: ApiSurface, field: Field) -> Any:
    """A value the field's type does not accept (``OMIT`` when it accepts anything)."""
    expr = resolved(surface, field.type)
    if expr == Scalar("any"):
        return OMIT
    return "not a number" if isinstance(expr, Scalar) and expr.type in ("integer", "number") else 12345


@pytest.mark.parametrize("release, unstable, rule, field", patch_field_cases())
def test_every_patch_field_keeps_omitted_null_and_invalid_apart(
    release: str, unstable: bool, rule: UpsertPlan, field: Field
) -> None:
    surface, package = surface_of(release, unstable), package_of(release, unstable)
    adapter: TypeAdapter[Any] = TypeAdapter(package.schema.SessionUpdate)
    required = {f.wire_name: example(surface, f.type) for f in surface.all_fields(rule.entity) if f.required}

    def upsert(**values: Any) -> Any:
        return adapter.validate_python({"sessionUpdate": rule.tag, **required, **values})

    value = example(surface, strip_nullable(field.type))
    state = package.apply_patch(None, upsert(**{field.wire_name: value}))
    assert wire(state)[field.wire_name] == value

    assert wire(package.apply_patch(state, upsert()))[field.wire_name] == value
    cleared = wire(package.apply_patch(state, upsert(**{field.wire_name: None})))
    assert cleared[field.wire_name] == (value if field in rule.keep_on_null else None)

    wrong = wrong_value(surface, field)
    if wrong is OMIT:
        return
    if field.default_on_error:
        assert wire(package.apply_patch(state, upsert(**{field.wire_name: wrong})))[field.wire_name] == value
    else:
        with pytest.raises(ValidationError):
            upsert(**{field.wire_name: wrong})
