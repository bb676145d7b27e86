"""The verdicts an audit of the differ found wrong or missing (issue 24), each on the smallest schema pair.

The pairs are edits of a small hand-written release (``tests.support.diffkit.mini``): clients call
``session/prompt`` (``PromptRequest`` is theirs, ``PromptResponse`` the agent's) and agents send
``session/update`` notifications (``UpdateNotification``, whose ``update`` is a union on ``kind``).
Each test names the item of the issue it covers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from codegen.diff import DiffResult, SurfaceDiff, diff_surfaces
from codegen.diff.model import Change
from codegen.diff.payload import Sentences
from codegen.schema.ir import ApiSurface, Method, Stability, normative
from tests.support.diffkit import AGENT, BOTH, CLIENT, NOBODY, PYTHON, Mini, mini, only
from tests.support.schemas import catch_all, tagged

Edit = Callable[[Mini], None]


def release(*edits: Edit) -> Mini:
    found = mini()
    for edit in edits:
        edit(found)
    return found


def diff(old: tuple[Edit, ...], new: tuple[Edit, ...]) -> tuple[Change, ...]:
    return diff_surfaces(release(*old).surface(), release(*new).surface()).changes


def facts(found: tuple[Change, ...]) -> set[tuple[str, str, tuple[str, ...]]]:
    return {(c.rule.id, c.subject, c.roles) for c in found}


def props(m: Mini, name: str) -> dict[str, Any]:
    found: dict[str, Any] = m.defs[name]["properties"]
    return found


# --- shapes the base release does not have ------------------------------------------------------------------


def with_state_updates(m: Mini) -> None:
    """``Update`` gets a shared ``note``, a ``state`` member building on ``State`` (a union of its own,
    by ``$ref``) and a catch-all for other kinds: the shape of ACP's session updates."""
    m.defs["State"] = {
        "anyOf": [
            tagged("state", "running"),
            {
                **tagged("state", "idle"),
                "properties": {"state": {"const": "idle"}, "reason": {"type": "string"}},
            },
            catch_all("state", ["running", "idle"]),
        ]
    }
    m.defs["Update"] = {
        "type": "object",
        "properties": {"note": {"type": "string"}},
        "anyOf": [
            {
                **tagged("kind", "message"),
                "properties": {"kind": {"const": "message"}, "text": {"type": "string"}},
            },
            tagged("kind", "state", ref="State"),
            catch_all("kind", ["message", "state"]),
        ],
    }


def with_envelope_ids(m: Mini) -> None:
    """Every message kind carries ``jsonrpc``; responses carry an ``id`` (an integer or a string)."""
    for root in m.roots:
        root["properties"] = {"jsonrpc": {"type": "string", "enum": ["2.0"]}}
        root["required"] = ["jsonrpc"]
    for name in ("AgentResponse", "ClientResponse"):
        for member in m.defs[name]["anyOf"]:
            member["properties"]["id"] = {"type": ["integer", "string"]}


# --- 1. the JSON-RPC envelope is compared -------------------------------------------------------------------


def error_id_may_be_null(m: Mini) -> None:
    for name in ("AgentResponse", "ClientResponse"):
        error = next(member for member in m.defs[name]["anyOf"] if member["title"] == "Error")
        error["properties"]["id"] = {"type": ["integer", "string", "null"]}


def ids_are_strings(m: Mini) -> None:
    for name in ("AgentResponse", "ClientResponse"):
        for member in m.defs[name]["anyOf"]:
            member["properties"]["id"] = {"type": "string"}


def jsonrpc_3(m: Mini) -> None:
    for root in m.roots:
        root["properties"]["jsonrpc"]["enum"] = ["3.0"]


def test_1_an_error_response_whose_id_may_be_null_breaks_the_old_peers_that_read_it() -> None:
    """An agent's error response goes to clients, a client's to agents: each old reader refuses ``null``."""
    found = diff((with_envelope_ids,), (with_envelope_ids, error_id_may_be_null))
    assert facts(found) == {
        ("field-became-nullable", "AgentResponse[Error].id", CLIENT),
        ("field-became-nullable", "ClientResponse[Error].id", AGENT),
    }


