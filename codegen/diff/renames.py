"""Renamed types: a type that vanished while one of the same wire shape appeared."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..schema.ir import (
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
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


def rename_refs(expr: TypeExpr, renames: Mapping[str, str]) -> TypeExpr:
    """``expr`` with every reference to an old name replaced by its new name."""
    if not renames:
        return expr
    if isinstance(expr, Ref):
        return Ref(renames.get(expr.name, expr.name))
    if isinstance(expr, ArrayOf):
        return ArrayOf(rename_refs(expr.item, renames), expr.constraints)
    if isinstance(expr, MapOf):
        return MapOf(rename_refs(expr.value, renames))
    if isinstance(expr, Nullable):
        return Nullable(rename_refs(expr.inner, renames))
    if isinstance(expr, AnyOf):
        return AnyOf(tuple(rename_refs(m, renames) for m in expr.members))
    return expr


def shape(named: NamedType, renames: Mapping[str, str]) -> Any:
    """What a type looks like on the wire, ignoring docs and names (a hashable value)."""
    if isinstance(named, ObjectType):
        fields = tuple(
            sorted(
                (
                    f.wire_name,
                    rename_refs(f.type, renames),
                    f.required,
                    f.nullable,
                    repr(f.default),
                    f.default_on_error,
                    f.skip_invalid_items,
                )
                for f in named.fields
            )
        )
        base = renames.get(named.base, named.base) if named.base else None
        return ("object", fields, base, named.extra, named.tag, named.reserved)
    if isinstance(named, UnionType):
        variants = frozenset((repr(v.tag), rename_refs(v.type, renames)) for v in named.variants)
        catch_all = rename_refs(named.catch_all.type, renames) if named.catch_all else None
        return ("union", named.tag_wire_name, variants, catch_all)
    if isinstance(named, EnumType):
        return ("enum", named.base, tuple(v.value for v in named.values), named.open)
    return ("alias", rename_refs(named.target, renames))


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
