"""A migration: what changed at the Python level between two releases, as the codemod needs it.

It is built from the differ's changes (:func:`migration_from_diff`), never
from the schemas: the differ already knows which types were renamed and how
the generated names moved.  Every name in a migration is the one **user code
written against the old release** spells: a class is its old name, a
method the handler side's old Python name, an argument or attribute its old
Python name.  The differ reports most subjects under the new names, so they
are read back through the class and method renames here.

The differ's names (``diff_releases``, ``DiffResult``, ``Change``, the
parts of a change's path and ``RuleId``) are imported in this module only.
A change is read through its typed fields: ``Change.rule.id`` (a
:class:`~codegen.diff.RuleId`), its ``path`` (a :class:`TypePart` and a
:class:`FieldPart`, a :class:`HandlerPart` and an :class:`ArgumentPart`...)
and its ``old`` and ``new`` values; the words of the report
(``Change.detail``) are only shown, in the codemod's findings, never parsed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..diff import (
    ArgumentPart,
    AttributePart,
    Change,
    DiffResult,
    FieldPart,
    HandlerPart,
    RuleId,
    TypePart,
    diff_releases,
)
from ..diff.rules import rule
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
    "RuleId",
    "Side",
    "TypeChange",
    "diff_for_migration",
    "migration_from_diff",
    "rule",
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
    rule: RuleId


@dataclass(frozen=True)
class TypeChange:
    """A model (``attribute`` is ``None``) or a model attribute whose type changed."""

    class_name: str
    attribute: str | None
    rule: RuleId
    detail: str
    """The differ's words for the change, shown in the finding."""


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


_TYPE_RULES = (
    RuleId.TYPE_CHANGED,
    RuleId.TYPE_WIDENED,
    RuleId.TYPE_NARROWED,
    RuleId.PYTHON_CLASS_BECAME_UNION,
    RuleId.PYTHON_ANNOTATION_CHANGED,
)
_REQUIRED_FIELD_RULES = (RuleId.FIELD_ADDED_REQUIRED, RuleId.FIELD_BECAME_REQUIRED)


def migration_from_diff(result: DiffResult) -> Migration:
    """The migration of a diff of one stability level (as :func:`diff_for_migration` makes)."""
    levels = [surface.stability for surface in result.surfaces]
    if len(levels) != 1:
        raise ValueError(f"a migration is for one stability level; the diff has {len(levels)}")
    return _Reader(result.changes).migration(result.old, result.new, levels[0])


def _unexpected(change: Change) -> ValueError:
    return ValueError(f"unexpected path of {change.rule.id}: {change.path!r}")


def _names(change: Change) -> tuple[str, str]:
    """``(old, new)``: the names a rename changes."""
    if not isinstance(change.old, str) or not isinstance(change.new, str):
        raise ValueError(f"{change.rule.id} at {change.path!r} has no old and new name")
    return change.old, change.new


