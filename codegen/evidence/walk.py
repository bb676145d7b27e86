"""Where in a message a refusal is, as the differ names schema locations, and whether a change is there.

A refusal's location is each validation error's ``loc``: property names and
item indexes, with the labels of union members mixed in.  Read against the
message itself it becomes a path into the message (labels are skipped: they
are not in the message).  Walking the IR of the side that generated the
message along that path gives the **places** it goes through, named the way
the differ names a change (:mod:`codegen.diff.compare`): a ``$defs`` type,
the members of it the message selects (by their tags, the catch-all, a
title), and the field the path takes in it, or the one the message lacks.
A class or union the builder derived from a member is its union's place,
and a union that repeats another (``mirrors``) is that one's too.

A change's **anchor** (:func:`anchor_of`) is its location in the same
terms; the change is *at* a refusal when one error of the refusal has a
place that matches it (:func:`at`): the same type, the change's members,
its field, the tag value or enum value it names, and, for a constraint,
the kind of error that keyword gives.  Nothing here reads an error's text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..diff import (
    FieldPart,
    InnerPart,
    KeywordPart,
    MemberPart,
    MessagePart,
    MethodPart,
    Part,
    TypePart,
    ValuePart,
)
from ..diff.wording import describe
from ..schema.builder.node import Pointer
from ..schema.ir import (
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
    Const,
    EnumType,
    JsonScalar,
    MapOf,
    NamedType,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
    UnionType,
    all_fields,
)
from ..schema.ir import Field as IrField

MemberKey = tuple[Any, ...]
"""How a union member is selected: ``("tag", value)``, ``("other",)``, ``("title", title)``, or
``("any",)`` for an untagged member known by its type (a message does not say which it is)."""
OTHER: MemberKey = ("other",)
ANY: MemberKey = ("any",)

EXCLUSIVITY = "oneOf"
"""The keyword an anchor names for a union that became exclusive or inclusive (the differ's path of
such a change ends at the union, or at its member, and names no keyword)."""

ERRORS_OF_KEYWORDS: Mapping[str, frozenset[str]] = {
    "minItems": frozenset({"too_short"}),
    "maxItems": frozenset({"too_long"}),
    "minLength": frozenset({"string_too_short"}),
    "maxLength": frozenset({"string_too_long"}),
    "pattern": frozenset({"string_pattern_mismatch"}),
    "minimum": frozenset({"greater_than_equal"}),
    "maximum": frozenset({"less_than_equal"}),
    "exclusiveMinimum": frozenset({"greater_than"}),
    "exclusiveMaximum": frozenset({"less_than"}),
    EXCLUSIVITY: frozenset(),
}
"""The pydantic error types a constraint keyword gives (a keyword not listed matches any error).

A value several members of a ``oneOf`` accept gives none: the models of a union take it as one of them
(pydantic tries the members and keeps one that accepts it), whether the schema writes ``oneOf`` or
``anyOf``; a refusal inside such a union is some member's own, which another change shows."""


@dataclass(frozen=True)
class Place:
    """A schema location a refusal's path goes through: the type, its members selected, the field taken.

    ``end`` says that the error is at this value or at one of its own
    fields; ``tag`` is the value of the union's tag in the message, and
    ``value`` the scalar there when the error is at it.
    """

    type: str
    members: tuple[MemberKey, ...] = ()
    field: str | None = None
    end: bool = False
    tag: JsonScalar = None
    value: Any = None


@dataclass(frozen=True)
class Anchor:
    """A change's location, as :class:`Place` names it (on the side that generates the messages).

    ``value`` is an enum value (``tag`` false) or a tag value a catch-all
    reserves (``tag`` true); ``whole`` asks for an error at the type's value
    itself (a change to the type as a whole: it became closed, another kind).
    """

    type: str
    members: tuple[MemberKey, ...] = ()
    field: str | None = None
    keyword: str | None = None
    value: JsonScalar = None
    has_value: bool = False
    tag: bool = False
    whole: bool = False


# --- a change's location ------------------------------------------------------------------------


