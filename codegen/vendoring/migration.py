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

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from ..api.ends import End, bindings
from ..diff import (
    ArgumentPart,
    AttributePart,
    Change,
    DiffResult,
    EnvelopePart,
    FieldPart,
    HandlerPart,
    MethodPart,
    RuleId,
    TypePart,
    diff_releases,
)
from ..diff.payload import Name
from ..diff.rules import rule
from ..schema.ir import ApiSurface, JsonScalar, Ref, UnionType, refs_in
from ..schema.releases import surfaces_of
from .source import ReleaseFiles, Stability, field_name, package_name

__all__ = [
    "ApiNames",
    "ArgumentPart",
    "ArgumentRename",
    "AttributePart",
    "AttributeRename",
    "Change",
    "ClassRename",
    "DiffResult",
    "EndNames",
    "EnvelopePart",
    "FieldPart",
    "HandlerPart",
    "MethodPart",
    "MethodRename",
    "Migration",
    "MigrationDiff",
    "RemovedArgument",
    "RemovedAttribute",
    "RemovedClass",
    "RemovedMethod",
    "RequiredArgument",
    "RequiredField",
    "RuleId",
    "Side",
    "TypeChange",
    "TypePart",
    "UnionMember",
    "api_names",
    "diff_for_migration",
    "migration_from_diff",
    "rule",
]

Side = str
"""A side of ``[sides]`` (``agent``, ``client``, ``proxy``...): whose methods a change is about, as the
differ's :class:`HandlerPart` names it.  A protocol method is under every side."""

PROTOCOL = "protocol"
"""The side of the methods either end handles (``[sides]``); the differ lists them under every other side."""


@dataclass(frozen=True)
class EndNames:
    """One end of a connection as user code written against the old release meets it in the bindings.

    Read off the old release's API spec (:func:`codegen.api.ends.bindings`): the handler protocol a
    user's class extends, the connection class that calls its peer, the functions that make one, and
    each method's side (the key of the migration's method changes) by its Python name.
    """

    role: str
    handler: str
    """The handler protocol (``Agent``, ``Proxy``)."""
    connection: str
    """The connection class (``AgentSideConnection``): it calls the peer's methods."""
    connect: str
    """The function that serves a handler (or a factory of one) and returns the connection."""
    run: str | None
    """The function that serves a handler (or a factory) on stdin and stdout, if the role has one."""
    serves: tuple[tuple[str, Side], ...]
    """``(Python name, side)`` of every method the handler serves."""
    calls: tuple[tuple[str, Side], ...]
    """``(Python name, side)`` of every method the connection calls."""
    _served: Mapping[str, Side] = field(init=False, repr=False, compare=False)
    _called: Mapping[str, Side] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_served", dict(self.serves))
        object.__setattr__(self, "_called", dict(self.calls))

    def served(self, name: str) -> Side | None:
        """The side of the handler's method called ``name``, if it serves one."""
        return self._served.get(name)

    def called(self, name: str) -> Side | None:
        """The side of the peer's method the connection calls as ``name``, if it calls one."""
        return self._called.get(name)

    @property
    def factory_functions(self) -> tuple[str, ...]:
        """The functions that take a handler factory and give it this end's connection."""
        return (self.connect,) if self.run is None else (self.connect, self.run)


@dataclass(frozen=True)
class ApiNames:
    """What the codemod needs of the old release's API spec: its connection ends and its unions."""

    ends: tuple[EndNames, ...] = ()
    """In the order of the role each connects to (``connect_to_agent`` first)."""
    unions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """``(union, its member classes)`` for each union whose members share fields written at the union."""

    @property
    def exports(self) -> frozenset[str]:
        """The names of the bindings that the package's ``__init__`` re-exports."""
        names: set[str] = set()
        for end in self.ends:
            names |= {end.handler, end.connection, *end.factory_functions}
        return frozenset(names)

    def handler(self, name: str) -> EndNames | None:
        """The end whose handler protocol is called ``name``."""
        return next((e for e in self.ends if e.handler == name), None)

    def connection(self, name: str) -> EndNames | None:
        """The end whose connection class is called ``name``."""
        return next((e for e in self.ends if e.connection == name), None)

    def connected_by(self, function: str) -> EndNames | None:
        """The end whose connection ``function`` (``connect_to_agent``) returns."""
        return next((e for e in self.ends if e.connect == function), None)

    def served_by_factory_of(self, function: str) -> EndNames | None:
        """The end whose connection a handler factory passed to ``function`` (``run_agent``) gets."""
        return next((e for e in self.ends if function in e.factory_functions), None)

    def caller(self, side: Side, name: str) -> EndNames | None:
        """The first end whose connection calls the method ``name`` of ``side``."""
        return next((e for e in self.ends if (name, side) in e.calls), None)


