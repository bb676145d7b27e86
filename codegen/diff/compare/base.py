"""What every comparison shares: where it is (:class:`At`), what a union member's levels compare, the walk.

Also the predicates on type expressions that several constructs ask
(:func:`accepts_any`, :func:`without_constraints`), the normative-text row
every location can have, and the premises a set proof names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, assert_never

from ...schema.ir import (
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
    Const,
    Field,
    MapOf,
    NamedType,
    Nullable,
    Ref,
    Scalar,
    TypeExpr,
    UnionType,
)
from ..context import Context
from ..model import Change, Path
from ..normative import normative_edit
from ..payload import Sentences
from ..rules import RuleId, Traffic

Side = Literal["old", "new"]


class Walk(Protocol):
    """The comparisons that recurse, as the construct modules reach them (:data:`.named.SHAPES`).

    A field's type, a union member's type and a member that builds on another
    named type are compared by shape, which can come back to fields, unions
    and enums: the walk is handed down in :attr:`At.walk` so that each module
    imports only the modules below it.
    """

    def expr(self, ctx: Context, old: TypeExpr, new: TypeExpr, at: At) -> Iterator[Change]:
        """How the type at ``at`` changed (:func:`.named.compare_expr`)."""
        ...

    def swap(self, ctx: Context, old: Ref, new: Ref, at: At) -> Iterator[Change]:
        """A reference to one named type replaced by one to another (:func:`.named.swap`)."""
        ...


@dataclass(frozen=True)
class At:
    """Where a comparison is: the schema location, the traffic of its data, and what its rows name.

    ``where`` is the type the location is in (its pointer locates a row);
    ``python`` the generated class whose attributes the location's fields are
    (``None``: no Python row is reported from here, as inside a comparison by
    shape, whose class change is one row of its own); ``constructed`` whether
    Python code builds that class itself (a method's params are passed as
    the method's keyword arguments instead).  ``walk`` compares what is
    below the location by shape.
    """

    path: Path
    traffic: Traffic
    where: NamedType | None
    python: str | None = None
    constructed: bool = True
    walk: Walk = dataclasses.field(kw_only=True)

    def down(self, *parts: Any) -> At:
        return dataclasses.replace(self, path=(*self.path, *parts))

    def to(self, path: Path) -> At:
        return dataclasses.replace(self, path=path)

    def without_python(self) -> At:
        return dataclasses.replace(self, python=None)


@dataclass(frozen=True)
class Shared:
    """What the levels around a union member already compare: their fields (by wire name) and tags."""

    old: Mapping[str, Field]
    new: Mapping[str, Field]
    tags: frozenset[str] = frozenset()

    def with_fields(self, old: Mapping[str, Field], new: Mapping[str, Field], tag: str | None) -> Shared:
        tags = self.tags | ({tag} if tag is not None else set())
        return Shared({**self.old, **old}, {**self.new, **new}, tags)


NOTHING_SHARED = Shared({}, {})


def without_constraints(expr: TypeExpr) -> TypeExpr:
    match expr:
        case Scalar(type=scalar):
            return Scalar(scalar)
        case ArrayOf(item=item):
            return ArrayOf(without_constraints(item))
        case MapOf(value=value):
            return MapOf(without_constraints(value))
        case Nullable(inner=inner):
            return Nullable(without_constraints(inner))
        case AnyOf(members=members):
            return AnyOf(tuple(without_constraints(m) for m in members))
        case Ref() | Const():
            return expr
        case _:
            assert_never(expr)


def accepts_any(surface: ApiSurface, expr: TypeExpr, seen: frozenset[str] = frozenset()) -> bool:
    """Whether an expression takes every JSON value: ``any``, or a union with a member that does."""
    match expr:
        case Scalar(type=scalar):
            return scalar == "any"
        case Nullable(inner=inner):
            return accepts_any(surface, inner, seen)
        case AnyOf(members=members):
            return any(accepts_any(surface, m, seen) for m in members)
        case Ref(name=name):
            named = surface.types.get(name)
            if named is None or name in seen:
                return False
            if isinstance(named, AliasType):
                return accepts_any(surface, named.target, seen | {name})
            if isinstance(named, UnionType):
                return any(accepts_any(surface, v.type, seen | {name}) for v in named.members)
            return False
        case ArrayOf() | MapOf() | Const():
            return False
        case _:
            assert_never(expr)


def named_of(surface: ApiSurface, expr: TypeExpr, renamed_from: Mapping[str, str]) -> NamedType | None:
    if not isinstance(expr, Ref):
        return None
    return surface.types.get(renamed_from.get(expr.name, expr.name))


def normative_change(ctx: Context, old_doc: str, new_doc: str, at: At) -> Iterator[Change]:
    """A description that adds, drops or rewords a sentence stating a requirement (MUST, SHOULD, MAY...)."""
    dropped, added = normative_edit(old_doc, new_doc)  # sentences compared as requirements
    if dropped or added:
        yield ctx.change(
            RuleId.NORMATIVE_TEXT_CHANGED,
            at.path,
            at.traffic,
            at.where,
            old=Sentences(dropped),
            new=Sentences(added),
        )