def member_key(part: MemberPart) -> MemberKey:
    if part.other:
        return OTHER
    if part.title is not None:
        return ("title", part.title)
    if part.member is not None:
        return ("type", describe(part.member))
    return ("tag", part.value)


def anchor_of(path: tuple[Part, ...], type_name: str) -> Anchor:
    """The anchor of a path that starts at the type ``type_name`` (a :class:`TypePart`, or the params or
    result of a method): its members, the first field after them, a value, a keyword."""
    members: list[MemberKey] = []
    field: str | None = None
    keyword: str | None = None
    value: JsonScalar = None
    has_value = tag = False
    for part in path:
        match part:
            case MemberPart() if field is None:
                members.append(member_key(part))
            case FieldPart(name=name) if field is None:
                field = name
            case ValuePart(value=found) if field is None:
                value, has_value, tag = found, True, bool(members)
            case KeywordPart(name=name):
                keyword = name
            case TypePart() | MethodPart() | MessagePart() | InnerPart() | FieldPart() | MemberPart():
                pass
            case _:
                pass
    whole = field is None and not members and not has_value
    return Anchor(type_name, tuple(members), field, keyword, value, has_value, tag, whole)


def at(anchor: Anchor, places: Iterable[Place], error_type: str | None = None) -> bool:
    """Whether an error with these places (and this pydantic error type) is at the anchor."""
    if anchor.keyword is not None and error_type is not None:
        expected = ERRORS_OF_KEYWORDS.get(anchor.keyword)
        if expected is not None and error_type not in expected:
            return False
    return any(_matches(anchor, place) for place in places)


def _matches(anchor: Anchor, place: Place) -> bool:
    if place.type != anchor.type or not _prefix(anchor.members, place.members):
        return False
    if anchor.field is not None:
        return place.field == anchor.field
    if anchor.has_value:
        if anchor.tag:
            return place.tag == anchor.value
        return place.end and place.value == anchor.value and type(place.value) is type(anchor.value)
    if anchor.whole:
        return place.end
    return True


def _prefix(wanted: tuple[MemberKey, ...], found: tuple[MemberKey, ...]) -> bool:
    if len(wanted) > len(found):
        return False
    return all(w == f or ANY in (w, f) for w, f in zip(wanted, found, strict=False))


@dataclass(frozen=True)
class Label:
    """A step of an error's ``loc`` that is not in the message: the union member the validator tried
    (its class name, tag value or type, as pydantic shows it)."""

    text: str


Step = str | int | Label


def error_steps(instance: Any, loc: Iterable[Any]) -> tuple[list[Step], str | None]:
    """The steps of ``loc`` through ``instance`` (union members' labels kept as :class:`Label`), and the
    key it ends on that the message lacks."""
    steps: list[Step] = []
    current = instance
    missing: str | None = None
    elements = list(loc)
    for index, element in enumerate(elements):
        in_object = isinstance(current, dict) and isinstance(element, str) and element in current
        in_array = isinstance(current, list) and isinstance(element, int) and 0 <= element < len(current)
        if in_object or in_array:
            steps.append(element)
            current = current[element]
        elif index == len(elements) - 1 and isinstance(current, dict) and isinstance(element, str):
            missing = element  # the property the message lacks
        else:
            steps.append(Label(str(element)))
    return steps, missing


# --- a refusal's places ----------------------------------------------------------------------------


def message_path(instance: Any, loc: Iterable[Any]) -> tuple[list[str | int], str | None]:
    """The steps of ``loc`` that are in ``instance``, and the key it ends on that the message lacks."""
    steps, missing = error_steps(instance, loc)
    return [step for step in steps if not isinstance(step, Label)], missing


@dataclass
class _Frame:
    """A schema location the value being walked belongs to, and the members of it selected so far."""

    type: str
    members: tuple[MemberKey, ...] = ()
    tag: JsonScalar = None


