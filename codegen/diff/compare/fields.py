"""The fields of one location: added, removed, required, nullable, their type, default and leniency.

A field's type is compared by shape through the location's walk
(:attr:`.base.At.walk`); the Python rows of a field (an attribute renamed,
removed, a new required argument of a class) are reported beside its wire rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from ... import knowledge
from ...schema.ir import ArrayOf, Field, ObjectType, Ref, refs_in, strip_nullable
from ..context import Context
from ..model import ABSENT, Change, FieldPart, Relation, SetProof, TypePart, field_default, json_key
from ..payload import Default, Keywords, Name, TypeTerm
from ..proof import Premise
from ..renames import rename_refs
from ..rules import RuleId
from ..sets import Term, with_defaults
from .base import At, Side, accepts_any, normative_change
from .python import attribute_path


def lenient_keywords(f: Field) -> tuple[str, ...]:
    """The leniency keywords a field carries, in the order of ``[extensions]`` of ``knowledge.toml``."""
    return tuple(keyword for flag, keyword in knowledge.extensions().lenient if getattr(f, flag, False))


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
    return SetProof(Relation.NARROWER, only_old=value, premise=Premise.LENIENT)


def _default(f: Field) -> Default | None:
    """A field's default as a change holds it (``None``: the field has none)."""
    return Default(field_default(f)) if f.has_default else None


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
                yield ctx.change(
                    RuleId.PYTHON_ATTRIBUTE_REMOVED, attribute_path(at, f.py_name), where=at.where
                )
        else:
            yield from compare_field(ctx, f, after[wire], here)
    for wire, f in after.items():
        if wire in before or _carrier(ctx, None, f, at):
            continue
        rule_id = RuleId.FIELD_ADDED_REQUIRED if f.required else RuleId.FIELD_ADDED_OPTIONAL
        found = ctx.change(rule_id, (*at.path, FieldPart(wire)), at.traffic, at.where, new=TypeTerm(f.type))
        yield dataclasses.replace(found, proof=presence_proof(ctx, at, wire, "old") if f.required else None)
        if f.required and not f.has_default and at.python is not None and at.constructed:
            yield ctx.change(
                RuleId.PYTHON_CLASS_ARGUMENT_REQUIRED, attribute_path(at, f.py_name), where=at.where
            )


def compare_field(ctx: Context, old: Field, new: Field, at: At) -> Iterator[Change]:
    """One field at ``at`` (its path ends with the field): its name in Python, presence, type, default."""
    path, traffic, where = at.path, at.traffic, at.where
    if old.py_name != new.py_name and at.python is not None:
        yield ctx.change(
            RuleId.PYTHON_ATTRIBUTE_RENAMED,
            (TypePart(at.python), FieldPart(new.wire_name)),
            where=where,
            old=Name(old.py_name),
            new=Name(new.py_name),
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
        yield ctx.change(RuleId.PYTHON_CLASS_ARGUMENT_REQUIRED, attribute_path(at, new.py_name), where=where)
    if old.nullable and new.nullable:
        yield from at.walk.expr(ctx, old.type, new.type, at)
    else:
        yield from at.walk.expr(ctx, strip_nullable(old.type), strip_nullable(new.type), at)
    # a receiver fills a default only for a field the sender may omit: a required field has none that counts;
    # two defaults are compared as the new models read them (each omitted field's own default filled)
    if (
        json_key(field_default(old)) != json_key(field_default(new))
        and not old.required
        and not new.required
        and json_key(with_defaults(ctx.new, new.type, field_default(old)))
        != json_key(with_defaults(ctx.new, new.type, field_default(new)))
    ):
        found = ctx.change(RuleId.DEFAULT_CHANGED, path, traffic, where, old=_default(old), new=_default(new))
        read = (
            with_defaults(ctx.new, new.type, field_default(old)),
            with_defaults(ctx.new, new.type, field_default(new)),
        )
        proof = SetProof(Relation.OVERLAP, read[0], read[1], premise=Premise.DEFAULTS_APPLIED)
        yield dataclasses.replace(found, proof=proof)
    was, now = lenient_keywords(old), lenient_keywords(new)
    if set(now) - set(was):
        yield ctx.change(
            RuleId.LENIENT_ANNOTATION_ADDED, path, traffic, where, old=Keywords(was), new=Keywords(now)
        )
    if set(was) - set(now):
        found = ctx.change(
            RuleId.LENIENT_ANNOTATION_REMOVED, path, traffic, where, old=Keywords(was), new=Keywords(now)
        )
        yield dataclasses.replace(found, proof=lenient_proof(ctx, old, new))
    yield from normative_change(ctx, old.doc, new.doc, at)
