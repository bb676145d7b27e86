"""Witnesses are whole messages, checked both ways; the oracle fails on an unproven verdict it can witness
(issue 32: every verdict carries its proof)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from codegen.diff import Evidence, NoEvidence, diff_surfaces
from codegen.diff.proof import Relation
from codegen.diff.standing import Standing, standing
from codegen.evidence.oracle import evidence_at_its_row, witnessable
from codegen.evidence.search import wants_evidence
from tests.evidence.test_evidence import evidence_of, pair, with_cost
from tests.support.diffkit import Mini, mini
from tests.support.schemas import tagged


def test_a_witness_holds_both_ways_and_a_tampered_one_does_not(tmp_path: Path) -> None:
    new = mini()
    new.defs["Value"]["anyOf"].append({"title": "Count", "type": "integer"})
    found, old, new_surface = pair(mini(), new, tmp_path)
    [change] = [c for c in diff_surfaces(old, new_surface).changes if wants_evidence(c)]
    shown = found.evidence([change])[0]
    assert isinstance(shown, Evidence) and evidence_at_its_row(found, change, shown)
    accepted = dataclasses.replace(shown, message={"sessionId": "", "value": "text"})  # both sides take it
    not_sent = dataclasses.replace(shown, message={"value": 0})  # the sender's schema refuses it
    alone = dataclasses.replace(shown, carrier="")  # no whole message named: not a witness
    for wrong in (accepted, not_sent, alone):
        assert not evidence_at_its_row(found, change, wrong)


def test_the_oracle_witnesses_an_unproven_verdict_the_search_missed(tmp_path: Path) -> None:
    """As if the search had found nothing for the new ``Value`` member: the oracle's own messages of
    ``Value``, wrapped in the request that carries it, witness the verdict, which fails the oracle."""
    new = mini()
    new.defs["Value"]["anyOf"].append({"title": "Count", "type": "integer"})
    found, old, new_surface = pair(mini(), new, tmp_path)
    [proven] = [c for c in diff_surfaces(old, new_surface).changes if wants_evidence(c)]
    change = dataclasses.replace(proven, proof=None)  # nor had the differ's set proof decided it
    [(missed, witness)] = witnessable(found, [change], {0: NoEvidence(25)}, 25)
    assert missed is change and witness.schema_type == "PromptRequest" and witness.message["value"] == 0
    assert evidence_at_its_row(found, change, witness)


def test_a_lenient_reading_is_a_witness_checked_both_ways(tmp_path: Path) -> None:
    """Finding 9's shape: a ``Cost`` the old models refuse alone, read leniently inside the request as
    ``null``. The witness names that reading, the oracle holds it both ways, and a message the old agent
    reads as it was sent (or reads otherwise elsewhere) is no witness of it."""
    from codegen.diff.reading import Reading

    old, new = with_cost(mini(), True, True), with_cost(mini(), False, True)
    found, old_surface, new_surface = pair(old, new, tmp_path)
    shown = evidence_of(found, old_surface, new_surface, "constraint-loosened")
    assert isinstance(shown, Evidence) and shown.read is not None and shown.read.how is Reading.REPLACED
    [change] = [
        c for c in diff_surfaces(old_surface, new_surface).changes if c.rule.id == "constraint-loosened"
    ]
    assert evidence_at_its_row(found, change, shown)
    faithful = dataclasses.replace(shown, message={**shown.message, "cost": {"currency": "EUR"}})
    elsewhere = dataclasses.replace(shown, read=dataclasses.replace(shown.read, at=("value",)))
    for wrong in (faithful, elsewhere):
        assert not evidence_at_its_row(found, change, wrong)
    # had the search found nothing, the oracle's own messages witness it: an unproven row it fails on
    unproven = dataclasses.replace(change, proof=None)
    [(missed, witness)] = witnessable(found, [unproven], {0: NoEvidence(25)}, 25)
    assert witness.read == shown.read and evidence_at_its_row(found, missed, witness)


def test_a_removed_notification_is_witnessed_by_the_call_the_rule_predicts(tmp_path: Path) -> None:
    """New clients no longer handle ``session/update``: no message of a type both sides have shows it,
    so the rule's own message is built, an old agent's notification, which the new client ignores."""
    from codegen.evidence.oracle import dispatch_holds
    from tests.support.diffkit import _call

    new = mini()
    del new.defs["UpdateNotification"], new.defs["Update"]
    new.defs["AgentNotification"] = _call("ExtNotification")
    new.meta["clientMethods"] = {}
    found, old, new_surface = pair(mini(), new, tmp_path)
    [change] = [c for c in diff_surfaces(old, new_surface).changes if c.rule.id == "notification-removed"]
    shown = found.evidence([change])[0]
    assert isinstance(shown, Evidence) and shown.by_dispatch
    assert shown.message["method"] == "session/update" and "id" not in shown.message
    assert found.old.valid("UpdateNotification", shown.message["params"])
    assert (shown.sent_by, shown.refused_by) == ("old agent", "new client")
    assert shown.error == "ignored: the new client handles no session/update notification"
    assert dispatch_holds(found, change, shown) and evidence_at_its_row(found, change, shown)
    renamed = dataclasses.replace(shown, message={**shown.message, "method": "session/other"})
    assert not dispatch_holds(found, change, renamed)


def with_commands(
    release: Mini, required: tuple[str, ...], members: list[dict[str, Any]] | None = None
) -> Mini:
    """``PromptRequest.commands``, a list read skipping its invalid items, of ``Command``: an object of a
    ``name`` and the fields ``required`` (all required), or the union of ``members``: the shape of
    ``AvailableCommandsUpdate.availableCommands`` in v2-sdk-2.0.0 and 2.1.0."""
    command: dict[str, Any] = {
        "type": "object",
        "properties": {name: {"type": "string"} for name in ("name", *required)},
        "required": list(required),
    }
    release.defs["Command"] = {"anyOf": members} if members is not None else command
    release.defs["PromptRequest"]["properties"]["commands"] = {
        "type": "array",
        "items": {"$ref": "#/$defs/Command"},
        "x-deserialize-skip-invalid-items": True,
    }
    return release


def test_an_item_a_lenient_list_drops_is_a_witness(tmp_path: Path) -> None:
    """A field made required on the items of a list the receiver reads skipping invalid items: an old
    client's request is accepted whole by the new agent, which drops the command. The witness says so,
    and holds both ways; the same request with the field sent is no witness."""
    from codegen.diff.reading import LenientRead, Reading

    old, new = with_commands(mini(), ("name",)), with_commands(mini(), ("name", "kind"))
    found, old_surface, new_surface = pair(old, new, tmp_path)
    [change] = [
        c
        for c in diff_surfaces(old_surface, new_surface).changes
        if c.rule.id == "field-added-required" and c.subject == "Command.kind"
    ]
    shown = found.evidence([change])[0]
    assert isinstance(shown, Evidence) and (shown.sent_by, shown.refused_by) == ("old client", "new agent")
    assert shown.read == LenientRead(Reading.DROPPED, ("commands", 0))
    assert shown.message["commands"] == [{"name": ""}] and shown.error == "commands.0.kind: Field required"
    assert found.new.models.refusal("PromptRequest", shown.message) is None  # accepted whole
    assert evidence_at_its_row(found, change, shown)
    sent = dataclasses.replace(shown, message={**shown.message, "commands": [{"name": "", "kind": ""}]})
    assert not evidence_at_its_row(found, change, sent)


@pytest.mark.parametrize("extra", [True, False], ids=["keeps-extra-keys", "closed"])
def test_an_object_become_union_its_old_models_read_as_sent_is_not_searchable(
    tmp_path: Path, extra: bool
) -> None:
    """An object that became a union of members tagged on ``kind``: where the old object keeps extra
    keys and takes every member, an old receiver reads each member as it was sent, and nothing can
    witness the verdict (it says why). Where the old object is closed, the tag is refused: a witness."""
    from codegen.evidence.search import READ_AS_SENT, not_shown

    old = with_commands(mini(), ("name",))
    if not extra:
        old.defs["Command"]["additionalProperties"] = False
    members = [tagged("kind", "slash"), tagged("kind", "prompt")]
    for member in members:
        member["properties"]["name"] = {"type": "string"}
        member["required"].append("name")
    new = with_commands(mini(), ("name",), members)
    found, old_surface, new_surface = pair(old, new, tmp_path)
    [change] = [
        c for c in diff_surfaces(old_surface, new_surface).changes if c.rule.id == "object-became-union"
    ]
    if extra:
        assert not_shown(change, old_surface, new_surface) == READ_AS_SENT
        assert found.evidence([change])[0] == NoEvidence(0, READ_AS_SENT, searchable=False)
        # the verdict rests on the inclusion instead: a set proof, not an unproven row
        assert change.proof is not None and change.proof.relation is Relation.NARROWER
        assert change.proof.premise == "extra-kept"
        searched = dataclasses.replace(change, evidence=NoEvidence(0, READ_AS_SENT))
        assert standing(searched) is Standing.SET_PROOF
        return
    assert change.proof is None  # a closed old object refuses the tag: no inclusion to rest on
    assert not_shown(change, old_surface, new_surface) is None


def scoped(exclusive: bool, nullable_id: bool) -> Mini:
    """``PromptRequest.scope``: a union of two objects told apart by their fields (a ``sessionKey`` or a
    ``requestId``), written ``oneOf`` or ``anyOf``, the id an integer or null: the shape of
    ``ElicitationFormMode`` in v2-sdk-2.0.0 (``anyOf``, a ``RequestId`` that takes null) and 2.1.0."""
    release = mini()
    request_id: dict[str, Any] = {"type": ["integer", "null"] if nullable_id else "integer"}
    members = [
        {
            "title": "Session",
            "type": "object",
            "properties": {"sessionKey": {"type": "string"}},
            "required": ["sessionKey"],
        },
        {
            "title": "Request",
            "type": "object",
            "properties": {"requestId": request_id},
            "required": ["requestId"],
        },
    ]
    release.defs["Scope"] = {"oneOf" if exclusive else "anyOf": members}
    release.defs["PromptRequest"]["properties"]["scope"] = {"$ref": "#/$defs/Scope"}
    return release


def test_a_union_made_exclusive_rests_on_its_set_proof_not_on_a_members_own_refusal(tmp_path: Path) -> None:
    """anyOf -> oneOf, while the ``Request`` member's id stopped taking null. The models of a union take a
    value several members accept as one of them, so the set proof's value, refused by the new schema, is
    accepted by the new models: nothing refuses it for matching both. A ``{"requestId": null}`` is
    refused inside the union, but by the member's own field, which the id's row shows: it is no
    witness of the exclusivity (the search used to take it for one, at the union as a whole)."""
    from codegen.evidence.search import NOT_EXCLUSIVE, not_shown

    found, old, new = pair(scoped(False, True), scoped(True, False), tmp_path)
    changes = diff_surfaces(old, new).changes
    [change] = [c for c in changes if c.rule.id == "union-became-exclusive"]
    assert not_shown(change, old, new) == NOT_EXCLUSIVE
    assert found.evidence([change])[0] == NoEvidence(0, NOT_EXCLUSIVE, searchable=False)
    assert found._searches == {}
    assert change.proof is not None and change.proof.relation is Relation.NARROWER
    both = change.proof.only_old
    assert both.keys() == {"sessionKey", "requestId"}  # a value both members accept
    assert found.old.valid("Scope", both) and not found.new.valid("Scope", both)
    assert found.new.models.refusal("Scope", both) is None  # the premise of NOT_EXCLUSIVE
    anchor = found.planner.located(change, "senders").anchor
    assert anchor is not None
    search = found.search("senders", "Scope")
    assert not isinstance(search, str)
    refused = [r for r in search.refusals if r.instance == {"requestId": None}]
    assert refused and all(r.at(anchor) is None for r in search.refusals)
    id_rows = [c for c in changes if c.rule.id != "union-became-exclusive" and wants_evidence(c)]
    assert id_rows and any(isinstance(found.evidence([c])[0], Evidence) for c in id_rows)
