"""The models are exactly as strict as the schema: no value is coerced, in Python or in JSON mode.

pydantic's lax mode would take ``"2"`` and ``true`` for an integer and ``"true"``,
``1`` and ``"yes"`` for a boolean; JSON Schema refuses all of them.  ``2.0`` is an
integer in JSON Schema, so it is accepted (as ``2``).  The leniency keywords keep
their fallback: a value of the wrong type in a lenient field is treated as omitted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from codegen.emit.normalise import _default
from codegen.schema.ir import (
    AliasType,
    ApiSurface,
    ArrayOf,
    Field,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
)
from tests.support.instances import object_example, schema_errors
from tests.support.releases import SURFACES, package_of, surface_id, surface_of

MODES = ("python", "json")

# Values a lax reader converts to each JSON Schema type, none of which JSON Schema accepts.
LAX: dict[str, list[Any]] = {
    "boolean": ["true", "yes", 1, 0, 1.0],
    "integer": ["2", True, 2.5],
    "number": ["1.5", True],
    "string": [1, 1.5, True],
}


def accepts(model: Any, value: Any, mode: str) -> bool:
    adapter = model if isinstance(model, TypeAdapter) else TypeAdapter(model)
    try:
        if mode == "python":
            adapter.validate_python(value)
        else:
            adapter.validate_json(json.dumps(value))
    except ValidationError:
        return False
    return True


def wire(model: BaseModel) -> Any:
    return model.model_dump(by_alias=True, exclude_unset=True, mode="json")


# --- the examples, on every release ---------------------------------------------

EXAMPLES: list[tuple[str, str, list[Any]]] = [
    ("InitializeRequest", "protocolVersion", ["2", True, 2.5, None, 2.0, 2, 1]),
    ("SessionConfigBoolean", "currentValue", ["true", 1, "yes", 1.0, None, True, False]),
]


@pytest.mark.parametrize("which", SURFACES, ids=surface_id)
def test_the_models_read_the_examples_as_json_schema_does(which: tuple[str, bool]) -> None:
    release, unstable = which
    surface, package = surface_of(release, unstable), package_of(release, unstable)
    checked = 0
    for schema_name, wire_name, values in EXAMPLES:
        found = surface.by_schema_name(schema_name)
        if found is None:
            continue
        model = getattr(package.schema, found.name)
        base = object_example(surface, found.name, full=False)
        for value in values:
            instance = {**base, wire_name: value}
            valid = not schema_errors(release, unstable, schema_name, instance)
            for mode in MODES:
                assert accepts(model, instance, mode) is valid, (schema_name, value, mode)
            checked += 1
    assert checked >= len(EXAMPLES[0][2])  # every release has InitializeRequest


def test_an_integral_float_is_the_integer_it_spells() -> None:
    schema = package_of("2.0.0-alpha.8", False).schema
    info = {"name": "c", "version": "1"}
    for parsed in (
        schema.InitializeRequest.model_validate({"protocolVersion": 2.0, "info": info}),
        schema.InitializeRequest.model_validate_json(json.dumps({"protocolVersion": 2.0, "info": info})),
    ):
        assert parsed.protocol_version == 2 and type(parsed.protocol_version) is int
        assert wire(parsed)["protocolVersion"] == 2


SCALAR_FIELDS: list[tuple[str, str, str, list[Any]]] = [
    # type, wire name, its JSON type, values JSON Schema accepts
    ("InitializeRequest", "protocolVersion", "integer", [0, 2, 2.0, 65535]),
    ("SessionConfigBoolean", "currentValue", "boolean", [True, False]),
    ("Cost", "amount", "number", [1, 1.5, -0.25]),
    ("Implementation", "name", "string", ["agent", "", "1", "true"]),
]


@pytest.mark.parametrize(("name", "field", "kind", "good"), SCALAR_FIELDS, ids=[f[2] for f in SCALAR_FIELDS])
def test_each_scalar_type_refuses_every_other_json_type(
    name: str, field: str, kind: str, good: list[Any]
) -> None:
    release = "2.0.0-alpha.8"
    surface, package = surface_of(release, False), package_of(release, False)
    model = getattr(package.schema, name)
    base = object_example(surface, name, full=False)
    others = {
        "string": "x",
        "integer": 3,
        "number": 3.5,
        "boolean": True,
        "null": None,
        "array": [],
        "object": {},
    }
    if kind == "number":
        del others["integer"]  # an integer is a number
    bad = [value for json_type, value in others.items() if json_type != kind] + LAX[kind]
    for mode in MODES:
        for value in good:
            assert accepts(model, {**base, field: value}, mode), (value, mode)
        for value in bad:
            assert not accepts(model, {**base, field: value}, mode), (value, mode)
        assert not any(schema_errors(release, False, name, {**base, field: value}) for value in good)
        assert all(schema_errors(release, False, name, {**base, field: value}) for value in bad)


def test_building_in_python_is_as_strict_as_validating() -> None:
    schema = package_of("2.0.0-alpha.8", False).schema
    with pytest.raises(ValidationError):
        schema.SessionConfigBoolean(current_value="true")
    with pytest.raises(ValidationError):
        schema.Cost(amount="1.5", currency="EUR")
    assert schema.Cost(amount=1, currency="EUR").amount == 1.0


def test_a_type_alias_is_strict_on_its_own_too() -> None:
    """An alias is also validated outside any model (no model config applies there)."""
    schema = package_of("2.0.0-alpha.8", False).schema
    for mode in MODES:
        assert not accepts(schema.SessionId, 5, mode)
        assert not accepts(schema.ProtocolVersion, "2", mode)
        assert not accepts(schema.ProtocolVersion, True, mode)
        assert accepts(schema.ProtocolVersion, 2.0, mode)
        assert not accepts(schema.RequestId, True, mode)
        assert not accepts(schema.RequestId, 1.5, mode)
        assert not accepts(schema.ErrorCode, "-32700", mode)
        assert not accepts(schema.ErrorCode, True, mode)
        for value in ("x", 3, 3.5, True, ["a"]):
            assert TypeAdapter(schema.ElicitationContentValue).validate_python(value) == value
        assert not accepts(schema.ElicitationContentValue, ["a", 1], mode)
        assert not accepts(schema.ElicitationContentValue, None, mode)


# --- leniency keeps its fallback ----------------------------------------------------------


def object_fields(surface: ApiSurface) -> Iterator[tuple[ObjectType, Field]]:
    """Every field of every object type of ``surface``, with its type."""
    for obj in surface.types.values():
        if isinstance(obj, ObjectType):
            for field in obj.fields:
                yield obj, field


def scalar_kind(surface: ApiSurface, expr: TypeExpr) -> str | None:
    """The JSON type of a (nullable, aliased) scalar, else ``None``."""
    inner = expr.inner if isinstance(expr, Nullable) else expr
    if isinstance(inner, Ref):
        found = surface.types[inner.name]
        return scalar_kind(surface, found.target) if isinstance(found, AliasType) else None
    if isinstance(inner, Scalar) and inner.type in LAX:
        return inner.type
    return None


def test_a_lax_value_in_a_default_on_error_field_falls_back_to_the_default(
    surface_and_package: tuple[ApiSurface, ModuleType],
) -> None:
    surface, package = surface_and_package
    release, unstable = surface.release, surface.stability == "unstable"
    checked = 0
    for obj, field in object_fields(surface):
        kind = scalar_kind(surface, field.type)
        if not field.default_on_error or field.required or kind is None:
            continue
        model = getattr(package.schema, obj.name)
        base = object_example(surface, obj.name, full=False)
        for value in LAX[kind]:
            instance = {**base, field.wire_name: value}
            if obj.schema_name:
                assert schema_errors(release, unstable, obj.schema_name, instance), (obj.name, value)
            for parsed in (
                model.model_validate(instance),
                model.model_validate_json(json.dumps(instance)),
            ):
                assert field.py_name not in parsed.model_fields_set, (obj.name, field.wire_name, value)
                assert field.wire_name not in wire(parsed)
            checked += 1
    assert checked > 20


def test_lax_items_of_a_skip_invalid_items_list_are_dropped() -> None:
    checked = 0
    for release, unstable in SURFACES:
        surface, package = surface_of(release, unstable), package_of(release, unstable)
        for obj, field in object_fields(surface):
            inner = field.type.inner if isinstance(field.type, Nullable) else field.type
            if not (field.skip_invalid_items and isinstance(inner, ArrayOf)):
                continue
            kind = scalar_kind(surface, inner.item)
            if kind is None:
                continue
            good = {"boolean": True, "integer": 3, "number": 1.5, "string": "s"}[kind]
            model = getattr(package.schema, obj.name)
            base = object_example(surface, obj.name, full=False)
            instance = {**base, field.wire_name: [good, *LAX[kind]]}
            assert wire(model.model_validate(instance))[field.wire_name] == [good], (obj.name, field)
            assert wire(model.model_validate_json(json.dumps(instance)))[field.wire_name] == [good]
            checked += 1
    assert checked > 10


def test_null_is_refused_where_none_only_stands_for_omitted() -> None:
    """A field the schema does not let be null is ``X | None = None`` in Python: None means omitted."""
    checked = 0
    for release, unstable in SURFACES:
        surface, package = surface_of(release, unstable), package_of(release, unstable)
        for obj, field in object_fields(surface):
            if field.required or not _default(surface, field)[1]:
                continue
            model = getattr(package.schema, obj.name)
            instance = {**object_example(surface, obj.name, full=False), field.wire_name: None}
            assert schema_errors(release, unstable, obj.schema_name or obj.name, instance)
            for mode in MODES:
                if not field.default_on_error:
                    assert not accepts(model, instance, mode), (obj.name, field.wire_name)
                    continue
                parsed = (
                    model.model_validate(instance)
                    if mode == "python"
                    else model.model_validate_json(json.dumps(instance))
                )
                assert field.py_name not in parsed.model_fields_set, (obj.name, field.wire_name)
                assert field.wire_name not in wire(parsed)
            checked += 1
    assert checked >= 2  # v1's ToolCall.kind and status