class _Walk:
    def __init__(self, surface: ApiSurface, missing: str | None) -> None:
        self.surface = surface
        self.missing = missing
        self.found: set[Place] = set()

    def named(
        self, named: NamedType, value: Any, steps: list[Step], frames: list[_Frame], depth: int
    ) -> None:
        if depth > 200:
            return
        derived = isinstance(named, (ObjectType, UnionType)) and named.origin is not None
        if not derived or not frames:
            frames = [*frames, _Frame(named.name)]
        match named:
            case ObjectType():
                self.object(named, value, steps, frames, depth)
            case UnionType():
                self.union(named, value, steps, frames, depth)
            case AliasType():
                self.expr(named.target, value, steps, frames, depth + 1)
            case EnumType():
                self.end(frames, value)

    def end(self, frames: list[_Frame], value: Any, field: str | None = None) -> None:
        scalar = value if isinstance(value, (str, int, float, bool)) or value is None else None
        for frame in frames:
            self.found.add(Place(frame.type, frame.members, field, True, frame.tag, scalar))

    def object(
        self, named: ObjectType, value: Any, steps: list[Step], frames: list[_Frame], depth: int
    ) -> None:
        if not isinstance(value, dict):
            return
        steps = _unlabelled(steps)
        if not steps:
            self.end(frames, None, self.missing)
            return
        key = steps[0]
        if not isinstance(key, str):
            return
        last = not any(not isinstance(step, Label) for step in steps[1:])
        for frame in frames:
            self.found.add(Place(frame.type, frame.members, key, last, frame.tag))
        fields = {f.wire_name: f for f in all_fields(self.surface.types, named.name)}
        if key in fields:
            self.expr(fields[key].type, value[key], steps[1:], [], depth + 1)

    def union(
        self, named: UnionType, value: Any, steps: list[Step], frames: list[_Frame], depth: int
    ) -> None:
        label = steps[0].text if steps and isinstance(steps[0], Label) else None
        steps = steps[1:] if label is not None else steps
        if not steps:
            self.end(frames, value, self.missing)
        for key, tag, member in _selected(self.surface, named, value, label):
            inner = [_Frame(f.type, f.members, f.tag) for f in frames]
            inner[-1].members = (*inner[-1].members, key)
            if named.tag_wire_name is not None:
                inner[-1].tag = tag
            if not steps:
                self.end(inner, value, self.missing)
            target = self.surface.types.get(member.name) if isinstance(member, Ref) else None
            if isinstance(target, UnionType) and target.mirrors is not None:
                mirrored = self.surface.types.get(target.mirrors)
                if mirrored is not None:  # the value is the mirrored union's too
                    self.named(mirrored, value, steps, inner, depth + 1)
            self.expr(member, value, steps, inner, depth + 1)

    def expr(self, expr: TypeExpr, value: Any, steps: list[Step], frames: list[_Frame], depth: int) -> None:
        if not isinstance(expr, Ref):
            steps = _unlabelled(steps)
        match expr:
            case Ref(name=name):
                named = self.surface.types.get(name)
                if named is not None:
                    self.named(named, value, steps, frames, depth)
            case Nullable(inner=inner):
                if value is not None:
                    self.expr(inner, value, steps, frames, depth)
            case AnyOf(members=members):
                for member in members:
                    if _fits(self.surface, member, value):
                        self.expr(member, value, steps, frames, depth)
            case ArrayOf(item=item):
                if steps and isinstance(steps[0], int) and isinstance(value, list):
                    self.expr(item, value[steps[0]], steps[1:], [], depth)
            case MapOf(value=inner):
                if steps and isinstance(steps[0], str) and isinstance(value, dict):
                    self.expr(inner, value[steps[0]], steps[1:], [], depth)
            case Scalar() | Const():
                pass


def _unlabelled(steps: list[Step]) -> list[Step]:
    """``steps`` without the labels at their head (members of a union that is not a named one)."""
    while steps and isinstance(steps[0], Label):
        steps = steps[1:]
    return steps