def _keyed(specs: Iterable[tuple[str, str]]) -> tuple[tuple[str, Side], ...]:
    """``(Python name, side)`` pairs, a protocol method under the first other side of the end."""
    pairs = list(specs)
    home = next((side for _, side in pairs if side != PROTOCOL), PROTOCOL)
    return tuple((name, home if side == PROTOCOL else side) for name, side in pairs)


def _end_names(end: End) -> EndNames:
    return EndNames(
        role=end.name,
        handler=end.role.handler,
        connection=end.role.connection,
        connect=end.connect,
        run=end.run,
        serves=_keyed((s.name, s.method.side) for s in end.served),
        calls=_keyed((s.name, s.method.side) for s in end.called),
    )


def _member_classes(surface: ApiSurface, union: UnionType, seen: frozenset[str]) -> Iterator[str]:
    """The classes of a union's members, and of the members of a member that is a union."""
    for variant in union.members:
        for name in refs_in(variant.type):
            named = surface.types.get(name)
            if name in seen or named is None:
                continue
            yield name
            if isinstance(named, UnionType):
                yield from _member_classes(surface, named, seen | {name})


def api_names(surface: ApiSurface) -> ApiNames:
    """The ends and unions of one surface (the old release's, for a migration)."""
    unions = tuple(
        (u.name, tuple(dict.fromkeys(_member_classes(surface, u, frozenset({u.name})))))
        for u in surface.unions()
        if u.fields
    )
    return ApiNames(tuple(_end_names(e) for e in bindings(surface).ends), unions)


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
class UnionMember:
    """A member class of a union, by the value of the union's tag that selects it."""

    class_name: str
    tag: JsonScalar = None
    other: bool = False
    """The catch-all member: it takes every tag value the others do not name."""
    default: bool = False
    """The member of a tagged union written without a tag: taken when the tag is absent (or names no
    other member)."""


@dataclass(frozen=True)
class TypeChange:
    """A model (``attribute`` is ``None``) or a model attribute whose type changed."""

    class_name: str
    attribute: str | None
    rule: RuleId
    detail: str
    """The differ's words for the change, shown in the finding."""
    members: tuple[UnionMember, ...] = ()
    """For a class that became a union: the classes to build instead (its members in the new release)."""
    tag: str | None = None
    """For a class that became a union: the Python attribute of its tag, if it is tagged."""


@dataclass(frozen=True)
class Migration:
    """Everything the codemod rewrites or reports, from ``old_release`` to ``new_release``.

    The changes are lists, as the differ reports them; :attr:`index` looks them up by the names user
    code spells, built once with the migration.
    """

    old_release: str
    new_release: str
    stability: Stability
    old_package: str
    """The versioned package name of the old release (``acp_2_0_0_alpha_7``), for vendored copies under it."""
    new_package: str
    api: ApiNames = ApiNames()
    """The old release's connection ends and unions (its API spec), as user code meets them."""
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
    index: MigrationIndex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", MigrationIndex.of(self))

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


K = TypeVar("K")
V = TypeVar("V")

MethodKey = tuple[Side, str]
"""A handler method as the migration keys it: ``(side, old Python name)``."""


