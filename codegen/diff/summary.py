"""What every report says about a result, as data: counts, whom it breaks, version steps, proofs.

The renderers of :mod:`.report` and the page of :mod:`.html` both read these;
none of them returns words but :func:`breaks_text`, :func:`evidence_line`,
:func:`proof_line` and :func:`proof_summary`, the phrases every format shows
the same way.  What a verdict rests on is :mod:`.standing`'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..schema.ir import AnyOf, ArrayOf, Const, MapOf, Nullable, Ref, Scalar, to_json
from . import semver
from .model import ABSENT, Change, DiffResult, Evidence, NoEvidence
from .proof import SetProof
from .reading import LenientRead, Reading
from .rules import SEVERITIES, Severity
from .standing import Standing, standing, standings, without_proof
from .wording import describe, proof_words


def rule_link(rule_id: str, base: str | None) -> str | None:
    """The address of a rule's section in the published catalog, or ``None`` without one."""
    return f"{base}#{rule_id}" if base else None


def roles_text(roles: tuple[str, ...]) -> str:
    return ", ".join(roles) if roles else "nobody"


def breaks_text(change: Change) -> str:
    """Whom a change breaks; each level's, when its stability levels weigh it differently."""
    if change.levels:
        return "; ".join(f"{roles_text(level.roles)} in {level.stability}" for level in change.levels)
    return roles_text(change.roles)


def severity_counts(changes: Iterable[Change]) -> dict[Severity, int]:
    out: dict[Severity, int] = dict.fromkeys(SEVERITIES, 0)
    for change in changes:
        if change.waiver is None:
            out[change.severity] += 1
    return out


def counts_by_level(result: DiffResult) -> dict[str, dict[Severity, int]]:
    """Unwaived changes (rows) per severity: of each stability level, and (with two levels) in all."""
    found: dict[str, dict[Severity, int]] = {
        level: severity_counts(c for c in result.changes if level in c.appears_in)
        for level in result.stabilities
    }
    if len(result.surfaces) > 1:
        found["distinct"] = severity_counts(result.changes)
    return found


def steps_by_level(result: DiffResult) -> dict[str, semver.SemverSteps]:
    """The version step of each stability level, and (with two levels) of all; keyed as the counts."""
    found: dict[str, semver.SemverSteps] = {level: semver.step(result, level) for level in result.stabilities}
    if len(result.surfaces) > 1:
        found["distinct"] = semver.step(result)
    return found


def whom(result: DiffResult) -> dict[str, int]:
    """How many unwaived breaking or warning changes hurt each role, most first."""
    hurt: dict[str, int] = {}
    for change in result.changes:
        if change.waiver is None and change.severity != "info":
            for role in change.roles:
                hurt[role] = hurt.get(role, 0) + 1
    return dict(sorted(hurt.items(), key=lambda item: (-item[1], item[0])))


def evidence_json(found: Evidence | NoEvidence | None) -> dict[str, Any] | None:
    if isinstance(found, Evidence):
        return {
            "found": True,
            "message": found.message,
            "type": found.schema_type,
            "carrier": found.carrier,
            "sent_by": found.sent_by,
            "refused_by": found.refused_by,
            "error": found.error,
            "schema_refuses": found.schema_refuses,
            "by_dispatch": found.by_dispatch,
            "read": read_json(found.read),
        }
    if isinstance(found, NoEvidence):
        return {
            "found": False,
            "searchable": found.searchable,
            "examples": found.examples,
            "reason": found.reason,
        }
    return None


def read_json(read: LenientRead | None) -> dict[str, Any] | None:
    """How the receiver's lenient models read a witness they accept (``None``: they refuse it)."""
    if read is None:
        return None
    data: dict[str, Any] = {"how": str(read.how), "at": list(read.at)}
    if read.read is not ABSENT:
        data["read"] = read.read
    return data


def read_words(read: LenientRead) -> str:
    """``drops availableCommands.0``, ``reads stopReason as null``: what a lenient receiver loses."""
    if read.how is Reading.DROPPED:
        return f"drops {read.where}"
    shown = (
        json.dumps(read.read, ensure_ascii=False, sort_keys=True) if read.read is not ABSENT else "omitted"
    )
    return f"reads {read.where} as {shown}"