def _selected(
    surface: ApiSurface, union: UnionType, value: Any, label: str | None = None
) -> Iterator[tuple[MemberKey, JsonScalar, TypeExpr]]:
    """The members a value may be of, each with its key and the tag value the message gives.

    ``label`` is the member the error's ``loc`` names (its class, tag or type), when it names one.
    """
    tag = value.get(union.tag_wire_name or "") if union.tagged and isinstance(value, dict) else None
    if label is not None:
        named = [v for v in union.members if _labelled(v.type, v.tag, label)]
        if named:
            for v in named:
                yield _key(surface, union, v.type, v.tag, v is union.catch_all), tag, v.type
            return
    if union.tagged:
        picked = [v for v in union.variants if v.tag == tag]
        if picked:
            yield from ((("tag", v.tag), tag, v.type) for v in picked)
            return
        if union.catch_all is not None and tag is not None:
            yield OTHER, tag, union.catch_all.type
            return
    for variant in union.members:
        if _fits(surface, variant.type, value):
            key = _key(surface, union, variant.type, variant.tag, variant is union.catch_all)
            yield key, None, variant.type


def _labelled(member: TypeExpr, tag: JsonScalar, label: str) -> bool:
    """Whether pydantic's label for a union member names this one (its class, its tag, its type)."""
    if isinstance(member, Ref):
        return member.name == label
    return (tag is not None and str(tag) == label) or describe(member) == label


def _key(surface: ApiSurface, union: UnionType, member: TypeExpr, tag: JsonScalar, other: bool) -> MemberKey:
    """How the differ names a member: by its tag, as the catch-all, by its title, or (untagged) by type."""
    if other:
        return OTHER
    if union.tagged:
        return ("tag", tag)
    named = surface.types.get(member.name) if isinstance(member, Ref) else None
    if isinstance(named, (ObjectType, UnionType)) and named.origin is not None and named.origin.label:
        return ("title", named.origin.label)
    return ANY if isinstance(member, Ref) else ("type", describe(member))


def _fits(surface: ApiSurface, expr: TypeExpr, value: Any) -> bool:
    """Whether ``value`` could be of ``expr`` by its JSON kind (for untagged unions, a cheap guess)."""
    match expr:
        case Ref(name=name):
            named = surface.types.get(name)
            if isinstance(named, ObjectType):
                return isinstance(value, dict)
            if isinstance(named, EnumType):
                return isinstance(value, (str, int)) and not isinstance(value, bool)
            return True
        case ArrayOf():
            return isinstance(value, list)
        case MapOf():
            return isinstance(value, dict)
        case Nullable(inner=inner):
            return value is None or _fits(surface, inner, value)
        case AnyOf(members=members):
            return any(_fits(surface, m, value) for m in members)
        case Scalar() | Const():
            return True
    return True


def places(
    surface: ApiSurface, root: NamedType, instance: Any, steps: list[Step], missing: str | None
) -> set[Place]:
    """Every schema location on the way from ``root`` along ``steps`` in ``instance``."""
    walk = _Walk(surface, missing)
    walk.named(root, instance, steps, [], 0)
    return walk.found


def _discriminator(shown: Any) -> str | None:
    """The tag property a ``union_tag_not_found`` error names (``'type'``, or ``type()`` for a callable)."""
    if not isinstance(shown, str):
        return None
    name = shown.removesuffix("()").strip("'\"")
    return name or None


@dataclass(frozen=True)
class Located:
    """One error of a refusal: its type, its place in the message (``loc``), the places it goes through."""

    type: str
    loc: tuple[Any, ...]
    message: str
    places: frozenset[Place]

    def line(self) -> str:
        """The error in one line: where, and what (as the validator says it)."""
        where = ".".join(str(part) for part in self.loc) or "(root)"
        return f"{where}: {self.message}"[:200]


def located_errors(surface: ApiSurface, root: NamedType, instance: Any, error: Any) -> tuple[Located, ...]:
    """Each error of a pydantic ``ValidationError`` with its places (another error: the whole root)."""
    try:
        details = error.errors()
    except AttributeError:
        whole = frozenset({Place(root.name, end=True)})
        return (Located(type(error).__name__, (), str(error).splitlines()[0] if str(error) else "", whole),)
    found: list[Located] = []
    for detail in details:
        loc = tuple(detail.get("loc", ()))
        steps, missing = error_steps(instance, loc)
        if detail.get("type") == "union_tag_not_found":
            missing = _discriminator(detail.get("ctx", {}).get("discriminator")) or missing
        where = places(surface, root, instance, steps, missing) or {Place(root.name, end=True)}
        found.append(Located(str(detail.get("type", "")), loc, str(detail.get("msg", "")), frozenset(where)))
    return tuple(found)


