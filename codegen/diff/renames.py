"""Renamed types: a type that vanished while one of the same wire shape appeared."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, assert_never

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
)
from .model import field_default, json_key


def rename_refs(expr: TypeExpr, renames: Mapping[str, str]) -> TypeExpr:
    """``expr`` with every reference to an old name replaced by its new name."""
    if not renames:
        return expr
    match expr:
        case Ref(name=name):
            return Ref(renames.get(name, name))
        case ArrayOf(item=item, constraints=constraints):
            return ArrayOf(rename_refs(item, renames), constraints)
        case MapOf(value=value):
            return MapOf(rename_refs(value, renames))
        case Nullable(inner=inner):
            return Nullable(rename_refs(inner, renames))
        case AnyOf(members=members):
            return AnyOf(tuple(rename_refs(m, renames) for m in members))
        case Scalar() | Const():
            return expr
        case _:
            assert_never(expr)


def shape(named: NamedType, renames: Mapping[str, str]) -> Any:
    """What a type looks like on the wire, ignoring docs and names (a hashable value)."""
    match named:
        case ObjectType():
            fields = tuple(
                sorted(
                    (
                        f.wire_name,
                        rename_refs(f.type, renames),
                        f.required,
                        f.nullable,
                        json_key(field_default(f)),
                        f.default_on_error,
                        f.skip_invalid_items,
                        f.default_on_null,
                    )
                    for f in named.fields
                )
            )
            base = renames.get(named.base, named.base) if named.base else None
            return ("object", fields, base, named.extra, named.tag, named.reserved)
        case UnionType():
            variants = frozenset((json_key(v.tag), rename_refs(v.type, renames)) for v in named.variants)
            catch_all = rename_refs(named.catch_all.type, renames) if named.catch_all else None
            return ("union", named.tag_wire_name, variants, catch_all)
        case EnumType():
            return ("enum", named.base, tuple(v.value for v in named.values), named.open)
        case AliasType():
            return ("alias", rename_refs(named.target, renames))
        case _:
            assert_never(named)


def detect_renames(old: ApiSurface, new: ApiSurface) -> dict[str, str]:
    """Old name -> new name for every type that vanished while one of the same shape appeared.

    A match must be one to one; references to types already matched count as
    equal, so renamed types that refer to each other are found too.  An alias
    of a bare scalar (an id such as ``McpConnectionId``) is never taken for a
    rename: every such alias has the same shape, so the match would be a guess.
    """
    removed = [n for n in old.types if n not in new.types and _renameable(old.types[n])]
    by_shape: dict[Any, list[str]] = {}  # the added types, by their shape (that no rename changes)
    for name, named in new.types.items():
        if name not in old.types and _renameable(named):
            by_shape.setdefault(shape(named, {}), []).append(name)
    renames: dict[str, str] = {}
    while removed and by_shape:
        candidates: dict[Any, list[str]] = {}
        for name in removed:
            candidates.setdefault(shape(old.types[name], renames), []).append(name)
        found: dict[str, str] = {}
        for key, olds in candidates.items():
            if len(olds) == 1 and len(by_shape.get(key, ())) == 1:
                found[olds[0]] = by_shape.pop(key)[0]
        if not found:
            break
        renames.update(found)
        removed = [n for n in removed if n not in found]
    return renames


def _renameable(named: NamedType) -> bool:
    return not (isinstance(named, AliasType) and isinstance(named.target, Scalar))
