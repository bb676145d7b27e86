"""The [patches] table of codegen/knowledge.toml against every release, and what it derives."""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

import pytest

from codegen import knowledge
from codegen.diagnostics import collecting
from codegen.emit.output import template_environment
from codegen.emit.patches import (
    EXPORTS,
    OTHER_ACTIVITY,
    PATCH_TEMPLATES,
    STORE_MEMBERS,
    UNCLASSIFIED,
    ChunkPlan,
    SnapshotPlan,
    UpsertPlan,
    body_names,
    collection_doc,
    emit_patches,
    import_table,
    module_doc,
    patch_imports,
    session_plan,
)
from codegen.errors import CodegenError
from codegen.knowledge import Patches
from codegen.schema.ir import ApiSurface, Ref, UnionType, Variant
from tests.support.releases import (
    GENERATED,
    RELEASES,
    SURFACES,
    knowledge_of,
    package_of,
    surface_id,
    surface_of,
    surfaces_with,
)

PATCHED = surfaces_with("patches")
"""The surfaces whose protocol version has patch semantics in codegen/knowledge.toml."""
ALPHA_7_UNSTABLE = ("2.0.0-alpha.7", True)
TABLE = knowledge.needed(knowledge.patches(surface_of(*ALPHA_7_UNSTABLE).protocol_version))


@pytest.fixture(params=PATCHED, ids=surface_id)
def surface(request: pytest.FixtureRequest) -> ApiSurface:
    """Every surface with patch helpers (overrides the every-surface fixture of conftest)."""
    release, unstable = request.param
    return surface_of(release, unstable)


def table_of(surface: ApiSurface) -> dict[str, Any]:
    """``[patches]`` as plain TOML data: the tests read the file, not the planner's reading of it."""
    found = knowledge_of(surface, "patches")
    assert found is not None
    return found


def update_union(surface: ApiSurface) -> UnionType:
    """The union a ``session/update`` notification carries (found from the method, not by name)."""
    method = next(m for m in surface.methods if m.wire_name == table_of(surface)["method"])
    for field in surface.object(method.params).fields:
        found = surface.types.get(field.type.name) if isinstance(field.type, Ref) else None
        if isinstance(found, UnionType) and found.tagged:
            return found
    raise AssertionError("no update union")


def state_union(surface: ApiSurface) -> UnionType:
    union = update_union(surface)
    tag = next(tag for tag, entry in table_of(surface)["updates"].items() if entry["role"] == "state")
    variant = next(v for v in union.variants if v.tag == tag)
    assert isinstance(variant.type, Ref)
    found = surface.type(variant.type.name)
    assert isinstance(found, UnionType)
    return found


def test_every_session_update_tag_of_every_release_is_classified(surface: ApiSurface) -> None:
    tags = [str(v.tag) for v in update_union(surface).variants]
    missing = [tag for tag in tags if tag not in table_of(surface)["updates"]]
    assert not missing, f"add {missing} to [patches.updates] in codegen/knowledge.toml"


def test_every_foreground_state_of_every_release_is_classified(surface: ApiSurface) -> None:
    states = [str(v.tag) for v in state_union(surface).variants]
    missing = [state for state in states if state not in table_of(surface)["activity"]]
    assert not missing, f"add {missing} to [patches.activity] in codegen/knowledge.toml"


def test_nothing_in_the_table_is_stale() -> None:
    tags: dict[int, set[str]] = {}
    states: dict[int, set[str]] = {}
    for release, unstable in PATCHED:
        surface = surface_of(release, unstable)
        version = surface.protocol_version
        tags.setdefault(version, set()).update(str(v.tag) for v in update_union(surface).variants)
        states.setdefault(version, set()).update(str(v.tag) for v in state_union(surface).variants)
    assert tags
    for version in tags:
        table = knowledge.needed(knowledge.patches(version))
        assert {e.tag for e in table.updates} - tags[version] == set()
        assert set(table.activity) - states[version] == set()


def test_patch_helpers_are_emitted_exactly_where_the_knowledge_gives_patches() -> None:
    """v1 declares [v1.patches] none (its updates are events): its packages get no patches.py."""
    by_version: dict[int, set[bool]] = {}
    for release, unstable in SURFACES:
        surface = surface_of(release, unstable)
        package = package_of(release, unstable)
        patched = knowledge_of(surface, "patches") is not None
        by_version.setdefault(surface.protocol_version, set()).add(patched)
        assert (GENERATED / package.__name__ / "patches.py").is_file() == patched, package.__name__
        assert (GENERATED / package.__name__ / "_patch.py").is_file() == patched, package.__name__
        assert hasattr(package, "SessionState") == patched
        assert set(emit_patches(surface)) == ({"patches.py", "_patch.py"} if patched else set())
    assert by_version == {1: {False}, 2: {True}}
    with pytest.raises(CodegenError, match=r"\[v1\.patches\] is declared none"):
        session_plan(surface_of("1.21.0", True))


