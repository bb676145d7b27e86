"""What the differ finds: one :class:`Change` per change, grouped by stability level and release pair."""

from __future__ import annotations

import datetime
import hashlib
from dataclasses import dataclass

from ..schema.ir import Stability
from .rules import SEVERITIES, Role, Rule, Severity


@dataclass(frozen=True)
class Waiver:
    """An accepted change: its fingerprint, why, and until when."""

    fingerprint: str
    reason: str
    expires: datetime.date


@dataclass(frozen=True)
class Change:
    """One change between two surfaces."""

    rule: Rule
    stability: Stability
    subject: str
    detail: str
    severity: Severity
    roles: tuple[Role, ...]
    file: str = ""
    pointer: str = ""
    waiver: Waiver | None = None

    @property
    def fingerprint(self) -> str:
        """Stable across runs, releases and stability levels: the rule and what it is about.

        A lenient annotation is one of two keywords on a field, so for those rules
        the keyword (the detail) is part of what the change is about.
        """
        about = f"{self.subject}\0{self.detail}" if self.rule.category == "lenient" else self.subject
        return hashlib.sha256(f"{self.rule.id}\0{about}".encode()).hexdigest()[:16]

    @property
    def layer(self) -> str:
        return self.rule.layer

    @property
    def message(self) -> str:
        return f"{self.subject}: {self.detail}" if self.detail else self.subject


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
