"""One test per rule of the catalog, each on a small mutation of a real release (2.0.0-alpha.7).

Who sends what in the base release (read from the schema): clients send
``PromptRequest`` (session/prompt params), ``InitializeRequest`` and
``RequestPermissionOutcome`` (in the session/request_permission result);
agents send ``ToolCallUpdate`` and ``UsageUpdate``/``Cost`` (session/update),
``RequestPermissionRequest`` and ``ElicitationSchema`` (elicitation/create
params).  Schema edits go through the real IR builder; method edits change
the IR's method table, since a method lives in several places of the schema
(envelopes, meta table, x-side) that must move together.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from codegen.diff.rules import BECAME, CATALOG, MEMBER_ADDED, MEMBER_REMOVED, RULES, RuleId, impact
from codegen.schema.ir import ApiSurface, Method
from tests.support.diffkit import (
    Defs,
    base_data,
    base_surface,
    changes,
    deep,
    edited,
    only,
    props,
    renamed,
    surface_from,
)

CLIENT = ("old client",)
AGENT = ("old agent",)
BOTH = ("old agent", "old client")
PYTHON = ("python callers",)
NOBODY: tuple[str, ...] = ()


# --- schema edits -----------------------------------------------------------------


def add_prompt_mode(required: bool) -> Callable[[Defs], None]:
    def edit(defs: Defs) -> None:
        props(defs, "PromptRequest")["mode"] = {"type": "string"}
        if required:
            defs["PromptRequest"]["required"].append("mode")

    return edit


def drop_field(name: str, wire: str) -> Callable[[Defs], None]:
    def edit(defs: Defs) -> None:
        del props(defs, name)[wire]
        if wire in defs[name].get("required", []):
            defs[name]["required"].remove(wire)

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


def drop_cancelled_outcome(defs: Defs) -> None:
    outcome_members(defs)[:] = [
        m
        for m in outcome_members(defs)
        if m.get("properties", {}).get("outcome", {}).get("const") != "cancelled"
    ]


def both(*edits: Callable[[Defs], None]) -> Callable[[Defs], None]:
    def edit(defs: Defs) -> None:
        for step in edits:
            step(defs)

    return edit


def outcome_tag_is_kind(defs: Defs) -> None:
    defs["RequestPermissionOutcome"] = json.loads(
        json.dumps(defs["RequestPermissionOutcome"]).replace('"outcome"', '"kind"')
    )


def rename(old: str, new: str) -> Callable[[Defs], None]:
    def edit(defs: Defs) -> None:
        defs.update(renamed({"$defs": defs}, old, new)["$defs"])
        del defs[old]

    return edit


def add_unused_type(defs: Defs) -> None:
    defs["Unused"] = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}


def add_session_id_twin(defs: Defs) -> None:
    """A wire name that is already ``session_id`` in Python: sessionId's attribute becomes ``session_id_``."""
    props(defs, "PromptRequest")["session_id"] = {"type": "string"}


# --- IR edits (the method table) -------------------------------------------------------


def methods_edit(edit: Callable[[Method], Method | None]) -> Callable[[ApiSurface], ApiSurface]:
    def apply(surface: ApiSurface) -> ApiSurface:
        kept = [m for m in (edit(m) for m in surface.methods) if m is not None]
        return dataclasses.replace(surface, methods=tuple(kept))

    return apply


def without_prompt(m: Method) -> Method | None:
    return None if m.wire_name == "session/prompt" else m


def cancel_to_client(m: Method) -> Method:
    return dataclasses.replace(m, side="client") if m.wire_name == "session/cancel" else m


def prompt_unstable(m: Method) -> Method:
    return dataclasses.replace(m, unstable=True) if m.wire_name == "session/prompt" else m


