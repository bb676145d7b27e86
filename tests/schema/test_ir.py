"""The IR built from the real releases: methods, unions, enums, fields and stability.

Expected values are read off the schema files (by hand or by a few lines of
independent JSON walking here), not off the builder's output.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import Any

import pytest

from codegen import knowledge
from codegen.knowledge import Extension
from codegen.schema.ir import (
    ApiSurface,
    ArrayOf,
    EnumType,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    UnionType,
    to_json,
)
from tests.support.diffkit import base_data, surface_from
from tests.support.releases import RELEASES, release_files, surface_of


def raw_defs(release: str, unstable: bool) -> dict[str, Any]:
    data: dict[str, Any] = release_files(release).schema(unstable).data
    return data["$defs"]


def test_alpha7_stable_methods_by_handling_side() -> None:
    surface = surface_of("2.0.0-alpha.7", False)
    handled = {
        side: sorted((m.kind, m.wire_name) for m in surface.methods_for(side))  # type: ignore[arg-type]
        for side in ("agent", "client", "protocol")
    }
    assert handled == {
        "agent": [
            ("notification", "session/cancel"),
            ("request", "auth/login"),
            ("request", "auth/logout"),
            ("request", "initialize"),
            ("request", "session/close"),
            ("request", "session/delete"),
            ("request", "session/list"),
            ("request", "session/new"),
            ("request", "session/prompt"),
            ("request", "session/resume"),
            ("request", "session/set_config_option"),
        ],
        "client": [
            ("notification", "elicitation/complete"),
            ("notification", "session/update"),
            ("request", "elicitation/create"),
            ("request", "session/request_permission"),
        ],
        "protocol": [("notification", "$/cancel_request")],
    }


def test_method_types_and_docs() -> None:
    surface = surface_of("2.0.0-alpha.7", False)
    by_wire = {m.wire_name: m for m in surface.methods}
    assert (by_wire["session/new"].params, by_wire["session/new"].result) == (
        "NewSessionRequest",
        "NewSessionResponse",
    )
    assert by_wire["session/update"].result is None
    assert by_wire["session/set_config_option"].params == "SetSessionConfigOptionRequest"
    assert by_wire["session/request_permission"].doc.startswith("Requests permission from the user")
    assert by_wire["session/prompt"].key == "session_prompt"


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("unstable", [False, True])
def test_methods_match_meta_tables(release: str, unstable: bool) -> None:
    meta = release_files(release).meta(unstable).data
    surface = surface_of(release, unstable)
    for side, table in (
        ("agent", "agentMethods"),
        ("client", "clientMethods"),
        ("protocol", "protocolMethods"),
    ):
        assert {m.wire_name for m in surface.methods_for(side)} == set(meta[table].values())  # type: ignore[arg-type]


def test_method_handled_by_both_sides_appears_for_each() -> None:
    """alpha.1 unstable marks mcp/message x-side "both": a request and a notification each way."""
    surface = surface_of("2.0.0-alpha.1", True)
    mcp = sorted((m.side, m.kind) for m in surface.methods if m.wire_name == "mcp/message")
    assert mcp == [
        ("agent", "notification"),
        ("agent", "request"),
        ("client", "notification"),
        ("client", "request"),
    ]


@pytest.mark.parametrize("release", RELEASES)
def test_session_update_variants_by_tag(release: str) -> None:
    """v2 writes an open ``anyOf`` (a catch-all with a ``not`` clause), v1 a closed ``oneOf``."""
    for unstable in (False, True):
        definition = raw_defs(release, unstable)["SessionUpdate"]
        raw = definition.get("anyOf") or definition["oneOf"]
        expected = [
            m["properties"]["sessionUpdate"]["const"]
            for m in raw
            if "const" in m["properties"]["sessionUpdate"]
        ]
        union = surface_of(release, unstable).type("SessionUpdate")
        assert isinstance(union, UnionType)
        assert union.tag_wire_name == "sessionUpdate"
        assert union.tag_py_name == "session_update"
        assert list(union.known_tags) == expected
        assert union.open == any("not" in m for m in raw)


def not_clause_tags(member: dict[str, Any], tag: str) -> set[Any]:
    """The tag values a catch-all member's ``not`` clause lists, read straight from the JSON."""
    return {branch["properties"][tag]["const"] for branch in member["not"]["anyOf"]}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("unstable", [False, True])
