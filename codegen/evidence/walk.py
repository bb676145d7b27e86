"""Where in a message a refusal is, as the IR names it: the types and fields on the way to it.

A refusal's location is the validation error's ``loc``: property names and
item indexes, with the labels of union members mixed in.  Read against the
message itself it becomes a path into the message (labels are skipped: they
are not in the message).  Walking the IR of the side that generated the
message along that path gives every named type the path goes through and the
field it takes in each (:func:`places`); a change explains the refusal when
it is about one of them (:func:`explains`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..schema.ir import (
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
    all_fields,
)

Place = tuple[str, str | None]
"""A named type and the field (wire name) the path takes in it (``None``: the type itself)."""


def message_path(instance: Any, loc: Iterable[Any]) -> tuple[list[str | int], str | None]:
    """The steps of ``loc`` that are in ``instance``, and the key it ends on that the message lacks."""
    steps: list[str | int] = []
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
            missing = element  # the property the message lacks (other strings are members' labels)
    return steps, missing


def _fits(surface: ApiSurface, expr: TypeExpr, value: Any) -> bool:
    """Whether ``value`` could be of ``expr`` by its JSON kind (for untagged unions, a cheap guess)."""
    match expr:
        case Ref(name=name):
            named = surface.types.get(name)
            if isinstance(named, (ObjectType,)):
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
    surface: ApiSurface, root: NamedType, instance: Any, steps: list[str | int], missing: str | None
) -> set[Place]:
    """Every named type on the way from ``root`` along ``steps`` in ``instance``, and the field taken."""
    found: set[Place] = set()
    _named(surface, root, instance, steps, missing, found, 0)
    return found


def _named(
    surface: ApiSurface,
    named: NamedType,
    value: Any,
    steps: list[str | int],
    missing: str | None,
    found: set[Place],
    depth: int,
) -> None:
    if depth > 200:
        return
    found.add((named.name, None))
    match named:
        case ObjectType():
            fields = {f.wire_name: f for f in all_fields(surface.types, named.name)}
            if steps and isinstance(steps[0], str) and isinstance(value, dict):
                key = steps[0]
                found.add((named.name, key))
                if key in fields:
                    _expr(surface, fields[key].type, value[key], steps[1:], missing, found, depth + 1)
            elif not steps and missing is not None:
                found.add((named.name, missing))
        case UnionType():
            if not steps and missing is not None and missing == named.tag_wire_name:
                found.add((named.name, missing))
            for member in _members(named, value):
                _expr(surface, member, value, steps, missing, found, depth + 1)
        case AliasType():
            _expr(surface, named.target, value, steps, missing, found, depth + 1)
        case EnumType():
            pass


def _members(union: UnionType, value: Any) -> Iterator[TypeExpr]:
    """The members a value may be of: by its tag, or every one for an untagged union."""
    if union.tagged and isinstance(value, dict):
        tag = value.get(union.tag_wire_name or "")
        picked = [v for v in union.variants if v.tag == tag]
        if picked:
            yield from (v.type for v in picked)
            return
        if union.catch_all is not None:
            yield union.catch_all.type
            return
    yield from (v.type for v in union.members)


def _expr(
    surface: ApiSurface,
    expr: TypeExpr,
    value: Any,
    steps: list[str | int],
    missing: str | None,
    found: set[Place],
    depth: int,
) -> None:
    match expr:
        case Ref(name=name):
            named = surface.types.get(name)
            if named is not None:
                _named(surface, named, value, steps, missing, found, depth)
        case Nullable(inner=inner):
            if value is not None:
                _expr(surface, inner, value, steps, missing, found, depth)
        case AnyOf(members=members):
            for member in members:
                if _fits(surface, member, value):
                    _expr(surface, member, value, steps, missing, found, depth)
        case ArrayOf(item=item):
            if steps and isinstance(steps[0], int) and isinstance(value, list):
                _expr(surface, item, value[steps[0]], steps[1:], missing, found, depth)
        case MapOf(value=inner):
            if steps and isinstance(steps[0], str) and isinstance(value, dict):
                _expr(surface, inner, value[steps[0]], steps[1:], missing, found, depth)
        case Scalar() | Const():
            pass


def _discriminator(shown: Any) -> str | None:
    """The tag property a ``union_tag_not_found`` error names (``'type'``, or ``type()`` for a callable)."""
    if not isinstance(shown, str):
        return None
    name = shown.removesuffix("()").strip("'\"")
    return name or None


def error_places(surface: ApiSurface, root: NamedType, instance: Any, error: Any) -> set[Place]:
    """The places of every error of a pydantic ``ValidationError`` (the whole root for another error)."""
    try:
        details = error.errors()
    except AttributeError:
        return {(root.name, None)}
    found: set[Place] = set()
    for detail in details:
        steps, missing = message_path(instance, detail.get("loc", ()))
        if detail.get("type") == "union_tag_not_found":
            missing = _discriminator(detail.get("ctx", {}).get("discriminator")) or missing
        found |= places(surface, root, instance, steps, missing)
    return found or {(root.name, None)}