def test_1_string_only_ids_and_another_jsonrpc_version_are_reported() -> None:
    found = diff((with_envelope_ids,), (with_envelope_ids, ids_are_strings, jsonrpc_3))
    assert facts(found) >= {
        ("type-narrowed", "AgentResponse[Result].id", AGENT),
        ("type-narrowed", "AgentResponse[Error].id", AGENT),
        ("type-narrowed", "ClientResponse[Result].id", CLIENT),
        ("type-changed", "agent messages.jsonrpc", BOTH),
        ("type-changed", "client messages.jsonrpc", BOTH),
    }
    assert not [c for c in found if c.severity == "info"]


def test_1_the_payloads_an_envelope_carries_are_compared_method_by_method() -> None:
    """A new method adds a payload to the envelope's ``params``: that is the method's change, once."""

    def with_ping(m: Mini) -> None:
        m.defs["PingRequest"] = {"type": "object", "x-method": "ping", "x-side": "agent"}
        m.defs["PingResponse"] = {"type": "object", "x-method": "ping", "x-side": "agent"}
        m.defs["ClientRequest"]["properties"]["params"]["anyOf"][0]["anyOf"].append(
            {"title": "PingRequest", "allOf": [{"$ref": "#/$defs/PingRequest"}]}
        )
        m.defs["AgentResponse"]["anyOf"][0]["properties"]["result"]["anyOf"].append(
            {"title": "PingResponse", "allOf": [{"$ref": "#/$defs/PingResponse"}]}
        )
        m.meta["agentMethods"]["ping"] = "ping"

    found = diff((), (with_ping,))
    assert {(c.rule.id, c.subject) for c in found if c.layer == "wire"} == {
        ("method-added", "request ping (handled by the agent)")
    }


# --- 2. a catch-all's reserved tags -------------------------------------------------------------------------


def reserve_file(m: Mini) -> None:
    """The catch-all refuses ``kind: "file"`` too, though no variant has it (a stable schema whose
    unstable variants are left out)."""
    other = m.defs["Update"]["anyOf"][-1]
    other["not"]["anyOf"].append(tagged("kind", "file"))


def test_2_a_tag_the_catch_all_refused_and_now_takes_breaks_old_receivers() -> None:
    found = diff((with_state_updates, reserve_file), (with_state_updates,))
    released = only(found, "union-tag-released")
    assert (released.subject, released.severity, released.roles) == (
        "Update[other]['file']",
        "breaking",
        CLIENT,
    )
    reserved = only(diff((with_state_updates,), (with_state_updates, reserve_file)), "union-tag-reserved")
    assert (reserved.subject, reserved.roles) == ("Update[other]['file']", AGENT)


def test_2_a_variant_for_a_tag_the_old_catch_all_refused_is_added_to_a_closed_union() -> None:
    def file_variant(m: Mini) -> None:
        m.defs["Update"]["anyOf"].insert(0, tagged("kind", "file"))
        m.defs["Update"]["anyOf"][-1]["not"]["anyOf"].append(tagged("kind", "file"))

    added = only(
        diff((with_state_updates, reserve_file), (with_state_updates, file_variant)),
        "union-variant-added-closed",
    )
    assert (added.subject, added.roles) == ("Update['file']", CLIENT)


# --- 3. additionalProperties: false -------------------------------------------------------------------------


def shared_info(m: Mini) -> None:
    """``Info``, sent by both peers: in the prompt (clients) and in every update (agents)."""
    m.defs["Info"] = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    props(m, "PromptRequest")["info"] = {"$ref": "#/$defs/Info"}
    props(m, "UpdateNotification")["info"] = {"$ref": "#/$defs/Info"}


def info_closed(m: Mini) -> None:
    m.defs["Info"]["additionalProperties"] = False


def test_3_an_object_that_refuses_other_members_breaks_both_senders() -> None:
    closed = only(diff((shared_info,), (shared_info, info_closed)), "object-became-closed")
    assert (closed.subject, closed.severity, closed.roles) == ("Info", "breaking", BOTH)
    opened = only(diff((shared_info, info_closed), (shared_info,)), "object-became-open")
    assert (opened.subject, opened.roles) == ("Info", BOTH)


# --- 4. a result that needs a new field ---------------------------------------------------------------------


def response_needs_message_id(m: Mini) -> None:
    props(m, "PromptResponse")["messageId"] = {"type": "string"}
    m.defs["PromptResponse"]["required"] = ["messageId"]


