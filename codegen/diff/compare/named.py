"""Named types and type expressions: every ``$defs`` type by name, and two types in one place by shape.

This is the walk the construct modules recurse through (:data:`SHAPES`):
an expression's alternatives widened, narrowed or changed (decided by set
inclusion), a reference swapped for another, a type's constraints, and the
named types dispatched by kind to :mod:`.fields`, :mod:`.unions` and :mod:`.enums`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import assert_never

from ...schema.ir import (
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
    Const,
    EnumType,
    MapOf,
    NamedType,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
    UnionType,
)
from ..context import Context
from ..model import Change, InnerPart, KeywordPart, Path, Relation, TypePart, values
from ..payload import Kind, Name, TypeSet, TypeTerm
from ..renames import rename_refs, shape
from ..rules import RuleId, Traffic
from .base import (
    NOTHING_SHARED,
    At,
    Shared,
    Walk,
    accepts_any,
    named_of,
    normative_change,
    without_constraints,
)
from .constraints import bound, constraint_changes, constraint_pairs, keyword_proof
from .enums import compare_enum
from .fields import compare_object
from .python import python_kind
from .unions import compare_union, object_became_union


def derived(named: NamedType | None) -> bool:
    """A class or union the builder derived from a union's member: compared inside that union."""
    return isinstance(named, (ObjectType, UnionType)) and named.origin is not None


def compare_types(ctx: Context) -> Iterator[Change]:
    """Every named type: renamed, removed, added, or compared with the type of its name.

    Derived types get their Python rows here (a class users import is new,
    gone or renamed) and their wire comparison inside their union.
    """
    new_names = set(ctx.renames.values())
    for name, old_type in ctx.old.types.items():
        if name in ctx.renames:
            new_name = ctx.renames[name]
            new_type = ctx.new.types[new_name]
            yield ctx.change(
                RuleId.PYTHON_CLASS_RENAMED,
                (TypePart(name),),
                where=new_type,
                old=Name(name),
                new=Name(new_name),
            )
            if not (derived(old_type) and derived(new_type)):
                yield from compare_type(ctx, old_type, new_type)
            else:
                yield from python_kind(ctx, old_type, new_type)
        elif name in ctx.new.types:
            if not (derived(old_type) and derived(ctx.new.types[name])):
                yield from compare_type(ctx, old_type, ctx.new.types[name])
            else:
                yield from python_kind(ctx, old_type, ctx.new.types[name])
        else:
            yield ctx.change(RuleId.PYTHON_CLASS_REMOVED, (TypePart(name),), where=old_type, at_old=True)
    for name, new_type in ctx.new.types.items():
        if name not in ctx.old.types and name not in new_names:
            yield ctx.change(RuleId.PYTHON_CLASS_ADDED, (TypePart(name),), where=new_type)


def compare_type(ctx: Context, old: NamedType, new: NamedType) -> Iterator[Change]:
    """Two types of the same name (or renamed), at their own schema location."""
    here: Path = (TypePart(new.name),)
    at = At(
        here, ctx.traffic(old.name, new.name), new, new.name, new.name not in ctx.bound_params, walk=SHAPES
    )
    yield from python_kind(ctx, old, new)
    if old.unstable != new.unstable and new.schema_name is not None:
        rule = RuleId.TYPE_BECAME_UNSTABLE if new.unstable else RuleId.TYPE_BECAME_STABLE
        yield ctx.change(rule, here, where=new)
    yield from normative_change(ctx, old.doc, new.doc, at)
    yield from compare_named(ctx, old, new, at)


def compare_named(
    ctx: Context, old: NamedType, new: NamedType, at: At, shared: Shared = NOTHING_SHARED
) -> Iterator[Change]:
    """Two named types at one location, by shape: their fields, members, values or targets.

    A pair already being compared (a type that refers to itself) is taken as equal.
    """
    key = (old.name, new.name)
    if key in ctx.visiting:
        return
    ctx.visiting.add(key)
    try:
        yield from _compare_named(ctx, old, new, at, shared)
    finally:
        ctx.visiting.discard(key)


