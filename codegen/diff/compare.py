"""The wire comparison of named types and type expressions, as generators of :class:`Change`.

Types are matched by name (through the renames, :mod:`.renames`); objects
field by field, tagged unions variant by tag value (never by position),
untagged unions member by member (by the member's type without its
constraints, so that a member's own constraints are compared), enums value
by value, aliases and fields by their type expressions.  A member that takes
any JSON value (``{}`` in the schema, ``Scalar("any")`` in the IR) makes its
union open; it is not a variant.  A field, class or attribute that changes
its Python name is reported here too, beside the wire change it comes with.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, assert_never

from ..schema.ir import (
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
    Const,
    Constraints,
    EnumType,
    Field,
    MapOf,
    NamedType,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
    UnionType,
    Variant,
    strip_nullable,
    to_json,
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
    TypePart,
    ValuePart,
    values,
)
from .renames import rename_refs, shape
from .rules import BECAME, MEMBER_ADDED, MEMBER_REMOVED, Flow, MemberKind, RuleId, openness
from .wording import describe

LENIENT_KEYWORDS: tuple[tuple[str, str], ...] = (
    ("default_on_error", "x-deserialize-default-on-error"),
    ("default_on_null", "x-deserialize-default-on-null"),
    ("skip_invalid_items", "x-deserialize-skip-invalid-items"),
)
"""The :class:`~codegen.schema.ir.Field` flags of the leniency keywords (``codegen/knowledge.toml``)."""

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
    """A union is open with a catch-all member, or with a member that takes any value."""
    return union.open or any(accepts_any(surface, v.type) for v in union.variants)


def _constraint_pairs(
    old: TypeExpr, new: TypeExpr, path: Path
) -> Iterator[tuple[Path, Constraints, Constraints]]:
    """Matching constraint sets of two expressions that differ only in constraints, and where they are."""
    match old:
        case Scalar():
            if isinstance(new, Scalar):
                yield path, old.constraints, new.constraints
        case ArrayOf():
            if isinstance(new, ArrayOf):
                yield path, old.constraints, new.constraints
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


def constraint_changes(old: Constraints, new: Constraints) -> Iterator[tuple[RuleId, str, Any, Any]]:
    """``(rule id, keyword, old value, new value)`` for every constraint keyword that differs."""
    for key in (*_LOWER_BOUNDS, *_UPPER_BOUNDS, "pattern", "format"):
        before, after = getattr(old, key), getattr(new, key)
        if before == after:
            continue
        shown = (ABSENT if before is None else before, ABSENT if after is None else after)
        if before is None:
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


def _default(f: Field) -> Any:
    return to_json(f.default) if f.has_default else ABSENT


def lenient_keywords(f: Field) -> tuple[str, ...]:
    """The leniency keywords a field carries, in the order of :data:`LENIENT_KEYWORDS`."""
    return tuple(keyword for attr, keyword in LENIENT_KEYWORDS if getattr(f, attr, False))


# --- named types ---------------------------------------------------------------------


def compare_types(ctx: Context) -> Iterator[Change]:
    """Every named type: renamed, removed, added, or compared with the type of its name."""
    new_names = set(ctx.renames.values())
    for name, old_type in ctx.old.types.items():
        if name in ctx.renames:
            new_name = ctx.renames[name]
            new_type = ctx.new.types[new_name]
            yield ctx.change(
                RuleId.PYTHON_CLASS_RENAMED, (TypePart(name),), where=new_type, old=name, new=new_name
            )
            yield from compare_type(ctx, old_type, new_type)
        elif name in ctx.new.types:
            yield from compare_type(ctx, old_type, ctx.new.types[name])
        else:
            yield ctx.change(RuleId.PYTHON_CLASS_REMOVED, (TypePart(name),), where=old_type, at_old=True)
    for name, new_type in ctx.new.types.items():
        if name not in ctx.old.types and name not in new_names:
            yield ctx.change(RuleId.PYTHON_CLASS_ADDED, (TypePart(name),), where=new_type)


def compare_type(ctx: Context, old: NamedType, new: NamedType) -> Iterator[Change]:
    """Two types of the same name (or renamed): of the same kind, compared; else ``type-changed``.

    A union the builder derived from a member of another union is compared
    where that member is, level by level (:func:`compare_member`), not here.
    """
    if old.internal and new.internal:
        return  # the JSON-RPC envelopes: their contents are reported method by method
    flow = ctx.flow(old.name, new.name)
    here: Path = (TypePart(new.name),)
    if isinstance(old, ObjectType) and isinstance(new, UnionType):
        yield ctx.change(RuleId.PYTHON_CLASS_BECAME_UNION, here, where=new, new=new.tag_wire_name)
    elif isinstance(old, UnionType) and isinstance(new, ObjectType):
        yield ctx.change(RuleId.PYTHON_UNION_BECAME_CLASS, here, where=new)
    if _derived_union(old) or _derived_union(new):
        return
    if old.unstable != new.unstable and new.schema_name is not None:
        rule = RuleId.TYPE_BECAME_UNSTABLE if new.unstable else RuleId.TYPE_BECAME_STABLE
        yield ctx.change(rule, here, where=new)
    match new:
        case ObjectType():
            if isinstance(old, ObjectType):
                yield from compare_object(ctx, old, new, flow)
                return
            if isinstance(old, UnionType):
                yield ctx.change(RuleId.UNION_BECAME_OBJECT, here, flow, new)
                return
        case UnionType():
            if isinstance(old, UnionType):
                yield from compare_union(ctx, old, new, flow)
                return
            if isinstance(old, ObjectType):
                yield from object_became_union(ctx, old, new, here, flow)
                return
        case EnumType():
            if isinstance(old, EnumType):
                yield from compare_enum(ctx, old, new, flow)
                return
        case AliasType():
            if isinstance(old, AliasType):
                yield from compare_expr(ctx, old.target, new.target, here, flow, new)
                return
        case _:
            assert_never(new)
    yield ctx.change(RuleId.TYPE_CHANGED, here, flow, new, old=old.kind, new=new.kind)


def _derived_union(named: NamedType | None) -> bool:
    return isinstance(named, UnionType) and named.origin is not None


def object_became_union(
    ctx: Context, old: ObjectType, new: UnionType, path: Path, flow: Flow
) -> Iterator[Change]:
    """An object became a union: the fields it keeps in common, and every member as a new one."""
    yield ctx.change(RuleId.OBJECT_BECAME_UNION, path, flow, new, new=new.tag_wire_name)
    before = {f.wire_name: f for f in ctx.old.all_fields(old.name)}
    for f in new.fields:
        if f.wire_name in before:
            yield from compare_field(ctx, before[f.wire_name], f, (*path, FieldPart(f.wire_name)), flow, new)
    tag = new.tag_wire_name
    if tag is not None and tag not in before and all(v.tag is not None for v in new.variants):
        # every member needs the tag the old object did not have: old senders omit it
        tags: list[TypeExpr] = [Const(v.tag) for v in new.variants]
        if new.catch_all is not None:
            tags.append(Scalar("string" if all(isinstance(v.tag, str) for v in new.variants) else "any"))
        tag_type = tags[0] if len(tags) == 1 else AnyOf(tuple(tags))
        yield ctx.change(RuleId.FIELD_ADDED_REQUIRED, (*path, FieldPart(tag)), flow, new, new=tag_type)
    added = MEMBER_ADDED["union", openness(union_is_open(ctx.new, new))]
    for variant in new.variants:
        if not accepts_any(ctx.new, variant.type):
            yield ctx.change(added, member_path(path, new, variant), flow, new)


def member_path(path: Path, union: UnionType, variant: Variant) -> Path:
    """The path of one member: by its tag value, or (untagged) by its type without constraints."""
    if union.tagged:
        return (*path, MemberPart(union.tag_wire_name, variant.tag))
    return (*path, MemberPart(None, member=without_constraints(variant.type)))


def compare_member(
    ctx: Context,
    old: TypeExpr,
    new: TypeExpr,
    path: Path,
    flow: Flow,
    where: NamedType,
) -> Iterator[Change]:
    """The types of one union member, read level by level where either is a union of its own."""
    old_type = _named(ctx.old, rename_refs(old, ctx.renames), ctx.renamed_from)
    new_type = _named(ctx.new, new, {})
    if isinstance(new_type, UnionType) and _derived_union(new_type):
        if isinstance(old_type, UnionType):
            yield from compare_union(ctx, old_type, new_type, flow, path)
        elif isinstance(old_type, ObjectType):
            yield from object_became_union(ctx, old_type, new_type, path, flow)
        else:
            yield from compare_expr(ctx, old, new, path, flow, where)
        return
    if _derived_union(old_type) and isinstance(new_type, ObjectType):
        yield ctx.change(RuleId.UNION_BECAME_OBJECT, path, flow, where)
        return
    yield from compare_expr(ctx, old, new, path, flow, where)


def _as_wire(surface: ApiSurface, expr: TypeExpr, renamed_from: Mapping[str, str]) -> TypeExpr:
    """An open enum is its base scalar on the wire (it accepts any string or integer)."""
    named = _named(surface, expr, renamed_from)
    if isinstance(named, EnumType) and named.open:
        return Scalar(named.base)
    return expr


def _unstable(surface: ApiSurface, expr: TypeExpr) -> bool:
    named = surface.types.get(expr.name) if isinstance(expr, Ref) else None
    return named is not None and named.unstable


def _named(surface: ApiSurface, expr: TypeExpr, renamed_from: Mapping[str, str]) -> NamedType | None:
    if not isinstance(expr, Ref):
        return None
    return surface.types.get(renamed_from.get(expr.name, expr.name))


def compare_object(ctx: Context, old: ObjectType, new: ObjectType, flow: Flow) -> Iterator[Change]:
    same_base = (ctx.renames.get(old.base, old.base) if old.base else None) == new.base
    old_fields = old.fields if same_base else ctx.old.all_fields(old.name)
    new_fields = new.fields if same_base else ctx.new.all_fields(new.name)
    yield from compare_fields(ctx, old_fields, new_fields, new, flow)


def compare_fields(
    ctx: Context,
    old_fields: tuple[Field, ...],
    new_fields: tuple[Field, ...],
    new: ObjectType | UnionType,
    flow: Flow,
) -> Iterator[Change]:
    """The fields of an object, or the fields every member of a union shares, by wire name."""
    before = {f.wire_name: f for f in old_fields}
    after = {f.wire_name: f for f in new_fields}
    here = TypePart(new.name)
    for wire, f in before.items():
        path: Path = (here, FieldPart(wire))
        if wire not in after:
            rule_id = RuleId.REQUIRED_FIELD_REMOVED if f.required else RuleId.OPTIONAL_FIELD_REMOVED
            yield ctx.change(rule_id, path, flow, new)
            yield ctx.change(RuleId.PYTHON_ATTRIBUTE_REMOVED, (here, AttributePart(f.py_name)), where=new)
        else:
            yield from compare_field(ctx, f, after[wire], path, flow, new)
    for wire, f in after.items():
        if wire not in before:
            rule_id = RuleId.FIELD_ADDED_REQUIRED if f.required else RuleId.FIELD_ADDED_OPTIONAL
            yield ctx.change(rule_id, (here, FieldPart(wire)), flow, new, new=f.type)


def compare_field(
    ctx: Context, old: Field, new: Field, path: Path, flow: Flow, where: NamedType
) -> Iterator[Change]:
    if old.py_name != new.py_name:
        yield ctx.change(RuleId.PYTHON_ATTRIBUTE_RENAMED, path, where=where, old=old.py_name, new=new.py_name)
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
            yield ctx.change(became_true if after else became_false, path, flow, where)
    if old.nullable and new.nullable:
        yield from compare_expr(ctx, old.type, new.type, path, flow, where)
    else:
        yield from compare_expr(ctx, strip_nullable(old.type), strip_nullable(new.type), path, flow, where)
    if repr(old.default) != repr(new.default):
        yield ctx.change(RuleId.DEFAULT_CHANGED, path, flow, where, old=_default(old), new=_default(new))
    was, now = lenient_keywords(old), lenient_keywords(new)
    if set(now) - set(was):
        yield ctx.change(RuleId.LENIENT_ANNOTATION_ADDED, path, flow, where, old=was, new=now)
    if set(was) - set(now):
        yield ctx.change(RuleId.LENIENT_ANNOTATION_REMOVED, path, flow, where, old=was, new=now)


def compare_expr(
    ctx: Context,
    old: TypeExpr,
    new: TypeExpr,
    path: Path,
    flow: Flow,
    where: NamedType | None,
) -> Iterator[Change]:
    """How the type at ``path`` changed (old references are read through the renames)."""
    yield from _compare(ctx, rename_refs(old, ctx.renames), new, path, flow, where)


def _compare(
    ctx: Context,
    old: TypeExpr,
    new: TypeExpr,
    path: Path,
    flow: Flow,
    where: NamedType | None,
) -> Iterator[Change]:
    """``old`` -> ``new`` at ``path`` (which ends with an :class:`InnerPart` inside an array or a map)."""
    if old == new:
        return
    old_any = accepts_any(ctx.old, rename_refs(old, ctx.renamed_from))
    new_any = accepts_any(ctx.new, new)
    if old_any and new_any:  # the same values on the wire, spelt another way
        yield ctx.change(RuleId.PYTHON_ANNOTATION_CHANGED, path, where=where, old=old, new=new)
        return
    if without_constraints(old) == without_constraints(new):
        for at, a, b in _constraint_pairs(old, new, path):
            for rule_id, keyword, before, after in constraint_changes(a, b):
                yield ctx.change(rule_id, (*at, KeywordPart(keyword)), flow, where, old=before, new=after)
        return
    if isinstance(old, ArrayOf) and isinstance(new, ArrayOf):
        for rule_id, keyword, before, after in constraint_changes(old.constraints, new.constraints):
            yield ctx.change(rule_id, (*path, KeywordPart(keyword)), flow, where, old=before, new=after)
        yield from _compare(ctx, old.item, new.item, (*path, InnerPart("items")), flow, where)
        return
    if isinstance(old, MapOf) and isinstance(new, MapOf):
        yield from _compare(ctx, old.value, new.value, (*path, InnerPart("values")), flow, where)
        return
    if isinstance(old, Ref) and isinstance(new, Ref):
        inline = inline_move(ctx, old.name, new.name)
        if inline is not None:
            yield ctx.change(inline, path, where=where, old=old.name, new=new.name)
            return
    before = frozenset(_as_wire(ctx.old, m, ctx.renamed_from) for m in _members(old))
    after = frozenset(_as_wire(ctx.new, m, {}) for m in _members(new))
    if before == after:  # the same values on the wire: an open enum takes any value of its base type
        yield ctx.change(RuleId.PYTHON_ANNOTATION_CHANGED, path, where=where, old=old, new=new)
        return
    was, now = values(before), values(after)
    if new_any or before < after:
        yield ctx.change(RuleId.TYPE_WIDENED, path, flow, where, old=was, new=now)
    elif old_any or after < before:
        yield ctx.change(RuleId.TYPE_NARROWED, path, flow, where, old=was, new=now)
    else:
        yield ctx.change(RuleId.TYPE_CHANGED, path, flow, where, old=old, new=new)


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


def compare_union(
    ctx: Context, old: UnionType, new: UnionType, flow: Flow, path: Path | None = None
) -> Iterator[Change]:
    """Two unions, member by member; ``path`` is where a nested one sits (``Parent['tag']``)."""
    here: Path = (TypePart(new.name),) if path is None else path
    yield from compare_fields(ctx, old.fields, new.fields, new, flow)
    if old.tag_wire_name != new.tag_wire_name:
        yield ctx.change(
            RuleId.UNION_TAG_CHANGED, here, flow, new, old=old.tag_wire_name, new=new.tag_wire_name
        )
        return
    was_open = union_is_open(ctx.old, old)
    if new.tagged:
        before = {member_path(here, old, v): v.type for v in old.variants}
        after = {member_path(here, new, v): v.type for v in new.variants}
        for key in [k for k in before if k in after]:
            yield from compare_member(ctx, before[key], after[key], key, flow, new)
            was, now = _unstable(ctx.old, before[key]), _unstable(ctx.new, after[key])
            if was != now:
                rule = RuleId.VARIANT_BECAME_UNSTABLE if now else RuleId.VARIANT_BECAME_STABLE
                yield ctx.change(rule, key, where=new)
        if old.catch_all is not None and new.catch_all is not None:
            other = (*here, MemberPart(new.tag_wire_name, other=True))
            yield from compare_member(ctx, old.catch_all.type, new.catch_all.type, other, flow, new)
        yield from compare_members(ctx, "union", was_open, new, list(before), list(after), flow, here)
        return
    if old.exclusive != new.exclusive:
        rule_id = RuleId.UNION_BECAME_EXCLUSIVE if new.exclusive else RuleId.UNION_BECAME_INCLUSIVE
        words = {True: "oneOf", False: "anyOf"}
        yield ctx.change(rule_id, here, flow, new, old=words[old.exclusive], new=words[new.exclusive])
    old_members = _untagged(ctx.old, old, ctx.renames)
    new_members = _untagged(ctx.new, new, {})
    for label, member in new_members.items():
        if label in old_members:
            yield from compare_member(
                ctx, old_members[label], member, (*here, MemberPart(None, member=label)), flow, new
            )
    labels = (
        [(*here, MemberPart(None, member=k)) for k in old_members if k not in new_members],
        [(*here, MemberPart(None, member=k)) for k in new_members if k not in old_members],
    )
    yield from compare_members(ctx, "union", was_open, new, *labels, flow, here)


def _untagged(surface: ApiSurface, union: UnionType, renames: Mapping[str, str]) -> dict[TypeExpr, TypeExpr]:
    """The members of an untagged union (those taking any value aside), keyed by their type.

    The key is the member's type with old names read through ``renames`` and
    without constraints, so that a member whose constraints change is the same
    member; two members that differ only in their constraints keep them in the key.
    """
    members = {
        rename_refs(v.type, renames): v.type for v in union.variants if not accepts_any(surface, v.type)
    }
    keys = {renamed: without_constraints(renamed) for renamed in members}
    counts = list(keys.values())
    found = {(key if counts.count(key) == 1 else renamed): members[renamed] for renamed, key in keys.items()}
    return {key: found[key] for key in sorted(found, key=describe)}


def compare_enum(ctx: Context, old: EnumType, new: EnumType, flow: Flow) -> Iterator[Change]:
    here = TypePart(new.name)
    if old.base != new.base:
        yield ctx.change(
            RuleId.TYPE_CHANGED, (here,), flow, new, old=f"{old.base} enum", new=f"{new.base} enum"
        )
        return
    old_values: list[Path] = [(here, ValuePart(v.value)) for v in old.values]
    new_values: list[Path] = [(here, ValuePart(v.value)) for v in new.values]
    yield from compare_members(ctx, "enum", old.open, new, old_values, new_values, flow, (here,))


def compare_members(
    ctx: Context,
    kind: MemberKind,
    was_open: bool,
    new: UnionType | EnumType,
    before: list[Path],
    after: list[Path],
    flow: Flow,
    path: Path,
) -> Iterator[Change]:
    """Open/closed flips and members (one path each) that left or arrived, for unions and enums."""
    is_open = union_is_open(ctx.new, new) if isinstance(new, UnionType) else new.open
    state = openness(is_open)
    if was_open != is_open:
        yield ctx.change(BECAME[kind, state], path, flow, new)
    for member in before:
        if member not in after:
            yield ctx.change(MEMBER_REMOVED[kind, state], member, flow, new)
    for member in after:
        if member not in before:
            yield ctx.change(MEMBER_ADDED[kind, state], member, flow, new)
