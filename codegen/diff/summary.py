"""What every report says about a result, as data: counts, whom it breaks, version steps, evidence.

The renderers of :mod:`.report` and the page of :mod:`.html` both read these;
none of them returns words but :func:`breaks_text` and :func:`evidence_line`,
the phrases every format shows the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from . import semver
from .model import Change, DiffResult, Evidence, NoEvidence
from .rules import SEVERITIES, Severity


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
            "sent_by": found.sent_by,
            "refused_by": found.refused_by,
            "error": found.error,
            "schema_refuses": found.schema_refuses,
        }
    if isinstance(found, NoEvidence):
        return {
            "found": False,
            "searchable": found.searchable,
            "examples": found.examples,
            "reason": found.reason,
        }
    return None


def evidence_line(change: Change) -> str:
    """One line saying what the search for evidence found (empty when there was none)."""
    found = change.evidence
    if isinstance(found, Evidence):
        seen = json.dumps(found.message, ensure_ascii=False, sort_keys=True)
        refuses = f"{found.refused_by} refuses"
        sender = f" what {_a(found.sent_by)} sends" if found.sent_by else ""
        return f"evidence: {_a(refuses)}{sender}: {found.schema_type} {seen}"
    if isinstance(found, NoEvidence):
        if not found.searchable:
            return (
                f"evidence: not searchable ({found.reason})" if found.reason else "evidence: not searchable"
            )
        why = f"; {found.reason}" if found.reason else ""
        return f"evidence: no evidence found ({found.examples} generated messages tried{why})"
    return ""


def _a(words: str) -> str:
    """``a 2.0.0 client``, ``an 8.0.0 agent``: the article a release name read aloud takes."""
    spoken_vowel = words[:1].lower() in "aeiou8" or words.startswith(("11.", "18."))
    return ("an " if spoken_vowel else "a ") + words
