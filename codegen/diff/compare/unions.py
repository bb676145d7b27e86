"""Unions and their members: tagged ones by tag value, untagged ones by title or type, the catch-all.

Also an object that became a union, the members the builder derived a class
or a union for (compared for what they write themselves), a tag property
that changed, tags a catch-all reserves or releases, and ``anyOf`` against
``oneOf``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping

from ...schema.ir import (
    AnyOf,
    ApiSurface,
    Const,
    Field,
    JsonScalar,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
    UnionType,
    Variant,
)
from ..context import Context
from ..model import ABSENT, Change, FieldPart, MemberPart, Path, Relation, SetProof, ValuePart
from ..payload import Exclusivity, Tag, TypeSet, TypeTerm
from ..proof import Premise
from ..renames import rename_refs
from ..rules import MEMBER_ADDED, RuleId, openness
from ..sets import Term
from ..wording import describe
from .base import (
    NOTHING_SHARED,
    At,
    Shared,
    Side,
    accepts_any,
    named_of,
    normative_change,
    without_constraints,
)
from .fields import compare_extra, compare_field, compare_fields
from .members import compare_members, default_member, tag_of, union_is_open


def object_became_union(ctx: Context, old: ObjectType, new: UnionType, at: At) -> Iterator[Change]:
    """An object became a union: the fields it keeps in common, and every member as a new one.

    The row rests on a set proof when every value of the union is one the old
    object accepts and the old object keeps the keys it does not name: old
    receivers then read every member as it was sent, refusing, dropping and
    replacing nothing, and what they miss (what the tag means) no message shows.
    """
    found = ctx.change(RuleId.OBJECT_BECAME_UNION, at.path, at.traffic, at.where, new=Tag(new.tag_wire_name))
    if all(o.extra == "allow" for o in ctx.old.lineage(old.name)):
        proof = ctx.sets.relate(("old", Ref(old.name)), ("new", Ref(new.name)), Ref(old.name), Ref(new.name))
        if proof.relation in (Relation.NARROWER, Relation.EQUAL):
            found = dataclasses.replace(found, proof=dataclasses.replace(proof, premise=Premise.EXTRA_KEPT))
    yield found
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
            RuleId.FIELD_ADDED_REQUIRED,
            (*at.path, FieldPart(tag)),
            at.traffic,
            at.where,
            new=TypeTerm(tag_type),
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
        for key in [k for k in after if k not in before and tag_of(k) not in old_refused]:
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
        proof = dataclasses.replace(
            proof, premise=Premise.DEFAULT_MEMBER if default_member(ctx.new, new) else None
        )
    rule_id = {
        Relation.EQUAL: RuleId.UNION_DISPATCH_CHANGED,
        Relation.WIDER: RuleId.TYPE_WIDENED,
        Relation.NARROWER: RuleId.TYPE_NARROWED,
        Relation.OVERLAP: RuleId.UNION_TAG_CHANGED,
    }[proof.relation]
    if rule_id in (RuleId.TYPE_WIDENED, RuleId.TYPE_NARROWED):
        found = ctx.change(
            rule_id,
            at.path,
            at.traffic,
            at.where,
            old=TypeSet((Ref(old.name),)),
            new=TypeSet((Ref(new.name),)),
        )
    else:
        found = ctx.change(
            rule_id, at.path, at.traffic, at.where, old=Tag(old.tag_wire_name), new=Tag(new.tag_wire_name)
        )
    yield dataclasses.replace(found, proof=proof)


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
    return SetProof(relation, premise=Premise.CATCH_ALL, **only)


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
        Premise.CATCH_ALL,
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
    found = ctx.change(
        rule_id, at.path, at.traffic, at.where, old=Exclusivity(old.exclusive), new=Exclusivity(new.exclusive)
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
    old_type = named_of(ctx.old, rename_refs(old, ctx.renames), ctx.renamed_from)
    new_type = named_of(ctx.new, new, {})
    if (
        isinstance(old_type, (ObjectType, UnionType))
        and isinstance(new_type, (ObjectType, UnionType))
        and old_type.origin is not None
        and new_type.origin is not None
    ):
        yield from compare_derived(ctx, old_type, new_type, at, shared)
        return
    yield from at.walk.expr(ctx, old, new, at)


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
        yield from at.walk.swap(ctx, Ref(old_on), Ref(new_on), at)
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