def test_every_update_class_of_every_release_has_a_rule(surface: ApiSurface) -> None:
    plan = session_plan(surface)
    covered = {rule.update for rule in plan.rules} | {state.update for state in plan.states}
    union = update_union(surface)
    classes = {name for v in union.variants for name in surface.classes_of(v.type)}
    assert classes == covered
    assert plan.other is not None and union.catch_all is not None
    assert Ref(plan.other) == union.catch_all.type


def with_extra_variant(surface: ApiSurface, union: UnionType, variant: Variant) -> ApiSurface:
    changed = dataclasses.replace(union, variants=(*union.variants, variant))
    return dataclasses.replace(surface, types={**surface.types, union.name: changed})


def test_an_unclassified_update_is_refused_in_strict_mode() -> None:
    surface = surface_of(*ALPHA_7_UNSTABLE)
    future = with_extra_variant(
        surface, update_union(surface), Variant("future_update", Ref("NoticeSessionUpdate"))
    )
    with pytest.raises(
        CodegenError, match=r"'future_update' of 2\.0\.0-alpha\.7 \(unstable\).*\[v2\.patches\.updates\]"
    ):
        session_plan(future)


def test_an_unclassified_update_is_returned_and_never_stored_otherwise() -> None:
    surface = surface_of(*ALPHA_7_UNSTABLE)
    known = session_plan(surface)
    future = with_extra_variant(
        surface, update_union(surface), Variant("future_update", Ref("PlanRemovedSessionUpdate"))
    )
    with collecting(strict=False) as found:
        plan = session_plan(future)
    (gap,) = found.gaps
    assert gap.section == "[v2.patches.updates]" and "'future_update'" in gap.message
    assert gap.default == UNCLASSIFIED
    assert plan.unclassified == ("PlanRemovedSessionUpdate",)
    assert plan.other_source == f"({known.other}, PlanRemovedSessionUpdate,)"
    assert [r.tag for r in plan.rules] == [r.tag for r in known.rules], (
        "the classified ones are planned as before"
    )


def test_an_unclassified_foreground_state_is_refused_in_strict_mode() -> None:
    surface = surface_of(*ALPHA_7_UNSTABLE)
    states = state_union(surface)
    future = with_extra_variant(surface, states, Variant("paused", states.variants[0].type))
    with pytest.raises(CodegenError, match=r"'paused' .*\[v2\.patches\.activity\]"):
        session_plan(future)


def test_an_unclassified_foreground_state_is_unconfirmed_otherwise() -> None:
    surface = surface_of(*ALPHA_7_UNSTABLE)
    states = state_union(surface)
    future = with_extra_variant(surface, states, Variant("paused", states.variants[0].type))
    with collecting(strict=False) as found:
        plan = session_plan(future)
    assert [g.section for g in found.gaps] == ["[v2.patches.activity]"]
    assert {s.activity for s in plan.states if s.tag == "paused"} == {OTHER_ACTIVITY}