def test_catch_all_refuses_the_tags_its_not_clause_lists(release: str, unstable: bool) -> None:
    surface = surface_of(release, unstable)
    defs = raw_defs(release, unstable)
    checked = 0
    visited = set()
    for union in surface.unions():
        if not (union.tagged and union.open and union.schema_name):
            continue
        visited.add(union.schema_name)
        tag = union.tag_wire_name or ""
        member = next(m for m in defs[union.schema_name]["anyOf"] if "not" in m)
        expected = not_clause_tags(member, tag)
        assert expected >= set(union.known_tags), union.name
        assert union.catch_all is not None
        for name in surface.classes_of(union.catch_all.type):
            reserved = {r.wire_name: set(r.values) for r in surface.reserved_of(name)}
            assert reserved[tag] == expected, name
            checked += 1
    in_json = {name for name, d in defs.items() if any("not" in m for m in d.get("anyOf", []))}
    assert visited == in_json  # every open union the schema file writes (none in 1.20.0 stable), no other
    assert checked >= len(in_json)


def test_stable_catch_all_also_refuses_tags_of_unstable_variants() -> None:
    """Stable PlanUpdateContent has only ``items``; its catch-all refuses ``file`` and ``markdown`` too."""
    surface = surface_of("2.0.0-alpha.7", False)
    union = surface.type("PlanUpdateContent")
    assert isinstance(union, UnionType) and list(union.known_tags) == ["items"]
    (reserved,) = surface.reserved_of("OtherPlanUpdateContent")
    assert set(reserved.values) == {"items", "file", "markdown"}


def test_variant_classes_extend_their_payload_and_pin_the_tag() -> None:
    surface = surface_of("2.0.0-alpha.7", False)
    chunk = surface.object("AgentMessageChunkSessionUpdate")
    assert chunk.base == "ContentChunk"
    assert chunk.tag is not None and (chunk.tag.wire_name, chunk.tag.value) == (
        "sessionUpdate",
        "agent_message_chunk",
    )
    assert surface.object("TextContentBlock").base == "TextContent"
    other = surface.object("OtherContentBlock")
    assert other.tag is None and other.extra == "allow"


def test_variant_building_on_a_tagged_union_becomes_a_nested_union() -> None:
    """``state_update`` pulls in StateUpdate, itself a union on ``state``."""
    surface = surface_of("2.0.0-alpha.7", False)
    session_update = surface.type("SessionUpdate")
    assert isinstance(session_update, UnionType)
    state = next(v for v in session_update.variants if v.tag == "state_update")
    nested = surface.type(state.type.name) if isinstance(state.type, Ref) else None
    assert isinstance(nested, UnionType)
    assert nested.tag_wire_name == "state"
    assert list(nested.known_tags) == ["running", "idle", "requires_action"]
    assert nested.catch_all is not None


def test_elicitation_scopes_multiply_the_mode_variants() -> None:
    surface = surface_of("2.0.0-alpha.7", False)
    union = surface.type("CreateElicitationRequest")
    assert isinstance(union, UnionType) and union.tag_wire_name == "mode"
    form = next(v for v in union.variants if v.tag == "form")
    assert isinstance(form.type, Ref)
    scopes = surface.type(form.type.name)
    assert isinstance(scopes, UnionType) and not scopes.tagged
    names = [v.type.name for v in scopes.variants if isinstance(v.type, Ref)]
    assert names == ["SessionFormCreateElicitationRequest", "RequestFormCreateElicitationRequest"]
    session_form = surface.all_fields("SessionFormCreateElicitationRequest")
    assert {f.wire_name for f in session_form} >= {
        "message",
        "mode",
        "requestedSchema",
        "sessionId",
        "toolCallId",
    }
    assert "requestId" in {f.wire_name for f in surface.all_fields("RequestFormCreateElicitationRequest")}


def test_both_spellings_of_nullable_are_recognised() -> None:
    tool_call = surface_of("2.0.0-alpha.7", False).object("ToolCallUpdate")
    name = tool_call.field("name")
    kind = tool_call.field("kind")
    assert name is not None and name.nullable and name.type == Nullable(Scalar("string"))
    assert kind is not None and kind.nullable and kind.type == Nullable(Ref("ToolKind"))
    tool_call_id = tool_call.field("toolCallId")
    assert tool_call_id is not None and tool_call_id.required and not tool_call_id.nullable