# --- where the reading side's models swallow what a whole message carries --------------------------


def carried_leniently(
    source: ApiSurface, target: ApiSurface, top: NamedType, other: NamedType, root: str
) -> bool:
    """Whether every place a ``top`` message (of ``source``) can hold a value of ``$defs[root]`` is one
    that ``other``'s models (of ``target``) read leniently: inside a field read with
    ``x-deserialize-default-on-error`` (a value it refuses is read as omitted), inside an item of a
    list read with ``x-deserialize-skip-invalid-items`` (an item it refuses is dropped), or inside a
    union without a tag one of whose members takes every value there (an envelope's result, whose
    ``ExtResponse`` takes any: the union takes what one member takes).

    Then no ``top`` message is refused anywhere inside such a value: an error there never leaves the
    field or the item, so a change of ``root`` cannot be shown by any ``top`` message, whatever it is
    (``NewSessionResponse.configOptions`` skips an invalid ``SessionConfigOption``: a
    ``SessionConfigSelectOptions`` refused alone is not refused there).  The two sides are walked
    together along the same message (the same field names, list items, map values, union members by
    their tag); where the reading side's shape is not known to match, every place below it counts as
    read strictly, so the answer is ``True`` only when it is sure.
    """
    seen: set[tuple[str, str | None]] = set()

    def holds_root(named: NamedType) -> bool:
        """Whether a value of ``named`` is one of ``root`` (or of a member of it, or of a class that
        builds on it): where the places of a refusal would name ``root``."""
        origin = getattr(named, "origin", None)
        if (
            _schema_name(source, named.name) == root
            or named.schema_name == root
            or (origin is not None and _schema_name(source, origin.union) == root)
            or (isinstance(named, UnionType) and _schema_name(source, named.mirrors) == root)
        ):
            return True
        base = source.types.get(named.base) if isinstance(named, ObjectType) and named.base else None
        return base is not None and holds_root(base)

    def named_reaches(mine: NamedType, theirs: NamedType | None) -> bool:
        """Whether a value of ``mine`` (read as ``theirs``; ``None``: not known) can hold ``root``
        somewhere read strictly."""
        key = (mine.name, theirs.name if theirs is not None else None)
        if key in seen:
            return False
        seen.add(key)
        if holds_root(mine):
            return True
        match mine:
            case ObjectType() | UnionType():
                if _fields_reach(mine, theirs):
                    return True
                if isinstance(mine, UnionType):
                    return any(
                        expr_reaches(v.type, _member(theirs, v) if theirs is not None else None)
                        for v in mine.members
                    )
                return False
            case AliasType():
                return expr_reaches(mine.target, theirs.target if isinstance(theirs, AliasType) else None)
        return False

    def _fields_reach(mine: ObjectType | UnionType, theirs: NamedType | None) -> bool:
        own = all_fields(source.types, mine.name) if isinstance(mine, ObjectType) else mine.fields
        read: dict[str, IrField] = {}
        if isinstance(theirs, ObjectType):
            read = {f.wire_name: f for f in all_fields(target.types, theirs.name)}
        elif isinstance(theirs, UnionType):
            read = {f.wire_name: f for f in theirs.fields}
        for f in own:
            reading = read.get(f.wire_name)
            if reading is not None and reading.default_on_error:
                continue  # whatever is inside is read as omitted when refused
            skipped = reading is not None and reading.skip_invalid_items
            if expr_reaches(f.type, reading.type if reading is not None else None, skipped):
                return True
        return False

    def expr_reaches(mine: TypeExpr, theirs: TypeExpr | None, skipped: bool = False) -> bool:
        match mine:
            case Ref(name=name):
                named = source.types.get(name)
                if named is None:
                    return False
                other_named = target.types.get(theirs.name) if isinstance(theirs, Ref) else None
                return named_reaches(named, other_named)
            case Nullable(inner=inner):
                return expr_reaches(inner, theirs.inner if isinstance(theirs, Nullable) else theirs, skipped)
            case ArrayOf(item=item):
                if isinstance(theirs, ArrayOf) and skipped:
                    return False  # an item refused is dropped
                return expr_reaches(item, theirs.item if isinstance(theirs, ArrayOf) else None)
            case MapOf(value=value):
                return expr_reaches(value, theirs.value if isinstance(theirs, MapOf) else None)
            case AnyOf(members=members):
                if isinstance(theirs, AnyOf) and takes_every(theirs.members, members):
                    return False  # a member of the reading side's takes every value sent there
                return any(expr_reaches(m, None) for m in members)
        return False

    def takes_every(reading: tuple[TypeExpr, ...], sent: tuple[TypeExpr, ...]) -> bool:
        """Whether one of the ``reading`` members takes every value of the ``sent`` ones, with no error
        inside it: it takes any JSON value, or any JSON object where each sent member is an object.
        pydantic's union (one without a tag) then takes every such value, whatever is inside it."""
        if any(_any_value(target, m) for m in reading):
            return True
        sent_objects = all(
            isinstance(m, Ref) and m.name in source.types and objects_only(source, source.unaliased(m.name))
            for m in sent
        )
        return sent_objects and any(
            isinstance(m, Ref)
            and m.name in target.types
            and isinstance(found := target.unaliased(m.name), ObjectType)
            and takes_any_object(target, found)
            for m in reading
        )

    return not named_reaches(top, other)