def with_pause(surface: ApiSurface) -> ApiSurface:
    pause = Method("session/pause", "session_pause", "agent", "request", "PromptRequest", "PromptResponse")
    return dataclasses.replace(surface, methods=(*surface.methods, pause))


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

    def surfaces(self) -> tuple[ApiSurface, ApiSurface]:
        old = edited(self.old) if self.old else base_surface()
        new = edited(self.new) if self.new else base_surface()
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
    Case("union-became-closed", "RequestPermissionOutcome", "breaking", CLIENT, new=close_outcome),
    Case("union-became-open", "RequestPermissionOutcome", "breaking", AGENT, old=close_outcome),
    Case(
        "union-tag-changed",
        "RequestPermissionOutcome",
        "breaking",
        BOTH,
        new=outcome_tag_is_kind,
        detail="outcome -> kind",
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
    # python names
    Case("python-class-added", "Unused", "info", NOBODY, new=add_unused_type),
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


def test_every_rule_in_the_catalog_has_a_case() -> None:
    assert {c.rule for c in CASES} == set(RULES)


def test_the_base_release_has_no_changes_against_itself() -> None:
    assert changes(base_surface(), base_surface()) == ()


# --- renames ---------------------------------------------------------------------------


def test_a_renamed_type_is_one_python_change_and_nothing_on_the_wire() -> None:
    found = changes(base_surface(), edited(rename("Cost", "Price")))
    assert [(c.rule.id, c.subject, c.detail, c.roles) for c in found] == [
        ("python-class-renamed", "Cost", "now Price", PYTHON)
    ]


def test_a_renamed_params_type_renames_the_python_method() -> None:
    found = changes(base_surface(), edited(rename("ListSessionsRequest", "ListRequest")))
    assert {(c.rule.id, c.subject, c.detail) for c in found} == {
        ("python-class-renamed", "ListSessionsRequest", "now ListRequest"),
        ("python-method-renamed", "agent.list", "list_sessions -> list"),
    }
    assert all(c.layer == "python" for c in found)


def test_renames_are_found_through_references_to_renamed_types() -> None:
    data = renamed(renamed(base_data(), "UsageUpdate", "UsageReport"), "Cost", "Price")
    found = changes(base_surface(), surface_from(data))
    renames = {(c.subject, c.detail) for c in found if c.rule.id == "python-class-renamed"}
    assert ("Cost", "now Price") in renames
    assert ("UsageUpdate", "now UsageReport") in renames
    assert not [c for c in found if c.layer == "wire"]


def test_a_changed_shape_is_a_removal_and_an_addition_not_a_rename() -> None:
    data = renamed(base_data(), "Cost", "Price")
    data["$defs"]["Price"]["properties"]["extra"] = {"type": "string"}
    found = changes(base_surface(), surface_from(data))
    assert only(found, "python-class-removed").subject == "Cost"
    assert only(found, "python-class-added").subject == "Price"
    assert only(found, "type-changed").subject == "UsageUpdate.cost"


def test_the_same_change_is_mirrored_by_who_sends_the_type() -> None:
    """A new required field breaks its senders: clients for PromptRequest, agents for PromptResponse."""

    def add_to(name: str) -> Callable[[Defs], None]:
        def edit(defs: Defs) -> None:
            props(defs, name)["extra"] = {"type": "string"}
            defs[name].setdefault("required", []).append("extra")

        return edit

    assert (
        only(changes(base_surface(), edited(add_to("PromptRequest"))), "field-added-required").roles == CLIENT
    )
    assert (
        only(changes(base_surface(), edited(add_to("PromptResponse"))), "field-added-required").roles == AGENT
    )
    assert (
        only(changes(base_surface(), edited(add_to("Implementation"))), "field-added-required").roles == BOTH
    )


def test_a_change_in_a_type_no_message_carries_is_info() -> None:
    def old(defs: Defs) -> None:
        add_unused_type(defs)

    def new(defs: Defs) -> None:
        add_unused_type(defs)
        defs["Unused"]["properties"]["y"] = {"type": "string"}
        defs["Unused"]["required"].append("y")

    change = only(changes(edited(old), edited(new)), "field-added-required")
    assert (change.severity, change.roles) == ("info", ())


def test_untagged_union_members_are_matched_by_type() -> None:
    """``ElicitationContentValue`` has no tag and no catch-all: a new member is a closed-union addition."""

    def add_integer_list(defs: Defs) -> None:
        member = {"title": "IntegerArray", "type": "array", "items": {"type": "integer"}}
        defs["ElicitationContentValue"]["anyOf"].append(member)

    found = changes(base_surface(), edited(add_integer_list))
    change = only(found, "union-variant-added-closed")
    assert (change.subject, change.roles) == ("ElicitationContentValue[list[integer]]", AGENT)
    assert len(found) == 1


# --- python method signatures: the bindings' own -------------------------------------------


def python_methods(found: tuple[Any, ...]) -> set[tuple[str, str, str]]:
    return {(c.rule.id, c.subject, c.detail) for c in found if c.rule.id.startswith("python-method")}


def test_meta_is_no_python_argument() -> None:
    """The bindings leave ``_meta`` out of the signatures (extra keyword arguments carry it)."""
    found = changes(base_surface(), edited(drop_field("PromptRequest", "_meta")))
    assert python_methods(found) == set()
    assert only(found, "python-attribute-removed").subject == "PromptRequest.field_meta"


def test_a_field_every_branch_of_a_union_params_type_requires_is_a_required_argument() -> None:
    """``set_config_option`` takes the fields of all the branches of SetSessionConfigOptionRequest."""

    def edit(defs: Defs) -> None:
        props(defs, "SetSessionConfigOptionRequest")["mode"] = {"type": "string"}
        defs["SetSessionConfigOptionRequest"]["required"].append("mode")

    assert python_methods(changes(base_surface(), edited(edit))) == {
        ("python-method-argument-required", "agent.set_config_option(mode)", ""),
    }


def test_a_field_one_branch_of_a_union_params_type_requires_is_an_optional_argument() -> None:
    """Only the boolean branch has ``mode``; the known branches now differ, so ``type`` must be given."""

    def edit(defs: Defs) -> None:
        branch = defs["SetSessionConfigOptionRequest"]["anyOf"][1]
        assert branch["properties"]["type"]["const"] == "boolean"
        branch["properties"]["mode"] = {"type": "string"}
        branch["required"].append("mode")

    assert python_methods(changes(base_surface(), edited(edit))) == {
        ("python-method-argument-added", "agent.set_config_option(mode)", ""),
        ("python-method-argument-required", "agent.set_config_option(type)", ""),
    }


def test_a_protocol_method_is_on_the_agent_and_the_client() -> None:
    def edit(defs: Defs) -> None:
        props(defs, "CancelRequestNotification")["reason"] = {"type": "string"}
        defs["CancelRequestNotification"]["required"].append("reason")

    assert python_methods(changes(base_surface(), edited(edit))) == {
        ("python-method-argument-required", "agent.cancel_request(reason)", ""),
        ("python-method-argument-required", "client.cancel_request(reason)", ""),
    }


def test_a_method_that_moves_side_leaves_the_old_handler_class() -> None:
    found = changes(base_surface(), methods_edit(cancel_to_client)(base_surface()))
    assert python_methods(found) == {
        ("python-method-removed", "agent.session_cancel", "handled by the agent -> by the client"),
    }


# --- the direction rule ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("breaks", "senders", "expected"),
    [
        ("senders", ["client"], ("breaking", CLIENT)),
        ("senders", ["agent"], ("breaking", AGENT)),
        ("receivers", ["client"], ("breaking", AGENT)),
        ("receivers", ["agent"], ("breaking", CLIENT)),
        ("both", ["agent"], ("breaking", BOTH)),
        ("senders", ["agent", "client"], ("breaking", BOTH)),
        ("senders", [], ("info", NOBODY)),
        ("python", [], ("breaking", PYTHON)),
        ("nobody", ["agent"], ("breaking", NOBODY)),
    ],
)
def test_impact_resolves_the_flow_to_roles(
    breaks: str, senders: list[str], expected: tuple[str, Any]
) -> None:
    rule = dataclasses.replace(CATALOG[0], breaks=breaks, severity="breaking")  # type: ignore[arg-type]
    assert impact(rule, senders) == expected  # type: ignore[arg-type]


