"""Set inclusion: how the JSON values one release's type accepts stand to the other release's.

The differ decides whether a type was widened, narrowed or changed by one
question asked both ways: does every value of this expression belong to that
one?  :meth:`Sets.includes` answers it on the IR of both releases, ``$ref``
resolved, constraints included:

* a constrained scalar is included in another when its JSON type is (an
  integer is a number) and its bounds, lengths and pattern are at least as
  tight (``integer{minimum 0}`` is included in ``number{minimum 0}``; a string
  with a pattern or a ``minLength`` in a plain string);
* a ``const`` in its enum, a closed enum in its base type, ``T`` in ``T | null``;
* arrays, maps and objects member by member (an object's required fields,
  its fields' types, the tag values a catch-all refuses, ``additionalProperties``;
  as the differ's field rules do, a sender is taken to send no property its
  schema does not list, so an optional field the other side adds is no value
  of the other side),
  unions member by member (each member of the narrow side in one of the wide side).

The answer is conservative: ``False`` when it cannot tell.  A pair of named
types met again while it is being decided is taken as included (recursive
types).  :meth:`Sets.relation` asks both ways and returns the
:class:`~.proof.SetProof` a row carries: the relation and, where it finds one,
a value only one side accepts (tried from values built from the type itself,
checked by :meth:`Sets.accepts`).  :func:`with_defaults` fills a JSON value
with the defaults a surface's models apply, so that two defaults are compared
as what a receiver reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, assert_never

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
    to_json,
)
from .path import ABSENT
from .proof import Premise, Relation, SetProof, Shown

__all__ = ["Sets", "Term", "json_type", "same_json", "with_defaults"]

Side = Literal["old", "new"]
Shape = TypeExpr | ObjectType
"""What a set is read from: a type expression, or an object type itself (a member narrowed to one tag)."""
Term = tuple[Side, Shape]
"""A set of JSON values: a shape, read in the surface of one side."""

_SAMPLES = 40
"""At most this many values of a type are tried for a witness."""
_DEPTH = 5
"""Values built for a witness nest at most this deep."""


def json_type(value: Any) -> str:
    """The JSON type of a value: ``integer`` for a whole number, ``boolean`` apart from numbers."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object" if isinstance(value, Mapping) else "other"


def _same_value(a: Any, b: Any) -> bool:
    """Equal as JSON values: ``1`` and ``1.0`` are, ``1`` and ``true`` are not."""
    if json_type(a) in ("integer", "number") and json_type(b) in ("integer", "number"):
        return bool(a == b)
    if json_type(a) != json_type(b):
        return False
    if isinstance(a, Mapping):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _field_type(f: Field) -> TypeExpr:
    """A field's values: its type, and null when it is nullable."""
    if f.nullable and not isinstance(f.type, Nullable):
        return Nullable(f.type)
    return f.type


# --- scalars and their constraints -------------------------------------------------------------

Bound = tuple[float, bool]
"""A numeric bound and whether it is exclusive."""


def _lower(c: Constraints) -> Bound | None:
    found = [(b, False) for b in (c.minimum,) if b is not None]
    found += [(b, True) for b in (c.exclusive_minimum,) if b is not None]
    return max(found, key=lambda b: (b[0], b[1])) if found else None


def _upper(c: Constraints) -> Bound | None:
    found = [(b, False) for b in (c.maximum,) if b is not None]
    found += [(b, True) for b in (c.exclusive_maximum,) if b is not None]
    return min(found, key=lambda b: (b[0], not b[1])) if found else None


def _at_least(narrow: Bound | None, wide: Bound | None) -> bool:
    """Whether a lower bound ``narrow`` is at least as tight as ``wide`` (no bound: none)."""
    if wide is None:
        return True
    if narrow is None:
        return False
    return narrow[0] > wide[0] or (narrow[0] == wide[0] and (narrow[1] or not wide[1]))


def _at_most(narrow: Bound | None, wide: Bound | None) -> bool:
    if wide is None:
        return True
    if narrow is None:
        return False
    return narrow[0] < wide[0] or (narrow[0] == wide[0] and (narrow[1] or not wide[1]))


def _count_within(
    narrow_min: int | None, narrow_max: int | None, wide_min: int | None, wide_max: int | None
) -> bool:
    """Whether a length (or item count) range lies within another."""
    if wide_min is not None and (narrow_min or 0) < wide_min:
        return False
    return wide_max is None or (narrow_max is not None and narrow_max <= wide_max)