@pytest.mark.parametrize(
    "tag, change, message",
    [
        ("tool_call_update", {"key": "title"}, "ToolCallUpdate.title must be required"),
        ("tool_call_update", {"key": "nope"}, "ToolCallUpdate has no field 'nope'"),
        ("tool_call_content_chunk", {"into": ("title",)}, "`into` must be an array of what `content` holds"),
        ("tool_call_content_chunk", {"of": "plan_update"}, "`of` must name a keyed upsert"),
        ("plan_update", {"key": ("plan", "nope")}, "has no field 'nope'"),
        ("plan_update", {"key": ("sessionUpdate", "planId")}, "through sessionUpdate, which holds no object"),
        ("session_message", {"keep_on_null": ("messageId",)}, "not a patch field"),
        ("usage_update", {"collection": "state"}, "cannot be a SessionState attribute"),
        ("usage_update", {"collection": "class"}, "collection name 'class' cannot be a SessionState"),
        ("usage_update", {"collection": "_keyed"}, "collection name '_keyed' cannot be a SessionState"),
        ("usage_update", {"collection": "_replay"}, "collection name '_replay' cannot be a SessionState"),
        ("tool_call_update", {"collection": "_current"}, "name '_current' cannot be a SessionState"),
    ],
)
def test_a_table_entry_the_schema_contradicts_is_refused(
    tag: str, change: dict[str, Any], message: str
) -> None:
    """What the entry's types allow but the schema contradicts (bad types: tests/test_knowledge.py)."""
    entry = TABLE.entry(tag)
    assert entry is not None
    changed = dataclasses.replace(entry, **change)
    table = dataclasses.replace(TABLE, updates=tuple(changed if e is entry else e for e in TABLE.updates))
    with pytest.raises(CodegenError, match=message) as caught:
        session_plan(surface_of(*ALPHA_7_UNSTABLE), table)
    assert caught.value.message.startswith("[v2.patches.updates] ")
    assert str(caught.value.file).startswith(f"{knowledge.KNOWLEDGE_FILE}:")  # the line of an entry
    if caught.value.message.startswith(f"[v2.patches.updates] {tag}: "):
        assert caught.value.file == entry.where


def test_a_surface_without_the_notification_gets_no_patches_module() -> None:
    surface = surface_of(*ALPHA_7_UNSTABLE)
    assert set(emit_patches(surface)) == {"patches.py", "_patch.py"}
    methods = tuple(m for m in surface.methods if m.wire_name != TABLE.method)
    assert emit_patches(dataclasses.replace(surface, methods=methods)) == {}


def test_the_planner_reads_the_table_it_is_given() -> None:
    surface = surface_of(*ALPHA_7_UNSTABLE)
    renamed = Patches("session/changed", TABLE.metadata, TABLE.updates, TABLE.activity)
    with pytest.raises(CodegenError, match="no session/changed notification"):
        session_plan(surface, renamed)


def test_every_attribute_the_store_sets_is_reserved() -> None:
    state = package_of(*ALPHA_7_UNSTABLE).SessionState("s")
    collections = {c.name for c in session_plan(surface_of(*ALPHA_7_UNSTABLE)).collections}
    assert set(vars(state)) - collections <= STORE_MEMBERS
    assert {"_keyed", "_replay", "session_id", "apply", "dump", "rules"} <= STORE_MEMBERS


def rule(surface: ApiSurface, tag: str) -> Any:
    return next(r for r in session_plan(surface).rules if r.tag == tag)


def test_patch_fields_come_from_the_schema_of_each_release() -> None:
    stable = rule(surface_of("2.0.0-alpha.2", False), "tool_call_update")
    unstable = rule(surface_of("2.0.0-alpha.2", True), "tool_call_update")
    assert isinstance(stable, UpsertPlan) and isinstance(unstable, UpsertPlan)
    expected = ["title", "kind", "status", "content", "locations", "rawInput", "rawOutput", "_meta"]
    assert [f.wire_name for f in stable.patch_fields] == expected
    assert [f.wire_name for f in unstable.patch_fields] == ["name", *expected]  # unstable in alpha.2
    assert unstable.entity == "ToolCallUpdate" and unstable.update == "ToolCallSessionUpdate"
    assert unstable.key is not None and unstable.key.wire_name == "toolCallId"
    assert unstable.meta is not None and unstable.meta.py_name == "field_meta"


def test_a_required_field_besides_the_key_is_not_a_patch_field() -> None:
    compaction = rule(surface_of("2.0.0-alpha.3", True), "compaction_update")
    assert [f.wire_name for f in compaction.patch_fields] == ["summary", "error", "_meta"]


def test_chunks_are_resolved_against_their_entity() -> None:
    surface = surface_of(*ALPHA_7_UNSTABLE)
    terminal = rule(surface, "terminal_output_chunk")
    assert isinstance(terminal, ChunkPlan)
    assert (terminal.base64, terminal.creates, terminal.containers) == (True, False, ("TerminalOutput",))
    assert [f.wire_name for f in terminal.into] == ["output", "data"]
    session_message = rule(surface, "session_message_chunk")
    assert [f.wire_name for f in session_message.shared] == ["senderSessionId", "recipientSessionId"]
    assert [f.wire_name for f in session_message.of.keep_on_null] == ["senderSessionId", "recipientSessionId"]
    assert rule(surface, "agent_message_chunk").shared == ()