def _compare_named(ctx: Context, old: NamedType, new: NamedType, at: At, shared: Shared) -> Iterator[Change]:
    match new:
        case ObjectType():
            if isinstance(old, ObjectType):
                yield from compare_object(ctx, old, new, at)
                return
            if isinstance(old, UnionType):
                yield ctx.change(RuleId.UNION_BECAME_OBJECT, at.path, at.traffic, at.where)
                return
        case UnionType():
            if isinstance(old, UnionType):
                yield from compare_union(ctx, old, new, at, shared)
                return
            if isinstance(old, ObjectType):
                yield from object_became_union(ctx, old, new, at)
                return
        case EnumType():
            if isinstance(old, EnumType):
                yield from compare_enum(ctx, old, new, at)
                return
        case AliasType():
            if isinstance(old, AliasType):
                yield from compare_expr(ctx, old.target, new.target, at)
                return
        case _:
            assert_never(new)
    if isinstance(old, AliasType):  # an alias is its target
        yield from compare_expr(ctx, old.target, Ref(new.name), at.without_python())
    elif isinstance(new, AliasType):
        yield from _compare(ctx, Ref(old.name), new.target, at.without_python())
    else:
        yield ctx.change(
            RuleId.TYPE_CHANGED, at.path, at.traffic, at.where, old=Kind(old.kind), new=Kind(new.kind)
        )


def _members(expr: TypeExpr) -> frozenset[TypeExpr]:
    """The alternatives an expression accepts, nullable and untagged unions flattened."""
    match expr:
        case Nullable(inner=inner):
            return _members(inner) | {Scalar("null")}
        case AnyOf(members=members):
            return frozenset(m for member in members for m in _members(member))
        case Ref() | Scalar() | ArrayOf() | MapOf() | Const():
            return frozenset({expr})
        case _:
            assert_never(expr)


def _as_wire(surface: ApiSurface, expr: TypeExpr, renamed_from: Mapping[str, str]) -> TypeExpr:
    """An open enum is its base scalar on the wire (it accepts any string or integer)."""
    named = named_of(surface, expr, renamed_from)
    if isinstance(named, EnumType) and named.open:
        return Scalar(named.base)
    return expr


def compare_expr(ctx: Context, old: TypeExpr, new: TypeExpr, at: At) -> Iterator[Change]:
    """How the type at ``at`` changed (old references are read through the renames)."""
    yield from _compare(ctx, rename_refs(old, ctx.renames), new, at)


def _compare(ctx: Context, old: TypeExpr, new: TypeExpr, at: At) -> Iterator[Change]:
    """``old`` -> ``new`` at ``at`` (whose path ends with an :class:`InnerPart` inside an array or a map)."""
    if old == new:
        return
    path, traffic, where = at.path, at.traffic, at.where
    old_any = accepts_any(ctx.old, rename_refs(old, ctx.renamed_from))
    new_any = accepts_any(ctx.new, new)
    if old_any and new_any:  # the same values on the wire, spelt another way
        yield ctx.change(
            RuleId.PYTHON_ANNOTATION_CHANGED, path, where=where, old=TypeTerm(old), new=TypeTerm(new)
        )
        return
    if without_constraints(old) == without_constraints(new):
        for place, a, b in constraint_pairs(old, new, path):
            for rule_id, keyword, before, after in constraint_changes(a.constraints, b.constraints):
                found = ctx.change(
                    rule_id,
                    (*place, KeywordPart(keyword)),
                    traffic,
                    where,
                    old=bound(before),
                    new=bound(after),
                )
                yield dataclasses.replace(found, proof=keyword_proof(ctx, a, keyword, before, after))
        return
    if isinstance(old, ArrayOf) and isinstance(new, ArrayOf):
        for rule_id, keyword, before, after in constraint_changes(old.constraints, new.constraints):
            found = ctx.change(
                rule_id, (*path, KeywordPart(keyword)), traffic, where, old=bound(before), new=bound(after)
            )
            yield dataclasses.replace(found, proof=keyword_proof(ctx, old, keyword, before, after))
        yield from _compare(ctx, old.item, new.item, at.down(InnerPart("items")))
        return
    if isinstance(old, MapOf) and isinstance(new, MapOf):
        yield from _compare(ctx, old.value, new.value, at.down(InnerPart("values")))
        return
    containers = (Ref, ArrayOf, MapOf)
    if (
        isinstance(old, Nullable)
        and isinstance(new, Nullable)
        and type(old.inner) is type(new.inner)
        and isinstance(new.inner, containers)
    ):
        yield from _compare(ctx, old.inner, new.inner, at)  # null taken on both sides: what else is taken
        return
    if isinstance(old, Ref) and isinstance(new, Ref):
        yield from swap(ctx, old, new, at)
        return
    before = frozenset(_as_wire(ctx.old, m, ctx.renamed_from) for m in _members(old))
    after = frozenset(_as_wire(ctx.new, m, {}) for m in _members(new))
    gone, arrived = before - after, after - before
    if len(gone) == 1 and len(arrived) == 1:
        (was_one,), (now_one,) = gone, arrived
        if isinstance(was_one, Ref) and isinstance(now_one, Ref):  # one alternative swapped for another
            yield from swap(ctx, was_one, now_one, at)
            return
    proof = ctx.sets.relation(old, new)  # by inclusion of the value sets, $ref resolved, constraints kept
    wider = new_any or proof.relation in (Relation.EQUAL, Relation.WIDER)
    narrower = old_any or proof.relation in (Relation.EQUAL, Relation.NARROWER)
    if wider and narrower:  # the same values on the wire: an open enum takes any value of its base type
        yield ctx.change(
            RuleId.PYTHON_ANNOTATION_CHANGED, path, where=where, old=TypeTerm(old), new=TypeTerm(new)
        )
        return
    was, now = values(before), values(after)
    if wider:
        found = ctx.change(RuleId.TYPE_WIDENED, path, traffic, where, old=TypeSet(was), new=TypeSet(now))
    elif narrower:
        found = ctx.change(RuleId.TYPE_NARROWED, path, traffic, where, old=TypeSet(was), new=TypeSet(now))
    else:
        found = ctx.change(RuleId.TYPE_CHANGED, path, traffic, where, old=TypeTerm(old), new=TypeTerm(new))
    yield dataclasses.replace(found, proof=proof)