def objects_only(surface: ApiSurface, named: NamedType) -> bool:
    """Whether every value of ``named`` is a JSON object: an object type, or a union of object types."""
    if isinstance(named, ObjectType):
        return True
    if isinstance(named, UnionType):
        return all(
            isinstance(member.type, Ref)
            and member.type.name in surface.types
            and isinstance(surface.unaliased(member.type.name), ObjectType)
            for member in named.members
        )
    return False


def takes_any_object(surface: ApiSurface, named: ObjectType) -> bool:
    """Whether the models of ``named`` accept every JSON object, with no error at it or at one of its
    fields: open to extra keys, no tag it pins or reserves, and every field (its own and inherited)
    optional and either lenient (an invalid value read as omitted) or of any JSON value."""
    lineage = surface.lineage(named.name)
    return all(o.extra == "allow" and o.tag is None and o.reserved is None for o in lineage) and all(
        not f.required and (f.default_on_error or f.type == Scalar("any"))
        for f in surface.all_fields(named.name)
    )


def _any_value(surface: ApiSurface, expr: TypeExpr) -> bool:
    """Whether ``expr`` is any JSON value: ``Scalar("any")``, or a named alias of it."""
    if isinstance(expr, Ref) and expr.name in surface.types:
        named = surface.unaliased(expr.name)
        return isinstance(named, AliasType) and named.target == Scalar("any")
    return expr == Scalar("any")


def _schema_name(surface: ApiSurface, name: str | None) -> str | None:
    named = surface.types.get(name) if name is not None else None
    if named is None:
        return None
    return Pointer.parse(named.pointer).defs_entry if named.pointer else named.schema_name


def _member(theirs: NamedType, variant: Any) -> TypeExpr | None:
    """The member of the reading side's union that reads a message of ``variant``: by its tag, or, in a
    union without one, by its title (``None``: neither, or not a union).

    A union without a tag takes a value if any of its members does, so the member of the same title
    reading it without a refusal is enough for the union to: the walk asks no more of it."""
    if not isinstance(theirs, UnionType):
        return None
    if variant.tag is not None:
        found = next((v for v in theirs.variants if v.tag == variant.tag), None)
    elif theirs.tag_wire_name is None and variant.title:
        titled = [v for v in theirs.variants if v.tag is None and v.title == variant.title]
        found = titled[0] if len(titled) == 1 else None
    else:
        found = None
    return found.type if found is not None else None
