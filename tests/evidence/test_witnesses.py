"""Witnesses are whole messages, checked both ways; the oracle fails on an unproven verdict it can witness
(issue 32: every verdict carries its proof)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from codegen.diff import Evidence, NoEvidence, diff_surfaces
from codegen.evidence.oracle import evidence_at_its_row, witnessable
from codegen.evidence.search import wants_evidence
from tests.evidence.test_evidence import evidence_of, pair, with_cost
from tests.support.diffkit import mini


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
