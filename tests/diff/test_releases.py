"""The differ on the real consecutive releases.

Every expectation here comes from reading the two schema files side by side
(``$defs`` added, removed and changed, the meta tables and the message
envelopes), not from the differ's output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest

from codegen.diff import Change, diff_surfaces
from codegen.diff.report import release_pairs
from codegen.schema.ir import ApiSurface, Scalar, UnionType
from tests.support.diffkit import Defs, base_surface, changes, edited, renamed
from tests.support.releases import RELEASES, release_files, surface_of

A1, A2, A3, A5, A7, A8 = (f"2.0.0-alpha.{n}" for n in (1, 2, 3, 5, 7, 8))


@functools.cache
def diffed(old: str, new: str, unstable: bool) -> tuple[Change, ...]:
    return diff_surfaces(surface_of(old, unstable), surface_of(new, unstable)).changes


def facts(
    found: tuple[Change, ...], *, layer: str | None = None, drop: tuple[str, ...] = ()
) -> set[tuple[str, str]]:
    return {
        (c.rule.id, c.subject) for c in found if (layer is None or c.layer == layer) and c.rule.id not in drop
    }


def by_rule(found: tuple[Change, ...], rule_id: str) -> dict[str, Change]:
    return {c.subject: c for c in found if c.rule.id == rule_id}


def test_the_releases_are_the_ones_read_for_these_expectations() -> None:
    assert [r for r in RELEASES if r.startswith("2.")] == [A1, A2, A3, A5, A7, A8]


# --- alpha.1 -> alpha.2: a "cancelled" status for plan entries and tool calls ---------------


def test_alpha1_to_alpha2_stable_adds_two_values_to_open_enums() -> None:
    """PlanEntryStatus and ToolCallStatus each gain a ``cancelled`` const; both stay open."""
    found = diffed(A1, A2, False)
    assert facts(found) == {
        ("enum-value-added-open", "PlanEntryStatus['cancelled']"),
        ("enum-value-added-open", "ToolCallStatus['cancelled']"),
    }
    assert {c.severity for c in found} == {"info"}


def test_alpha1_to_alpha2_unstable_also_adds_the_tool_name() -> None:
    """The unstable ToolCallUpdate gains an optional, nullable ``name``."""
    found = diffed(A1, A2, True)
    assert facts(found) == {
        ("enum-value-added-open", "PlanEntryStatus['cancelled']"),
        ("enum-value-added-open", "ToolCallStatus['cancelled']"),
        ("field-added-optional", "ToolCallUpdate.name"),
    }


# --- alpha.2 -> alpha.3: elicitation and terminal auth become stable -------------------------


def test_alpha2_to_alpha3_stable_adds_elicitation_and_terminal_auth() -> None:
    found = diffed(A2, A3, False)
    assert facts(found, layer="wire") == {
        ("method-added", "request elicitation/create (handled by the client)"),
        ("notification-added", "notification elicitation/complete (handled by the client)"),
        ("union-variant-added-open", "AuthMethod['terminal']"),
        ("field-added-optional", "ClientCapabilities.auth"),
        ("field-added-optional", "ClientCapabilities.elicitation"),
        # the envelope's description of auth/login (its contract) narrows whom a client may call it with
        ("normative-text-changed", "request auth/login (handled by the agent)"),
    }
    assert {c.severity for c in found} == {"info"}


def test_alpha2_to_alpha3_stable_names_every_new_definition_as_a_new_class() -> None:
    old = set(release_files(A2).schema(False).data["$defs"])
    new = set(release_files(A3).schema(False).data["$defs"])
    added_classes = set(by_rule(diffed(A2, A3, False), "python-class-added"))
    assert new - old <= added_classes
    assert "AuthMethodTerminal" in added_classes and "CreateElicitationRequest" in added_classes


def test_alpha2_to_alpha3_unstable_drops_env_var_auth() -> None:
    """AuthMethod loses its ``env_var`` variant (AuthMethodEnvVar and AuthEnvVar go too)."""
    found = diffed(A2, A3, True)
    removed = by_rule(found, "union-variant-removed-open")
    assert set(removed) == {"AuthMethod['env_var']"}
    # agents advertise auth methods (InitializeResponse), so an old agent's env_var method is now unknown
    assert (removed["AuthMethod['env_var']"].severity, removed["AuthMethod['env_var']"].roles) == (
        "warning",
        ("old agent",),
    )
    assert {"AuthEnvVar", "AuthMethodEnvVar"} <= set(by_rule(found, "python-class-removed"))
    assert set(by_rule(found, "union-variant-added-open")) == {
        "SessionUpdate['compaction_update']",
        "SessionUpdate['compaction_summary_chunk']",
    }


def test_alpha2_to_alpha3_unstable_marks_elicitation_stable() -> None:
    """In alpha.2 the elicitation types say **UNSTABLE**; in alpha.3 they do not."""
    found = diffed(A2, A3, True)
    assert set(by_rule(found, "method-became-stable")) == {
        "request elicitation/create (handled by the client)",
        "notification elicitation/complete (handled by the client)",
    }
    assert not [c for c in found if c.layer == "wire" and c.severity == "breaking"]


# --- alpha.3 -> alpha.5: the prompt response carries the message id -------------------------


@pytest.mark.parametrize("unstable", [False, True], ids=["stable", "unstable"])
def test_alpha3_to_alpha5_requires_a_message_id_from_agents(unstable: bool) -> None:
    """PromptResponse gains ``messageId`` in ``required``; agents send it, so old agents break.

    Agents' Python code builds the result: ``PromptResponse(stop_reason=...)`` now needs ``message_id``.
    """
    found = diffed(A3, A5, unstable)
    breaking = [c for c in found if c.severity == "breaking"]
    assert [(c.rule.id, c.subject, c.roles) for c in breaking] == [
        ("field-added-required", "PromptResponse.messageId", ("old agent",)),
        ("python-class-argument-required", "PromptResponse.message_id", ("python callers",)),
    ]


def test_alpha3_to_alpha5_stable_gains_the_tool_name() -> None:
    """ToolCallUpdate.name, unstable since alpha.2, appears in the stable schema."""
    assert facts(diffed(A3, A5, False)) == {
        ("field-added-required", "PromptResponse.messageId"),
        ("python-class-argument-required", "PromptResponse.message_id"),
        ("field-added-optional", "ToolCallUpdate.name"),
    }


def test_alpha3_to_alpha5_unstable_adds_notices() -> None:
    found = diffed(A3, A5, True)
    assert set(by_rule(found, "union-variant-added-open")) == {"SessionUpdate['notice']"}
    assert {"Notice", "NoticeSeverity"} <= set(by_rule(found, "python-class-added"))
    assert "ToolCallUpdate.name" not in {c.subject for c in found}


# --- alpha.5 -> alpha.7: initial commands; MCP-over-ACP is redesigned --------------------------


def test_alpha5_to_alpha7_stable_only_adds_initial_commands() -> None:
    assert facts(diffed(A5, A7, False)) == {
        ("field-added-optional", "NewSessionResponse.availableCommands"),
        ("field-added-optional", "ResumeSessionResponse.availableCommands"),
    }


def test_alpha5_to_alpha7_unstable_removes_mcp_connect_and_disconnect() -> None:
    """mcp/connect and mcp/disconnect vanish; each mcp/message kind keeps one direction."""
    found = diffed(A5, A7, True)
    removed = by_rule(found, "method-removed")
    assert {subject: c.roles for subject, c in removed.items()} == {
        "request mcp/connect (handled by the client)": ("old agent",),
        "request mcp/disconnect (handled by the client)": ("old agent",),
        # MessageMcpRequest's x-side goes from "both" to "client": agents no longer handle it
        "request mcp/message (handled by the agent)": ("old client",),
    }
    # only clients send the notification now (ClientNotification keeps it, AgentNotification drops it):
    # a notification gets no answer, so an old agent's is ignored, silently
    gone = by_rule(found, "notification-removed")["notification mcp/message (handled by the client)"]
    assert (gone.severity, gone.roles) == ("warning", ("old agent",))


def test_alpha5_to_alpha7_unstable_readdresses_mcp_messages() -> None:
    """MessageMcpRequest/Notification: ``connectionId`` gives way to required ``serverId``, ``requestId``."""
    found = diffed(A5, A7, True)
    for owner in ("MessageMcpRequest", "MessageMcpNotification"):
        assert f"{owner}.connectionId" in by_rule(found, "required-field-removed")
        assert {f"{owner}.serverId", f"{owner}.requestId"} <= set(by_rule(found, "field-added-required"))
        assert f"{owner}.connection_id" in by_rule(found, "python-attribute-removed")


def test_alpha5_to_alpha7_unstable_does_not_take_a_new_id_for_a_renamed_one() -> None:
    """McpConnectionId and McpRequestId are both plain strings, but they name different things."""
    found = diffed(A5, A7, True)
    assert "McpConnectionId" in by_rule(found, "python-class-removed")
    assert "McpRequestId" in by_rule(found, "python-class-added")
    assert not by_rule(found, "python-class-renamed")


def test_alpha5_to_alpha7_unstable_new_session_updates() -> None:
    found = diffed(A5, A7, True)
    assert set(by_rule(found, "union-variant-added-open")) >= {
        "SessionUpdate['session_message']",
        "SessionUpdate['session_message_chunk']",
        "SessionUpdate['subagent_update']",
    }
    assert "ForkSessionResponse.availableCommands" in by_rule(found, "field-added-optional")


# --- alpha.7 -> alpha.8: the stop reason becomes a tagged union, three levels down ---------------


def test_alpha7_to_alpha8_stop_reason_is_a_type_removed_for_python_callers() -> None:
    for unstable in (False, True):
        removed = by_rule(diffed(A7, A8, unstable), "python-class-removed")["StopReason"]
        assert (removed.severity, removed.roles) == ("breaking", ("python callers",))


def test_alpha7_to_alpha8_idle_state_update_keeps_its_fields_and_becomes_a_union() -> None:
    found = diffed(A7, A8, False)
    became = by_rule(found, "object-became-union")["IdleStateUpdate"]
    assert became.detail == "a union on stopReason"
    assert became.severity == "warning" and became.roles == ("old client",), "agents send it, clients read it"
    # every member is an old IdleStateUpdate, whose model keeps extra keys: the inclusion is the proof
    assert became.proof is not None and became.proof.relation == "narrower"
    assert became.proof.premise == "extra-kept"
    # an open enum of strings became a string: the same values on the wire, a new annotation in Python
    assert "IdleStateUpdate.stopReason" not in by_rule(found, "type-changed")
    changed = by_rule(found, "python-annotation-changed")["IdleStateUpdate.stopReason"]
    assert changed.detail == "StopReason | null -> string | null" and changed.roles == ("python callers",)
    python = by_rule(found, "python-class-became-union")["IdleStateUpdate"]
    assert python.roles == ("python callers",)


def test_alpha7_to_alpha8_reports_the_stop_reasons_once_where_the_schema_defines_them() -> None:
    """``StateUpdate['idle']`` and ``SessionUpdate['state_update']`` build on ``IdleStateUpdate`` with a
    ``$ref``: the stop reasons are ``IdleStateUpdate``'s members, reported there, once, with the flow
    of the messages that carry them (agents send session updates to clients)."""
    found = diffed(A7, A8, False)
    # the old object took every stop reason (an open enum, or null): no member adds a value (issue 32)
    added = by_rule(found, "union-variant-added-open")
    assert not {s for s in added if "IdleStateUpdate" in s or "stopReason" in s}
    became = by_rule(found, "object-became-union")["IdleStateUpdate"]
    assert became.flow.new.senders == {"agent"} and became.flow.new.receivers == {"client"}
    wire = {c.subject for c in found if c.layer == "wire"}
    assert not [s for s in wire if s.startswith(("StateUpdate['idle']", "SessionUpdate['state_update']"))]


def test_alpha7_to_alpha8_promotes_notices_and_compactions_to_stable() -> None:
    promoted = ["'notice'", "'compaction_update'", "'compaction_summary_chunk'"]
    stable = by_rule(diffed(A7, A8, False), "union-variant-added-open")
    assert {f"SessionUpdate[{tag}]" for tag in promoted} <= set(stable)
    unstable = diffed(A7, A8, True)
    assert {f"SessionUpdate[{tag}]" for tag in promoted} == set(by_rule(unstable, "variant-became-stable"))
    assert {"Notice", "CompactionUpdate", "CompactionSummaryChunk"} <= set(
        by_rule(unstable, "type-became-stable")
    )


def test_alpha7_to_alpha8_lenient_annotations_removed_break_old_senders() -> None:
    removed = [c for c in diffed(A7, A8, False) if c.rule.id == "lenient-annotation-removed"]
    both = "x-deserialize-default-on-error, x-deserialize-skip-invalid-items"
    subjects = {(c.subject, c.detail) for c in removed}
    assert ("NewSessionRequest.mcpServers", both) in subjects
    assert ("NewSessionRequest.additionalDirectories", both) in subjects
    assert ("ResumeSessionRequest.replayFrom", "x-deserialize-default-on-error") in subjects
    assert ("AuthMethodTerminal.args", both) in subjects
    # one change per field, naming every keyword it lost
    assert len(subjects) == len({c.subject for c in removed})
    by_subject = {c.subject: c for c in removed}
    assert by_subject["NewSessionRequest.mcpServers"].roles == ("old client",)
    assert by_subject["AuthMethodTerminal.env"].roles == ("old agent",)


# --- properties over every pair ----------------------------------------------------------------


PAIRS = [(old, new, unstable) for old, new in release_pairs(RELEASES) for unstable in (False, True)]


@pytest.mark.parametrize("unstable", [False, True], ids=["stable", "unstable"])
@pytest.mark.parametrize("release", RELEASES)
def test_a_release_against_itself_has_no_changes(release: str, unstable: bool) -> None:
    assert diff_surfaces(surface_of(release, unstable), surface_of(release, unstable)).changes == ()


@pytest.mark.parametrize(("old", "new", "unstable"), PAIRS)
def test_a_removal_one_way_is_an_addition_the_other_way(old: str, new: str, unstable: bool) -> None:
    forward = by_rule(diffed(old, new, unstable), "python-class-removed")
    reverse = diff_surfaces(surface_of(new, unstable), surface_of(old, unstable)).changes
    backward = by_rule(reverse, "python-class-added")
    assert set(forward) == set(backward)
    added = by_rule(diffed(old, new, unstable), "python-class-added")
    assert set(added) == set(by_rule(reverse, "python-class-removed"))
    # every definition that is gone is a removed class or a renamed one, so the sets are not
    # empty where a release dropped definitions (alpha.2 -> alpha.3 and alpha.5 -> alpha.7 unstable)
    old_defs, new_defs = (set(release_files(r).schema(unstable).data["$defs"]) for r in (old, new))
    renamed = set(by_rule(diffed(old, new, unstable), "python-class-renamed"))
    assert old_defs - new_defs <= set(forward) | renamed


def with_unused_type(defs: Defs) -> None:
    defs["Unused"] = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}


def cost_is_price_with_an_extra_field(defs: Defs) -> None:
    defs.update(renamed({"$defs": defs}, "Cost", "Price")["$defs"])
    del defs["Cost"]
    defs["Price"]["properties"]["extra"] = {"type": "string"}


def without_cancelled_outcome(defs: Defs) -> None:
    members = defs["RequestPermissionOutcome"]["anyOf"]
    members[:] = [
        m for m in members if m.get("properties", {}).get("outcome", {}).get("const") != "cancelled"
    ]


Edit = Callable[[Defs], None] | None


@pytest.mark.parametrize(
    ("old", "new", "gone"),
    [
        (with_unused_type, None, {"Unused"}),
        (None, cost_is_price_with_an_extra_field, {"Cost"}),
        (None, without_cancelled_outcome, {"CancelledRequestPermissionOutcome"}),
    ],
    ids=["unused type", "changed shape", "union variant"],
)
def test_a_removal_by_an_edit_is_an_addition_the_other_way(old: Edit, new: Edit, gone: set[str]) -> None:
    """Edits of alpha.7 (``None`` is alpha.7 itself) that remove classes, diffed both ways."""
    before = edited(old) if old else base_surface()
    after = edited(new) if new else base_surface()
    forward, backward = changes(before, after), changes(after, before)
    removed = set(by_rule(forward, "python-class-removed"))
    assert removed == set(by_rule(backward, "python-class-added")) == gone
    assert set(by_rule(forward, "python-class-added")) == set(by_rule(backward, "python-class-removed"))


@pytest.mark.parametrize(("old", "new", "unstable"), PAIRS)
def test_fingerprints_are_unique_within_a_diff(old: str, new: str, unstable: bool) -> None:
    found = diffed(old, new, unstable)
    assert len({c.fingerprint for c in found}) == len(found)


def test_the_same_change_has_the_same_fingerprint_in_both_schemas() -> None:
    stable = by_rule(diffed(A3, A5, False), "field-added-required")["PromptResponse.messageId"]
    unstable = by_rule(diffed(A3, A5, True), "field-added-required")["PromptResponse.messageId"]
    assert stable.fingerprint == unstable.fingerprint
    # pinned: waiver files name this value, so it must not change between versions of the differ
    assert stable.fingerprint == "6b53a23146a9d24d"


# --- the IR facts the differ relies on ------------------------------------------------------------


def test_by_schema_name_finds_every_definition(surface: ApiSurface) -> None:
    for named in surface.types.values():
        if named.schema_name is not None:
            assert surface.by_schema_name(named.schema_name) is named
    assert surface.by_schema_name("NoSuchDefinition") is None


# --- the npm releases (issue 18): what the differ used to miss ---------------------------------------

N0, N1, N2, N3 = (f"v2-sdk-2.{n}.0" for n in range(4))


@functools.cache
def npm_surface(release: str, unstable: bool) -> ApiSurface:
    """The IR of an npm release, built the way `diff` builds it (what the builder does not know yet warns)."""
    from codegen.diagnostics import collecting

    with collecting(strict=False):
        return surface_of(release, unstable)


@functools.cache
def npm_diffed(old: str, new: str, unstable: bool) -> tuple[Change, ...]:
    return diff_surfaces(npm_surface(old, unstable), npm_surface(new, unstable)).changes


@pytest.mark.parametrize("unstable", [False, True], ids=["stable", "unstable"])
def test_npm_2_1_to_2_2_removes_the_batches(unstable: bool) -> None:
    """The root ``anyOf`` loses its four array members; each is a root message kind gone."""
    removed = by_rule(npm_diffed(N1, N2, unstable), "envelope-removed")
    assert set(removed) == {
        "batch AgentBatchCall (sent by the agent)",
        "batch AgentBatchResponse (sent by the agent)",
        "batch ClientBatchCall (sent by the client)",
        "batch ClientBatchResponse (sent by the client)",
    }
    assert removed["batch ClientBatchCall (sent by the client)"].roles == ("old client",)
    assert removed["batch AgentBatchCall (sent by the agent)"].severity == "breaking"


def test_npm_2_1_to_2_2_tightens_both_members_of_the_select_options() -> None:
    """Both members of ``SessionConfigSelectOptions`` gain ``minItems: 1`` (agents send them)."""
    tightened = {
        (c.subject, c.detail, c.roles)
        for c in npm_diffed(N1, N2, False)
        if c.rule.id == "constraint-tightened" and c.subject.startswith("SessionConfigSelectOptions")
    }
    assert tightened == {
        ("SessionConfigSelectOptions[list[SessionConfigSelectOption]]", "minItems none -> 1", ("old agent",)),
        ("SessionConfigSelectOptions[list[SessionConfigSelectGroup]]", "minItems none -> 1", ("old agent",)),
    }


def test_npm_2_1_to_2_2_an_untyped_member_opens_the_elicitation_value() -> None:
    found = npm_diffed(N1, N2, False)
    assert ("union-became-open", "ElicitationContentValue") in facts(found)
    assert not [
        c for c in found if c.rule.id.startswith("union-variant-added") and "Elicitation" in c.subject
    ]


def test_npm_2_1_to_2_2_error_data_with_an_untyped_member_is_the_same_values() -> None:
    """``Error.data`` (any value) becomes ``ErrorData``, whose ``Other`` member is ``{}``: not narrowed."""
    data = npm_surface(N2, False).types["ErrorData"]
    assert isinstance(data, UnionType) and Scalar("any") in {v.type for v in data.variants}
    for unstable in (False, True):
        at_data = {(c.rule.id, c.detail) for c in npm_diffed(N1, N2, unstable) if c.subject == "Error.data"}
        assert at_data == {("python-annotation-changed", "any -> ErrorData | null")}


def test_npm_2_0_to_2_1_the_other_elicitation_scope_becomes_one_of() -> None:
    """The ``other`` member's scope union (and the form and url modes') goes from anyOf to oneOf.

    The form and url members build on ``ElicitationFormMode`` and ``ElicitationUrlMode`` with a ``$ref``:
    their scope unions are those types', reported there, once."""
    exclusive = by_rule(npm_diffed(N0, N1, False), "union-became-exclusive")
    assert set(exclusive) == {
        "CreateElicitationRequest[other]",
        "ElicitationFormMode",
        "ElicitationUrlMode",
    }
    other = exclusive["CreateElicitationRequest[other]"]
    assert (other.detail, other.severity, other.roles) == ("anyOf -> oneOf", "warning", ("old agent",))