def _scalar_includes(wide: Scalar, narrow: Scalar) -> bool:
    """Every value of the scalar ``narrow`` is one of ``wide`` (``format`` is an annotation: ignored)."""
    if not (wide.type == narrow.type or (wide.type == "number" and narrow.type == "integer")):
        return False
    w, n = wide.constraints, narrow.constraints
    if not (_at_least(_lower(n), _lower(w)) and _at_most(_upper(n), _upper(w))):
        return False
    if not _count_within(n.min_length, n.max_length, w.min_length, w.max_length):
        return False
    return w.pattern is None or w.pattern == n.pattern


def _pattern_matches(pattern: str, value: str) -> bool:
    try:
        return re.search(pattern, value) is not None
    except re.error:
        return False


def _scalar_accepts(scalar: Scalar, value: Any) -> bool:
    kind = json_type(value)
    if scalar.type == "any":
        return True
    if not (kind == scalar.type or (scalar.type == "number" and kind == "integer")):
        return False
    c = scalar.constraints
    if kind in ("integer", "number"):
        low, high = _lower(c), _upper(c)
        if low is not None and (value < low[0] or (low[1] and value == low[0])):
            return False
        if high is not None and (value > high[0] or (high[1] and value == high[0])):
            return False
    if kind == "string":
        if c.min_length is not None and len(value) < c.min_length:
            return False
        if c.max_length is not None and len(value) > c.max_length:
            return False
        if c.pattern is not None and not _pattern_matches(c.pattern, value):
            return False
    return True


_PATTERN_TRIES = (
    "a",
    "ab",
    "abc",
    "A",
    "AB",
    "ABC",
    "ABCD",
    "0",
    "01",
    "_x",
    "a-b",
    "a.b",
    "a/b",
    "2024-01-01",
)
"""Strings tried against a pattern (a pattern's language is not enumerated: a witness is looked for)."""


def _scalar_samples(scalar: Scalar) -> Iterator[Any]:
    c = scalar.constraints
    match scalar.type:
        case "null":
            yield None
        case "boolean":
            yield from (True, False)
        case "string":
            yield from ("", "x" * (c.min_length or 1), "x" * ((c.max_length or 0) + 1))
            if c.pattern is not None:
                yield from _PATTERN_TRIES
        case "integer" | "number":
            edges: list[float] = [0, 1, -1]
            for bound in (_lower(c), _upper(c)):
                if bound is not None:
                    edges += [bound[0], bound[0] - 1, bound[0] + 1]
            for edge in edges:
                yield int(edge) if float(edge).is_integer() else edge
            if scalar.type == "number":
                for edge in edges:
                    yield edge + 0.5
        case "any":
            yield from (None, {}, "x", 1.5)


# --- the sets of two surfaces -------------------------------------------------------------------