def evidence_line(change: Change) -> str:
    """One line saying what the search for a witness found (empty when none ran).

    A witness names the whole message a peer receives (:attr:`Evidence.carrier`) and who refuses it, or,
    where that peer's models accept it and read it leniently (:attr:`Evidence.read`), what they lose.
    """
    found = change.evidence
    if isinstance(found, Evidence) and found.by_dispatch:  # a call of a method the receiver lost
        seen = json.dumps(found.message, ensure_ascii=False, sort_keys=True)
        return f"witness: {_a(found.sent_by)} sends {found.carrier} {seen}; {found.error}"
    if isinstance(found, Evidence) and found.read is not None:  # accepted, but read leniently
        seen = json.dumps(found.message, ensure_ascii=False, sort_keys=True)
        sender = f" what {_a(found.sent_by)} sends" if found.sent_by else " the message"
        return (
            f"witness: {_a(found.refused_by)} accepts{sender} but {read_words(found.read)}: "
            f"{found.carrier or found.schema_type} {seen} ({found.error})"
        )
    if isinstance(found, Evidence):
        seen = json.dumps(found.message, ensure_ascii=False, sort_keys=True)
        refuses = f"{found.refused_by} refuses"
        sender = f" what {_a(found.sent_by)} sends" if found.sent_by else ""
        return f"witness: {_a(refuses)}{sender}: {found.carrier or found.schema_type} {seen}"
    if isinstance(found, NoEvidence):
        if not found.searchable:
            why = f" ({found.reason})" if found.reason else ""
            return f"no witness: not searchable{why}"
        why = f"; {found.reason}" if found.reason else ""
        return f"no witness found ({found.examples} generated messages tried{why})"
    return ""


def proof_line(change: Change) -> str:
    """One line saying what a row rests on: its witness, its set proof, or that it is unproven (empty: a
    row that needs no proof, or one no search reached that has no set proof either)."""
    kind = standing(change)
    if kind is Standing.WITNESS:
        return evidence_line(change)
    if kind is Standing.SET_PROOF:
        assert change.proof is not None
        return f"proof: {proof_words(change.proof)}"
    if kind is Standing.UNPROVEN:
        return f"unproven, check by hand: {evidence_line(change)}"
    found = change.evidence
    if isinstance(found, Evidence):  # a witness of an info row: shown, though the row claims no failure
        return evidence_line(change)
    return f"proof: {proof_words(change.proof)}" if change.proof is not None else ""


def value_json(value: Any) -> Any:
    """A change's old or new value as JSON: type expressions as the report describes them."""
    if isinstance(value, (Ref, Scalar, ArrayOf, MapOf, Const, Nullable, AnyOf)):
        return describe(value)
    if isinstance(value, tuple):
        return [value_json(v) for v in value]
    return to_json(value)


def proof_json(proof: SetProof) -> dict[str, Any]:
    """A set proof as JSON: the relation, the two sets, a value only one side accepts, the premise, in
    words too."""
    data: dict[str, Any] = {"relation": str(proof.relation), "words": proof_words(proof)}
    for name in ("old", "new", "only_old", "only_new"):
        value = getattr(proof, name)
        if value is not ABSENT:
            data[name] = value_json(value)
    if proof.premise:
        data["premise"] = str(proof.premise)
    return data


def proof_counts(result: DiffResult) -> dict[str, int]:
    """How many breaking and warning wire rows rest on each standing (:class:`~.standing.Standing`)."""
    return {str(kind): count for kind, count in standings(result.changes).items()}


def proof_summary(result: DiffResult) -> str:
    """What the rows rest on, in one line: ``12 proven (10 by witness, 2 by set proof); 2 unproven
    verdicts: check by hand`` (empty when no row claims a peer fails)."""
    counts = standings(result.changes)
    if not any(counts.values()):
        return ""
    proven = counts[Standing.WITNESS] + counts[Standing.SET_PROOF]
    parts = []
    if proven or counts[Standing.UNPROVEN]:
        witness, argued = counts[Standing.WITNESS], counts[Standing.SET_PROOF]
        parts.append(f"{proven} proven ({witness} by witness, {argued} by set proof)")
    unproven = counts[Standing.UNPROVEN]
    if unproven:
        parts.append(f"{unproven} unproven verdict{'' if unproven == 1 else 's'}: check by hand")
    unchecked = counts[Standing.NOT_SEARCHED]
    if unchecked:
        parts.append(f"{unchecked} not checked (no witness searched for: --no-evidence)")
    return "; ".join(parts)


def unproven_rows(result: DiffResult) -> tuple[Change, ...]:
    """The rows listed apart: breaking or warning wire verdicts a search found no witness for, with no
    set proof."""
    return without_proof(result.changes)


def _a(words: str) -> str:
    """``a 2.0.0 client``, ``an 8.0.0 agent``: the article a release name read aloud takes."""
    spoken_vowel = words[:1].lower() in "aeiou8" or words.startswith(("11.", "18."))
    return ("an " if spoken_vowel else "a ") + words