def prompt_needs_mode(m: Mini) -> None:
    props(m, "PromptRequest")["mode"] = {"type": "string"}
    m.defs["PromptRequest"]["required"].append("mode")


def test_4_a_result_that_needs_a_new_field_breaks_the_python_code_that_builds_it() -> None:
    found = diff((), (response_needs_message_id,))
    assert facts(found) == {
        ("field-added-required", "PromptResponse.messageId", AGENT),
        ("python-class-argument-required", "PromptResponse.message_id", PYTHON),
    }


def test_4_params_that_need_a_new_field_are_the_method_s_new_argument() -> None:
    found = diff((), (prompt_needs_mode,))
    assert {c.rule.id for c in found if c.layer == "python"} == {"python-method-argument-required"}


# --- 5. one change per schema location, on the schema's names, with its union's flow ------------------------


def note_required(m: Mini) -> None:
    m.defs["Update"]["required"] = ["note"]


def with_mood(m: Mini) -> None:
    props(m, "Update")["mood"] = {"type": "string"}


def test_5_a_field_every_member_shares_is_one_change_at_the_union_with_its_flow() -> None:
    found = diff((with_state_updates,), (with_state_updates, with_mood))
    assert [(c.rule.id, c.subject) for c in found if c.layer == "wire"] == [
        ("field-added-optional", "Update.mood")
    ]
    change = only(found, "field-added-optional")
    assert change.flow.old.senders == {"agent"} and change.flow.new.receivers == {"client"}
    required = diff((with_state_updates,), (with_state_updates, note_required))
    assert facts(required) == {
        ("field-became-required", "Update.note", AGENT),
        ("python-class-argument-required", "Update.note", PYTHON),
    }


def test_5_a_member_s_own_field_is_at_the_member_and_a_union_it_builds_on_at_that_union() -> None:
    def message_text_number(m: Mini) -> None:
        m.defs["Update"]["anyOf"][0]["properties"]["text"] = {"type": "number"}

    def idle_reason_required(m: Mini) -> None:
        m.defs["State"]["anyOf"][1]["required"].append("reason")

    found = diff((with_state_updates,), (with_state_updates, message_text_number, idle_reason_required))
    assert {(c.rule.id, c.subject) for c in found if c.layer == "wire"} == {
        ("type-changed", "Update['message'].text"),
        ("field-became-required", "State['idle'].reason"),  # not again under Update['state']
    }
    derived = {"MessageUpdate", "StateUpdate", "IdleStateUpdate", "RunningStateUpdate", "OtherUpdate"}
    assert not [c for c in found if c.layer == "wire" and c.subject.split("[")[0].split(".")[0] in derived]
    # State is carried only inside updates: its flow is theirs
    assert only(found, "field-became-required").roles == AGENT


# --- 6. a change in both schemas is one change --------------------------------------------------------------


def both_levels(old: tuple[Edit, ...], new: tuple[Edit, ...]) -> DiffResult:
    """The same edits diffed as a stable and as an unstable schema."""
    levels: list[SurfaceDiff] = []
    stabilities: tuple[Stability, ...] = ("stable", "unstable")
    for stability in stabilities:
        before, after = (_surface(release(*edits), stability) for edits in (old, new))
        levels.append(diff_surfaces(before, after))
    return DiffResult("old", "new", tuple(levels))


def _surface(m: Mini, stability: Stability) -> ApiSurface:
    return dataclasses.replace(m.surface(), stability=stability)


def test_6_a_change_in_the_stable_and_the_unstable_schema_is_listed_and_counted_once() -> None:
    result = both_levels((), (prompt_needs_mode,))
    [wire] = [c for c in result.changes if c.layer == "wire"]
    assert wire.appears_in == ("stable", "unstable") and wire.levels == ()
    assert len(result.failing("breaking")) == len({c.fingerprint for c in result.changes}) == 2