@dataclass(frozen=True)
class MigrationIndex:
    """A migration's changes by the names user code spells.

    A change to a field that every member of a union shares is reported at the union; it is listed
    under each member class too (a receiver typed as the member reads the same attribute).
    """

    class_renames: Mapping[str, str]
    removed_classes: frozenset[str]
    class_types: Mapping[str, tuple[TypeChange, ...]]
    attribute_types: Mapping[str, Mapping[str, tuple[TypeChange, ...]]]
    attribute_renames: Mapping[str, Mapping[str, str]]
    removed_attributes: Mapping[str, frozenset[str]]
    required_fields: Mapping[str, tuple[RequiredField, ...]]
    method_renames: Mapping[MethodKey, str]
    removed_methods: Mapping[MethodKey, str]
    """The removed method's detail, by its key."""
    argument_renames: Mapping[MethodKey, Mapping[str, str]]
    removed_arguments: Mapping[MethodKey, frozenset[str]]
    required_arguments: Mapping[MethodKey, tuple[str, ...]]

    @classmethod
    def of(cls, m: Migration) -> MigrationIndex:
        members = dict(m.api.unions)

        def classes(name: str) -> tuple[str, ...]:
            return (name, *members.get(name, ()))

        attribute_types: dict[str, dict[str, list[TypeChange]]] = {}
        for change in m.type_changes:
            if change.attribute is not None:
                for owner in classes(change.class_name):
                    attribute_types.setdefault(owner, {}).setdefault(change.attribute, []).append(change)
        attribute_renames: dict[str, dict[str, str]] = {}
        for a in m.attribute_renames:
            for owner in classes(a.class_name):
                attribute_renames.setdefault(owner, {}).setdefault(a.old, a.new)
        removed_attributes: dict[str, set[str]] = {}
        for r in m.removed_attributes:
            for owner in classes(r.class_name):
                removed_attributes.setdefault(owner, set()).add(r.name)
        return cls(
            class_renames={r.old: r.new for r in m.class_renames},
            removed_classes=frozenset(r.name for r in m.removed_classes),
            class_types=_grouped((c.class_name, c) for c in m.type_changes if c.attribute is None),
            attribute_types={k: {a: tuple(v) for a, v in by.items()} for k, by in attribute_types.items()},
            attribute_renames=attribute_renames,
            removed_attributes={k: frozenset(v) for k, v in removed_attributes.items()},
            required_fields=_grouped(
                (owner, f) for f in m.required_fields for owner in classes(f.class_name)
            ),
            method_renames={(r.side, r.old): r.new for r in m.method_renames},
            removed_methods={(r.side, r.name): r.detail for r in m.removed_methods},
            argument_renames={
                key: {g.old: g.new for g in group}
                for key, group in _grouped(((g.side, g.method), g) for g in m.argument_renames).items()
            },
            removed_arguments={
                key: frozenset(d.name for d in group)
                for key, group in _grouped(((d.side, d.method), d) for d in m.removed_arguments).items()
            },
            required_arguments={
                key: tuple(q.name for q in group)
                for key, group in _grouped(((q.side, q.method), q) for q in m.required_arguments).items()
            },
        )

    @property
    def class_words(self) -> set[str]:
        """Every class name the migration changes something of."""
        tables: tuple[Iterable[str], ...] = (
            self.class_renames,
            self.removed_classes,
            self.class_types,
            self.attribute_renames,
            self.removed_attributes,
            self.attribute_types,
            self.required_fields,
        )
        return {name for table in tables for name in table}

    @property
    def attribute_words(self) -> set[str]:
        """Every attribute name the migration changes on some class."""
        tables = (self.attribute_renames, self.removed_attributes, self.attribute_types)
        return {attr for table in tables for names in table.values() for attr in names}

    @property
    def method_words(self) -> set[str]:
        """Every handler method name the migration changes, or changes an argument of."""
        tables: tuple[Iterable[MethodKey], ...] = (
            self.method_renames,
            self.removed_methods,
            self.argument_renames,
            self.removed_arguments,
            self.required_arguments,
        )
        return {name for table in tables for _, name in table}


def _grouped(pairs: Iterable[tuple[K, V]]) -> dict[K, tuple[V, ...]]:
    out: dict[K, list[V]] = {}
    for key, value in pairs:
        out.setdefault(key, []).append(value)
    return {key: tuple(values) for key, values in out.items()}


@dataclass(frozen=True)
class MigrationDiff(DiffResult):
    """The differ's result for a migration, with the old release's API names the codemod resolves with."""

    api: ApiNames = ApiNames()
    unions: tuple[tuple[str, str | None, tuple[UnionMember, ...]], ...] = ()
    """``(union, its tag's Python attribute, its members)`` of every union of the new release that was a
    class in the old one (the findings name the classes to build instead)."""


def diff_for_migration(old: ReleaseFiles, new: ReleaseFiles, stability: Stability) -> MigrationDiff:
    """The differ's result for one stability level of two releases (or schema folders), with the old
    release's API names."""
    before, after = surfaces_of(old, (stability,)), surfaces_of(new, (stability,))
    result = diff_releases(old, new, (stability,), built=(before, after))
    api = api_names(before[stability])
    became = {
        c.path[0].name
        for c in result.changes
        if c.rule.id == RuleId.PYTHON_CLASS_BECAME_UNION and isinstance(c.path[0], TypePart)
    }
    unions = tuple(
        (name, union.tag_py_name, _members(union))
        for name in sorted(became)
        for union in [after[stability].types.get(name)]
        if isinstance(union, UnionType)
    )
    return MigrationDiff(
        result.old, result.new, result.surfaces, result.expired, result.unmatched, api=api, unions=unions
    )


