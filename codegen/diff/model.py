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
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..schema.ir import Stability, to_json
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
    MethodPart,
    Part,
    Path,
    SidePart,
    TypePart,
    ValuePart,
    part_json,
)
from .rules import SEVERITIES, Flow, Role, Rule, Severity
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
    "MemberPart",
    "MessagePart",
    "MethodPart",
    "NoEvidence",
    "Part",
    "Path",
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


@dataclass(frozen=True)
class NoEvidence:
    """A search for evidence that found none (which is not an error: the verdict stands)."""

    examples: int
    reason: str = ""


# --- changes and results ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Waiver:
    """An accepted change: its fingerprint, why, and until when."""

    fingerprint: str
    reason: str
    expires: datetime.date


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
    flow: Flow = field(default_factory=Flow)
    """Who sends and who receives the data the change is in."""
    file: str = ""
    pointer: str = ""
    waiver: Waiver | None = None
    evidence: Evidence | NoEvidence | None = None

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
        return path_words(self.path)

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


@dataclass(frozen=True)
class DiffResult:
    old: str
    new: str
    surfaces: tuple[SurfaceDiff, ...]
    expired: tuple[Waiver, ...] = ()
    unmatched: tuple[Waiver, ...] = ()

    @property
    def changes(self) -> tuple[Change, ...]:
        return tuple(c for s in self.surfaces for c in s.changes)

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
