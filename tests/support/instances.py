"""Example JSON instances of IR types, and validation against the real schema.

Instances are built from the IR and then checked with ``jsonschema``
(Draft 2020-12) against the upstream schema itself, so a test that uses one
knows it holds data the schema really accepts.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from jsonschema import Draft202012Validator

from codegen.schema.ir import (
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
    Const,
    EnumType,
    MapOf,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
    UnionType,
)
from tests.support.releases import release_files

_STRINGS = ("x", "USD", "abc", "2026-01-01T00:00:00Z")
_FORMATS = {"uri": "https://example.com/a", "date-time": "2026-01-01T00:00:00Z", "regex": "^a+$"}


def scalar_example(expr: Scalar) -> Any:
    c = expr.constraints
    if expr.type == "string":
        if c.format in _FORMATS:
            return _FORMATS[c.format]
        for candidate in _STRINGS:
            if c.pattern is None or re.fullmatch(c.pattern, candidate):
                return (
                    candidate * max(1, (c.min_length or 1) // len(candidate) + 1)
                    if c.min_length
                    else candidate
                )
        raise ValueError(f"no example string matches {c.pattern!r}")
    if expr.type == "integer":
        return int(c.minimum) if c.minimum is not None and c.minimum > 1 else 1
    if expr.type == "number":
        low = c.minimum if c.minimum is not None else 0.0
        high = c.maximum if c.maximum is not None else low + 2
        return (low + high) / 2
    if expr.type == "boolean":
        return True
    if expr.type == "null":
        return None
    return {"any": [1, "two"]}


def example(surface: ApiSurface, expr: TypeExpr, *, full: bool = True, depth: int = 0) -> Any:
    """A value of ``expr``; ``full`` also fills optional fields (down to a few levels)."""
    if isinstance(expr, Nullable):
        return example(surface, expr.inner, full=full, depth=depth)
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, Scalar):
        return scalar_example(expr)
    if isinstance(expr, ArrayOf):
        count = max(1, expr.constraints.min_items or 0)
        return [example(surface, expr.item, full=full, depth=depth + 1) for _ in range(count)]
    if isinstance(expr, MapOf):
        return {"key": example(surface, expr.value, full=full, depth=depth + 1)}
    if isinstance(expr, AnyOf):
        return example(surface, expr.members[0], full=full, depth=depth)
    assert isinstance(expr, Ref)
    found = surface.types[expr.name]
    if isinstance(found, ObjectType):
        return object_example(surface, found.name, full=full, depth=depth)
    if isinstance(found, UnionType):
        return example(surface, found.variants[0].type, full=full, depth=depth)
    if isinstance(found, EnumType):
        return found.values[0].value
    assert isinstance(found, AliasType)
    return example(surface, found.target, full=full, depth=depth)


def object_example(surface: ApiSurface, name: str, *, full: bool = True, depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in surface.all_fields(name):
        if field.required or (full and depth < 3):
            out[field.wire_name] = example(surface, field.type, full=full, depth=depth + 1)
    return out


@functools.cache
def _validator(release: str, unstable: bool, def_name: str) -> Draft202012Validator:
    defs = release_files(release).schema(unstable).data["$defs"]
    return Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{def_name}"})


def schema_errors(release: str, unstable: bool, def_name: str, instance: Any) -> list[str]:
    """What the upstream schema says is wrong with ``instance`` as a ``def_name`` (empty if valid)."""
    return [error.message for error in _validator(release, unstable, def_name).iter_errors(instance)]