def _members(union: UnionType) -> tuple[UnionMember, ...]:
    """The member classes of ``union``, by their tag value, the catch-all last."""
    return tuple(
        UnionMember(
            variant.type.name,
            variant.tag,
            other=variant is union.catch_all,
            default=union.tagged and variant.tag is None and variant is not union.catch_all,
        )
        for variant in union.members
        if isinstance(variant.type, Ref)
    )


_TYPE_RULES = (
    RuleId.TYPE_CHANGED,
    RuleId.TYPE_WIDENED,
    RuleId.TYPE_NARROWED,
    RuleId.PYTHON_CLASS_BECAME_UNION,
    RuleId.PYTHON_ANNOTATION_CHANGED,
)
_REQUIRED_FIELD_RULES = (RuleId.FIELD_ADDED_REQUIRED, RuleId.FIELD_BECAME_REQUIRED)
"""The wire rules of a field a constructor call must now pass (the differ reports the Python rule only for
a class it knows is constructed, not for a method's params, which code may construct all the same)."""


def migration_from_diff(result: MigrationDiff) -> Migration:
    """The migration of a diff of one stability level (as :func:`diff_for_migration` makes)."""
    levels = [surface.stability for surface in result.surfaces]
    if len(levels) != 1:
        raise ValueError(f"a migration is for one stability level; the diff has {len(levels)}")
    return _Reader(result.changes).migration(result.old, result.new, levels[0], result.api, result.unions)


def _unexpected(change: Change) -> ValueError:
    return ValueError(f"unexpected path of {change.rule.id}: {change.path!r}")


def _names(change: Change) -> tuple[str, str]:
    """``(old, new)``: the names a rename changes."""
    if not isinstance(change.old, Name) or not isinstance(change.new, Name):
        raise ValueError(f"{change.rule.id} at {change.path!r} has no old and new name")
    return change.old.name, change.new.name


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
        return side, method, argument

    def method(self, change: Change) -> tuple[Side, str, str]:
        """``(side, old method name, argument or "")`` of a change to a method (named as it is now)."""
        side, method, argument = self.handler(change)
        return side, self.old_method.get((side, method), method), argument

    def handled(self, changes: list[Change]) -> list[Change]:
        """The changes of handler methods, of every side."""
        return [c for c in changes if isinstance(c.path[0], HandlerPart)]

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

    def became_union(
        self, change: Change, became: Mapping[str, tuple[str | None, tuple[UnionMember, ...]]]
    ) -> tuple[tuple[UnionMember, ...], str | None]:
        """``(members, tag)`` of the union a class became, for a python-class-became-union change."""
        if change.rule.id != RuleId.PYTHON_CLASS_BECAME_UNION:
            return (), None
        match change.path:
            case (TypePart(name=name),) if name in became:
                tag, members = became[name]
                return members, tag
        return (), None

    def attribute_path(self, change: Change) -> tuple[str, str]:
        """``(old class name, Python attribute)`` of a change to a class's attribute."""
        match change.path:
            case (TypePart(name=cls), AttributePart(name=attribute)):
                return self.old_class.get(cls, cls), attribute
            case _:
                raise _unexpected(change)

    def migration(
        self,
        old_release: str,
        new_release: str,
        stability: Stability,
        api: ApiNames,
        unions: tuple[tuple[str, str | None, tuple[UnionMember, ...]], ...] = (),
    ) -> Migration:
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
        # a constructor call lacks an argument: the Python rule's words, whatever the wire rule; a class
        # that became a union is no constructor at all (its finding names the member classes instead)
        became = {name: (tag, members) for name, tag, members in unions}
        unions_now = {self.old_class.get(name, name) for name in became}
        required_fields = tuple(
            RequiredField(where[0], field_name(where[1]), where[1], RuleId.PYTHON_CLASS_ARGUMENT_REQUIRED)
            for rule_id in _REQUIRED_FIELD_RULES
            for c in self.changes(rule_id)
            for where in [self.field_path(c)]
            if where is not None and where[0] not in unions_now
        )
        type_changes = tuple(
            TypeChange(where[0], field_name(where[1]) if where[1] else None, rule_id, c.detail, *extra)
            for rule_id in _TYPE_RULES
            for c in self.changes(rule_id)
            for where in [self.class_path(c)]
            if where is not None
            for extra in [self.became_union(c, became)]
        )
        return Migration(
            old_release=old_release,
            new_release=new_release,
            stability=stability,
            old_package=package_name(old_release, unstable),
            new_package=package_name(new_release, unstable),
            api=api,
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
