"""Constraint keywords: a bound, a ``pattern`` or a ``format`` that changed, and its set proof.

A bound that admits fewer values is tightened, more values loosened; a
``format`` is an annotation (nothing enforces it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, assert_never

from ...schema.ir import AnyOf, ArrayOf, Const, Constraints, MapOf, Nullable, Ref, Scalar, TypeExpr
from ..context import Context
from ..model import ABSENT, InnerPart, Path, SetProof
from ..payload import Bound
from ..rules import RuleId


def constraint_pairs(
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
                yield from constraint_pairs(old.item, new.item, (*path, InnerPart("items")))
        case MapOf():
            if isinstance(new, MapOf):
                yield from constraint_pairs(old.value, new.value, (*path, InnerPart("values")))
        case Nullable():
            if isinstance(new, Nullable):
                yield from constraint_pairs(old.inner, new.inner, path)
        case AnyOf():
            if isinstance(new, AnyOf):
                for a, b in zip(old.members, new.members, strict=True):
                    yield from constraint_pairs(a, b, path)
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


def bound(value: Any) -> Bound | None:
    """A constraint keyword's value as a change holds it (``None``: the keyword is not set)."""
    return None if value is ABSENT else Bound(value)


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