def test_rule_ids_are_unique_kebab_case_and_explained_in_one_line() -> None:
    assert len(RULES) == len(CATALOG)
    for rule in CATALOG:
        assert rule.id == rule.id.lower() and " " not in rule.id and "_" not in rule.id
        assert rule.summary and "\n" not in rule.summary and rule.summary.endswith(".")
        if rule.layer == "wire":
            assert rule.breaks != "python"
        else:
            assert rule.breaks in ("python", "nobody")


def test_every_rule_id_has_exactly_one_catalog_entry_and_every_entry_an_id() -> None:
    counts = collections.Counter(r.id for r in CATALOG)
    assert {rule_id: counts[rule_id] for rule_id in RuleId} == dict.fromkeys(RuleId, 1)
    assert all(isinstance(r.id, RuleId) for r in CATALOG)
    assert set(RULES) == set(RuleId) and all(RULES[r.id] is r for r in CATALOG)


def test_rule_ids_are_declared_in_the_catalog_order() -> None:
    """The catalog's order is the order of docs/rules.md and of the reports; the enum follows it."""
    assert [r.id for r in CATALOG] == list(RuleId)


def test_a_rule_id_is_its_kebab_case_string() -> None:
    """Reports, fingerprints and waivers show the value, so it must read as the plain string."""
    for rule_id in RuleId:
        assert rule_id == rule_id.value == str(rule_id) == f"{rule_id}"
        assert rule_id.name == rule_id.value.upper().replace("-", "_")


@pytest.mark.parametrize(
    ("table", "pattern"),
    [
        (BECAME, "{kind}-became-{state}"),
        (MEMBER_ADDED, "{kind}-{noun}-added-{state}"),
        (MEMBER_REMOVED, "{kind}-{noun}-removed-{state}"),
    ],
    ids=["became", "added", "removed"],
)
def test_the_rules_picked_by_kind_and_state_are_the_ids_they_spell(table: Any, pattern: str) -> None:
    """The typed lookups replace ids built as f-strings: each key gives the id the f-string gave."""
    nouns = {"union": "variant", "enum": "value"}
    assert set(table) == set(itertools.product(("union", "enum"), ("open", "closed")))
    for (kind, state), rule_id in table.items():
        assert rule_id == pattern.format(kind=kind, noun=nouns[kind], state=state)
