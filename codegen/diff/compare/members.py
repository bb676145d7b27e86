"""Members of unions and enums that arrive or leave, and unions and enums that become open or closed.

A union is open with a catch-all, a member that takes any value, or a
default member; a member that leaves while the new union still takes its
values (or arrives with values the old one took) is an ``-open`` change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping

from ...schema.ir import ApiSurface, EnumType, JsonScalar, UnionType, Variant
from ..context import Context
from ..model import Change, MemberPart, Path, Relation, SetProof
from ..proof import Premise
from ..rules import BECAME, MEMBER_ADDED, MEMBER_REMOVED, MemberKind, openness
from .base import At, accepts_any


def union_is_open(surface: ApiSurface, union: UnionType) -> bool:
    """A union is open with a catch-all member, a member that takes any value, or a default member."""
    return (
        union.open
        or any(accepts_any(surface, v.type) for v in union.variants)
        or default_member(surface, union) is not None
    )


def default_member(surface: ApiSurface, union: UnionType) -> Variant | None:
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
            closed = tag_of(member) in new_refused
            rule = MEMBER_REMOVED[kind, "open" if member in kept[0] else "closed" if closed else state]
            found = ctx.change(rule, member, at.traffic, at.where)
            if member in kept[0]:
                found = dataclasses.replace(found, proof=SetProof(Relation.WIDER, premise=_premise(new)))
            yield dataclasses.replace(found, proof=found.proof or proofs.get(member))
    for member in after:
        if member not in before:
            closed = tag_of(member) in old_refused
            rule = MEMBER_ADDED[kind, "open" if member in kept[1] else "closed" if closed else state]
            found = ctx.change(rule, member, at.traffic, at.where)
            if member in kept[1]:
                found = dataclasses.replace(found, proof=SetProof(Relation.EQUAL, premise=_premise(new)))
            yield dataclasses.replace(found, proof=found.proof or proofs.get(member))


def _premise(union: UnionType | EnumType) -> Premise | None:
    """What takes the values of a member that left (or took those of one that arrived)."""
    if not isinstance(union, UnionType):
        return None
    if union.catch_all is not None:
        return Premise.CATCH_ALL
    return Premise.DEFAULT_MEMBER if union.tagged else Premise.OTHER_MEMBER


def tag_of(path: Path) -> JsonScalar | object:
    last = path[-1]
    if isinstance(last, MemberPart) and last.tag is not None and not last.other:
        return last.value
    return _NO_TAG


_NO_TAG = object()
