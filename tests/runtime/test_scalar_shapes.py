"""Generated models of scalar shapes no release uses yet agree with their JSON Schema, value by value.

Each ``$defs`` entry of ``DEFS`` is checked on values that JSON Schema (Draft
2020-12) accepts and rejects: the generated model must accept and reject the
same ones, and dump what it accepted unchanged.  ``LOOSE`` holds the shapes the
models accept more of than the schema; they generate with one warning each,
and the tests pin what exactly they let through.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter, ValidationError

from codegen.diagnostics import collecting
from tests.support.schemas import obj, package, surface

DEFS: dict[str, Any] = {
    "Mixed": {"oneOf": [{"const": "auto"}, {"const": 0}]},
    "NameOrCount": {"oneOf": [{"const": "all"}, {"type": "integer"}]},
    "Holder": obj(
        {
            "mode": {"type": ["string", "null"], "enum": ["a", "b", None]},
            "nothing": {"type": "object", "additionalProperties": False},
        },
        ["mode"],
    ),
    # a union member's own constraints, as the models enforce them
    "ShortOrAuto": {"oneOf": [{"const": "auto"}, {"type": "string", "maxLength": 3}]},
    "Options": {
        "anyOf": [
            {"title": "Flat", "type": "array", "items": {"type": "string"}, "minItems": 1},
            {
                "title": "Pairs",
                "type": "array",
                "items": {"type": "integer", "minimum": 0},
                "minItems": 1,
                "maxItems": 2,
            },
        ]
    },
    "SmallOrWord": obj({"v": {"type": ["integer", "string"], "minimum": 1, "maxLength": 4}}, ["v"]),
    "Codes": obj({"c": {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]+$"}}}, ["c"]),
}

CASES: list[tuple[str, Any, bool]] = [
    ("Mixed", "auto", True),
    ("Mixed", 0, True),
    ("Mixed", 1, False),
    ("Mixed", "0", False),
    ("NameOrCount", "all", True),
    ("NameOrCount", 12, True),
    ("NameOrCount", "some", False),
    ("Holder", {"mode": "a"}, True),
    ("Holder", {"mode": None}, True),
    ("Holder", {"mode": "c"}, False),
    ("Holder", {"mode": "a", "nothing": {}}, True),
    ("Holder", {"mode": "a", "nothing": {"x": 1}}, False),
    ("ShortOrAuto", "abc", True),
    ("ShortOrAuto", "auto", True),
    ("ShortOrAuto", "abcd", False),
    ("Options", ["a"], True),
    ("Options", [], False),
    ("Options", [1, 2], True),
    ("Options", [1, 2, 3], False),
    ("Options", [-1], False),
    ("SmallOrWord", {"v": 1}, True),
    ("SmallOrWord", {"v": 0}, False),
    ("SmallOrWord", {"v": "word"}, True),
    ("SmallOrWord", {"v": "words"}, False),
    ("Codes", {"c": ["AB", "C"]}, True),
    ("Codes", {"c": ["AB", "c"]}, False),
]


LOOSE: dict[str, Any] = {
    "Flag": {"enum": [True, False]},
    "Name": {"type": "string"},
    "Named": obj({"n": {"$ref": "#/$defs/Name", "maxLength": 3}}, ["n"]),
}
LOOSE_CASES: list[tuple[str, Any, bool, bool]] = [
    # name, value, JSON Schema accepts it, the model accepts it
    ("Flag", True, True, True),
    ("Flag", "true", False, False),
    ("Flag", 1, False, True),
    ("Named", {"n": "abc"}, True, True),
    ("Named", {"n": "abcd"}, False, True),
]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    folder: Path = tmp_path_factory.mktemp("shapes")
    return package(surface(DEFS), folder, "acp_scalar_shapes_test").schema


def test_the_cases_are_what_json_schema_says() -> None:
    for name, value, valid in CASES:
        schema = {"$defs": DEFS, "$ref": f"#/$defs/{name}"}
        assert jsonschema.Draft202012Validator(schema).is_valid(value) is valid, (name, value)


@pytest.mark.parametrize(("name", "value", "valid"), CASES, ids=[f"{n}-{v!r}" for n, v, _ in CASES])
def test_the_model_agrees_with_json_schema(models: ModuleType, name: str, value: Any, valid: bool) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(models, name))
    if not valid:
        with pytest.raises(ValidationError):
            adapter.validate_python(value)
        return
    parsed = adapter.validate_python(value)
    dumped = adapter.dump_python(parsed, mode="json", by_alias=True, exclude_unset=True)
    assert dumped == value


def test_loose_shapes_generate_with_one_warning_each_and_accept_what_they_say(tmp_path: Path) -> None:
    with collecting(strict=False) as found:
        models = package(surface(LOOSE), tmp_path, "acp_loose_shapes_test").schema
    assert sorted((g.pointer, g.default) for g in found.gaps) == [
        ("/$defs/Flag/enum", "0 and 0.0 are accepted for it too"),
        ("/$defs/Flag/enum", "1 and 1.0 are accepted for it too"),
        ("/$defs/Named/properties/n", "the value is checked against the referenced type only"),
    ]
    for name, value, schema_accepts, model_accepts in LOOSE_CASES:
        schema = {"$defs": LOOSE, "$ref": f"#/$defs/{name}"}
        assert jsonschema.Draft202012Validator(schema).is_valid(value) is schema_accepts, (name, value)
        adapter: TypeAdapter[Any] = TypeAdapter(getattr(models, name))
        try:
            adapter.validate_python(value)
            accepted = True
        except ValidationError:
            accepted = False
        assert accepted is model_accepts, (name, value)
