"""``diff_surfaces``: one test per rule of the catalog, each on a small mutation of a real release.

The base release is 2.0.0-alpha.7.  Who sends what in it (read from the schema): clients send
``PromptRequest`` (session/prompt params), ``InitializeRequest`` and
``RequestPermissionOutcome`` (in the session/request_permission result);
agents send ``ToolCallUpdate`` and ``UsageUpdate``/``Cost`` (session/update),
``RequestPermissionRequest`` and ``ElicitationSchema`` (elicitation/create
params).  Schema edits go through the real IR builder; method edits change
the IR's method table, since a method lives in several places of the schema
(envelopes, meta table, x-side) that must move together.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen.diagnostics import collecting
from codegen.diff import diff_releases, diff_surfaces
from codegen.diff.differ import display_path
from codegen.diff.model import KeywordPart, MemberPart, SidePart, TypePart
from codegen.diff.payload import Bound, Names
from codegen.diff.rules import RULES
from codegen.errors import CodegenError
from codegen.schema.ir import ApiSurface, ArrayOf, Method, Scalar
from codegen.schema.load import SchemaSource, load_schema_folder, read_lock
from codegen.schema.releases import open_side, surfaces_of
from tests.support.diffkit import (
    A3,
    A5,
    A7,
    AGENT,
    BOTH,
    CLIENT,
    NOBODY,
    PYTHON,
    Defs,
    Mini,
    add_unused_type,
    base_surface,
    batch,
    cancel_to_client,
    changes,
    deep,
    drop_field,
    edited,
    folder_of,
    methods_edit,
    mini,
    only,
    props,
    rename,
)
from tests.support.releases import release_files, surface_of

# --- schema edits -----------------------------------------------------------------


def add_prompt_mode(required: bool) -> Callable[[Defs], None]:
    def edit(defs: Defs) -> None:
        props(defs, "PromptRequest")["mode"] = {"type": "string"}
        if required:
            defs["PromptRequest"]["required"].append("mode")

    return edit


def require(name: str, wire: str) -> Callable[[Defs], None]:
    return lambda defs: defs[name]["required"].append(wire)


def prompt_nullable(defs: Defs) -> None:
    props(defs, "PromptRequest")["prompt"]["type"] = ["array", "null"]


def tool_name_not_null(defs: Defs) -> None:
    props(defs, "ToolCallUpdate")["name"]["type"] = "string"


def drop_tool_name_lenience(defs: Defs) -> None:
    del props(defs, "ToolCallUpdate")["name"]["x-deserialize-default-on-error"]


def lenient_prompt(defs: Defs) -> None:
    props(defs, "PromptRequest")["prompt"]["x-deserialize-skip-invalid-items"] = True


def drop_capabilities_default(defs: Defs) -> None:
    del props(defs, "InitializeRequest")["capabilities"]["default"]


def used_type(value: Any) -> Callable[[Defs], None]:
    def edit(defs: Defs) -> None:
        props(defs, "UsageUpdate")["used"]["type"] = value

    return edit


def options_min_items(value: int | None) -> Callable[[Defs], None]:
    def edit(defs: Defs) -> None:
        options = props(defs, "RequestPermissionRequest")["options"]
        if value is None:
            del options["minItems"]
        else:
            options["minItems"] = value

    return edit


def currency_pattern(defs: Defs) -> None:
    props(defs, "Cost")["currency"]["pattern"] = "^[A-Z]{3,4}$"


def inline_info(defs: Defs) -> None:
    """InitializeRequest.info: the $ref to Implementation becomes a copy written in place."""
    info = props(defs, "InitializeRequest")["info"]
    inline = deep(defs["Implementation"])
    inline.pop("description", None)
    props(defs, "InitializeRequest")["info"] = {**inline, "description": info.get("description", "")}


def add_status(defs: Defs) -> None:
    defs["ElicitationSchemaType"]["oneOf"].append({"type": "string", "const": "array"})


def open_schema_type(defs: Defs) -> None:
    defs["ElicitationSchemaType"]["oneOf"].append({"type": "string", "title": "other"})


def tool_status(edit: Callable[[list[dict[str, Any]]], None]) -> Callable[[Defs], None]:
    return lambda defs: edit(defs["ToolCallStatus"]["anyOf"])


def add_tool_status(members: list[dict[str, Any]]) -> None:
    members.insert(0, {"type": "string", "const": "paused"})


def drop_cancelled_status(members: list[dict[str, Any]]) -> None:
    members[:] = [m for m in members if m.get("const") != "cancelled"]


def close_tool_status(members: list[dict[str, Any]]) -> None:
    members[:] = [m for m in members if "const" in m]


def outcome_members(defs: Defs) -> list[dict[str, Any]]:
    members: list[dict[str, Any]] = defs["RequestPermissionOutcome"]["anyOf"]
    return members


def close_outcome(defs: Defs) -> None:
    outcome_members(defs)[:] = [m for m in outcome_members(defs) if "not" not in m]


def add_deferred(defs: Defs) -> None:
    variant = {
        "type": "object",
        "properties": {"outcome": {"type": "string", "const": "deferred"}},
        "required": ["outcome"],
    }
    outcome_members(defs).insert(0, variant)


def outcome_deferred_with_reason(defs: Defs) -> None:
    """A ``deferred`` variant needing a ``reason``: the catch-all took ``{"outcome": "deferred"}`` before."""
    variant = {
        "type": "object",
        "properties": {"outcome": {"type": "string", "const": "deferred"}, "reason": {"type": "string"}},
        "required": ["outcome", "reason"],
    }
    outcome_members(defs).insert(0, variant)


def drop_cancelled_outcome(defs: Defs) -> None:
    """The ``cancelled`` variant goes, and the catch-all no longer reserves its tag: it takes it now."""
    outcome_members(defs)[:] = [
        m
        for m in outcome_members(defs)
        if m.get("properties", {}).get("outcome", {}).get("const") != "cancelled"
    ]
    for catch_all in [m for m in outcome_members(defs) if "not" in m]:
        reserved = catch_all["not"]["anyOf"]
        reserved[:] = [m for m in reserved if m["properties"]["outcome"]["const"] != "cancelled"]


def reserve_deferred(defs: Defs) -> None:
    """The catch-all refuses ``deferred`` too, though no variant has that tag: the union refuses it."""
    reserved = outcome_members(defs)[-1]["not"]["anyOf"]
    reserved.append(
        {"type": "object", "properties": {"outcome": {"const": "deferred"}}, "required": ["outcome"]}
    )


def cost_closed(defs: Defs) -> None:
    defs["Cost"]["additionalProperties"] = False


def currency_format(defs: Defs) -> None:
    props(defs, "Cost")["currency"]["format"] = "iso-4217"


def prompt_must(defs: Defs) -> None:
    defs["PromptRequest"]["description"] += "\n\nClients MUST NOT send an empty prompt."


def stop_reason_sentence_to_its_type(defs: Defs) -> None:
    """The SHOULD of ``IdleStateUpdate.stopReason`` moves to ``IdleStateUpdate``, naming the field."""
    field = props(defs, "IdleStateUpdate")["stopReason"]
    sentence = "Agents SHOULD include this when the idle transition ends foreground work."
    assert sentence in field["description"]
    field["description"] = field["description"].replace(sentence, "")
    defs["IdleStateUpdate"]["description"] += (
        "\n\nAgents SHOULD include a `stopReason` when the idle transition ends foreground work."
    )


def cost_as_price(defs: Defs) -> None:
    """``UsageUpdate.cost`` refers to ``Price``, a copy of ``Cost`` (which stays): the same wire, another
    class."""
    defs["Price"] = deep(defs["Cost"])
    props(defs, "UsageUpdate")["cost"] = json.loads(
        json.dumps(props(defs, "UsageUpdate")["cost"]).replace("#/$defs/Cost", "#/$defs/Price")
    )


def prompt_response_mode(defs: Defs) -> None:
    """The session/prompt result (built by agents' Python code) gains a required field."""
    props(defs, "PromptResponse")["mode"] = {"type": "string"}
    defs["PromptResponse"]["required"].append("mode")


def both(*edits: Callable[[Defs], None]) -> Callable[[Defs], None]:
    def edit(defs: Defs) -> None:
        for step in edits:
            step(defs)

    return edit


def outcome_tag_is_kind(defs: Defs) -> None:
    defs["RequestPermissionOutcome"] = json.loads(
        json.dumps(defs["RequestPermissionOutcome"]).replace('"outcome"', '"kind"')
    )


def add_session_id_twin(defs: Defs) -> None:
    """A wire name that is already ``session_id`` in Python: sessionId's attribute becomes ``session_id_``."""
    props(defs, "PromptRequest")["session_id"] = {"type": "string"}


# --- IR edits (the method table) -------------------------------------------------------


def without_prompt(m: Method) -> Method | None:
    return None if m.wire_name == "session/prompt" else m


def prompt_unstable(m: Method) -> Method:
    return dataclasses.replace(m, unstable=True) if m.wire_name == "session/prompt" else m


def cancel_as_request(m: Method) -> Method:
    """``session/cancel``, a notification to the agent, becomes a request answered by a PromptResponse."""
    if m.wire_name != "session/cancel":
        return m
    return dataclasses.replace(m, kind="request", result="PromptResponse")


def without_cancel(m: Method) -> Method | None:
    return None if m.wire_name == "session/cancel" else m


def with_ping(surface: ApiSurface) -> ApiSurface:
    ping = Method("session/ping", "session_ping", "agent", "notification", "CancelSessionNotification", None)
    return dataclasses.replace(surface, methods=(*surface.methods, ping))


def with_pause(surface: ApiSurface) -> ApiSurface:
    pause = Method("session/pause", "session_pause", "agent", "request", "PromptRequest", "PromptResponse")
    return dataclasses.replace(surface, methods=(*surface.methods, pause))


def status_as_string(defs: Defs) -> None:
    """ToolCallUpdate.status: the open enum ToolCallStatus becomes a plain string (the same values)."""
    props(defs, "ToolCallUpdate")["status"] = {
        "type": ["string", "null"],
        "x-deserialize-default-on-error": True,
    }


def cost_union(defs: Defs) -> None:
    """Cost (sent by agents) becomes a union on ``kind``, its properties shared by both members."""
    defs["Cost"]["anyOf"] = [
        {"type": "object", "properties": {"kind": {"type": "string", "const": k}}, "required": ["kind"]}
        for k in ("estimate", "invoice")
    ]


def mark_unstable(name: str) -> Callable[[ApiSurface], ApiSurface]:
    def apply(surface: ApiSurface) -> ApiSurface:
        found = dataclasses.replace(surface.types[name], unstable=True)
        return dataclasses.replace(surface, types={**surface.types, name: found})

    return apply


# --- the cases ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    rule: str
    subject: str
    severity: str
    roles: tuple[str, ...]
    new: Callable[[Defs], Any] | None = None
    old: Callable[[Defs], Any] | None = None
    new_ir: Callable[[ApiSurface], ApiSurface] | None = None
    old_ir: Callable[[ApiSurface], ApiSurface] | None = None
    detail: str | None = None
    gaps: tuple[str, ...] = ()
    """The warnings building the edited schemas gives (the edit is a shape the models cannot enforce)."""

    def surfaces(self) -> tuple[ApiSurface, ApiSurface]:
        with collecting(strict=False) as found:
            old = edited(self.old) if self.old else base_surface()
            new = edited(self.new) if self.new else base_surface()
        assert tuple(g.message for g in found.gaps) == self.gaps
        if self.old_ir:
            old = self.old_ir(old)
        if self.new_ir:
            new = self.new_ir(new)
        return old, new


CASES = [
    # fields: PromptRequest is sent by clients, ToolCallUpdate by agents
    Case(
        "field-added-required",
        "PromptRequest.mode",
        "breaking",
        CLIENT,
        new=add_prompt_mode(True),
        detail="type string",
    ),
    Case("field-added-optional", "PromptRequest.mode", "info", NOBODY, new=add_prompt_mode(False)),
    Case(
        "required-field-removed",
        "PromptRequest.prompt",
        "breaking",
        AGENT,
        new=drop_field("PromptRequest", "prompt"),
    ),
    Case(
        "optional-field-removed",
        "PromptRequest._meta",
        "info",
        NOBODY,
        new=drop_field("PromptRequest", "_meta"),
    ),
    Case(
        "field-became-required",
        "PromptRequest._meta",
        "breaking",
        CLIENT,
        new=require("PromptRequest", "_meta"),
    ),
    Case(
        "field-became-optional",
        "PromptRequest._meta",
        "breaking",
        AGENT,
        old=require("PromptRequest", "_meta"),
    ),
    Case("field-became-nullable", "PromptRequest.prompt", "breaking", AGENT, new=prompt_nullable),
    Case("field-became-non-nullable", "ToolCallUpdate.name", "breaking", AGENT, new=tool_name_not_null),
    # objects: Cost is sent by agents
    Case("object-became-closed", "Cost", "breaking", AGENT, new=cost_closed),
    Case("object-became-open", "Cost", "breaking", CLIENT, old=cost_closed),
    # types
    Case(
        "type-changed",
        "UsageUpdate.used",
        "breaking",
        BOTH,
        new=used_type("string"),
        detail="integer -> string",
    ),
    Case(
        "type-widened",
        "UsageUpdate.used",
        "breaking",
        CLIENT,
        new=used_type(["integer", "string"]),
        detail="adds string",
    ),
    Case(
        "type-narrowed",
        "UsageUpdate.used",
        "breaking",
        AGENT,
        old=used_type(["integer", "string"]),
        detail="drops string",
    ),
    # constraints: RequestPermissionRequest is sent by agents, Cost too
    Case(
        "constraint-tightened",
        "RequestPermissionRequest.options",
        "breaking",
        AGENT,
        new=options_min_items(2),
        detail="minItems 1 -> 2",
    ),
    Case(
        "constraint-loosened",
        "RequestPermissionRequest.options",
        "warning",
        CLIENT,
        new=options_min_items(None),
        detail="minItems 1 -> none",
    ),
    Case(
        "constraint-changed",
        "Cost.currency",
        "breaking",
        BOTH,
        new=currency_pattern,
        detail="pattern '^[A-Z]{3}$' -> '^[A-Z]{3,4}$'",
    ),
    Case(
        "format-changed",
        "Cost.currency",
        "info",
        NOBODY,
        new=currency_format,
        detail="format none -> 'iso-4217'",
    ),
    # enums: ElicitationSchemaType is closed and sent by agents; ToolCallStatus is open and sent by agents
    Case("enum-value-added-closed", "ElicitationSchemaType['array']", "breaking", CLIENT, new=add_status),
    Case("enum-value-removed-closed", "ElicitationSchemaType['array']", "breaking", AGENT, old=add_status),
    Case(
        "enum-value-added-open", "ToolCallStatus['paused']", "info", NOBODY, new=tool_status(add_tool_status)
    ),
    Case(
        "enum-value-removed-open",
        "ToolCallStatus['cancelled']",
        "warning",
        AGENT,
        new=tool_status(drop_cancelled_status),
    ),
    Case("enum-became-closed", "ToolCallStatus", "breaking", AGENT, new=tool_status(close_tool_status)),
    Case("enum-became-open", "ElicitationSchemaType", "breaking", CLIENT, new=open_schema_type),
    # unions: RequestPermissionOutcome is open and sent by clients
    Case(
        "union-variant-added-open", "RequestPermissionOutcome['deferred']", "info", NOBODY, new=add_deferred
    ),
    Case(
        "union-variant-removed-open",
        "RequestPermissionOutcome['cancelled']",
        "warning",
        CLIENT,
        new=drop_cancelled_outcome,
    ),
    Case(
        "union-variant-added-closed",
        "RequestPermissionOutcome['deferred']",
        "breaking",
        AGENT,
        old=close_outcome,
        new=both(close_outcome, add_deferred),
    ),
    Case(
        "union-variant-removed-closed",
        "RequestPermissionOutcome['cancelled']",
        "breaking",
        CLIENT,
        old=close_outcome,
        new=both(close_outcome, drop_cancelled_outcome),
    ),
    # a variant added whose tag the old catch-all refused: old receivers refuse it, though the union is open
    Case(
        "union-variant-added-closed",
        "RequestPermissionOutcome['deferred']",
        "breaking",
        AGENT,
        old=reserve_deferred,
        new=both(reserve_deferred, add_deferred),
    ),
    Case(
        "union-tag-reserved",
        "RequestPermissionOutcome[other]['deferred']",
        "breaking",
        CLIENT,
        new=reserve_deferred,
    ),
    Case(
        "union-tag-released",
        "RequestPermissionOutcome[other]['deferred']",
        "breaking",
        AGENT,
        old=reserve_deferred,
    ),
    Case("union-became-closed", "RequestPermissionOutcome", "breaking", CLIENT, new=close_outcome),
    Case("union-became-open", "RequestPermissionOutcome", "breaking", AGENT, old=close_outcome),
    Case(
        "union-tag-claimed",
        "RequestPermissionOutcome[other]['deferred']",
        "warning",
        CLIENT,
        new=outcome_deferred_with_reason,
    ),
    Case(
        "union-tag-changed",
        "RequestPermissionOutcome",
        "breaking",
        BOTH,
        new=outcome_tag_is_kind,
        detail="outcome -> kind",
    ),
    Case("object-became-union", "Cost", "warning", CLIENT, new=cost_union, detail="a union on kind"),
    Case("union-became-object", "Cost", "breaking", AGENT, old=cost_union),
    Case("python-class-became-union", "Cost", "breaking", PYTHON, new=cost_union, detail="a union on kind"),
    Case("python-union-became-class", "Cost", "warning", PYTHON, old=cost_union),
    Case(
        "python-annotation-changed",
        "ToolCallUpdate.status",
        "warning",
        PYTHON,
        new=status_as_string,
        detail="ToolCallStatus | null -> string | null",
    ),
    # stability of types and union members (the unstable schema marks them)
    Case("type-became-unstable", "Cost", "warning", NOBODY, new_ir=mark_unstable("Cost")),
    Case("type-became-stable", "Cost", "info", NOBODY, old_ir=mark_unstable("Cost")),
    Case(
        "variant-became-unstable",
        "RequestPermissionOutcome['cancelled']",
        "warning",
        NOBODY,
        new_ir=mark_unstable("CancelledRequestPermissionOutcome"),
    ),
    Case(
        "variant-became-stable",
        "RequestPermissionOutcome['cancelled']",
        "info",
        NOBODY,
        old_ir=mark_unstable("CancelledRequestPermissionOutcome"),
    ),
    # methods: session/prompt is handled by agents (clients call it)
    Case("method-added", "request session/pause (handled by the agent)", "info", NOBODY, new_ir=with_pause),
    Case(
        "method-removed",
        "request session/prompt (handled by the agent)",
        "breaking",
        CLIENT,
        new_ir=methods_edit(without_prompt),
    ),
    Case(
        "notification-added",
        "notification session/ping (handled by the agent)",
        "info",
        NOBODY,
        new_ir=with_ping,
    ),
    Case(
        "notification-removed",
        "notification session/cancel (handled by the agent)",
        "warning",
        CLIENT,
        new_ir=methods_edit(without_cancel),
    ),
    Case(
        "method-kind-changed",
        "request session/cancel (handled by the agent)",
        "breaking",
        BOTH,
        new_ir=methods_edit(cancel_as_request),
        detail="notification -> request",
    ),
    Case(
        "method-moved-side",
        "notification session/cancel (handled by the client)",
        "breaking",
        BOTH,
        new_ir=methods_edit(cancel_to_client),
        detail="handled by the agent -> by the client",
    ),
    Case(
        "method-became-unstable",
        "request session/prompt (handled by the agent)",
        "warning",
        CLIENT,
        new_ir=methods_edit(prompt_unstable),
    ),
    Case(
        "method-became-stable",
        "request session/prompt (handled by the agent)",
        "info",
        NOBODY,
        old_ir=methods_edit(prompt_unstable),
    ),
    # lenient deserialisation and defaults
    Case(
        "lenient-annotation-added",
        "PromptRequest.prompt",
        "info",
        NOBODY,
        new=lenient_prompt,
        detail="x-deserialize-skip-invalid-items",
    ),
    Case(
        "lenient-annotation-removed",
        "ToolCallUpdate.name",
        "warning",
        AGENT,
        new=drop_tool_name_lenience,
        detail="x-deserialize-default-on-error",
    ),
    Case(
        "default-changed",
        "InitializeRequest.capabilities",
        "warning",
        BOTH,
        new=drop_capabilities_default,
        detail="{} -> none",
    ),
    Case(
        "normative-text-changed",
        "PromptRequest",
        "info",
        NOBODY,
        new=prompt_must,
        detail="adds “Clients MUST NOT send an empty prompt.”",
    ),
    Case(
        "normative-text-moved",
        "IdleStateUpdate",
        "info",
        NOBODY,
        new=stop_reason_sentence_to_its_type,
        detail="moves “Agents SHOULD include this when the idle transition ends foreground work.” from "
        "IdleStateUpdate.stopReason, now “Agents SHOULD include a `stopReason` when the idle transition ends "
        "foreground work.”",
    ),
    # python names
    Case("python-class-added", "Unused", "info", NOBODY, new=add_unused_type),
    Case(
        "python-class-replaced",
        "UsageUpdate.cost",
        "breaking",
        PYTHON,
        new=cost_as_price,
        detail="Cost -> Price",
    ),
    Case(
        "python-class-argument-required",
        "PromptResponse.mode",
        "breaking",
        PYTHON,
        new=prompt_response_mode,
    ),
    Case("python-class-removed", "Unused", "breaking", PYTHON, old=add_unused_type),
    Case("python-class-renamed", "Cost", "breaking", PYTHON, new=rename("Cost", "Price"), detail="now Price"),
    # an untagged union: its variants have no tag to order them by
    Case(
        "python-class-renamed",
        "ElicitationContentValue",
        "breaking",
        PYTHON,
        new=rename("ElicitationContentValue", "ElicitationValue"),
        detail="now ElicitationValue",
    ),
    Case(
        "ref-became-inline",
        "InitializeRequest.info",
        "breaking",
        PYTHON,
        new=inline_info,
        detail="Implementation -> InitializeRequestInfo",
    ),
    Case(
        "inline-became-ref",
        "InitializeRequest.info",
        "breaking",
        PYTHON,
        old=inline_info,
        detail="InitializeRequestInfo -> Implementation",
    ),
    Case(
        "python-attribute-removed",
        "PromptRequest.prompt",
        "breaking",
        PYTHON,
        new=drop_field("PromptRequest", "prompt"),
    ),
    Case(
        "python-attribute-renamed",
        "PromptRequest.sessionId",
        "breaking",
        PYTHON,
        new=add_session_id_twin,
        detail="session_id -> session_id_",
    ),
    Case("python-method-removed", "agent.prompt", "breaking", PYTHON, new_ir=methods_edit(without_prompt)),
    Case(
        "python-method-renamed",
        "agent.list",
        "breaking",
        PYTHON,
        new=rename("ListSessionsRequest", "ListRequest"),
        detail="list_sessions -> list",
    ),
    Case(
        "python-method-argument-removed",
        "agent.prompt(prompt)",
        "breaking",
        PYTHON,
        new=drop_field("PromptRequest", "prompt"),
    ),
    Case(
        "python-method-argument-renamed",
        "agent.prompt(session_id_)",
        "breaking",
        PYTHON,
        new=add_session_id_twin,
        detail="session_id -> session_id_",
    ),
    Case(
        "python-method-argument-required", "agent.prompt(mode)", "breaking", PYTHON, new=add_prompt_mode(True)
    ),
    Case("python-method-argument-added", "agent.prompt(mode)", "info", NOBODY, new=add_prompt_mode(False)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.rule)
def test_rule(case: Case) -> None:
    old, new = case.surfaces()
    change = only(changes(old, new), case.rule)
    assert change.subject == case.subject
    assert change.severity == case.severity
    assert change.roles == case.roles
    if case.detail is not None:
        assert change.detail == case.detail


# --- the same, on a small hand-written release (tests.support.diffkit.mini) ----------------------
#
# PromptRequest is sent by clients (session/prompt params), UpdateNotification by agents.

MiniEdit = Callable[[Mini], None]


def value_members(m: Mini) -> list[dict[str, Any]]:
    members: list[dict[str, Any]] = m.defs["Value"]["anyOf"]
    return members


def lines_at_least_one(m: Mini) -> None:
    """``Value``'s list member gains ``minItems: 1`` (the member's own constraint)."""
    value_members(m)[1]["minItems"] = 1


def value_one_of(m: Mini) -> None:
    m.defs["Value"]["oneOf"] = m.defs["Value"].pop("anyOf")


def value_with_word(m: Mini) -> None:
    """A member that overlaps another (a short string is a string): oneOf refuses what both take."""
    value_members(m).append({"title": "Word", "type": "string", "maxLength": 8})


def value_one_of_overlapping(m: Mini) -> None:
    value_with_word(m)
    value_one_of(m)


def update_untagged(m: Mini) -> None:
    """``Update`` has one member and no tag (the state ``update_tagged_with_default`` changes)."""
    m.defs["Update"] = {
        "anyOf": [{"title": "message", "type": "object", "properties": {"text": {"type": "string"}}}]
    }


def update_tagged_with_default(m: Mini) -> None:
    """``Update`` dispatches on ``kind``: a ``plan`` variant, and the old member as the default one."""
    update_untagged(m)
    plan = {
        "type": "object",
        "properties": {"kind": {"type": "string", "const": "plan"}},
        "required": ["kind"],
    }
    m.defs["Update"]["anyOf"].insert(0, plan)


def value_takes_anything(m: Mini) -> None:
    """An untyped member: the union now takes any JSON value."""
    value_members(m).append({"title": "Other", "description": "Any other value."})


def lenient_session_id(m: Mini) -> None:
    m.defs["PromptRequest"]["properties"]["sessionId"]["x-deserialize-default-on-error"] = True


def lenient_update(m: Mini) -> None:
    """``update`` drops an invalid value (two keywords on one field)."""
    m.defs["UpdateNotification"]["properties"]["update"].update(
        {"x-deserialize-default-on-error": True, "x-deserialize-skip-invalid-items": True}
    )


def agent_batches(m: Mini) -> None:
    m.roots.append(batch("Agent"))


def data_spelt_as_a_union(m: Mini) -> None:
    """``data`` (any value) becomes ``Data``, a string or any value: the same values, another spelling."""
    m.defs["Data"] = {"anyOf": [{"title": "Text", "type": "string"}, {"title": "Other"}]}
    m.defs["PromptRequest"]["properties"]["data"] = {"$ref": "#/$defs/Data"}


def with_proxy(surface: ApiSurface) -> ApiSurface:
    """A proxy side with two methods (the IR's own words: issue 17's builder reads ``x-side: proxy``)."""
    added = (
        Method("proxy/initialize", "proxy_initialize", "proxy", "request", "PromptRequest", "PromptResponse"),
        Method("proxy/successor", "proxy_successor", "proxy", "notification", "UpdateNotification", None),
    )
    return dataclasses.replace(surface, methods=(*surface.methods, *added))  # type: ignore[arg-type]


def null_as_default(surface: ApiSurface) -> ApiSurface:
    """``PromptRequest.sessionId`` reads null as its default (``x-deserialize-default-on-null``)."""
    request = surface.object("PromptRequest")
    fields = tuple(
        dataclasses.replace(f, default_on_null=True) if f.wire_name == "sessionId" else f
        for f in request.fields
    )
    return dataclasses.replace(
        surface, types={**surface.types, "PromptRequest": dataclasses.replace(request, fields=fields)}
    )


@dataclasses.dataclass(frozen=True)
class MiniCase:
    rule: str
    subject: str
    severity: str
    roles: tuple[str, ...]
    new: MiniEdit | None = None
    old: MiniEdit | None = None
    new_ir: Callable[[ApiSurface], ApiSurface] | None = None
    old_ir: Callable[[ApiSurface], ApiSurface] | None = None
    detail: str | None = None

    def surfaces(self) -> tuple[ApiSurface, ApiSurface]:
        built = []
        for edit, ir_edit in ((self.old, self.old_ir), (self.new, self.new_ir)):
            release = mini()
            if edit is not None:
                edit(release)
            surface = release.surface()
            built.append(ir_edit(surface) if ir_edit else surface)
        return built[0], built[1]


MINI_CASES = [
    MiniCase(
        "side-added",
        "side proxy",
        "info",
        NOBODY,
        new_ir=with_proxy,
        detail="methods proxy/initialize, proxy/successor",
    ),
    MiniCase(
        "side-removed",
        "side proxy",
        "breaking",
        ("old agent", "old client", "old proxy"),
        old_ir=with_proxy,
        detail="methods proxy/initialize, proxy/successor",
    ),
    MiniCase(
        "envelope-added",
        "batch AgentBatchCall (sent by the agent)",
        "warning",
        CLIENT,
        new=agent_batches,
        detail="holds Request, Notification",
    ),
    MiniCase(
        "envelope-removed",
        "batch AgentBatchCall (sent by the agent)",
        "breaking",
        AGENT,
        old=agent_batches,
        detail="held Request, Notification",
    ),
    MiniCase(
        "constraint-tightened",
        "Value[list[string]]",
        "breaking",
        CLIENT,
        new=lines_at_least_one,
        detail="minItems none -> 1",
    ),
    MiniCase(
        "constraint-loosened",
        "Value[list[string]]",
        "warning",
        AGENT,
        old=lines_at_least_one,
        detail="minItems 1 -> none",
    ),
    MiniCase(
        "lenient-annotation-added",
        "PromptRequest.sessionId",
        "info",
        NOBODY,
        new=lenient_session_id,
        detail="x-deserialize-default-on-error",
    ),
    MiniCase(
        "lenient-annotation-removed",
        "UpdateNotification.update",
        "warning",
        AGENT,
        old=lenient_update,
        detail="x-deserialize-default-on-error, x-deserialize-skip-invalid-items",
    ),
    MiniCase(
        "lenient-annotation-added",
        "PromptRequest.sessionId",
        "info",
        NOBODY,
        new_ir=null_as_default,
        detail="x-deserialize-default-on-null",
    ),
    MiniCase(
        "lenient-annotation-removed",
        "PromptRequest.sessionId",
        "warning",
        CLIENT,
        old_ir=null_as_default,
        detail="x-deserialize-default-on-null",
    ),
    MiniCase("union-became-open", "Value", "breaking", AGENT, new=value_takes_anything),
    MiniCase("union-became-closed", "Value", "breaking", CLIENT, old=value_takes_anything),
    MiniCase(
        "union-became-exclusive",
        "Value",
        "warning",
        CLIENT,
        old=value_with_word,
        new=value_one_of_overlapping,
        detail="anyOf -> oneOf",
    ),
    MiniCase(
        "union-became-inclusive",
        "Value",
        "warning",
        AGENT,
        old=value_one_of_overlapping,
        new=value_with_word,
        detail="oneOf -> anyOf",
    ),
    MiniCase(
        "union-dispatch-changed",
        "Update",
        "warning",
        CLIENT,
        old=update_untagged,
        new=update_tagged_with_default,
        detail="untagged -> kind",
    ),
    MiniCase(
        "python-annotation-changed",
        "PromptRequest.data",
        "warning",
        PYTHON,
        new=data_spelt_as_a_union,
        detail="any -> Data",
    ),
]


@pytest.mark.parametrize("case", MINI_CASES, ids=lambda c: f"{c.rule}-{c.detail or c.subject}")
def test_rule_on_a_hand_written_release(case: MiniCase) -> None:
    old, new = case.surfaces()
    change = only(changes(old, new), case.rule)
    assert change.subject == case.subject
    assert (change.severity, change.roles) == (case.severity, case.roles)
    if case.detail is not None:
        assert change.detail == case.detail


def test_a_new_side_brings_its_methods() -> None:
    found = changes(mini().surface(), with_proxy(mini().surface()))
    added = {(c.rule.id, c.subject) for c in found if c.rule.category == "method"}
    assert added == {
        ("method-added", "request proxy/initialize (handled by the proxy)"),
        ("notification-added", "notification proxy/successor (handled by the proxy)"),
    }
    side = only(found, "side-added")
    assert side.path == (SidePart("proxy"),) and side.new == Names(("proxy/initialize", "proxy/successor"))


def test_an_untyped_member_opens_the_union_and_is_no_variant() -> None:
    found = changes(mini().surface(), edited_mini(value_takes_anything))
    assert [c.rule.id for c in found if c.layer == "wire"] == ["union-became-open"]


def test_a_union_member_s_constraint_is_one_change_at_that_member() -> None:
    found = changes(mini().surface(), edited_mini(lines_at_least_one))
    [change] = found
    assert change.path == (
        TypePart("Value"),
        MemberPart(None, member=ArrayOf(Scalar("string"))),
        KeywordPart("minItems"),
    )
    assert (change.old, change.new) == (None, Bound(1))


def test_the_same_values_spelt_another_way_are_not_narrowed() -> None:
    found = changes(mini().surface(), edited_mini(data_spelt_as_a_union))
    assert {c.rule.id for c in found} == {"python-annotation-changed", "python-class-added"}


def edited_mini(edit: MiniEdit) -> ApiSurface:
    release = mini()
    edit(release)
    return release.surface()


def test_every_rule_in_the_catalog_has_a_case() -> None:
    assert {c.rule for c in CASES} | {c.rule for c in MINI_CASES} == set(RULES)


def test_the_base_release_has_no_changes_against_itself() -> None:
    assert changes(base_surface(), base_surface()) == ()


# --- diff_releases, and its two sides (codegen.schema.releases) --------------------------------


def test_diff_releases_diffs_each_stability_level_asked_for_stable_first() -> None:
    result = diff_releases(release_files(A3), release_files(A5), ["unstable", "stable"])
    assert (result.old, result.new) == (A3, A5)
    assert [s.stability for s in result.surfaces] == ["stable", "unstable"]
    files = [display_path(release_files(r).schema(False).path) for r in (A3, A5)]
    assert files[1] == f"schemas/v2/{A5}/schema.json"  # relative to the current folder, the repository
    assert result.surfaces[0] == diff_surfaces(surface_of(A3, False), surface_of(A5, False), *files)
    assert {c.file for c in result.surfaces[0].changes} == {files[1]}
    assert diff_releases(release_files(A3), release_files(A5), ["stable"]).surfaces == result.surfaces[:1]


def test_diff_releases_refuses_two_protocol_versions(tmp_path: Path) -> None:
    draft = folder_of(tmp_path, A7)
    meta = json.loads((draft / "meta.json").read_text())
    meta["version"] = 3
    (draft / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(CodegenError) as exc:
        diff_releases(release_files(A7), load_schema_folder(draft), ["stable"])
    assert (
        "cannot compare protocol version 2 (2.0.0-alpha.7) with protocol version 3 (side)"
        in exc.value.message
    )
    assert exc.value.pointer == "/version"


def test_a_side_is_a_folder_when_it_looks_like_a_path_else_a_locked_release(tmp_path: Path) -> None:
    source = SchemaSource(read_lock())
    assert open_side(A7, source).release == A7
    draft = folder_of(tmp_path, A7, "draft")
    side = open_side(str(draft), source)
    assert (side.release, side.folder) == ("draft", draft)


def test_the_surfaces_of_a_side_are_the_ones_asked_for() -> None:
    files = release_files(A7)
    assert list(surfaces_of(files, ["unstable", "stable"])) == ["stable", "unstable"]
    assert list(surfaces_of(files, ["stable"])) == ["stable"]
    unstable = surfaces_of(files, ["unstable"])
    assert list(unstable) == ["unstable"]
    # the unstable surface is built on the stable one, as for the generated packages
    assert unstable["unstable"] == surface_of(A7, True)


def test_a_side_without_its_unstable_schema_has_only_a_stable_surface(tmp_path: Path) -> None:
    draft = folder_of(tmp_path, A7)
    (draft / "schema.unstable.json").unlink()
    (draft / "meta.unstable.json").unlink()
    files = load_schema_folder(draft)
    assert list(surfaces_of(files, ["stable"])) == ["stable"]
    with pytest.raises(CodegenError) as exc:
        surfaces_of(files, ["stable", "unstable"])
    assert exc.value.message == "schema.unstable.json is missing, and --stability unstable needs it"


def test_an_object_that_becomes_a_union_needing_a_tag_adds_that_required_field() -> None:
    """Old senders of ``Cost`` never sent ``kind``; every member of the new union requires it."""
    found = changes(base_surface(), edited(cost_union))
    tag = only(found, "field-added-required")
    assert (tag.subject, tag.detail, tag.roles) == ("Cost.kind", "type 'estimate' | 'invoice'", AGENT)


def test_a_union_with_a_member_for_an_absent_tag_adds_no_required_field() -> None:
    def cost_union_or_untagged(defs: Defs) -> None:
        cost_union(defs)
        defs["Cost"]["anyOf"].append(
            {"title": "none", "type": "object", "properties": {"kind": {"type": "null"}}}
        )

    found = changes(base_surface(), edited(cost_union_or_untagged))
    assert not [c for c in found if c.rule.id == "field-added-required"]