@dataclass
class Sets:
    """Set inclusion between the types of two surfaces (old references under their old names)."""

    old: ApiSurface
    new: ApiSurface
    renamed_from: Mapping[str, str] = field(default_factory=dict)
    """New type name -> old type name: an old expression the differ renamed is read back through it."""
    _known: dict[tuple[Term, Term], bool] = field(default_factory=dict, repr=False)
    _deciding: set[tuple[Term, Term]] = field(default_factory=set, repr=False)

    def surface(self, side: Side) -> ApiSurface:
        return self.old if side == "old" else self.new

    def old_term(self, expr: TypeExpr) -> Term:
        """An old expression whose references carry new names (as the differ compares them)."""
        return "old", self._old_names(expr) if self.renamed_from else expr

    def _old_names(self, expr: TypeExpr) -> TypeExpr:
        match expr:
            case Ref(name=name):
                return Ref(self.renamed_from.get(name, name))
            case ArrayOf(item=item, constraints=constraints):
                return ArrayOf(self._old_names(item), constraints)
            case MapOf(value=value):
                return MapOf(self._old_names(value))
            case Nullable(inner=inner):
                return Nullable(self._old_names(inner))
            case AnyOf(members=members):
                return AnyOf(tuple(self._old_names(m) for m in members))
            case Scalar() | Const():
                return expr
            case _:
                assert_never(expr)

    def named(self, side: Side, shape: Shape) -> NamedType | None:
        if isinstance(shape, ObjectType):
            return shape
        return self.surface(side).types.get(shape.name) if isinstance(shape, Ref) else None

    # --- what a set takes --------------------------------------------------------------------

    def relation(self, old: TypeExpr, new: TypeExpr, premise: Premise | None = None) -> SetProof:
        """How the values of ``old`` (references under new names) stand to those of ``new``."""
        return self.relate(self.old_term(old), ("new", new), old, new, premise)

    def relate(
        self, old: Term, new: Term, shown_old: Shown, shown_new: Shown, premise: Premise | None = None
    ) -> SetProof:
        """:meth:`relation` of two terms; ``shown_old`` and ``shown_new`` are what the proof names."""
        wider, narrower = self.includes(new, old), self.includes(old, new)
        if wider and narrower:
            return SetProof(Relation.EQUAL, shown_old, shown_new, premise=premise)
        only_old = ABSENT if wider else self.witness(old, new)
        only_new = ABSENT if narrower else self.witness(new, old)
        relation = Relation.WIDER if wider else Relation.NARROWER if narrower else Relation.OVERLAP
        return SetProof(relation, shown_old, shown_new, only_old, only_new, premise)

    def accepts_any(self, term: Term) -> bool:
        side, shape = term
        match shape:
            case Scalar(type=kind):
                return kind == "any"
            case Nullable(inner=inner):
                return self.accepts_any((side, inner))
            case AnyOf(members=members):
                return any(self.accepts_any((side, m)) for m in members)
            case Ref():
                named = self.named(side, shape)
                if isinstance(named, AliasType):
                    return named.target != shape and self.accepts_any((side, named.target))
                if isinstance(named, UnionType):
                    return any(v.type != shape and self.accepts_any((side, v.type)) for v in named.members)
        return False

    def includes(self, wide: Term, narrow: Term) -> bool:
        """Whether every value of ``narrow`` is a value of ``wide`` (``False`` when it cannot tell)."""
        key = (wide, narrow)
        known = self._known.get(key)
        if known is not None:
            return known
        if key in self._deciding:
            return True  # a recursive type met again: included, unless another part says otherwise
        self._deciding.add(key)
        try:
            found = self._includes(wide, narrow)
        finally:
            self._deciding.discard(key)
        self._known[key] = found
        return found

    def _includes(self, wide: Term, narrow: Term) -> bool:
        side, shape = narrow
        # the narrow side's alternatives, one by one
        match shape:
            case Nullable(inner=inner):
                return self.includes(wide, (side, Scalar("null"))) and self.includes(wide, (side, inner))
            case AnyOf(members=members):
                return all(self.includes(wide, (side, m)) for m in members)
            case Ref():
                named = self.named(side, shape)
                match named:
                    case None:
                        return False
                    case AliasType(target=target):
                        return self.includes(wide, (side, target))
                    case EnumType(open=True, base=base):
                        return self.includes(wide, (side, Scalar(base)))
                    case EnumType(values=values):
                        return all(self.includes(wide, (side, Const(v.value))) for v in values)
                    case UnionType():
                        return bool(named.members) and all(
                            self.includes(wide, (side, v.type)) for v in named.members
                        )
                    case ObjectType():
                        return self._into(wide, (side, named))
            case Scalar() | Const() | ArrayOf() | MapOf() | ObjectType():
                pass  # one alternative
            case _:
                assert_never(shape)
        return self._into(wide, narrow)

    def _into(self, wide: Term, narrow: Term) -> bool:
        """``narrow`` is one alternative (a scalar, a constant, an array, a map or an object)."""
        if self.accepts_any(wide):
            return True
        n = narrow[1]
        if isinstance(n, Scalar) and n.type == "any":
            return False
        side, shape = wide
        match shape:
            case Nullable(inner=inner):
                return _is_null(n) or self.includes((side, inner), narrow)
            case AnyOf(members=members):
                return any(self.includes((side, m), narrow) for m in members)
            case Const(value=value):
                return isinstance(n, Const) and _same_value(value, n.value)
            case Scalar():
                if isinstance(n, Const):
                    return _scalar_accepts(shape, n.value)
                return isinstance(n, Scalar) and _scalar_includes(shape, n)
            case ArrayOf(item=item, constraints=c):
                return (
                    isinstance(n, ArrayOf)
                    and _count_within(
                        n.constraints.min_items, n.constraints.max_items, c.min_items, c.max_items
                    )
                    and self.includes((side, item), (narrow[0], n.item))
                )
            case MapOf(value=value):
                if isinstance(n, MapOf):
                    return self.includes((side, value), (narrow[0], n.value))
                if isinstance(n, ObjectType):
                    return n.extra == "forbid" and all(
                        self.includes((side, value), (narrow[0], _field_type(f)))
                        for f in self.fields(narrow[0], n)
                    )
                return False
            case Ref() | ObjectType():
                pass  # a named type, below
            case _:
                assert_never(shape)
        named = self.named(side, shape)
        match named:
            case AliasType(target=target):
                return self.includes((side, target), narrow)
            case EnumType(open=True, base=base):
                return self.includes((side, Scalar(base)), narrow)
            case EnumType(values=values):
                return isinstance(n, Const) and any(_same_value(v.value, n.value) for v in values)
            case UnionType():
                return any(self.includes((side, v.type), narrow) for v in named.members)
            case ObjectType():
                return isinstance(n, ObjectType) and self._object_includes((side, named), (narrow[0], n))
        return False

    def fields(self, side: Side, obj: ObjectType) -> tuple[Field, ...]:
        """Every field of an object type (inherited ones too)."""
        if obj.base is None:
            return obj.fields
        surface = self.surface(side)
        if obj.name in surface.types and surface.types[obj.name] is obj:
            return surface.all_fields(obj.name)
        inherited = surface.all_fields(obj.base) if obj.base in surface.types else ()
        own = {f.wire_name for f in obj.fields}
        return tuple(f for f in inherited if f.wire_name not in own) + obj.fields

    def reserved(self, side: Side, obj: ObjectType) -> dict[str, frozenset[JsonScalar]]:
        """The tag values an object refuses, by wire name (a catch-all's reservations)."""
        found: dict[str, set[JsonScalar]] = {}
        if obj.reserved is not None:
            found.setdefault(obj.reserved.wire_name, set()).update(obj.reserved.values)
        surface = self.surface(side)
        if obj.base is not None and obj.base in surface.types:
            for r in surface.reserved_of(obj.base):
                found.setdefault(r.wire_name, set()).update(r.values)
        return {k: frozenset(v) for k, v in found.items()}

    def _object_includes(self, wide: tuple[Side, ObjectType], narrow: tuple[Side, ObjectType]) -> bool:
        (ws, w), (ns, n) = wide, narrow
        before = {f.wire_name: f for f in self.fields(ns, n)}
        after = {f.wire_name: f for f in self.fields(ws, w)}
        refused, refusing = self.reserved(ws, w), self.reserved(ns, n)
        for wire, f in after.items():
            g = before.get(wire)
            if g is None:
                if f.required:
                    return False
                continue  # a sender sends no property its schema does not list (field-added-optional)
            if f.required and not g.required:
                return False
            if not self.includes((ws, _field_type(f)), (ns, _field_type(g))):
                return False
            avoided = refused.get(wire, frozenset()) <= refusing.get(wire, frozenset())
            if not avoided and (not isinstance(g.type, Const) or g.type.value in refused[wire]):
                return False
        return not (w.extra == "forbid" and (n.extra == "allow" or any(k not in after for k in before)))

    # --- values -------------------------------------------------------------------------------

    def accepts(self, term: Term, value: Any, depth: int = 0) -> bool:
        """Whether ``value`` is one of the term's values (as its JSON Schema validates it)."""
        side, shape = term
        if depth > 64:
            return True
        match shape:
            case Scalar():
                return _scalar_accepts(shape, value)
            case Const(value=const):
                return _same_value(const, value)
            case Nullable(inner=inner):
                return value is None or self.accepts((side, inner), value, depth + 1)
            case AnyOf(members=members):
                return any(self.accepts((side, m), value, depth + 1) for m in members)
            case ArrayOf(item=item, constraints=c):
                return (
                    isinstance(value, list)
                    and _count_within(len(value), len(value), c.min_items, c.max_items)
                    and all(self.accepts((side, item), v, depth + 1) for v in value)
                )
            case MapOf(value=inner):
                return isinstance(value, dict) and all(
                    self.accepts((side, inner), v, depth + 1) for v in value.values()
                )
            case Ref() | ObjectType():
                pass  # a named type, below
            case _:
                assert_never(shape)
        named = self.named(side, shape)
        match named:
            case AliasType(target=target):
                return self.accepts((side, target), value, depth + 1)
            case EnumType(open=True, base=base):
                return json_type(value) == base
            case EnumType(values=values):
                return any(_same_value(v.value, value) for v in values)
            case UnionType():
                return any(self.accepts((side, v.type), value, depth + 1) for v in named.members)
            case ObjectType():
                return self._object_accepts(side, named, value, depth)
        return False

    def _object_accepts(self, side: Side, obj: ObjectType, value: Any, depth: int) -> bool:
        if not isinstance(value, dict):
            return False
        fields = {f.wire_name: f for f in self.fields(side, obj)}
        for wire, f in fields.items():
            if wire not in value:
                if f.required:
                    return False
                continue
            if not self.accepts((side, _field_type(f)), value[wire], depth + 1):
                return False
        for wire, refused in self.reserved(side, obj).items():
            if wire in value and any(_same_value(r, value[wire]) for r in refused):
                return False
        return obj.extra == "allow" or all(k in fields for k in value)

    def samples(self, term: Term, depth: int = 0) -> Iterator[Any]:
        """Values built from the term's own shape (not all of them its values: :meth:`accepts` says)."""
        side, shape = term
        if depth > _DEPTH:
            return
        match shape:
            case Scalar():
                yield from _scalar_samples(shape)
                return
            case Const(value=value):
                yield value
                return
            case Nullable(inner=inner):
                yield None
                yield from self.samples((side, inner), depth + 1)
                return
            case AnyOf(members=members):
                for m in members:
                    yield from self.samples((side, m), depth + 1)
                return
            case ArrayOf(item=item, constraints=c):
                items = list(_first(self.samples((side, item), depth + 1), 3))
                yield []
                for v in items:
                    yield [v] * max(c.min_items or 1, 1)
                return
            case MapOf(value=inner):
                yield {}
                for v in _first(self.samples((side, inner), depth + 1), 3):
                    yield {"key": v}
                return
            case Ref() | ObjectType():
                pass  # a named type, below
            case _:
                assert_never(shape)
        named = self.named(side, shape)
        match named:
            case AliasType(target=target):
                yield from self.samples((side, target), depth + 1)
            case EnumType(open=True, base=base):
                yield from ("x", "") if base == "string" else (0, 1)
            case EnumType(values=values):
                yield from (v.value for v in values)
            case UnionType():
                for v in named.members:
                    yield from _first(self.samples((side, v.type), depth + 1), 6)
            case ObjectType():
                yield from self._object_samples(side, named, depth)
            case None:
                return

    def _object_samples(self, side: Side, obj: ObjectType, depth: int) -> Iterator[dict[str, Any]]:
        fields = self.fields(side, obj)
        base: dict[str, Any] = {}
        for f in fields:
            if f.required:
                found = list(_first(self.samples((side, _field_type(f)), depth + 1), 8))
                fit = [v for v in found if self.accepts((side, _field_type(f)), v)]
                if not (fit or found):
                    return
                base[f.wire_name] = (fit or found)[0]
        yield base
        for f in fields:
            for v in _first(self.samples((side, _field_type(f)), depth + 1), 4):
                yield {**base, f.wire_name: v}
        for f in fields:
            if f.required:
                yield {k: v for k, v in base.items() if k != f.wire_name}

    def witness(self, has: Term, lacks: Term) -> Any:
        """A value of ``has`` that ``lacks`` refuses, among the values built from ``has`` (or ABSENT)."""
        for value in _first(self.samples(has), _SAMPLES):
            if self.accepts(has, value) and not self.accepts(lacks, value):
                return value
        return ABSENT

    def overlap(self, side: Side, a: TypeExpr, b: TypeExpr) -> Any:
        """A value both ``a`` and ``b`` accept, among the values built from each (or ABSENT).

        Two objects are also tried merged (each one's properties: objects that
        take unlisted properties take the other's).
        """
        firsts = {m: list(_first(self.samples((side, m)), _SAMPLES)) for m in (a, b)}
        merged = [
            {**x, **y}
            for x in firsts[a][:4]
            for y in firsts[b][:4]
            if isinstance(x, dict) and isinstance(y, dict)
        ]
        for value in [*firsts[a], *firsts[b], *merged]:
            if self.accepts((side, a), value) and self.accepts((side, b), value):
                return value
        return ABSENT

    def disjoint(self, side: Side, a: TypeExpr, b: TypeExpr) -> bool:
        """Whether no value is both ``a``'s and ``b``'s (by JSON type, or a constant property apart)."""
        kinds_a, kinds_b = self.kinds((side, a)), self.kinds((side, b))
        if kinds_a is not None and kinds_b is not None:
            if "number" in kinds_a or "number" in kinds_b:
                kinds_a = {"number" if k == "integer" else k for k in kinds_a}
                kinds_b = {"number" if k == "integer" else k for k in kinds_b}
            if not kinds_a & kinds_b:
                return True
            if kinds_a == kinds_b == {"object"}:
                pins_a, pins_b = self.pins((side, a)), self.pins((side, b))
                return any(
                    wire in pins_b and not any(_same_value(x, y) for x in values for y in pins_b[wire])
                    for wire, values in pins_a.items()
                )
        return False

    def kinds(self, term: Term, depth: int = 0) -> set[str] | None:
        """The JSON types a term's values have (``None``: any)."""
        side, shape = term
        if depth > 32:
            return None
        match shape:
            case Scalar(type="any"):
                return None
            case Scalar(type=kind):
                return {kind}
            case Const(value=value):
                return {json_type(value)}
            case Nullable(inner=inner):
                inner_kinds = self.kinds((side, inner), depth + 1)
                return None if inner_kinds is None else inner_kinds | {"null"}
            case AnyOf(members=members):
                found: set[str] = set()
                for m in members:
                    kinds = self.kinds((side, m), depth + 1)
                    if kinds is None:
                        return None
                    found |= kinds
                return found
            case ArrayOf():
                return {"array"}
            case MapOf() | ObjectType():
                return {"object"}
            case Ref():
                pass  # a named type, below
            case _:
                assert_never(shape)
        named = self.named(side, shape)
        match named:
            case AliasType(target=target):
                return self.kinds((side, target), depth + 1)
            case EnumType(base=base):
                return {base}
            case UnionType():
                return self.kinds((side, AnyOf(tuple(v.type for v in named.members))), depth + 1)
            case ObjectType():
                return {"object"}
        return None

    def pins(self, term: Term, depth: int = 0) -> dict[str, list[JsonScalar]]:
        """The required properties every object of a term has a constant for, and those constants."""
        side, shape = term
        named = self.named(side, shape)
        if isinstance(named, ObjectType):
            return {
                f.wire_name: [f.type.value]
                for f in self.fields(side, named)
                if f.required and isinstance(f.type, Const)
            }
        if isinstance(named, AliasType) and depth < 32:
            return self.pins((side, named.target), depth + 1)
        if isinstance(named, UnionType) and depth < 32:
            found: dict[str, list[JsonScalar]] | None = None
            for v in named.members:
                pins = self.pins((side, v.type), depth + 1)
                found = pins if found is None else {w: found[w] + pins[w] for w in found if w in pins}
            return found or {}
        return {}