def test_lenient_flags_and_defaults() -> None:
    surface = surface_of("2.0.0-alpha.7", False)
    entries = surface.object("PlanItems").field("entries")
    assert entries is not None
    assert entries.required and entries.default_on_error and entries.skip_invalid_items
    assert entries.type == ArrayOf(Ref("PlanEntry"))
    changes = surface.object("Diff").field("changes")
    assert changes is not None and changes.skip_invalid_items and not changes.default_on_error
    capabilities = surface.object("InitializeRequest").field("capabilities")
    assert capabilities is not None and capabilities.default == {} and not capabilities.required
    meta = surface.object("InitializeRequest").field("_meta")
    assert meta is not None and meta.py_name == "field_meta"


def test_a_leniency_keyword_is_read_by_the_name_extensions_gives_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The builder sets a Field flag from the keyword ``[extensions]`` names for it, not a name of its own."""
    known = knowledge.extensions()
    extra = Extension("x-lenient-drop", "invalid items are dropped", lenient="skip_invalid_items")
    monkeypatch.setattr(
        knowledge, "extensions", lambda: dataclasses.replace(known, entries=(*known.entries, extra))
    )
    data = base_data()
    changes = data["$defs"]["Diff"]["properties"]["changes"]
    assert changes.pop("x-deserialize-skip-invalid-items")
    assert not surface_from(data).object("Diff").field("changes").skip_invalid_items  # type: ignore[union-attr]
    changes["x-lenient-drop"] = True
    assert surface_from(data).object("Diff").field("changes").skip_invalid_items  # type: ignore[union-attr]


def test_enums_open_and_closed() -> None:
    surface = surface_of("2.0.0-alpha.7", True)
    stop = surface.type("StopReason")
    assert isinstance(stop, EnumType) and stop.open and stop.base == "string"
    assert [v.value for v in stop.values] == [
        "end_turn",
        "max_tokens",
        "max_turn_requests",
        "refusal",
        "cancelled",
    ]
    tool_kind = surface.type("ToolKind")
    assert isinstance(tool_kind, EnumType) and tool_kind.open
    assert "other" in [v.value for v in tool_kind.values]  # a real value, besides the open member
    code = surface.type("ErrorCode")
    assert isinstance(code, EnumType) and code.base == "integer" and code.open
    assert -32601 in [v.value for v in code.values]
    sync = surface.type("TextDocumentSyncKind")
    assert isinstance(sync, EnumType) and not sync.open


def test_stability_is_marked_from_the_stable_schema() -> None:
    unstable = surface_of("2.0.0-alpha.7", True)
    by_wire = {(m.side, m.kind, m.wire_name): m for m in unstable.methods}
    assert by_wire[("agent", "request", "providers/list")].unstable
    assert not by_wire[("agent", "request", "session/new")].unstable
    assert unstable.type("McpServerAcp").unstable
    assert not unstable.type("McpServerStdio").unstable
    capabilities = unstable.object("AgentCapabilities")
    assert {f.wire_name for f in capabilities.fields if f.unstable} == {
        "providers",
        "nes",
        "positionEncoding",
    }
    idle = unstable.object("IdleStateUpdate").field("usage")
    assert idle is not None and idle.unstable
    assert not any(m.unstable for m in surface_of("2.0.0-alpha.7", False).methods)


@pytest.mark.parametrize("release", RELEASES)
def test_every_def_becomes_a_named_type(release: str) -> None:
    for unstable in (False, True):
        surface = surface_of(release, unstable)
        assert {t.schema_name for t in surface.types.values() if t.schema_name} == set(
            raw_defs(release, unstable)
        )


def test_batches_come_from_the_root_message_kinds() -> None:
    surface = surface_of("2.0.0-alpha.7", False)
    assert [(b.name, b.sender) for b in surface.batches] == [
        ("AgentBatchCall", "agent"),
        ("AgentBatchResponse", "agent"),
        ("ClientBatchCall", "client"),
        ("ClientBatchResponse", "client"),
    ]
    assert surface.batches[0].items == ("Request", "Notification", "ProtocolLevelNotification")


def test_ir_json_command_prints_the_ir() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "codegen.cli", "ir", "2.0.0-alpha.7", "--unstable", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(result.stdout)
    expected: ApiSurface = surface_of("2.0.0-alpha.7", True)
    assert data == to_json(expected)
    assert data["types"]["SessionUpdate"]["tag_wire_name"] == "sessionUpdate"
    assert {m["wire_name"] for m in data["methods"]} >= {"session/new", "nes/start"}


def test_object_fields_carry_docs() -> None:
    field = surface_of("2.0.0-alpha.7", False).object("ToolCallUpdate").field("toolCallId")
    assert field is not None and field.doc == "Unique identifier for this tool call within the session."
    assert isinstance(surface_of("2.0.0-alpha.7", False).type("ToolCallUpdate"), ObjectType)
