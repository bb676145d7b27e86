"""The wire comparison of named types and type expressions, as generators of :class:`Change`.

Types are matched by name (through the renames, :mod:`.renames`); objects
field by field, tagged unions variant by tag value (never by position),
untagged unions and enums member by member, aliases and fields by their
type expressions.  A field, class or attribute that changes its Python name
is reported here too, beside the wire change it comes with.
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
from .model import Change
from .renames import rename_refs, shape
from .rules import BECAME, MEMBER_ADDED, MEMBER_REMOVED, MemberKind, Peer, RuleId, openness

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


def _without_constraints(expr: TypeExpr) -> TypeExpr:
    match expr:
        case Scalar(type=scalar):
            return Scalar(scalar)
        case ArrayOf(item=item):
            return ArrayOf(_without_constraints(item))
        case MapOf(value=value):
            return MapOf(_without_constraints(value))
        case Nullable(inner=inner):
            return Nullable(_without_constraints(inner))
        case AnyOf(members=members):
            return AnyOf(tuple(_without_constraints(m) for m in members))
        case Ref() | Const():
            return expr
        case _:
            assert_never(expr)


def _constraint_pairs(old: TypeExpr, new: TypeExpr) -> Iterator[tuple[Constraints, Constraints]]:
    """Matching constraint sets of two expressions that differ only in constraints."""
    match old:
        case Scalar():
            if isinstance(new, Scalar):
                yield old.constraints, new.constraints
        case ArrayOf():
            if isinstance(new, ArrayOf):
                yield old.constraints, new.constraints
                yield from _constraint_pairs(old.item, new.item)
        case MapOf():
            if isinstance(new, MapOf):
                yield from _constraint_pairs(old.value, new.value)
        case Nullable():
            if isinstance(new, Nullable):
                yield from _constraint_pairs(old.inner, new.inner)
        case AnyOf():
            if isinstance(new, AnyOf):
                for a, b in zip(old.members, new.members, strict=True):
                    yield from _constraint_pairs(a, b)
        case Ref() | Const():
            pass  # nothing in them is constrained
        case _:
            assert_never(old)


_LOWER_BOUNDS = ("minimum", "exclusive_minimum", "min_length", "min_items")
_UPPER_BOUNDS = ("maximum", "exclusive_maximum", "max_length", "max_items")
_WORDS = {
    "exclusive_minimum": "exclusiveMinimum",
    "exclusive_maximum": "exclusiveMaximum",
    "min_length": "minLength",
    "max_length": "maxLength",
    "min_items": "minItems",
    "max_items": "maxItems",
}


def constraint_changes(old: Constraints, new: Constraints) -> Iterator[tuple[RuleId, str]]:
    """``(rule id, detail)`` for every constraint keyword that differs."""
    for key in (*_LOWER_BOUNDS, *_UPPER_BOUNDS, "pattern", "format"):
        before, after = getattr(old, key), getattr(new, key)
        if before == after:
            continue
        word = _WORDS.get(key, key)
        detail = f"{word} {_show(before)} -> {_show(after)}"
        if before is None:
            yield RuleId.CONSTRAINT_TIGHTENED, detail
        elif after is None:
            yield RuleId.CONSTRAINT_LOOSENED, detail
        elif key in _LOWER_BOUNDS:
            yield (RuleId.CONSTRAINT_TIGHTENED if after > before else RuleId.CONSTRAINT_LOOSENED), detail
        elif key in _UPPER_BOUNDS:
            yield (RuleId.CONSTRAINT_TIGHTENED if after < before else RuleId.CONSTRAINT_LOOSENED), detail
        else:
            yield RuleId.CONSTRAINT_CHANGED, detail


def _show(value: Any) -> str:
    return "none" if value is None else repr(value)


def describe(expr: TypeExpr) -> str:
    """A type expression the way a reader of the report thinks of it."""
    match expr:
        case Ref(name=name):
            return name
        case Scalar(type=scalar):
            return scalar
        case ArrayOf(item=item):
            return f"list[{describe(item)}]"
        case MapOf(value=value):
            return f"dict[str, {describe(value)}]"
        case Const(value=value):
            return repr(value)
        case Nullable(inner=inner):
            return f"{describe(inner)} | null"
        case AnyOf(members=members):
            return " | ".join(describe(m) for m in members)
        case _:
            assert_never(expr)


def _set_change(before: frozenset[TypeExpr], after: frozenset[TypeExpr]) -> str:
    parts = []
    if after - before:
        parts.append("adds " + ", ".join(sorted(describe(e) for e in after - before)))
    if before - after:
        parts.append("drops " + ", ".join(sorted(describe(e) for e in before - after)))
    return "; ".join(parts)


def _show_default(f: Field) -> str:
    return repr(to_json(f.default)) if f.has_default else "none"


# --- named types ---------------------------------------------------------------------


def compare_types(ctx: Context) -> Iterator[Change]:
    """Every named type: renamed, removed, added, or compared with the type of its name."""
    new_names = set(ctx.renames.values())
    for name, old_type in ctx.old.types.items():
        if name in ctx.renames:
            new_name = ctx.renames[name]
            yield ctx.change(
                RuleId.PYTHON_CLASS_RENAMED, name, f"now {new_name}", (), ctx.new.types[new_name]
            )
            yield from compare_type(ctx, old_type, ctx.new.types[new_name])
        elif name in ctx.new.types:
            yield from compare_type(ctx, old_type, ctx.new.types[name])
        else:
            yield ctx.change(RuleId.PYTHON_CLASS_REMOVED, name, "", (), old_type)
    for name, new_type in ctx.new.types.items():
        if name not in ctx.old.types and name not in new_names:
            yield ctx.change(RuleId.PYTHON_CLASS_ADDED, name, "", (), new_type)


def compare_type(ctx: Context, old: NamedType, new: NamedType) -> Iterator[Change]:
    """Two types of the same name (or renamed): of the same kind, compared; else ``type-changed``.

    A union the builder derived from a member of another union is compared
    where that member is, level by level (:func:`compare_member`), not here.
    """
    if old.internal and new.internal:
        return  # the JSON-RPC envelopes: their contents are reported method by method
    senders = ctx.senders(old.name, new.name)
    if isinstance(old, ObjectType) and isinstance(new, UnionType):
        yield ctx.change(RuleId.PYTHON_CLASS_BECAME_UNION, new.name, _union_detail(new), (), new)
    elif isinstance(old, UnionType) and isinstance(new, ObjectType):
        yield ctx.change(RuleId.PYTHON_UNION_BECAME_CLASS, new.name, "", (), new)
    if _derived_union(old) or _derived_union(new):
        return
    if old.unstable != new.unstable and new.schema_name is not None:
        rule = RuleId.TYPE_BECAME_UNSTABLE if new.unstable else RuleId.TYPE_BECAME_STABLE
        yield ctx.change(rule, new.name, "", (), new)
    match new:
        case ObjectType():
            if isinstance(old, ObjectType):
                yield from compare_object(ctx, old, new, senders)
                return
            if isinstance(old, UnionType):
                yield ctx.change(RuleId.UNION_BECAME_OBJECT, new.name, "", senders, new)
                return
        case UnionType():
            if isinstance(old, UnionType):
                yield from compare_union(ctx, old, new, senders)
                return
            if isinstance(old, ObjectType):
                yield from object_became_union(ctx, old, new, new.name, senders)
                return
        case EnumType():
            if isinstance(old, EnumType):
                yield from compare_enum(ctx, old, new, senders)
                return
        case AliasType():
            if isinstance(old, AliasType):
                yield from compare_expr(ctx, old.target, new.target, new.name, senders, new)
                return
        case _:
            assert_never(new)
    yield ctx.change(RuleId.TYPE_CHANGED, new.name, f"{old.kind} -> {new.kind}", senders, new)


def _derived_union(named: NamedType | None) -> bool:
    return isinstance(named, UnionType) and named.origin is not None


def _union_detail(union: UnionType) -> str:
    return f"a union on {union.tag_wire_name}" if union.tag_wire_name else "an untagged union"


def object_became_union(
    ctx: Context, old: ObjectType, new: UnionType, subject: str, senders: frozenset[Peer]
) -> Iterator[Change]:
    """An object became a union: the fields it keeps in common, and every member as a new one."""
    yield ctx.change(RuleId.OBJECT_BECAME_UNION, subject, _union_detail(new), senders, new)
    before = {f.wire_name: f for f in ctx.old.all_fields(old.name)}
    for f in new.fields:
        if f.wire_name in before:
            yield from compare_field(ctx, before[f.wire_name], f, f"{subject}.{f.wire_name}", senders, new)
    added = MEMBER_ADDED["union", openness(new.open)]
    for variant in new.variants:
        yield ctx.change(
            added, member_subject(subject, new, variant, nested=subject != new.name), "", senders, new
        )


def member_subject(subject: str, union: UnionType, variant: Variant, *, nested: bool) -> str:
    """``Union['tag']`` for a member of a named union; ``<path> > tag['value']`` one level further down."""
    if union.tagged:
        key = "null" if variant.tag is None else repr(variant.tag)
        return f"{subject} > {union.tag_wire_name}[{key}]" if nested else f"{subject}[{key}]"
    label = describe(variant.type)
    return f"{subject} > [{label}]" if nested else f"{subject}[{label}]"


def compare_member(
    ctx: Context,
    old: TypeExpr,
    new: TypeExpr,
    subject: str,
    senders: frozenset[Peer],
    where: NamedType,
) -> Iterator[Change]:
    """The types of one union member, read level by level where either is a union of its own."""
    old_type = _named(ctx.old, rename_refs(old, ctx.renames), ctx.renamed_from)
    new_type = _named(ctx.new, new, {})
    if isinstance(new_type, UnionType) and _derived_union(new_type):
        if isinstance(old_type, UnionType):
            yield from compare_union(ctx, old_type, new_type, senders, subject)
        elif isinstance(old_type, ObjectType):
            yield from object_became_union(ctx, old_type, new_type, subject, senders)
        else:
            yield from compare_expr(ctx, old, new, subject, senders, where)
        return
    if _derived_union(old_type) and isinstance(new_type, ObjectType):
        yield ctx.change(RuleId.UNION_BECAME_OBJECT, subject, "", senders, where)
        return
    yield from compare_expr(ctx, old, new, subject, senders, where)


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


def compare_object(
    ctx: Context, old: ObjectType, new: ObjectType, senders: frozenset[Peer]
) -> Iterator[Change]:
    same_base = (ctx.renames.get(old.base, old.base) if old.base else None) == new.base
    old_fields = old.fields if same_base else ctx.old.all_fields(old.name)
    new_fields = new.fields if same_base else ctx.new.all_fields(new.name)
    yield from compare_fields(ctx, old_fields, new_fields, new, senders)


def compare_fields(
    ctx: Context,
    old_fields: tuple[Field, ...],
    new_fields: tuple[Field, ...],
    new: ObjectType | UnionType,
    senders: frozenset[Peer],
) -> Iterator[Change]:
    """The fields of an object, or the fields every member of a union shares, by wire name."""
    before = {f.wire_name: f for f in old_fields}
    after = {f.wire_name: f for f in new_fields}
    for wire, f in before.items():
        subject = f"{new.name}.{wire}"
        if wire not in after:
            yield ctx.change(
                RuleId.REQUIRED_FIELD_REMOVED if f.required else RuleId.OPTIONAL_FIELD_REMOVED,
                subject,
                "",
                senders,
                new,
            )
            yield ctx.change(RuleId.PYTHON_ATTRIBUTE_REMOVED, f"{new.name}.{f.py_name}", "", (), new)
        else:
            yield from compare_field(ctx, f, after[wire], subject, senders, new)
    for wire, f in after.items():
        if wire not in before:
            rule_id = RuleId.FIELD_ADDED_REQUIRED if f.required else RuleId.FIELD_ADDED_OPTIONAL
            yield ctx.change(rule_id, f"{new.name}.{wire}", f"type {describe(f.type)}", senders, new)


def compare_field(
    ctx: Context, old: Field, new: Field, subject: str, senders: frozenset[Peer], where: NamedType
) -> Iterator[Change]:
    if old.py_name != new.py_name:
        yield ctx.change(
            RuleId.PYTHON_ATTRIBUTE_RENAMED, subject, f"{old.py_name} -> {new.py_name}", (), where
        )
    flips = (
        (old.required, new.required, RuleId.FIELD_BECAME_REQUIRED, RuleId.FIELD_BECAME_OPTIONAL),
        (old.nullable, new.nullable, RuleId.FIELD_BECAME_NULLABLE, RuleId.FIELD_BECAME_NON_NULLABLE),
    )
    for before, after, became_true, became_false in flips:
        if before != after:
            yield ctx.change(became_true if after else became_false, subject, "", senders, where)
    if old.nullable and new.nullable:
        yield from compare_expr(ctx, old.type, new.type, subject, senders, where)
    else:
        yield from compare_expr(
            ctx, strip_nullable(old.type), strip_nullable(new.type), subject, senders, where
        )
    if repr(old.default) != repr(new.default):
        detail = f"{_show_default(old)} -> {_show_default(new)}"
        yield ctx.change(RuleId.DEFAULT_CHANGED, subject, detail, senders, where)
    for attr, keyword in (
        ("default_on_error", "x-deserialize-default-on-error"),
        ("skip_invalid_items", "x-deserialize-skip-invalid-items"),
    ):
        if getattr(old, attr) != getattr(new, attr):
            added = getattr(new, attr)
            rule_id = RuleId.LENIENT_ANNOTATION_ADDED if added else RuleId.LENIENT_ANNOTATION_REMOVED
            yield ctx.change(rule_id, subject, keyword, senders, where)


def compare_expr(
    ctx: Context,
    old: TypeExpr,
    new: TypeExpr,
    subject: str,
    senders: frozenset[Peer],
    where: NamedType | None,
) -> Iterator[Change]:
    """How the type of ``subject`` changed (old references are read through the renames)."""
    yield from _compare(ctx, rename_refs(old, ctx.renames), new, subject, senders, where, "")


def _compare(
    ctx: Context,
    old: TypeExpr,
    new: TypeExpr,
    subject: str,
    senders: frozenset[Peer],
    where: NamedType | None,
    prefix: str,
) -> Iterator[Change]:
    """``old`` -> ``new``; ``prefix`` says where inside the type (``items: ``, ``values: ``) the two are."""
    if old == new:
        return
    if _without_constraints(old) == _without_constraints(new):
        for a, b in _constraint_pairs(old, new):
            for rule_id, detail in constraint_changes(a, b):
                yield ctx.change(rule_id, subject, prefix + detail, senders, where)
        return
    if isinstance(old, ArrayOf) and isinstance(new, ArrayOf):
        for rule_id, detail in constraint_changes(old.constraints, new.constraints):
            yield ctx.change(rule_id, subject, prefix + detail, senders, where)
        yield from _compare(ctx, old.item, new.item, subject, senders, where, prefix + "items: ")
        return
    if isinstance(old, MapOf) and isinstance(new, MapOf):
        yield from _compare(ctx, old.value, new.value, subject, senders, where, prefix + "values: ")
        return
    if isinstance(old, Ref) and isinstance(new, Ref):
        inline = inline_move(ctx, old.name, new.name)
        if inline is not None:
            yield ctx.change(inline, subject, f"{prefix}{old.name} -> {new.name}", (), where)
            return
    before = frozenset(_as_wire(ctx.old, m, ctx.renamed_from) for m in _members(old))
    after = frozenset(_as_wire(ctx.new, m, {}) for m in _members(new))
    if before == after:  # the same values on the wire: an open enum takes any value of its base type
        detail = f"{prefix}{describe(old)} -> {describe(new)}"
        yield ctx.change(RuleId.PYTHON_ANNOTATION_CHANGED, subject, detail, (), where)
        return
    if Scalar("any") in after - before or before < after:
        yield ctx.change(RuleId.TYPE_WIDENED, subject, prefix + _set_change(before, after), senders, where)
    elif Scalar("any") in before - after or after < before:
        yield ctx.change(RuleId.TYPE_NARROWED, subject, prefix + _set_change(before, after), senders, where)
    else:
        detail = f"{prefix}{describe(old)} -> {describe(new)}"
        yield ctx.change(RuleId.TYPE_CHANGED, subject, detail, senders, where)


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
    ctx: Context, old: UnionType, new: UnionType, senders: frozenset[Peer], path: str | None = None
) -> Iterator[Change]:
    """Two unions, member by member; ``path`` is where a nested one sits (``Parent['tag']``)."""
    subject = new.name if path is None else path
    nested = path is not None
    yield from compare_fields(ctx, old.fields, new.fields, new, senders)
    if old.tag_wire_name != new.tag_wire_name:
        detail = f"{old.tag_wire_name} -> {new.tag_wire_name}"
        yield ctx.change(RuleId.UNION_TAG_CHANGED, subject, detail, senders, new)
        return
    if new.tagged:
        before = {member_subject(subject, old, v, nested=nested): v.type for v in old.variants}
        after = {member_subject(subject, new, v, nested=nested): v.type for v in new.variants}
        for key in [k for k in before if k in after]:
            yield from compare_member(ctx, before[key], after[key], key, senders, new)
            was, now = _unstable(ctx.old, before[key]), _unstable(ctx.new, after[key])
            if was != now:
                rule = RuleId.VARIANT_BECAME_UNSTABLE if now else RuleId.VARIANT_BECAME_STABLE
                yield ctx.change(rule, key, "", (), new)
        yield from compare_members(ctx, "union", old.open, new, list(before), list(after), senders, subject)
        return
    old_members = sorted({rename_refs(v.type, ctx.renames) for v in old.variants}, key=describe)
    new_members = sorted({v.type for v in new.variants}, key=describe)
    label = f"{subject} > " if nested else subject
    labels = (
        [f"{label}[{describe(e)}]" for e in old_members if e not in new_members],
        [f"{label}[{describe(e)}]" for e in new_members if e not in old_members],
    )
    yield from compare_members(ctx, "union", old.open, new, *labels, senders, subject)


def compare_enum(ctx: Context, old: EnumType, new: EnumType, senders: frozenset[Peer]) -> Iterator[Change]:
    if old.base != new.base:
        yield ctx.change(RuleId.TYPE_CHANGED, new.name, f"{old.base} enum -> {new.base} enum", senders, new)
        return
    before = [f"{new.name}[{v.value!r}]" for v in old.values]
    after = [f"{new.name}[{v.value!r}]" for v in new.values]
    yield from compare_members(ctx, "enum", old.open, new, before, after, senders)


def compare_members(
    ctx: Context,
    kind: MemberKind,
    was_open: bool,
    new: UnionType | EnumType,
    before: list[str],
    after: list[str],
    senders: frozenset[Peer],
    subject: str | None = None,
) -> Iterator[Change]:
    """Open/closed flips and members (one subject each) that left or arrived, for unions and enums."""
    state = openness(new.open)
    if was_open != new.open:
        yield ctx.change(BECAME[kind, state], subject or new.name, "", senders, new)
    for subject in before:
        if subject not in after:
            yield ctx.change(MEMBER_REMOVED[kind, state], subject, "", senders, new)
    for subject in after:
        if subject not in before:
            yield ctx.change(MEMBER_ADDED[kind, state], subject, "", senders, new)