def test_npm_2_0_to_2_1_lenient_changes_are_one_per_field() -> None:
    found = [c for c in npm_diffed(N0, N1, False) if c.rule.category == "lenient"]
    assert len({(c.rule.id, c.subject) for c in found}) == len(found)
    both = by_rule(tuple(found), "lenient-annotation-removed")["SessionInfo.additionalDirectories"]
    assert both.detail == "x-deserialize-default-on-error, x-deserialize-skip-invalid-items"


def test_npm_2_2_to_2_3_unstable_adds_the_proxy_side_with_its_methods() -> None:
    found = npm_diffed(N2, N3, True)
    side = by_rule(found, "side-added")["side proxy"]
    assert side.detail == "methods proxy/initialize, proxy/successor" and side.severity == "info"
    assert {
        "request proxy/initialize (handled by the proxy)",
        "request proxy/successor (handled by the proxy)",
    } <= set(by_rule(found, "method-added"))
    assert "notification proxy/successor (handled by the proxy)" in by_rule(found, "notification-added")
    envelopes = by_rule(found, "envelope-added")
    assert set(envelopes) == {
        f"envelope Proxy{kind} (sent by the proxy)" for kind in ("Request", "Response", "Notification")
    }
    assert {c.severity for c in envelopes.values()} == {"info"}  # no old peer was there to receive them
    assert not by_rule(npm_diffed(N2, N3, False), "side-added")  # the stable schema has no proxies
