"""The wire comparison of named types and type expressions, as generators of :class:`Change`.

Every change is reported once, at its **schema location**, named as the
schema names it: a ``$defs`` type, a field of it, a member of a union (by its
tag, or untagged by its type or title), a field written in that member, the
items or values of a field's type, a constraint keyword.  Types are matched
by name (through the renames, :mod:`.renames`); objects field by field,
tagged unions variant by tag value (never by position), untagged unions
member by member (by the member's type without its constraints, so that a
member's own constraints are compared), enums value by value, aliases and
fields by their type expressions.

The classes and unions the builder derives from a union's members (their
:attr:`~codegen.schema.ir.ObjectType.origin` is set) are not schema
locations: they are compared where their member is, inside the union, and
only for what the member itself writes (the union's shared fields are
compared once, at the union; what a member builds on with a ``$ref`` is
compared at that type).  A derived union that repeats another union
(:attr:`~codegen.schema.ir.UnionType.mirrors`) is that union: its members
are compared there, once.

Two named types in the same place (a field whose ``$ref`` moved to another
type, a method's result replaced) are compared by shape, as the wire sees
them: the differences are reported at that place, and nothing when the
shapes are equal; the Python class changing is a ``python-class-replaced``.
Where the alternatives of a type expression change, the type is *widened*
when every old value is still taken, *narrowed* when every new value was
taken before, and *changed* otherwise.  A member that takes any JSON value
(``{}`` in the schema, ``Scalar("any")`` in the IR) makes its union open; it
is not a variant.  A field, class or attribute that changes its Python name
is reported here too, beside the wire change it comes with.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, assert_never

from .. import knowledge
from ..schema.ir import (
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
    Const,
    Constraints,
    EnumType,
    Field,
    JsonScalar,
    MapOf,
    NamedType,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
    UnionType,
    Variant,
    refs_in,
    strip_nullable,
)
from .context import Context
from .model import (
    ABSENT,
    AttributePart,
    Change,
    FieldPart,
    InnerPart,
    KeywordPart,
    MemberPart,
    Path,
    Relation,
    SetProof,
    TypePart,
    ValuePart,
    field_default,
    json_key,
    values,
)
from .normative import normative_edit
from .renames import rename_refs, shape
from .rules import BECAME, MEMBER_ADDED, MEMBER_REMOVED, MemberKind, RuleId, Traffic, openness
from .sets import Term, with_defaults
from .wording import describe

Side = Literal["old", "new"]


@dataclass(frozen=True)
class At:
    """Where a comparison is: the schema location, the traffic of its data, and what its rows name.

    ``where`` is the type the location is in (its pointer locates a row);
    ``python`` the generated class whose attributes the location's fields are
    (``None``: no Python row is reported from here, as inside a comparison by
    shape, whose class change is one row of its own); ``constructed`` whether
    Python code builds that class itself (a method's params are passed as
    the method's keyword arguments instead).
    """

    path: Path
    traffic: Traffic
    where: NamedType | None
    python: str | None = None
    constructed: bool = True

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


# --- type expressions ------------------------------------------------------------


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


def union_is_open(surface: ApiSurface, union: UnionType) -> bool:
    """A union is open with a catch-all member, a member that takes any value, or a default member."""
    return (
        union.open
        or any(accepts_any(surface, v.type) for v in union.variants)
        or _default(surface, union) is not None
    )


def _constraint_pairs(
    old: TypeExpr, new: TypeExpr, path: Path
) -> Iterator[tuple[Path, Scalar | ArrayOf, Scalar | ArrayOf]]:
    """Matching constrained expressions of two that differ only in constraints, and where they are."""
    match old:
        case Scalar():
            if isinstance(new, Scalar):
                yield path, old, new
        case ArrayOf():
            if isinstance(new, ArrayOf):
                yield path, old, new
                yield from _constraint_pairs(old.item, new.item, (*path, InnerPart("items")))
        case MapOf():
            if isinstance(new, MapOf):
                yield from _constraint_pairs(old.value, new.value, (*path, InnerPart("values")))
        case Nullable():
            if isinstance(new, Nullable):
                yield from _constraint_pairs(old.inner, new.inner, path)
        case AnyOf():
            if isinstance(new, AnyOf):
                for a, b in zip(old.members, new.members, strict=True):
                    yield from _constraint_pairs(a, b, path)
        case Ref() | Const():
            pass  # nothing in them is constrained
        case _:
            assert_never(old)


_LOWER_BOUNDS = ("minimum", "exclusive_minimum", "min_length", "min_items")
_UPPER_BOUNDS = ("maximum", "exclusive_maximum", "max_length", "max_items")
KEYWORDS = {
    "minimum": "minimum",
    "maximum": "maximum",
    "exclusive_minimum": "exclusiveMinimum",
    "exclusive_maximum": "exclusiveMaximum",
    "min_length": "minLength",
    "max_length": "maxLength",
    "min_items": "minItems",
    "max_items": "maxItems",
    "pattern": "pattern",
    "format": "format",
}
"""IR constraint -> the JSON Schema keyword a report names."""
ANNOTATIONS = frozenset({"format"})
"""Keywords JSON Schema 2020-12 reads as annotations: neither its validators nor the generated models
enforce them, so changing one changes no value on the wire."""


def keyword_proof(ctx: Context, expr: Scalar | ArrayOf, keyword: str, before: Any, after: Any) -> SetProof:
    """The inclusion argument of one keyword's change: the expression's JSON type with that keyword alone.

    ``integer{minimum 0}`` -> ``integer{minimum 1}``: every new value was already accepted, ``0`` is not
    any more (an array's items are left out: the keyword is about the array).
    """
    attribute = next(a for a, k in KEYWORDS.items() if k == keyword)

    def alone(value: Any) -> Scalar | ArrayOf:
        constraints = Constraints(**({} if value is ABSENT else {attribute: value}))
        return (
            Scalar(expr.type, constraints)
            if isinstance(expr, Scalar)
            else ArrayOf(Scalar("any"), constraints)
        )

    return dataclasses.replace(ctx.sets.relation(alone(before), alone(after)), old=ABSENT, new=ABSENT)


def constraint_changes(old: Constraints, new: Constraints) -> Iterator[tuple[RuleId, str, Any, Any]]:
    """``(rule id, keyword, old value, new value)`` for every constraint keyword that differs."""
    for key in (*_LOWER_BOUNDS, *_UPPER_BOUNDS, "pattern", "format"):
        before, after = getattr(old, key), getattr(new, key)
        if before == after:
            continue
        shown = (ABSENT if before is None else before, ABSENT if after is None else after)
        if KEYWORDS[key] in ANNOTATIONS:
            yield RuleId.FORMAT_CHANGED, KEYWORDS[key], *shown
        elif before is None:
            yield RuleId.CONSTRAINT_TIGHTENED, KEYWORDS[key], *shown
        elif after is None:
            yield RuleId.CONSTRAINT_LOOSENED, KEYWORDS[key], *shown
        elif key in _LOWER_BOUNDS:
            rule_id = RuleId.CONSTRAINT_TIGHTENED if after > before else RuleId.CONSTRAINT_LOOSENED
            yield rule_id, KEYWORDS[key], *shown
        elif key in _UPPER_BOUNDS:
            rule_id = RuleId.CONSTRAINT_TIGHTENED if after < before else RuleId.CONSTRAINT_LOOSENED
            yield rule_id, KEYWORDS[key], *shown
        else:
            yield RuleId.CONSTRAINT_CHANGED, KEYWORDS[key], *shown


def lenient_keywords(f: Field) -> tuple[str, ...]:
    """The leniency keywords a field carries, in the order of ``[extensions]`` of ``knowledge.toml``."""
    return tuple(keyword for flag, keyword in knowledge.extensions().lenient if getattr(f, flag, False))


def normative_change(ctx: Context, old_doc: str, new_doc: str, at: At) -> Iterator[Change]:
    """A description that adds, drops or rewords a sentence stating a requirement (MUST, SHOULD, MAY...)."""
    dropped, added = normative_edit(old_doc, new_doc)  # sentences compared as requirements
    if dropped or added:
        yield ctx.change(RuleId.NORMATIVE_TEXT_CHANGED, at.path, at.traffic, at.where, old=dropped, new=added)


def presence_proof(ctx: Context, at: At, wire: str, omits: Side) -> SetProof | None:
    """A field one side may omit and the other requires: a value of the type there without it.

    ``omits`` is the side whose values may lack the field; the value shown is
    one of its values without the field, refused by the other side's type
    (built from the type the location is in, when it is an object on both sides).
    """
    new_type = at.where
    old_type = ctx.old.types.get(ctx.renamed_from.get(new_type.name, new_type.name)) if new_type else None
    if not (isinstance(old_type, ObjectType) and isinstance(new_type, ObjectType)):
        return None
    terms: dict[Side, Term] = {"old": ("old", Ref(old_type.name)), "new": ("new", Ref(new_type.name))}
    has, lacks = terms[omits], terms["new" if omits == "old" else "old"]
    for value in ctx.sets.samples(has):
        if isinstance(value, dict) and wire not in value and ctx.sets.accepts(has, value):
            if not ctx.sets.accepts(lacks, value):
                whole = ctx.sets.relate(terms["old"], terms["new"], ABSENT, ABSENT)
                if omits == "old":
                    return dataclasses.replace(whole, only_old=value)
                return dataclasses.replace(whole, only_new=value)
            break
    return None


_INVALID_TRIES: tuple[Any, ...] = (True, 1.5, "x", [], {}, None)
"""Values tried for one a field's schema refuses (what a leniency keyword reads as the default)."""


def lenient_proof(ctx: Context, old: Field, new: Field) -> SetProof | None:
    """A field that stops being lenient: a value its schema refuses, which old models read and new refuse.

    ``x-deserialize-default-on-null`` reads null; ``-default-on-error`` any value the type refuses;
    ``-skip-invalid-items`` a list holding an item its item type refuses.
    """
    expr = new.type
    term: Term = ("new", expr)
    value: Any = ABSENT
    if old.default_on_null and not new.default_on_null and not ctx.sets.accepts(term, None):
        value = None
    elif old.default_on_error and not new.default_on_error:
        value = next((v for v in _INVALID_TRIES if not ctx.sets.accepts(term, v)), ABSENT)
    elif old.skip_invalid_items and not new.skip_invalid_items and isinstance(strip_nullable(expr), ArrayOf):
        item: Term = ("new", strip_nullable(expr).item)  # type: ignore[union-attr]
        bad = next((v for v in _INVALID_TRIES if not ctx.sets.accepts(item, v)), ABSENT)
        value = ABSENT if bad is ABSENT else [bad]
    if value is ABSENT:
        return None
    return SetProof(Relation.NARROWER, only_old=value, premise=PREMISE_LENIENT)


PREMISE_LENIENT = "lenient"
"""A premise: the old models read a value the schema refuses as the field's default (or drop the item)."""


def derived(named: NamedType | None) -> bool:
    """A class or union the builder derived from a union's member: compared inside that union."""
    return isinstance(named, (ObjectType, UnionType)) and named.origin is not None


# --- named types ---------------------------------------------------------------------


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
                RuleId.PYTHON_CLASS_RENAMED, (TypePart(name),), where=new_type, old=name, new=new_name
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


def python_kind(ctx: Context, old: NamedType, new: NamedType) -> Iterator[Change]:
    """A generated name that code could call to build a value and now cannot (a union of classes), or the
    reverse.

    A name is a class when it stands for one class (:func:`one_class`): an
    object type, or an alias or a one-member union of one, which the bindings
    name as that class (``AuthMethod = AuthMethodAgent``).
    """
    here: Path = (TypePart(new.name),)
    was_class, is_class = one_class(ctx.old, old), one_class(ctx.new, new)
    if was_class and not is_class and isinstance(new, UnionType):
        yield ctx.change(RuleId.PYTHON_CLASS_BECAME_UNION, here, where=new, new=new.tag_wire_name)
    elif is_class and not was_class and isinstance(old, UnionType):
        yield ctx.change(RuleId.PYTHON_UNION_BECAME_CLASS, here, where=new)


def one_class(surface: ApiSurface, named: NamedType, depth: int = 0) -> bool:
    """Whether a named type is one class in Python: an object type, or an alias or a union of just one
    member that is (a union of several members, or of a class and null, is not)."""
    match named:
        case ObjectType():
            return True
        case AliasType(target=Ref(name=name)) if depth < 32:
            return name in surface.types and one_class(surface, surface.types[name], depth + 1)
        case UnionType() if len(named.members) == 1 and not named.fields and depth < 32:
            (only,) = named.members
            found = surface.types.get(only.type.name) if isinstance(only.type, Ref) else None
            return found is not None and one_class(surface, found, depth + 1)
    return False


def compare_type(ctx: Context, old: NamedType, new: NamedType) -> Iterator[Change]:
    """Two types of the same name (or renamed), at their own schema location."""
    here: Path = (TypePart(new.name),)
    at = At(here, ctx.traffic(old.name, new.name), new, new.name, new.name not in ctx.bound_params)
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
        yield ctx.change(RuleId.TYPE_CHANGED, at.path, at.traffic, at.where, old=old.kind, new=new.kind)


def object_became_union(ctx: Context, old: ObjectType, new: UnionType, at: At) -> Iterator[Change]:
    """An object became a union: the fields it keeps in common, and every member as a new one."""
    yield ctx.change(RuleId.OBJECT_BECAME_UNION, at.path, at.traffic, at.where, new=new.tag_wire_name)
    before = {f.wire_name: f for f in ctx.old.all_fields(old.name)}
    for f in new.fields:
        if f.wire_name in before:
            yield from compare_field(ctx, before[f.wire_name], f, at.down(FieldPart(f.wire_name)))
    tag = new.tag_wire_name
    if tag is not None and tag not in before and all(v.tag is not None for v in new.variants):
        # every member needs the tag the old object did not have: old senders omit it
        tags: list[TypeExpr] = [Const(v.tag) for v in new.variants]
        if new.catch_all is not None:
            tags.append(Scalar("string" if all(isinstance(v.tag, str) for v in new.variants) else "any"))
        tag_type = tags[0] if len(tags) == 1 else AnyOf(tuple(tags))
        yield ctx.change(
            RuleId.FIELD_ADDED_REQUIRED, (*at.path, FieldPart(tag)), at.traffic, at.where, new=tag_type
        )
    added = MEMBER_ADDED["union", openness(union_is_open(ctx.new, new))]
    for variant in new.variants:
        # a member whose every value the old object took adds nothing on the wire (decided by inclusion)
        if not accepts_any(ctx.new, variant.type) and not ctx.sets.includes(
            ("old", Ref(old.name)), ("new", variant.type)
        ):
            yield ctx.change(added, member_path(ctx.new, at.path, new, variant), at.traffic, at.where)


def member_path(surface: ApiSurface, path: Path, union: UnionType, variant: Variant) -> Path:
    """The path of one member: by its tag value, or (untagged) by its title or its type."""
    if union.tagged:
        return (*path, MemberPart(union.tag_wire_name, variant.tag))
    named = surface.types.get(variant.type.name) if isinstance(variant.type, Ref) else None
    if isinstance(named, (ObjectType, UnionType)) and named.origin is not None and named.origin.label:
        return (*path, MemberPart(None, title=named.origin.label))
    return (*path, MemberPart(None, member=without_constraints(variant.type)))


def _unstable(surface: ApiSurface, expr: TypeExpr) -> bool:
    named = surface.types.get(expr.name) if isinstance(expr, Ref) else None
    return named is not None and named.unstable


def _named(surface: ApiSurface, expr: TypeExpr, renamed_from: Mapping[str, str]) -> NamedType | None:
    if not isinstance(expr, Ref):
        return None
    return surface.types.get(renamed_from.get(expr.name, expr.name))


def _as_wire(surface: ApiSurface, expr: TypeExpr, renamed_from: Mapping[str, str]) -> TypeExpr:
    """An open enum is its base scalar on the wire (it accepts any string or integer)."""
    named = _named(surface, expr, renamed_from)
    if isinstance(named, EnumType) and named.open:
        return Scalar(named.base)
    return expr


def compare_object(ctx: Context, old: ObjectType, new: ObjectType, at: At) -> Iterator[Change]:
    same_base = (ctx.renames.get(old.base, old.base) if old.base else None) == new.base
    old_fields = old.fields if same_base else ctx.old.all_fields(old.name)
    new_fields = new.fields if same_base else ctx.new.all_fields(new.name)
    yield from compare_fields(ctx, old_fields, new_fields, at)
    yield from compare_extra(ctx, old, new, at)


def compare_extra(ctx: Context, old: ObjectType, new: ObjectType, at: At) -> Iterator[Change]:
    """``additionalProperties: false`` added or removed."""
    if old.extra != new.extra:
        rule_id = RuleId.OBJECT_BECAME_CLOSED if new.extra == "forbid" else RuleId.OBJECT_BECAME_OPEN
        yield ctx.change(rule_id, at.path, at.traffic, at.where)


def _carrier(ctx: Context, old: Field | None, new: Field | None, at: At) -> bool:
    """A field of a JSON-RPC envelope that carries a method's params or result: compared method by method."""
    if at.where is None or not at.where.internal:
        return False
    for f, payloads in ((old, ctx.old_payloads), (new, ctx.new_payloads)):
        if f is not None:
            found = set(refs_in(f.type))
            if not found or not found <= payloads:
                return False
    return True


def _attribute(at: At, py_name: str) -> Path:
    assert at.python is not None
    return (TypePart(at.python), AttributePart(py_name))


def compare_fields(
    ctx: Context, old_fields: tuple[Field, ...], new_fields: tuple[Field, ...], at: At
) -> Iterator[Change]:
    """The fields of one location (an object, a union's shared fields, a member's own), by wire name."""
    before = {f.wire_name: f for f in old_fields}
    after = {f.wire_name: f for f in new_fields}
    for wire, f in before.items():
        here = at.down(FieldPart(wire))
        if _carrier(ctx, f, after.get(wire), at):
            continue
        if wire not in after:
            rule_id = RuleId.REQUIRED_FIELD_REMOVED if f.required else RuleId.OPTIONAL_FIELD_REMOVED
            found = ctx.change(rule_id, here.path, at.traffic, at.where)
            yield dataclasses.replace(
                found, proof=presence_proof(ctx, at, wire, "new") if f.required else None
            )
            if at.python is not None:
                yield ctx.change(RuleId.PYTHON_ATTRIBUTE_REMOVED, _attribute(at, f.py_name), where=at.where)
        else:
            yield from compare_field(ctx, f, after[wire], here)
    for wire, f in after.items():
        if wire in before or _carrier(ctx, None, f, at):
            continue
        rule_id = RuleId.FIELD_ADDED_REQUIRED if f.required else RuleId.FIELD_ADDED_OPTIONAL
        found = ctx.change(rule_id, (*at.path, FieldPart(wire)), at.traffic, at.where, new=f.type)
        yield dataclasses.replace(found, proof=presence_proof(ctx, at, wire, "old") if f.required else None)
        if f.required and not f.has_default and at.python is not None and at.constructed:
            yield ctx.change(RuleId.PYTHON_CLASS_ARGUMENT_REQUIRED, _attribute(at, f.py_name), where=at.where)


def compare_field(ctx: Context, old: Field, new: Field, at: At) -> Iterator[Change]:
    """One field at ``at`` (its path ends with the field): its name in Python, presence, type, default."""
    path, traffic, where = at.path, at.traffic, at.where
    if old.py_name != new.py_name and at.python is not None:
        yield ctx.change(
            RuleId.PYTHON_ATTRIBUTE_RENAMED,
            (TypePart(at.python), FieldPart(new.wire_name)),
            where=where,
            old=old.py_name,
            new=new.py_name,
        )
    # a type that takes any value takes null, however the field spells it; the same named type on
    # both sides is compared where it is defined, so its own change is not reported again here
    same = rename_refs(strip_nullable(old.type), ctx.renames) == strip_nullable(new.type)
    was_nullable = old.nullable or (not same and accepts_any(ctx.old, old.type))
    now_nullable = new.nullable or (not same and accepts_any(ctx.new, new.type))
    flips = (
        (old.required, new.required, RuleId.FIELD_BECAME_REQUIRED, RuleId.FIELD_BECAME_OPTIONAL),
        (was_nullable, now_nullable, RuleId.FIELD_BECAME_NULLABLE, RuleId.FIELD_BECAME_NON_NULLABLE),
    )
    for before, after, became_true, became_false in flips:
        if before != after:
            found = ctx.change(became_true if after else became_false, path, traffic, where)
            if became_true is RuleId.FIELD_BECAME_REQUIRED:  # a message without the field
                found = dataclasses.replace(
                    found, proof=presence_proof(ctx, at, new.wire_name, "new" if not after else "old")
                )
            if became_true is RuleId.FIELD_BECAME_NULLABLE:  # T against T | null: null is the value
                proof = (
                    SetProof(Relation.WIDER, only_new=None)
                    if after
                    else SetProof(Relation.NARROWER, only_old=None)
                )
                found = dataclasses.replace(found, proof=proof)
            yield found
    needed_before = old.required and not old.has_default
    if new.required and not new.has_default and not needed_before and at.python and at.constructed:
        yield ctx.change(RuleId.PYTHON_CLASS_ARGUMENT_REQUIRED, _attribute(at, new.py_name), where=where)
    if old.nullable and new.nullable:
        yield from compare_expr(ctx, old.type, new.type, at)
    else:
        yield from compare_expr(ctx, strip_nullable(old.type), strip_nullable(new.type), at)
    # a receiver fills a default only for a field the sender may omit: a required field has none that counts;
    # two defaults are compared as the new models read them (each omitted field's own default filled)
    if (
        json_key(field_default(old)) != json_key(field_default(new))
        and not old.required
        and not new.required
        and json_key(with_defaults(ctx.new, new.type, field_default(old)))
        != json_key(with_defaults(ctx.new, new.type, field_default(new)))
    ):
        found = ctx.change(
            RuleId.DEFAULT_CHANGED, path, traffic, where, old=field_default(old), new=field_default(new)
        )
        read = (
            with_defaults(ctx.new, new.type, field_default(old)),
            with_defaults(ctx.new, new.type, field_default(new)),
        )
        proof = SetProof(Relation.OVERLAP, read[0], read[1], premise=PREMISE_DEFAULTS)
        yield dataclasses.replace(found, proof=proof)
    was, now = lenient_keywords(old), lenient_keywords(new)
    if set(now) - set(was):
        yield ctx.change(RuleId.LENIENT_ANNOTATION_ADDED, path, traffic, where, old=was, new=now)
    if set(was) - set(now):
        found = ctx.change(RuleId.LENIENT_ANNOTATION_REMOVED, path, traffic, where, old=was, new=now)
        yield dataclasses.replace(found, proof=lenient_proof(ctx, old, new))
    yield from normative_change(ctx, old.doc, new.doc, at)


def compare_expr(ctx: Context, old: TypeExpr, new: TypeExpr, at: At) -> Iterator[Change]:
    """How the type at ``at`` changed (old references are read through the renames)."""
    yield from _compare(ctx, rename_refs(old, ctx.renames), new, at)


# --- one type expression against another -------------------------------------------------------


def _compare(ctx: Context, old: TypeExpr, new: TypeExpr, at: At) -> Iterator[Change]:
    """``old`` -> ``new`` at ``at`` (whose path ends with an :class:`InnerPart` inside an array or a map)."""
    if old == new:
        return
    path, traffic, where = at.path, at.traffic, at.where
    old_any = accepts_any(ctx.old, rename_refs(old, ctx.renamed_from))
    new_any = accepts_any(ctx.new, new)
    if old_any and new_any:  # the same values on the wire, spelt another way
        yield ctx.change(RuleId.PYTHON_ANNOTATION_CHANGED, path, where=where, old=old, new=new)
        return
    if without_constraints(old) == without_constraints(new):
        for place, a, b in _constraint_pairs(old, new, path):
            for rule_id, keyword, before, after in constraint_changes(a.constraints, b.constraints):
                found = ctx.change(
                    rule_id, (*place, KeywordPart(keyword)), traffic, where, old=before, new=after
                )
                yield dataclasses.replace(found, proof=keyword_proof(ctx, a, keyword, before, after))
        return
    if isinstance(old, ArrayOf) and isinstance(new, ArrayOf):
        for rule_id, keyword, before, after in constraint_changes(old.constraints, new.constraints):
            found = ctx.change(rule_id, (*path, KeywordPart(keyword)), traffic, where, old=before, new=after)
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
        yield from _swap(ctx, old, new, at)
        return
    before = frozenset(_as_wire(ctx.old, m, ctx.renamed_from) for m in _members(old))
    after = frozenset(_as_wire(ctx.new, m, {}) for m in _members(new))
    gone, arrived = before - after, after - before
    if len(gone) == 1 and len(arrived) == 1:
        (was_one,), (now_one,) = gone, arrived
        if isinstance(was_one, Ref) and isinstance(now_one, Ref):  # one alternative swapped for another
            yield from _swap(ctx, was_one, now_one, at)
            return
    proof = ctx.sets.relation(old, new)  # by inclusion of the value sets, $ref resolved, constraints kept
    wider = new_any or proof.relation in (Relation.EQUAL, Relation.WIDER)
    narrower = old_any or proof.relation in (Relation.EQUAL, Relation.NARROWER)
    if wider and narrower:  # the same values on the wire: an open enum takes any value of its base type
        yield ctx.change(RuleId.PYTHON_ANNOTATION_CHANGED, path, where=where, old=old, new=new)
        return
    was, now = values(before), values(after)
    if wider:
        found = ctx.change(RuleId.TYPE_WIDENED, path, traffic, where, old=was, new=now)
    elif narrower:
        found = ctx.change(RuleId.TYPE_NARROWED, path, traffic, where, old=was, new=now)
    else:
        found = ctx.change(RuleId.TYPE_CHANGED, path, traffic, where, old=old, new=new)
    yield dataclasses.replace(found, proof=proof)


def _swap(ctx: Context, old: Ref, new: Ref, at: At) -> Iterator[Change]:
    """A reference to one named type replaced by a reference to another: compared by shape."""
    inline = inline_move(ctx, old.name, new.name)
    if inline is not None:
        yield ctx.change(inline, at.path, where=at.where, old=old.name, new=new.name)
        return
    old_type = ctx.old.types.get(ctx.renamed_from.get(old.name, old.name))
    new_type = ctx.new.types.get(new.name)
    if old_type is None or new_type is None:
        yield ctx.change(RuleId.TYPE_CHANGED, at.path, at.traffic, at.where, old=old, new=new)
        return
    if at.python is not None:
        yield ctx.change(RuleId.PYTHON_CLASS_REPLACED, at.path, where=at.where, old=old.name, new=new.name)
    yield from compare_named(ctx, old_type, new_type, at.without_python())


def shape_breaks(ctx: Context, old: Ref, new: Ref) -> frozenset[str] | None:
    """Whom the differences between two named types break, compared by shape (``None``: not both named).

    The empty set: the same shape, or differences that break nobody.
    """
    old_type = ctx.old.types.get(ctx.renamed_from.get(old.name, old.name))
    new_type = ctx.new.types.get(new.name)
    if old_type is None or new_type is None:
        return None
    at = At((), Traffic(), None)
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


# --- unions and their members -----------------------------------------------------------------------


def compare_union(
    ctx: Context, old: UnionType, new: UnionType, at: At, shared: Shared = NOTHING_SHARED
) -> Iterator[Change]:
    """Two unions at one location, member by member (a nested one at its parent member's path)."""
    yield from compare_fields(ctx, old.fields, new.fields, at)
    if old.tag_wire_name != new.tag_wire_name:
        yield from _tag_changed(ctx, old, new, at)
        return
    inner = shared.with_fields(
        {f.wire_name: f for f in old.fields}, {f.wire_name: f for f in new.fields}, new.tag_wire_name
    )
    was_open = union_is_open(ctx.old, old)
    member_at = at.without_python()  # a member's Python rows name its own class (compare_derived)
    if new.tagged:
        before = {member_path(ctx.old, at.path, old, v): v for v in old.variants}
        after = {member_path(ctx.new, at.path, new, v): v for v in new.variants}
        for key in [k for k in before if k in after]:
            yield from compare_member(ctx, before[key].type, after[key].type, member_at.to(key), inner)
            was, now = _unstable(ctx.old, before[key].type), _unstable(ctx.new, after[key].type)
            if was != now:
                rule = RuleId.VARIANT_BECAME_UNSTABLE if now else RuleId.VARIANT_BECAME_STABLE
                yield ctx.change(rule, key, where=new)
            yield from normative_change(ctx, before[key].doc, after[key].doc, member_at.to(key))
        other: Path = (*at.path, MemberPart(new.tag_wire_name, other=True))
        if old.catch_all is not None and new.catch_all is not None:
            yield from compare_member(ctx, old.catch_all.type, new.catch_all.type, member_at.to(other), inner)
            yield from normative_change(ctx, old.catch_all.doc, new.catch_all.doc, member_at.to(other))
        old_refused, new_refused = _refused(ctx.old, old), _refused(ctx.new, new)
        kept = _kept(ctx, old, new, before, after)
        proofs = _witnesses(ctx, old, new, before, after, kept, at)
        yield from compare_members(
            ctx,
            "union",
            was_open,
            new,
            list(before),
            list(after),
            at,
            (old_refused, new_refused),
            kept,
            proofs,
        )
        for key in [k for k in after if k not in before and _tag(k) not in old_refused]:
            yield from _claimed(ctx, old, new, after[key], (*other, ValuePart(after[key].tag)), at)
        if old.catch_all is not None and new.catch_all is not None:
            for value in sorted(old_refused - new_refused - set(new.known_tags), key=repr):
                found = ctx.change(
                    RuleId.UNION_TAG_RELEASED, (*other, ValuePart(value)), at.traffic, at.where
                )
                yield dataclasses.replace(found, proof=_tag_proof(ctx, old, new, value, released=True))
            for value in sorted(new_refused - old_refused - set(old.known_tags), key=repr):
                found = ctx.change(
                    RuleId.UNION_TAG_RESERVED, (*other, ValuePart(value)), at.traffic, at.where
                )
                yield dataclasses.replace(found, proof=_tag_proof(ctx, old, new, value, released=False))
        return
    if old.exclusive != new.exclusive:
        yield from _exclusive_changed(ctx, old, new, at)
    old_members = _untagged(ctx, ctx.old, old, at.path, ctx.renames)
    new_members = _untagged(ctx, ctx.new, new, at.path, {})
    for key, member in new_members.items():
        if key in old_members:
            yield from compare_member(ctx, old_members[key].type, member.type, member_at.to(key), inner)
            yield from normative_change(ctx, old_members[key].doc, member.doc, member_at.to(key))
    gone = [k for k in old_members if k not in new_members]
    arrived = [k for k in new_members if k not in old_members]
    kept = _kept(ctx, old, new, old_members, new_members)
    proofs = _witnesses(ctx, old, new, old_members, new_members, kept, at)
    yield from compare_members(ctx, "union", was_open, new, gone, arrived, at, kept=kept, proofs=proofs)


def _tag_changed(ctx: Context, old: UnionType, new: UnionType, at: At) -> Iterator[Change]:
    """A union that dispatches on another property (or on one where it had none), decided by its values.

    The same values on both sides (a default member takes every tag the other
    side's members do not) refuse no message either way: only which member
    reads a value changes, for old receivers.  More values is a widening,
    fewer a narrowing; otherwise the tag changed for both sides.
    """
    proof = ctx.sets.relate(
        ("old", Ref(old.name)),
        ("new", Ref(new.name)),
        old.tag_wire_name or ABSENT,
        new.tag_wire_name or ABSENT,
    )
    if proof.relation is Relation.EQUAL:
        proof = dataclasses.replace(proof, premise=PREMISE_DEFAULT if _default(ctx.new, new) else "")
    rule_id = {
        Relation.EQUAL: RuleId.UNION_DISPATCH_CHANGED,
        Relation.WIDER: RuleId.TYPE_WIDENED,
        Relation.NARROWER: RuleId.TYPE_NARROWED,
        Relation.OVERLAP: RuleId.UNION_TAG_CHANGED,
    }[proof.relation]
    if rule_id in (RuleId.TYPE_WIDENED, RuleId.TYPE_NARROWED):
        found = ctx.change(rule_id, at.path, at.traffic, at.where, old=(Ref(old.name),), new=(Ref(new.name),))
    else:
        found = ctx.change(
            rule_id, at.path, at.traffic, at.where, old=old.tag_wire_name, new=new.tag_wire_name
        )
    yield dataclasses.replace(found, proof=proof)


PREMISE_DEFAULT = "default-member"
"""A :attr:`~.proof.SetProof.premise`: the union's default member (no tag property) takes the value."""
PREMISE_CATCH_ALL = "catch-all"
"""A premise: the union's catch-all takes the tag, and is where a later release's variants arrive."""
PREMISE_OTHER_MEMBER = "other-member"
"""A premise: another member of an untagged union takes the value."""
PREMISE_DEFAULTS = "defaults-applied"
"""A premise: the values are compared as a receiver reads them, every omitted field's default filled."""


def _default(surface: ApiSurface, union: UnionType) -> Variant | None:
    """A tagged union's default member: untagged, and no class of it has the tag property.

    It takes objects without the tag and every tag no other member takes (the
    runtime's ``TaggedUnion``), so the union is open through it.
    """
    if union.tag_wire_name is None:
        return None
    for v in union.variants:
        classes = surface.classes_of(v.type) if v.tag is None else ()
        if classes and all(
            all(f.wire_name != union.tag_wire_name for f in surface.all_fields(c)) for c in classes
        ):
            return v
    return None


def _kept(
    ctx: Context,
    old: UnionType,
    new: UnionType,
    before: Mapping[Path, Variant],
    after: Mapping[Path, Variant],
) -> tuple[frozenset[Path], frozenset[Path]]:
    """Members that left while the other union still takes their values, and ones that arrived taken before.

    Decided by inclusion: a member that left is still taken when the new union
    (its catch-all, its default member) includes every value it had; one that
    arrived when the old union did.
    """
    gone = frozenset(
        k
        for k, v in before.items()
        if k not in after and ctx.sets.includes(("new", Ref(new.name)), ("old", v.type))
    )
    arrived = frozenset(
        k
        for k, v in after.items()
        if k not in before and ctx.sets.includes(("old", Ref(old.name)), ("new", v.type))
    )
    return gone, arrived


def _witnesses(
    ctx: Context,
    old: UnionType,
    new: UnionType,
    before: Mapping[Path, Variant],
    after: Mapping[Path, Variant],
    kept: tuple[frozenset[Path], frozenset[Path]],
    at: At,
) -> dict[Path, SetProof]:
    """The set proofs of a union's rows that are not :func:`_kept`: a value each left or arrived with.

    A member that left shows a value of it the new union refuses, one that
    arrived a value of it the old union refused, each beside the relation of
    the two unions; an open/closed flip (at the union's own path) shows the
    relation and a value only one side takes.
    """
    gone = [k for k in before if k not in after and k not in kept[0]]
    arrived = [k for k in after if k not in before and k not in kept[1]]
    flips = union_is_open(ctx.old, old) != union_is_open(ctx.new, new)
    if not (gone or arrived or flips):
        return {}
    whole = ctx.sets.relate(("old", Ref(old.name)), ("new", Ref(new.name)), ABSENT, ABSENT)
    found: dict[Path, SetProof] = {at.path: whole} if flips else {}
    for key in gone:
        value = ctx.sets.witness(("old", before[key].type), ("new", Ref(new.name)))
        if value is not ABSENT:
            found[key] = dataclasses.replace(whole, only_old=value, only_new=ABSENT)
    for key in arrived:
        value = ctx.sets.witness(("new", after[key].type), ("old", Ref(old.name)))
        if value is not ABSENT:
            found[key] = dataclasses.replace(whole, only_old=ABSENT, only_new=value)
    return found


def _narrowed(ctx: Context, side: Side, union: UnionType, value: JsonScalar) -> ObjectType | None:
    """A union's catch-all class with its tag pinned to ``value`` (``None``: no catch-all class)."""
    surface = ctx.old if side == "old" else ctx.new
    catch_all = (
        surface.types.get(union.catch_all.type.name)
        if union.catch_all and isinstance(union.catch_all.type, Ref)
        else None
    )
    tag = union.tag_wire_name
    if not isinstance(catch_all, ObjectType) or tag is None:
        return None
    fields = tuple(
        dataclasses.replace(f, type=Const(value), nullable=False) if f.wire_name == tag else f
        for f in ctx.sets.fields(side, catch_all)
    )
    if not any(f.wire_name == tag for f in fields):
        return None
    return ObjectType(f"{catch_all.name}[{value!r}]", fields, extra=catch_all.extra)


def _tag_proof(
    ctx: Context, old: UnionType, new: UnionType, value: JsonScalar, released: bool
) -> SetProof | None:
    """A value with a tag the catch-all took (or refused) and now refuses (or takes), as a set proof."""
    side: Side = "new" if released else "old"
    narrowed = _narrowed(ctx, side, new if released else old, value)
    if narrowed is None:
        return None
    other: Term = ("old", Ref(old.name)) if released else ("new", Ref(new.name))
    witness = ctx.sets.witness((side, narrowed), other)
    if witness is ABSENT:
        return None
    relation = Relation.WIDER if released else Relation.NARROWER
    only = {"only_new": witness} if released else {"only_old": witness}
    return SetProof(relation, premise=PREMISE_CATCH_ALL, **only)


def _claimed(
    ctx: Context, old: UnionType, new: UnionType, variant: Variant, path: Path, at: At
) -> Iterator[Change]:
    """A variant whose tag the old catch-all took: old senders' values with that tag must fit it now.

    The old catch-all narrowed to the tag is compared with the new variant;
    when the variant does not include it, a value old senders could send with
    that tag is refused (``union-tag-claimed``, with that value where one is found).
    """
    catch_all = ctx.old_named(old.catch_all.type) if old.catch_all is not None else None
    if not isinstance(catch_all, ObjectType) or variant.tag is None or old.tag_wire_name is None:
        return
    tag = old.tag_wire_name
    fields = tuple(
        dataclasses.replace(f, type=Const(variant.tag), nullable=False) if f.wire_name == tag else f
        for f in ctx.sets.fields("old", catch_all)
    )
    narrowed = ObjectType(f"{catch_all.name}[{variant.tag!r}]", fields, extra=catch_all.extra)
    if not any(f.wire_name == tag for f in fields) or not ctx.sets.accepts(
        ("old", catch_all), {tag: variant.tag}
    ):
        return
    if ctx.sets.includes(("new", variant.type), ("old", narrowed)):
        return
    witness = ctx.sets.witness(("old", narrowed), ("new", Ref(new.name)))
    within = ctx.sets.includes(("old", narrowed), ("new", variant.type))
    proof = SetProof(
        Relation.NARROWER if within else Relation.OVERLAP,
        old.catch_all.type if old.catch_all else ABSENT,
        variant.type,
        witness,
        ABSENT,
        PREMISE_CATCH_ALL,
    )
    found = ctx.change(RuleId.UNION_TAG_CLAIMED, path, at.traffic, at.where)
    yield dataclasses.replace(found, proof=proof)


def _exclusive_changed(ctx: Context, old: UnionType, new: UnionType, at: At) -> Iterator[Change]:
    """``anyOf`` -> ``oneOf`` (or back): it narrows (widens) only when two members take one value.

    Members that are disjoint (by JSON type, or by a constant property) make
    the change take and refuse the same values: no row.
    """
    side: Side = "new" if new.exclusive else "old"
    union = new if new.exclusive else old
    members = [v.type for v in union.variants]
    pairs = [(a, b) for i, a in enumerate(members) for b in members[i + 1 :]]
    if all(ctx.sets.disjoint(side, a, b) for a, b in pairs):
        return
    both = next((v for a, b in pairs if (v := ctx.sets.overlap(side, a, b)) is not ABSENT), ABSENT)
    rule_id = RuleId.UNION_BECAME_EXCLUSIVE if new.exclusive else RuleId.UNION_BECAME_INCLUSIVE
    words = {True: "oneOf", False: "anyOf"}
    found = ctx.change(
        rule_id, at.path, at.traffic, at.where, old=words[old.exclusive], new=words[new.exclusive]
    )
    if both is not ABSENT:
        relation = Relation.NARROWER if new.exclusive else Relation.WIDER
        only = {"only_old": both} if new.exclusive else {"only_new": both}
        found = dataclasses.replace(found, proof=SetProof(relation, Ref(old.name), Ref(new.name), **only))
    yield found


def _refused(surface: ApiSurface, union: UnionType) -> frozenset[JsonScalar]:
    """The tag values a tagged union refuses outright: its catch-all reserves them, no variant has them."""
    if union.catch_all is None:
        return frozenset()
    named = surface.types.get(union.catch_all.type.name) if isinstance(union.catch_all.type, Ref) else None
    reserved: set[JsonScalar] = set()
    if isinstance(named, ObjectType):
        for found in surface.reserved_of(named.name):
            reserved |= set(found.values)
    elif isinstance(named, UnionType):
        for name in surface.classes_of(Ref(named.name)):
            for found in surface.reserved_of(name):
                if found.wire_name == union.tag_wire_name:
                    reserved |= set(found.values)
    return frozenset(reserved - set(union.known_tags))


def _untagged(
    ctx: Context, surface: ApiSurface, union: UnionType, path: Path, renames: Mapping[str, str]
) -> dict[Path, Variant]:
    """The members of an untagged union (those taking any value aside), keyed by their path.

    A member is known by its title when it is an object schema written in the
    union, else by its type with old names read through ``renames`` and
    without constraints, so that a member whose constraints change is the same
    member; two members that differ only in their constraints keep them in the key.
    """
    members = [v for v in union.variants if not accepts_any(surface, v.type)]
    titled: dict[Path, Variant] = {}
    typed: dict[TypeExpr, Variant] = {}
    for v in members:
        key = member_path(surface, path, union, v)
        last = key[-1]
        if isinstance(last, MemberPart) and last.title is not None:
            titled[key] = v
        else:
            typed[rename_refs(v.type, renames)] = v
    keys = {renamed: without_constraints(renamed) for renamed in typed}
    counts = list(keys.values())
    found = {
        (*path, MemberPart(None, member=key if counts.count(key) == 1 else renamed)): typed[renamed]
        for renamed, key in keys.items()
    }
    found |= titled
    return {key: found[key] for key in sorted(found, key=_member_order)}


def _member_order(path: Path) -> str:
    last = path[-1]
    assert isinstance(last, MemberPart)
    return last.title if last.title is not None else describe(last.member) if last.member else ""


def compare_member(ctx: Context, old: TypeExpr, new: TypeExpr, at: At, shared: Shared) -> Iterator[Change]:
    """The types of one union member, at the member's path.

    A member the builder derived a class or a union for is compared for what
    it writes itself (:func:`compare_derived`); a member that is a reference
    to a named type, for the reference (the type is compared where it is defined).
    """
    old_type = _named(ctx.old, rename_refs(old, ctx.renames), ctx.renamed_from)
    new_type = _named(ctx.new, new, {})
    if (
        isinstance(old_type, (ObjectType, UnionType))
        and isinstance(new_type, (ObjectType, UnionType))
        and old_type.origin is not None
        and new_type.origin is not None
    ):
        yield from compare_derived(ctx, old_type, new_type, at, shared)
        return
    yield from compare_expr(ctx, old, new, at)


def builds_on(named: ObjectType | UnionType) -> str | None:
    """The named type a derived member builds on with a ``$ref``: a class's base, the union it repeats."""
    return named.base if isinstance(named, ObjectType) else named.mirrors


def compare_derived(
    ctx: Context, old: ObjectType | UnionType, new: ObjectType | UnionType, at: At, shared: Shared
) -> Iterator[Change]:
    """A member the builder derived a class or a union for: the fields it writes itself, what it builds on.

    What it builds on is compared where that type is defined, and here only
    when the member builds on another type now (by shape, at the member).
    """
    old_on, new_on = builds_on(old), builds_on(new)
    same_on = (ctx.renames.get(old_on, old_on) if old_on else None) == new_on
    whole = not same_on and (old_on is None or new_on is None)  # what it built on is its own now, or was
    python = at if not isinstance(new, ObjectType) else dataclasses.replace(at, python=new.name)
    before = _member_fields(ctx.old, old, shared.old, shared.tags, whole)
    after = _member_fields(ctx.new, new, shared.new, shared.tags, whole)
    yield from compare_fields(ctx, tuple(before.values()), tuple(after.values()), python)
    if isinstance(old, ObjectType) and isinstance(new, ObjectType):
        yield from compare_extra(ctx, old, new, at)
    if not same_on and old_on is not None and new_on is not None:
        yield from _swap(ctx, Ref(old_on), Ref(new_on), at)
        return
    if same_on and new_on is not None:
        return
    if isinstance(old, UnionType) and isinstance(new, UnionType):
        yield from compare_union(ctx, old, new, at, shared.with_fields(before, after, None))
    elif isinstance(old, ObjectType) and isinstance(new, UnionType):
        yield from object_became_union(ctx, old, new, at)
    elif isinstance(old, UnionType) and isinstance(new, ObjectType):
        yield ctx.change(RuleId.UNION_BECAME_OBJECT, at.path, at.traffic, at.where)


def _member_fields(
    surface: ApiSurface,
    named: ObjectType | UnionType,
    shared: Mapping[str, Field],
    tags: frozenset[str],
    whole: bool,
) -> dict[str, Field]:
    """The fields a derived member writes itself (all it has, when ``whole``), by wire name."""
    if isinstance(named, ObjectType):
        return {f.wire_name: f for f in _own(surface, named, shared, tags, whole)}
    return own_fields(surface, named, shared, tags)


def _own(
    surface: ApiSurface, cls: ObjectType, shared: Mapping[str, Field], tags: frozenset[str], whole: bool
) -> tuple[Field, ...]:
    """The fields a member's class has that the levels around it do not (its tags aside)."""
    fields = surface.all_fields(cls.name) if whole else cls.fields
    pinned = tags | {t.wire_name for t in surface.tags_of(cls.name)}
    return tuple(f for f in fields if f.wire_name not in pinned and not _same(shared.get(f.wire_name), f))


def own_fields(
    surface: ApiSurface, union: UnionType, shared: Mapping[str, Field], tags: frozenset[str]
) -> dict[str, Field]:
    """The fields every member of a derived union has, that the levels around it do not (tags aside).

    They are what the member the union was derived from writes itself: its
    own properties, pinned on every class at the bottom.
    """
    common = common_fields(surface, union)
    return {w: f for w, f in common.items() if w not in tags and not _same(shared.get(w), f)}


def common_fields(surface: ApiSurface, union: UnionType, depth: int = 0) -> dict[str, Field]:
    """The fields every class at the bottom of a derived union has, equal in each (tags aside)."""
    found: dict[str, Field] | None = None
    for variant in union.members:
        named = surface.types.get(variant.type.name) if isinstance(variant.type, Ref) else None
        if isinstance(named, ObjectType) and named.origin is not None:
            pinned = {t.wire_name for t in surface.tags_of(named.name)}
            fields = {f.wire_name: f for f in named.fields if f.wire_name not in pinned}
        elif isinstance(named, UnionType) and named.origin is not None and depth < 32:
            fields = common_fields(surface, named, depth + 1)
        else:
            fields = {}
        found = fields if found is None else {w: f for w, f in found.items() if _same(fields.get(w), f)}
    return found or {}


def _same(a: Field | None, b: Field) -> bool:
    """Two fields that are one on the wire (their Python names and stability marks aside)."""
    return a is not None and dataclasses.replace(a, py_name=b.py_name, unstable=b.unstable) == b


def compare_enum(ctx: Context, old: EnumType, new: EnumType, at: At) -> Iterator[Change]:
    if old.base != new.base:
        yield ctx.change(
            RuleId.TYPE_CHANGED, at.path, at.traffic, at.where, old=f"{old.base} enum", new=f"{new.base} enum"
        )
        return
    old_values: list[Path] = [(*at.path, ValuePart(v.value)) for v in old.values]
    new_values: list[Path] = [(*at.path, ValuePart(v.value)) for v in new.values]
    proofs: dict[Path, SetProof] = {}
    gone = [p for p in old_values if p not in new_values]
    arrived = [p for p in new_values if p not in old_values]
    if gone or arrived or old.open != new.open:
        whole = ctx.sets.relate(("old", Ref(old.name)), ("new", Ref(new.name)), ABSENT, ABSENT)
        proofs[at.path] = whole
        for path in gone:  # a value only the old enum takes, unless the new one is open to it
            value = ABSENT if new.open else _value_of(path)
            proofs[path] = dataclasses.replace(whole, only_old=value, only_new=ABSENT)
        for path in arrived:
            value = ABSENT if old.open else _value_of(path)
            proofs[path] = dataclasses.replace(whole, only_old=ABSENT, only_new=value)
    yield from compare_members(ctx, "enum", old.open, new, old_values, new_values, at, proofs=proofs)
    docs = {v.value: v.doc for v in old.values}
    for value in new.values:
        if value.value in docs:
            yield from normative_change(ctx, docs[value.value], value.doc, at.down(ValuePart(value.value)))


def compare_members(
    ctx: Context,
    kind: MemberKind,
    was_open: bool,
    new: UnionType | EnumType,
    before: list[Path],
    after: list[Path],
    at: At,
    refused: tuple[frozenset[JsonScalar], frozenset[JsonScalar]] = (frozenset(), frozenset()),
    kept: tuple[frozenset[Path], frozenset[Path]] = (frozenset(), frozenset()),
    proofs: Mapping[Path, SetProof] | None = None,
) -> Iterator[Change]:
    """Open/closed flips and members (one path each) that left or arrived, for unions and enums.

    ``refused`` holds the tag values the old and the new union refuse outright
    (its catch-all reserves them): a member whose tag the other release
    refuses is added to, or removed from, a union that is closed for it.
    ``kept`` holds the members that left while the new union still takes
    their values, and those that arrived whose values the old union took
    (:func:`_kept`): added to, or removed from, a union that is open for them.
    ``proofs`` are the other rows' set proofs, by path (:func:`_witnesses`).
    """
    proofs = proofs or {}
    is_open = union_is_open(ctx.new, new) if isinstance(new, UnionType) else new.open
    state = openness(is_open)
    if was_open != is_open:
        yield dataclasses.replace(
            ctx.change(BECAME[kind, state], at.path, at.traffic, at.where), proof=proofs.get(at.path)
        )
    old_refused, new_refused = refused
    for member in before:
        if member not in after:
            closed = _tag(member) in new_refused
            rule = MEMBER_REMOVED[kind, "open" if member in kept[0] else "closed" if closed else state]
            found = ctx.change(rule, member, at.traffic, at.where)
            if member in kept[0]:
                found = dataclasses.replace(found, proof=SetProof(Relation.WIDER, premise=_premise(new)))
            yield dataclasses.replace(found, proof=found.proof or proofs.get(member))
    for member in after:
        if member not in before:
            closed = _tag(member) in old_refused
            rule = MEMBER_ADDED[kind, "open" if member in kept[1] else "closed" if closed else state]
            found = ctx.change(rule, member, at.traffic, at.where)
            if member in kept[1]:
                found = dataclasses.replace(found, proof=SetProof(Relation.EQUAL, premise=_premise(new)))
            yield dataclasses.replace(found, proof=found.proof or proofs.get(member))


def _value_of(path: Path) -> Any:
    last = path[-1]
    return last.value if isinstance(last, ValuePart) else ABSENT


def _premise(union: UnionType | EnumType) -> str:
    """What takes the values of a member that left (or took those of one that arrived)."""
    if not isinstance(union, UnionType):
        return ""
    if union.catch_all is not None:
        return PREMISE_CATCH_ALL
    return PREMISE_DEFAULT if union.tagged else PREMISE_OTHER_MEMBER


def _tag(path: Path) -> JsonScalar | object:
    last = path[-1]
    if isinstance(last, MemberPart) and last.tag is not None and not last.other:
        return last.value
    return _NO_TAG


_NO_TAG = object()
