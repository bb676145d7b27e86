"""What the differ finds: one :class:`Change` per change, grouped by stability level and release pair.

A change is structured data: the rule (a :class:`~.rules.RuleId` through its
:class:`~.rules.Rule`), a **path** of typed parts saying what it is about (a
type, a field, the tags of a union member, an enum value, a method, a side,
a Python name) and the **old** and **new** values where the change has them
(a type expression, a constraint, a default, a name).  The words of a report,
:attr:`Change.subject` and :attr:`Change.detail`, are rendered from those
fields by :mod:`.wording`; nothing reads them back.  The fingerprint a waiver
names hashes the rule and the path, never the words, so rewording a message
keeps every waiver.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..schema.ir import Field, Stability, to_json
from .path import (
    ABSENT,
    ArgumentPart,
    AttributePart,
    EnvelopePart,
    FieldPart,
    HandlerPart,
    InnerPart,
    KeywordPart,
    MemberPart,
    MessagePart,
    MessagesPart,
    MethodPart,
    Part,
    Path,
    SidePart,
    TypePart,
    ValuePart,
    part_json,
)
from .proof import Relation, SetProof
from .reading import LenientRead
from .rules import CATALOG, NO_TRAFFIC, SEVERITIES, Role, Rule, RuleId, Severity, Traffic
from .wording import detail, path_words

__all__ = [
    "ABSENT",
    "ArgumentPart",
    "AttributePart",
    "Change",
    "DiffResult",
    "EnvelopePart",
    "Evidence",
    "FieldPart",
    "HandlerPart",
    "InnerPart",
    "KeywordPart",
    "Level",
    "MemberPart",
    "MessagePart",
    "MessagesPart",
    "MethodPart",
    "NoEvidence",
    "Part",
    "Path",
    "Relation",
    "SetProof",
    "SidePart",
    "SurfaceDiff",
    "TypePart",
    "ValuePart",
    "Waiver",
    "part_json",
    "values",
]

FINGERPRINT_VERSION = "acp-change/2"
"""Part of every fingerprint's hashed key; bumped when the key's structure changes (docs/diff.md)."""


# --- evidence ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """A message that shows a change on the wire: one side's models accept it, the other's refuse it.

    ``message`` is an instance of the ``$defs`` type ``schema_type``, valid
    under the schema of ``sent_by`` and accepted by its generated models;
    the generated models of ``refused_by`` refuse it, with ``error`` (their
    first validation error, one line).  ``schema_refuses`` says whether the
    refusing release's JSON Schema refuses it too (when it does not, the
    refusing models are stricter than their schema).
    """

    message: Any
    schema_type: str
    sent_by: str
    """``"<release> <peer>"``, or the release alone when no peer sends the type."""
    refused_by: str
    error: str
    schema_refuses: bool
    by_dispatch: bool = False
    """Refused by the receiver's dispatcher, not its models: a call of a method the receiving release
    does not handle (a request answered ``-32601 Method not found``, a notification ignored), the
    message built from the rule (:meth:`codegen.evidence.search.Pair.predicted`)."""
    carrier: str = ""
    """The whole message a peer receives that ``message`` is, in words (``params of notification
    session/update``), when ``schema_type`` is a method's params or result; empty for a message of
    ``schema_type`` alone, which is no witness (issue 32: a peer reads the message that carries it)."""
    read: LenientRead | None = None
    """Accepted by the models of ``refused_by`` too, which read it leniently and lose the value at
    ``read.at`` (an item dropped, a value replaced by the field's default); ``error`` is why their
    strict reading refuses that value (``None``: their models refuse the message)."""


@dataclass(frozen=True)
class NoEvidence:
    """A search for evidence that found none (which is not an error: the verdict stands).

    ``searchable`` is false when no message can show the change (a batch, a
    method that is gone: nothing the models validate carries it), and
    ``reason`` then says why; otherwise ``examples`` messages were tried and
    none was refused at the change's location.
    """

    examples: int
    reason: str = ""
    searchable: bool = True


# --- changes and results ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Waiver:
    """An accepted change: its fingerprint, why, and until when."""

    fingerprint: str
    reason: str
    expires: datetime.date


@dataclass(frozen=True)
class Level:
    """How a change weighs at one stability level, kept when its levels weigh it differently.

    The same change (the same rule at the same path) can hurt other peers in
    the unstable schema, which has more methods and sides, than in the stable
    one: each level's severity and roles come from that level's traffic.
    """

    stability: Stability
    severity: Severity
    roles: tuple[Role, ...]


@dataclass(frozen=True)
class Change:
    """One change between two surfaces, as typed fields; its words are rendered on demand."""

    rule: Rule
    stability: Stability
    path: Path
    severity: Severity
    roles: tuple[Role, ...]
    old: Any = ABSENT
    """The value before the change, where it has one (see :mod:`.wording` for each rule's kind)."""
    new: Any = ABSENT
    flow: Traffic = NO_TRAFFIC
    """Who sends and who receives the data the change is in, in the old and in the new release."""
    file: str = ""
    pointer: str = ""
    waiver: Waiver | None = None
    evidence: Evidence | NoEvidence | None = None
    proof: SetProof | None = None
    """The set-inclusion argument the rule decided by, where it gives one (witnesses: :attr:`evidence`)."""
    stabilities: tuple[Stability, ...] = ()
    """The stability levels the change appears in (empty: only :attr:`stability`)."""
    levels: tuple[Level, ...] = ()
    """Each level's severity and roles, when they differ between the levels (empty when they agree)."""
    also: tuple[Path, ...] = ()
    """Other locations of the same edit: a sentence reworded in every copy of a description."""

    @property
    def appears_in(self) -> tuple[Stability, ...]:
        """The stability levels the change appears in."""
        return self.stabilities or (self.stability,)

    @property
    def key(self) -> str:
        """What the change is about, as canonical JSON: the rule and the path (never the words)."""
        return json.dumps(
            [FINGERPRINT_VERSION, str(self.rule.id), [part_json(p) for p in self.path]],
            sort_keys=True,
            separators=(",", ":"),
        )

    @property
    def fingerprint(self) -> str:
        """Stable across runs, releases, stability levels and rewordings: the hashed :attr:`key`."""
        return hashlib.sha256(self.key.encode()).hexdigest()[:16]

    @property
    def layer(self) -> str:
        return self.rule.layer

    @property
    def subject(self) -> str:
        """What the change is about, in words (its path but the position inside a field's type)."""
        words = path_words(self.path)
        return f"{words} (and {len(self.also)} more)" if self.also else words

    @property
    def detail(self) -> str:
        """The change itself, in words, from its old and new values."""
        return detail(self.rule.id, self.path, self.old, self.new)

    @property
    def message(self) -> str:
        subject, detail = self.subject, self.detail
        return f"{subject}: {detail}" if detail else subject

    def part(self, kind: type[Part]) -> Part | None:
        """The first part of the path of this kind."""
        return next((p for p in self.path if isinstance(p, kind)), None)


@dataclass(frozen=True)
class SurfaceDiff:
    """The changes between the same stability level of two releases."""

    stability: Stability
    old: str
    new: str
    changes: tuple[Change, ...]


_SEVERITY_ORDER = {severity: i for i, severity in enumerate(SEVERITIES)}
_RULE_ORDER = {r.id: i for i, r in enumerate(CATALOG)}


def report_order(change: Change) -> tuple[int, bool, int, str, str, str]:
    """Most severe first, wire before python, then the catalog's order of rules, then by subject."""
    return (
        _SEVERITY_ORDER[change.severity],
        change.layer == "python",
        _RULE_ORDER[change.rule.id],
        change.subject,
        change.detail,
        change.key,
    )


def merged(changes: Iterable[Change]) -> tuple[Change, ...]:
    """Each distinct change once (the same rule at the same path), with every level it appears in.

    A change takes the most severe of its levels' severities and all of their
    roles; when the levels disagree, :attr:`Change.levels` keeps each one's.
    Its evidence is the first found at any level.
    """
    groups: dict[str, list[Change]] = {}
    for change in changes:
        groups.setdefault(change.key, []).append(change)
    out: list[Change] = []
    for found in groups.values():
        first = found[0]
        if len(found) == 1:
            out.append(first)
            continue
        severity = min((c.severity for c in found), key=_SEVERITY_ORDER.__getitem__)
        roles = tuple(sorted({r for c in found for r in c.roles}))
        agree = len({(c.severity, c.roles) for c in found}) == 1
        traffic = first.flow
        for other in found[1:]:
            traffic = traffic | other.flow
        evidence = next((c.evidence for c in found if isinstance(c.evidence, Evidence)), first.evidence)
        out.append(
            replace(
                first,
                severity=severity,
                roles=roles,
                flow=traffic,
                evidence=evidence,
                stabilities=tuple(c.stability for c in found),
                levels=() if agree else tuple(Level(c.stability, c.severity, c.roles) for c in found),
            )
        )
    return tuple(sorted(_copies_together(out), key=report_order))


STABILITIES: tuple[Stability, ...] = ("stable", "unstable")
COPIED_EDITS = frozenset({RuleId.NORMATIVE_TEXT_CHANGED})
"""Rules whose change is an edit of words upstream copies into many descriptions: one row for every copy."""


def _copies_together(changes: list[Change]) -> list[Change]:
    """The same edit at several locations (the same rule, old and new values) as one change.

    The first location (in report order) names it; :attr:`Change.also` lists the others, and its
    levels are every level one of them appears in.
    """
    groups: dict[tuple[str, str], list[Change]] = {}
    out: list[Change] = []
    for change in sorted(changes, key=report_order):
        if change.rule.id not in COPIED_EDITS:
            out.append(change)
            continue
        edit = json.dumps([to_json(change.old), to_json(change.new)], sort_keys=True)
        groups.setdefault((change.rule.id, edit), []).append(change)
    for found in groups.values():
        levels = tuple(s for s in STABILITIES if any(s in c.appears_in for c in found))
        first = found[0]
        if len(found) > 1:
            first = replace(first, also=tuple(c.path for c in found[1:]), stabilities=levels)
        out.append(first)
    return out


@dataclass(frozen=True)
class DiffResult:
    old: str
    new: str
    surfaces: tuple[SurfaceDiff, ...]
    expired: tuple[Waiver, ...] = ()
    unmatched: tuple[Waiver, ...] = ()

    @property
    def stabilities(self) -> tuple[Stability, ...]:
        return tuple(s.stability for s in self.surfaces)

    @functools.cached_property
    def changes(self) -> tuple[Change, ...]:
        """Every distinct change once, with the stability levels it appears in (:func:`merged`)."""
        return merged(c for s in self.surfaces for c in s.changes)

    def failing(self, fail_on: str) -> tuple[Change, ...]:
        """Unwaived changes at or above the threshold."""
        if fail_on == "never":
            return ()
        levels = SEVERITIES[: SEVERITIES.index(fail_on) + 1]
        return tuple(c for c in self.changes if c.waiver is None and c.severity in levels)

    def exit_code(self, fail_on: str) -> int:
        return 1 if self.failing(fail_on) or self.expired else 0


def values(items: Iterable[Any]) -> tuple[Any, ...]:
    """A set of values as a sorted tuple (a stable order for the report and the key)."""
    return tuple(sorted(items, key=lambda v: json.dumps(to_json(v), sort_keys=True)))


def field_default(f: Field) -> Any:
    """A field's default as JSON data, :data:`~.path.ABSENT` when it has none."""
    return to_json(f.default) if f.has_default else ABSENT


JsonKey = tuple[Any, ...]
"""A JSON value with its JSON type at every level: hashable, equal only for one value of one type."""


def json_key(value: Any) -> JsonKey:
    """``value`` keyed by JSON type: ``1``, ``1.0`` and ``true`` differ, an object's key order does not.

    Python's ``==`` takes ``True == 1 == 1.0``; ``repr()`` tells them apart but also an object's key order.
    """
    match value:
        case None:
            return ("null",)
        case bool():
            return ("boolean", value)
        case int():
            return ("integer", value)
        case float():
            return ("number", value)
        case str():
            return ("string", value)
        case list() | tuple():
            return ("array", tuple(json_key(v) for v in value))
        case Mapping():
            return ("object", frozenset((str(k), json_key(v)) for k, v in value.items()))
        case _:
            return ("absent",) if value is ABSENT else ("other", repr(value))