def test_plans_are_keyed_inside_the_plan() -> None:
    plan_update = rule(surface_of(*ALPHA_7_UNSTABLE), "plan_update")
    assert isinstance(plan_update, SnapshotPlan)
    assert [f.wire_name for f in plan_update.key] == ["plan", "planId"]
    assert (plan_update.key_type, plan_update.value_type) == ("PlanId", "PlanUpdateContent")


@pytest.mark.parametrize("release", list(dict.fromkeys(release for release, _ in PATCHED)))
def test_collections_of_each_release(release: str) -> None:
    stable = session_plan(surface_of(release, False))
    unstable = session_plan(surface_of(release, True))
    base = ["messages", "tool_calls", "terminals", "plans", "available_commands", "config_options"]
    base += ["session_info", "usage"]
    # compaction updates are unstable from alpha.3 and stable from alpha.8; subagents unstable from alpha.7;
    # the releases after it (the npm ones, in lock order) keep both as alpha.8 had them
    later = RELEASES[RELEASES.index("2.0.0-alpha.8") :]
    stable_extra = {r: ["compactions"] for r in later}
    assert [c.name for c in stable.collections] == base + stable_extra.get(release, [])
    extra = {"2.0.0-alpha.3": ["compactions"], "2.0.0-alpha.5": ["compactions"]}
    extra |= {r: ["compactions", "subagents"] for r in ["2.0.0-alpha.7", *later]}
    assert [c.name for c in unstable.collections] == base + extra.get(release, [])
    assert stable.state_type == unstable.state_type == "StateUpdate"


def test_collection_types_are_the_schema_types() -> None:
    plan = session_plan(surface_of(*ALPHA_7_UNSTABLE))
    annotations = {c.name: c.annotation for c in plan.collections}
    assert annotations["messages"] == (
        "Mapping[MessageId, UserMessage | AgentMessage | AgentThought | SessionMessage]"
    )
    assert annotations["plans"] == "Mapping[PlanId, PlanUpdateContent]"
    assert annotations["config_options"] == "list[SessionConfigOption] | None"
    assert annotations["usage"] == "UsageUpdate | None"
    assert annotations["subagents"] == "Mapping[SessionId, SubagentUpdate]"


def test_the_docstrings_say_what_the_table_and_the_schema_name() -> None:
    plan = session_plan(surface_of(*ALPHA_7_UNSTABLE))
    renamed = dataclasses.replace(plan, method="session/changed", metadata="_extra", state_tag="status")
    doc = module_doc(renamed)
    assert "from ``session/changed`` notifications" in doc and "top-level ``_extra`` is patched" in doc
    assert "``session/update``" not in doc and "top-level ``_meta``" not in doc
    assert "What each ``sessionUpdate`` does" in doc
    env = template_environment(PATCH_TEMPLATES)
    body = env.get_template("body.py.jinja2").render(plan=renamed, collection_doc=collection_doc)
    assert "its ``session/changed`` notifications" in body and "``_extra`` is patched by key" in body
    assert "snapshot (``status``)" in body
    assert "session/update" not in body and "state_update" not in body


def test_patches_py_imports_the_names_its_body_uses() -> None:
    surface = surface_of(*ALPHA_7_UNSTABLE)
    got = patch_imports({"Any", "Literal", "Final", "AcpModel", "Upsert", "ToolCallUpdate", "x"}, surface)
    lines = [line for line in got.split("\n") if " import " in line]
    froms = {line.split()[1]: line.split(" import ")[1].split(", ") for line in lines}
    assert list(froms) == ["__future__", "typing", "._base", "._patch", ".schema"]
    assert froms["typing"] == ["Any", "Final", "Literal"]
    assert froms["._base"] == ["AcpModel"]
    assert "Upsert" in froms["._patch"] and "Chunk" not in froms["._patch"]
    assert {*froms["._patch"], "SessionState", "apply_patch"} >= set(EXPORTS)
    assert froms[".schema"] == ["ToolCallUpdate"]


@pytest.mark.parametrize("release", PATCHED, ids=surface_id)
def test_the_imports_declared_from_the_plan_are_the_names_the_body_reads(release: tuple[str, bool]) -> None:
    """``patches.py`` imports what the plan says its body writes; the rendered body (read back here,
    never by the emitter) reads exactly those names of the import table."""
    surface = surface_of(*release)
    plan = session_plan(surface)
    body = template_environment(PATCH_TEMPLATES).get_template("body.py.jinja2")
    tree = ast.parse(body.render(plan=plan, collection_doc=collection_doc))
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    imported = set(import_table(surface))
    assert body_names(plan) & imported == read & imported