class _Reader:
    """Reads the changes of one stability level into a :class:`Migration`."""

    def __init__(self, changes: Iterable[Change]) -> None:
        self.by_rule: dict[RuleId, list[Change]] = {}
        for change in changes:
            self.by_rule.setdefault(change.rule.id, []).append(change)
        self.class_renames = tuple(ClassRename(*_names(c)) for c in self.changes(RuleId.PYTHON_CLASS_RENAMED))
        self.old_class = {r.new: r.old for r in self.class_renames}
        self.method_renames = tuple(
            MethodRename(self.handler(c)[0], *_names(c)) for c in self.changes(RuleId.PYTHON_METHOD_RENAMED)
        )
        self.old_method = {(r.side, r.new): r.old for r in self.method_renames}

    def changes(self, rule_id: RuleId) -> list[Change]:
        return self.by_rule.get(rule_id, [])

    def handler(self, change: Change) -> tuple[Side, str, str]:
        """``(side, method name, argument or "")`` of a change to a handler's method or its argument.

        The method is named as in the new release (the differ's); :meth:`method` reads it as the old one.
        """
        match change.path:
            case (HandlerPart(side=side, name=method),):
                argument = ""
            case (HandlerPart(side=side, name=method), ArgumentPart(name=argument)):
                pass
            case _:
                raise _unexpected(change)
        if side not in SIDES:
            raise _unexpected(change)  # a side the generated handler classes do not have
        return ("agent" if side == "agent" else "client"), method, argument

    def method(self, change: Change) -> tuple[Side, str, str]:
        """``(side, old method name, argument or "")`` of a change to a method (named as it is now)."""
        side, method, argument = self.handler(change)
        return side, self.old_method.get((side, method), method), argument

    def handled(self, changes: list[Change]) -> list[Change]:
        """The changes of handler methods of the sides the generated classes have (agent, client)."""
        return [c for c in changes if isinstance(c.path[0], HandlerPart) and c.path[0].side in SIDES]

    def class_path(self, change: Change) -> tuple[str, str | None] | None:
        """``(old class name, wire field or None)`` of a change to a class, one of its fields or members.

        ``None`` for a method's params or result: callers see those through the method's arguments.
        """
        match change.path:
            case (TypePart(name=cls), FieldPart(name=wire), *_):
                return self.old_class.get(cls, cls), wire
            case (TypePart(name=cls), *_):
                return self.old_class.get(cls, cls), None
            case _:
                return None

    def field_path(self, change: Change) -> tuple[str, str] | None:
        """``(old class name, wire field)`` of a change to ``Class.field``.

        ``None`` for a field of a union member the differ compares inside its
        parent (``Union['tag'] > kind['x'].field``): no one class has it.
        """
        match change.path:
            case (TypePart(name=cls), FieldPart(name=wire)):
                return self.old_class.get(cls, cls), wire
            case _:
                return None

    def attribute_path(self, change: Change) -> tuple[str, str]:
        """``(old class name, Python attribute)`` of a change to a class's attribute."""
        match change.path:
            case (TypePart(name=cls), AttributePart(name=attribute)):
                return self.old_class.get(cls, cls), attribute
            case _:
                raise _unexpected(change)

    def migration(self, old_release: str, new_release: str, stability: Stability) -> Migration:
        unstable = stability == "unstable"
        attribute_renames = tuple(
            AttributeRename(where[0], *_names(c), wire=where[1])
            for c in self.changes(RuleId.PYTHON_ATTRIBUTE_RENAMED)
            for where in [self.field_path(c)]
            if where is not None
        )
        argument_renames = tuple(
            ArgumentRename(side, method, *_names(c))
            for c in self.handled(self.changes(RuleId.PYTHON_METHOD_ARGUMENT_RENAMED))
            for side, method, _ in [self.method(c)]
        )
        required_fields = tuple(
            RequiredField(where[0], field_name(where[1]), where[1], rule_id)
            for rule_id in _REQUIRED_FIELD_RULES
            for c in self.changes(rule_id)
            for where in [self.field_path(c)]
            if where is not None
        )
        type_changes = tuple(
            TypeChange(where[0], field_name(where[1]) if where[1] else None, rule_id, c.detail)
            for rule_id in _TYPE_RULES
            for c in self.changes(rule_id)
            for where in [self.class_path(c)]
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
            removed_classes=tuple(
                RemovedClass(c.path[0].name)
                for c in self.changes(RuleId.PYTHON_CLASS_REMOVED)
                if isinstance(c.path[0], TypePart)
            ),
            removed_attributes=tuple(
                RemovedAttribute(*self.attribute_path(c))
                for c in self.changes(RuleId.PYTHON_ATTRIBUTE_REMOVED)
            ),
            removed_methods=tuple(
                RemovedMethod(*self.method(c)[:2], detail=c.detail)
                for c in self.handled(self.changes(RuleId.PYTHON_METHOD_REMOVED))
            ),
            removed_arguments=tuple(
                RemovedArgument(*self.method(c))
                for c in self.handled(self.changes(RuleId.PYTHON_METHOD_ARGUMENT_REMOVED))
            ),
            required_arguments=tuple(
                RequiredArgument(*self.method(c))
                for c in self.handled(self.changes(RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED))
            ),
            required_fields=required_fields,
            type_changes=type_changes,
        )
