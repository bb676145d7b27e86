"""A migration: what changed at the Python level between two releases, as the codemod needs it.

It is built from the differ's changes (:func:`migration_from_diff`), never
from the schemas: the differ already knows which types were renamed and how
the generated names moved.  Every name in a migration is the one **user code
written against the old release** spells: a class is its old name, a
method the handler side's old Python name, an argument or attribute its old
Python name.  The differ reports most subjects under the new names, so they
are read back through the class and method renames here.

The differ's names (``diff_releases``, ``DiffResult``, ``Change``) are
imported in this module only, and only ``Change.rule.id`` (compared as a
string), ``.layer``, ``.subject`` and ``.detail`` are read, plus
``DiffResult.old``, ``.new``, ``.changes`` and the stability of its one
surface.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..diff import Change, DiffResult, diff_releases
from .source import ReleaseFiles, Stability, field_name, package_name

__all__ = [
    "SIDES",
    "ArgumentRename",
    "AttributeRename",
    "ClassRename",
    "DiffResult",
    "MethodRename",
    "Migration",
    "RemovedArgument",
    "RemovedAttribute",
    "RemovedClass",
    "RemovedMethod",
    "RequiredArgument",
    "RequiredField",
    "Side",
    "TypeChange",
    "diff_for_migration",
    "migration_from_diff",
]

Side = Literal["agent", "client"]
"""The handler class a method belongs to: ``Agent`` handles the client's calls, ``Client`` the agent's."""
SIDES: tuple[Side, ...] = ("agent", "client")


@dataclass(frozen=True)
class ClassRename:
    old: str
    new: str


@dataclass(frozen=True)
class AttributeRename:
    """A model attribute whose Python name changed (its wire name did not)."""

    class_name: str
    old: str
    new: str
    wire: str


@dataclass(frozen=True)
class MethodRename:
    side: Side
    old: str
    new: str


@dataclass(frozen=True)
class ArgumentRename:
    """A keyword argument of a handler method whose Python name changed."""

    side: Side
    method: str
    old: str
    new: str


@dataclass(frozen=True)
class RemovedClass:
    name: str


@dataclass(frozen=True)
class RemovedAttribute:
    class_name: str
    name: str


@dataclass(frozen=True)
class RemovedMethod:
    side: Side
    name: str
    detail: str = ""


@dataclass(frozen=True)
class RemovedArgument:
    side: Side
    method: str
    name: str


@dataclass(frozen=True)
class RequiredArgument:
    """A keyword argument that a method's callers must now pass (new, or no longer optional)."""

    side: Side
    method: str
    name: str


@dataclass(frozen=True)
class RequiredField:
    """A model field that a constructor call must now pass (new, or no longer optional)."""

    class_name: str
    name: str
    wire: str
    rule: str


@dataclass(frozen=True)
class TypeChange:
    """A model (``attribute`` is ``None``) or a model attribute whose type changed."""

    class_name: str
    attribute: str | None
    rule: str
    detail: str


@dataclass(frozen=True)
class Migration:
    """Everything the codemod rewrites or reports, from ``old_release`` to ``new_release``."""

    old_release: str
    new_release: str
    stability: Stability
    old_package: str
    """The versioned package name of the old release (``acp_2_0_0_alpha_7``), for vendored copies under it."""
    new_package: str
    class_renames: tuple[ClassRename, ...] = ()
    attribute_renames: tuple[AttributeRename, ...] = ()
    method_renames: tuple[MethodRename, ...] = ()
    argument_renames: tuple[ArgumentRename, ...] = ()
    removed_classes: tuple[RemovedClass, ...] = ()
    removed_attributes: tuple[RemovedAttribute, ...] = ()
    removed_methods: tuple[RemovedMethod, ...] = ()
    removed_arguments: tuple[RemovedArgument, ...] = ()
    required_arguments: tuple[RequiredArgument, ...] = ()
    required_fields: tuple[RequiredField, ...] = ()
    type_changes: tuple[TypeChange, ...] = ()

    @property
    def empty(self) -> bool:
        """Whether nothing in user code can need a rewrite or a finding (the package name aside)."""
        return not any(
            (
                self.class_renames,
                self.attribute_renames,
                self.method_renames,
                self.argument_renames,
                self.removed_classes,
                self.removed_attributes,
                self.removed_methods,
                self.removed_arguments,
                self.required_arguments,
                self.required_fields,
                self.type_changes,
            )
        )


def diff_for_migration(old: ReleaseFiles, new: ReleaseFiles, stability: Stability) -> DiffResult:
    """The differ's result for one stability level of two releases (or schema folders)."""
    return diff_releases(old, new, (stability,))


_CLASS_SUBJECT = re.compile(r"(?P<cls>[A-Za-z_][A-Za-z0-9_]*)(?:\.(?P<field>[^\s\[\].]+)|\[.*\])?")
_METHOD_SUBJECT = re.compile(
    r"(?P<side>agent|client)\.(?P<method>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<arg>\w+)\))?"
)
_ARROW = re.compile(r"(?P<old>\S+) -> (?P<new>\S+)")
_TYPE_RULES = (
    "type-changed",
    "type-widened",
    "type-narrowed",
    "python-class-became-union",
    "python-annotation-changed",
)
_REQUIRED_FIELD_RULES = ("field-added-required", "field-became-required")