def _is_null(shape: Shape) -> bool:
    if isinstance(shape, Const):
        return shape.value is None
    return isinstance(shape, Scalar) and shape.type == "null"


def _first(values: Iterator[Any], count: int) -> Iterator[Any]:
    for i, value in enumerate(values):
        if i >= count:
            return
        yield value


# --- defaults --------------------------------------------------------------------------------------


def with_defaults(surface: ApiSurface, expr: TypeExpr, value: Any, depth: int = 0) -> Any:
    """``value`` as a receiver's models read it: every omitted field with a default filled, recursively.

    Only objects named by the expression (through aliases and ``null``) are filled; a value of a
    union is left as it is (which member reads it is the union's business).
    """
    if depth > 32 or value is ABSENT:
        return value
    match expr:
        case Nullable(inner=inner):
            return value if value is None else with_defaults(surface, inner, value, depth + 1)
        case ArrayOf(item=item) if isinstance(value, list):
            return [with_defaults(surface, item, v, depth + 1) for v in value]
        case MapOf(value=inner) if isinstance(value, dict):
            return {k: with_defaults(surface, inner, v, depth + 1) for k, v in value.items()}
        case Ref(name=name):
            named = surface.types.get(name)
            if isinstance(named, AliasType):
                return with_defaults(surface, named.target, value, depth + 1)
            if isinstance(named, ObjectType) and isinstance(value, dict):
                filled = dict(value)
                for f in surface.all_fields(name):
                    if f.wire_name in filled:
                        filled[f.wire_name] = with_defaults(surface, f.type, filled[f.wire_name], depth + 1)
                    elif f.has_default:
                        filled[f.wire_name] = with_defaults(surface, f.type, to_json(f.default), depth + 1)
                return filled
    return value


def same_json(a: Any, b: Any) -> bool:
    """Two JSON values are equal (numbers by value, ``true`` apart from ``1``)."""
    if a is ABSENT or b is ABSENT:
        return a is b
    return _same_value(a, b)