def test_6_a_change_that_weighs_differently_per_level_says_so() -> None:
    stable = diff_surfaces(mini().surface(), release(prompt_needs_mode).surface())
    bare = {"stability": "unstable", "methods": (), "envelopes": {}}  # no message carries PromptRequest there
    unstable_old = dataclasses.replace(mini().surface(), **bare)  # type: ignore[arg-type]
    unstable_new = dataclasses.replace(release(prompt_needs_mode).surface(), **bare)  # type: ignore[arg-type]
    unstable = diff_surfaces(unstable_old, unstable_new)
    [change] = [
        c for c in DiffResult("a", "b", (stable, unstable)).changes if c.rule.id == "field-added-required"
    ]
    assert (change.severity, change.roles) == ("breaking", CLIENT)
    assert [(level.stability, level.severity, level.roles) for level in change.levels] == [
        ("stable", "breaking", CLIENT),
        ("unstable", "info", NOBODY),
    ]


# --- 7. directions ------------------------------------------------------------------------------------------


def test_7_integer_to_number_is_a_widening_that_breaks_old_receivers_only() -> None:
    def number(m: Mini) -> None:
        m.defs["Update"]["anyOf"][0]["properties"]["count"] = {"type": "number"}

    def integer(m: Mini) -> None:
        m.defs["Update"]["anyOf"][0]["properties"]["count"] = {"type": "integer"}

    widened = only(diff((integer,), (number,)), "type-widened")
    assert (widened.subject, widened.detail, widened.roles) == (
        "Update['message'].count",
        "integer -> number",
        CLIENT,
    )
    narrowed = only(diff((number,), (integer,)), "type-narrowed")
    assert narrowed.roles == AGENT


def test_7_map_values_narrowed_to_strings_break_old_senders_only() -> None:
    def labels(value: dict[str, Any]) -> Edit:
        def edit(m: Mini) -> None:
            props(m, "PromptRequest")["labels"] = {"type": "object", "additionalProperties": value}

        return edit

    narrowed = only(diff((labels({}),), (labels({"type": "string"}),)), "type-narrowed")
    assert (narrowed.subject, narrowed.detail, narrowed.roles) == (
        "PromptRequest.labels",
        "values: any -> string",
        CLIENT,
    )


def test_7_a_result_replaced_by_a_stricter_type_breaks_old_handlers_only() -> None:
    def stricter_result(m: Mini) -> None:
        m.defs["StrictPromptResponse"] = {
            **m.defs["PromptResponse"],
            "properties": {"stopReason": {"type": "string"}},
            "required": ["stopReason"],
        }
        m.defs["PromptResponse"].pop("x-method")
        m.defs["PromptResponse"].pop("x-side")
        result = m.defs["AgentResponse"]["anyOf"][0]["properties"]["result"]["anyOf"]
        result[0] = {"title": "StrictPromptResponse", "allOf": [{"$ref": "#/$defs/StrictPromptResponse"}]}

    found = diff((), (stricter_result,))
    became = only(found, "field-became-required")
    assert (became.subject, became.roles) == (
        "request session/prompt (handled by the agent) result.stopReason",
        AGENT,
    )
    replaced = only(found, "python-class-replaced")
    assert replaced.detail == "PromptResponse -> StrictPromptResponse"


def test_7_a_role_the_old_release_lacks_is_never_an_old_peer() -> None:
    """The new release adds a proxy that also sends prompts: the new field breaks old clients, no one else."""

    def proxy_prompts(surface: ApiSurface) -> ApiSurface:
        added = Method("proxy/prompt", "proxy_prompt", "proxy", "request", "PromptRequest", "PromptResponse")
        return dataclasses.replace(surface, methods=(*surface.methods, added))

    found = diff_surfaces(mini().surface(), proxy_prompts(release(prompt_needs_mode).surface())).changes
    assert only(found, "field-added-required").roles == CLIENT


# --- 8. a notification that became a request ----------------------------------------------------------------


def test_8_a_notification_that_becomes_a_request_breaks_both_sides() -> None:
    def update_as_request(surface: ApiSurface) -> ApiSurface:
        methods = tuple(
            (
                dataclasses.replace(m, kind="request", result="PromptResponse")
                if m.wire_name == "session/update"
                else m
            )
            for m in surface.methods
        )
        return dataclasses.replace(surface, methods=methods)

    found = diff_surfaces(mini().surface(), update_as_request(mini().surface())).changes
    changed = only(found, "method-kind-changed")
    assert (changed.subject, changed.detail) == (
        "request session/update (handled by the client)",
        "notification -> request",
    )
    assert (changed.severity, changed.roles) == ("breaking", BOTH)
    assert not [c for c in found if c.rule.id in ("method-added", "method-removed", "notification-removed")]