def swap(ctx: Context, old: Ref, new: Ref, at: At) -> Iterator[Change]:
    """A reference to one named type replaced by a reference to another: compared by shape."""
    inline = inline_move(ctx, old.name, new.name)
    if inline is not None:
        yield ctx.change(inline, at.path, where=at.where, old=Name(old.name), new=Name(new.name))
        return
    old_type = ctx.old.types.get(ctx.renamed_from.get(old.name, old.name))
    new_type = ctx.new.types.get(new.name)
    if old_type is None or new_type is None:
        yield ctx.change(
            RuleId.TYPE_CHANGED, at.path, at.traffic, at.where, old=TypeTerm(old), new=TypeTerm(new)
        )
        return
    if at.python is not None:
        yield ctx.change(
            RuleId.PYTHON_CLASS_REPLACED, at.path, where=at.where, old=Name(old.name), new=Name(new.name)
        )
    yield from compare_named(ctx, old_type, new_type, at.without_python())


def shape_breaks(ctx: Context, old: Ref, new: Ref) -> frozenset[str] | None:
    """Whom the differences between two named types break, compared by shape (``None``: not both named).

    The empty set: the same shape, or differences that break nobody.
    """
    old_type = ctx.old.types.get(ctx.renamed_from.get(old.name, old.name))
    new_type = ctx.new.types.get(new.name)
    if old_type is None or new_type is None:
        return None
    at = At((), Traffic(), None, walk=SHAPES)
    return frozenset(c.rule.breaks for c in compare_named(ctx, old_type, new_type, at) if c.layer == "wire")


def inline_move(ctx: Context, old_name: str, new_name: str) -> RuleId | None:
    """``ref-became-inline`` or ``inline-became-ref`` when two references differ only in naming."""
    old_type = ctx.old.types.get(ctx.renamed_from.get(old_name, old_name))
    new_type = ctx.new.types.get(new_name)
    if old_type is None or new_type is None:
        return None
    if shape(old_type, ctx.renames) != shape(new_type, {}):
        return None
    if old_type.schema_name is not None and new_type.schema_name is None:
        return RuleId.REF_BECAME_INLINE
    if old_type.schema_name is None and new_type.schema_name is not None:
        return RuleId.INLINE_BECAME_REF
    return None


class _Shapes:
    """The walk by shape the construct modules recurse through (:class:`.base.Walk`)."""

    def expr(self, ctx: Context, old: TypeExpr, new: TypeExpr, at: At) -> Iterator[Change]:
        return compare_expr(ctx, old, new, at)

    def swap(self, ctx: Context, old: Ref, new: Ref, at: At) -> Iterator[Change]:
        return swap(ctx, old, new, at)


SHAPES: Walk = _Shapes()
"""The one :class:`.base.Walk`: every :class:`.base.At` a comparison starts from carries it."""