def migration_from_diff(result: DiffResult) -> Migration:
    """The migration of a diff of one stability level (as :func:`diff_for_migration` makes)."""
    levels = [surface.stability for surface in result.surfaces]
    if len(levels) != 1:
        raise ValueError(f"a migration is for one stability level; the diff has {len(levels)}")
    return _Reader(result.changes).migration(result.old, result.new, levels[0])


def _arrow(change: Change) -> tuple[str, str]:
    """``(old, new)`` from a detail ``old -> new``."""
    found = _ARROW.fullmatch(change.detail.strip())
    if found is None:
        raise ValueError(f"unexpected detail of {change.rule.id} {change.subject}: {change.detail!r}")
    return found["old"], found["new"]


class _Reader:
    """Reads the changes of one stability level into a :class:`Migration`."""

    def __init__(self, changes: Iterable[Change]) -> None:
        self.by_rule: dict[str, list[Change]] = {}
        for change in changes:
            self.by_rule.setdefault(str(change.rule.id), []).append(change)
        self.class_renames = tuple(
            ClassRename(c.subject, c.detail.removeprefix("now ").strip())
            for c in self.changes("python-class-renamed")
        )
        self.old_class = {r.new: r.old for r in self.class_renames}
        self.method_renames = tuple(
            MethodRename(self.method_subject(c)[0], *_arrow(c)) for c in self.changes("python-method-renamed")
        )
        self.old_method = {(r.side, r.new): r.old for r in self.method_renames}

    def changes(self, rule_id: str) -> list[Change]:
        return self.by_rule.get(rule_id, [])

    def method_subject(self, change: Change) -> tuple[Side, str, str]:
        """``(side, old method name, argument or "")`` of ``agent.prompt`` or ``agent.prompt(session_id)``."""
        found = _METHOD_SUBJECT.fullmatch(change.subject)
        if found is None:
            raise ValueError(f"unexpected subject of {change.rule.id}: {change.subject!r}")
        side: Side = "agent" if found["side"] == "agent" else "client"
        method = found["method"]
        if str(change.rule.id) != "python-method-renamed":  # the others name the method as it is now
            method = self.old_method.get((side, method), method)
        return side, method, found["arg"] or ""

    def class_subject(self, change: Change) -> tuple[str, str | None] | None:
        """``(old class name, wire field or None)`` of ``Class``, ``Class.field`` or ``Class['tag']``.

        ``None`` for a method's params or result: callers see those through the method's arguments.
        """
        found = _CLASS_SUBJECT.fullmatch(change.subject)
        if found is None:
            return None
        return self.old_class.get(found["cls"], found["cls"]), found["field"]

    def field_subject(self, change: Change) -> tuple[str, str]:
        """``(old class name, attribute or wire field)`` of ``Class.field``."""
        where = self.class_subject(change)
        if where is None or where[1] is None:
            raise ValueError(f"unexpected subject of {change.rule.id}: {change.subject!r}")
        return where[0], where[1]

    def migration(self, old_release: str, new_release: str, stability: Stability) -> Migration:
        unstable = stability == "unstable"
        attribute_renames = tuple(
            AttributeRename(cls, *_arrow(c), wire=wire)
            for c in self.changes("python-attribute-renamed")
            for cls, wire in [self.field_subject(c)]
        )
        argument_renames = tuple(
            ArgumentRename(side, method, *_arrow(c))
            for c in self.changes("python-method-argument-renamed")
            for side, method, _ in [self.method_subject(c)]
        )
        required_fields = tuple(
            RequiredField(cls, field_name(wire), wire, rule_id)
            for rule_id in _REQUIRED_FIELD_RULES
            for c in self.changes(rule_id)
            for cls, wire in [self.field_subject(c)]
        )
        type_changes = tuple(
            TypeChange(where[0], field_name(where[1]) if where[1] else None, rule_id, c.detail)
            for rule_id in _TYPE_RULES
            for c in self.changes(rule_id)
            for where in [self.class_subject(c)]
            if where is not None
        )
        return Migration(
            old_release=old_release,
            new_release=new_release,
            stability=stability,
            old_package=package_name(old_release, unstable),
            new_package=package_name(new_release, unstable),
            class_renames=self.class_renames,
            attribute_renames=attribute_renames,
            method_renames=self.method_renames,
            argument_renames=argument_renames,
            removed_classes=tuple(RemovedClass(c.subject) for c in self.changes("python-class-removed")),
            removed_attributes=tuple(
                RemovedAttribute(*self.field_subject(c)) for c in self.changes("python-attribute-removed")
            ),
            removed_methods=tuple(
                RemovedMethod(*self.method_subject(c)[:2], detail=c.detail)
                for c in self.changes("python-method-removed")
            ),
            removed_arguments=tuple(
                RemovedArgument(*self.method_subject(c))
                for c in self.changes("python-method-argument-removed")
            ),
            required_arguments=tuple(
                RequiredArgument(*self.method_subject(c))
                for c in self.changes("python-method-argument-required")
            ),
            required_fields=required_fields,
            type_changes=type_changes,
        )