# --- 9. a $ref moved to an equal copy -----------------------------------------------------------------------


def test_9_a_reference_to_an_equal_copy_is_no_wire_change_but_another_class() -> None:
    def value_copy(m: Mini) -> None:
        m.defs["Choice"] = dict(m.defs["Value"])
        props(m, "PromptRequest")["value"] = {"$ref": "#/$defs/Choice"}

    found = diff((), (value_copy,))
    assert [c for c in found if c.layer == "wire"] == []
    replaced = only(found, "python-class-replaced")
    assert (replaced.subject, replaced.detail, replaced.roles) == (
        "PromptRequest.value",
        "Value -> Choice",
        PYTHON,
    )


# --- 10. format is an annotation ----------------------------------------------------------------------------


def test_10_a_format_added_is_an_annotation_that_breaks_nobody() -> None:
    def uri(m: Mini) -> None:
        props(m, "PromptRequest")["sessionId"]["format"] = "uri"

    [change] = diff((), (uri,))
    assert (change.rule.id, change.severity, change.roles, change.detail) == (
        "format-changed",
        "info",
        NOBODY,
        "format none -> 'uri'",
    )


# --- 11. a default that no longer counts --------------------------------------------------------------------


def test_11_a_field_that_becomes_required_reports_no_default_change() -> None:
    def defaulted(m: Mini) -> None:
        props(m, "PromptResponse")["stopReason"]["default"] = "end_turn"

    def required(m: Mini) -> None:
        m.defs["PromptResponse"]["required"] = ["stopReason"]

    found = diff((defaulted,), (required,))
    assert {c.rule.id for c in found} == {"field-became-required", "python-class-argument-required"}
    assert only(found, "field-became-required").roles == AGENT  # agents send the result


def test_11_a_default_of_a_field_optional_on_both_sides_still_changes_what_receivers_fill_in() -> None:
    def default(value: str) -> Edit:
        def edit(m: Mini) -> None:
            props(m, "PromptResponse")["stopReason"]["default"] = value

        return edit

    changed = only(diff((default("a"),), (default("b"),)), "default-changed")
    assert (changed.detail, changed.roles) == ("'a' -> 'b'", BOTH)


# --- 12. a removed notification is ignored, silently --------------------------------------------------------


def test_12_a_removed_notification_is_ignored_not_answered() -> None:
    def without_updates(surface: ApiSurface) -> ApiSurface:
        return dataclasses.replace(
            surface, methods=tuple(m for m in surface.methods if m.wire_name != "session/update")
        )

    found = diff_surfaces(mini().surface(), without_updates(mini().surface())).changes
    removed = only(found, "notification-removed")
    assert (removed.severity, removed.roles) == ("warning", AGENT)
    assert "method not found" not in removed.rule.summary.split("(")[0]


# --- normative text -----------------------------------------------------------------------------------------


def test_a_description_that_adds_a_requirement_is_its_own_change_with_the_sentence() -> None:
    def must(m: Mini) -> None:
        props(m, "PromptRequest")["sessionId"]["description"] = "The session. Clients MUST send a live one.\n"

    def plain(m: Mini) -> None:
        props(m, "PromptRequest")["sessionId"]["description"] = "The session, as a string."

    change = only(diff((), (must,)), "normative-text-changed")
    assert (change.subject, change.detail, change.severity) == (
        "PromptRequest.sessionId",
        "adds “Clients MUST send a live one.”",
        "info",
    )
    assert change.new == Sentences(("Clients MUST send a live one.",))
    assert diff((), (plain,)) == ()


def test_the_normative_sentences_of_a_description() -> None:
    """Sentences end at a full stop before a capital, a blank line or a list item; only those with an
    upper-case requirement keyword count, once each, with their line breaks read as spaces."""
    doc = (
        "Work may go on. Agents SHOULD include a `stopReason`\nwhen work ends.\n\n"
        "- Repeats MUST NOT count twice.\n- must is not a keyword here.\n"
        "Agents SHOULD include a `stopReason` when work ends."
    )
    assert normative(doc) == (
        "Agents SHOULD include a `stopReason` when work ends.",
        "Repeats MUST NOT count twice.",
    )
    assert normative("Nothing required. Clients may retry.") == ()
