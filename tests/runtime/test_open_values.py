"""Untyped members keep any JSON value, and ``x-deserialize-default-on-null`` reads null as the default.

Generated from small hand-written schemas, checked value by value in Python and
JSON mode: an untyped schema (``{}`` or title-only) at a field, a union member
(of objects or of scalars), an array item and a map value takes any JSON value
and dumps it back unchanged; a field marked default-on-null reads ``null`` as its
default and still counts as given, while an omitted field stays omitted.  The
real releases that use both (ErrorData, NewSessionRequest) are checked in
tests/runtime/test_new_releases.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import jsonschema
import pytest
from pydantic import Field, TypeAdapter, ValidationError

from codegen.diagnostics import collecting
from codegen.runtime import _patch
from tests.support.schemas import obj, package, surface

JSON_VALUES: list[Any] = ["x", "", 0, -1.5, True, None, [], [1, "a", None], {}, {"k": [1, {"j": None}]}]
"""One of each kind of JSON value: every one must survive an untyped position unchanged."""

DEFS: dict[str, Any] = {
    "Known": obj({"code": {"type": "integer"}}, ["code"]),
    "Tagged": obj({"kind": {"type": "string", "const": "tagged"}, "n": {"type": "integer"}}, ["kind"]),
    # 2.2.0's ErrorData: object members and an untyped "Other"
    "Data": {"anyOf": [{"title": "Known", "allOf": [{"$ref": "#/$defs/Known"}]}, {"title": "Other"}]},
    # a tagged union with an untyped member: what no tag takes, and every non-object, goes there
    "Open": {"anyOf": [{"$ref": "#/$defs/Tagged"}, {"title": "Anything", "description": "any value"}]},
    # an untyped member beside scalars
    "Loose": {"anyOf": [{"type": "integer"}, {}]},
    "Holder": obj(
        {
            "data": {"anyOf": [{"$ref": "#/$defs/Data"}, {"type": "null"}]},
            "field": {"description": "any value"},
            "items": {"type": "array", "items": {"title": "Item"}},
            "values": {"type": "object", "additionalProperties": {}},
        }
    ),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    folder: Path = tmp_path_factory.mktemp("open")
    with collecting(strict=True):
        built = surface(DEFS)
    return package(built, folder, "acp_open_values_test").schema


def both_modes(adapter: TypeAdapter[Any], value: Any) -> list[Any]:
    return [adapter.validate_python(value), adapter.validate_json(json.dumps(value))]


def dump(adapter: TypeAdapter[Any], value: Any) -> Any:
    return adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True)


@pytest.mark.parametrize("value", JSON_VALUES, ids=repr)
@pytest.mark.parametrize("name", ["Data", "Open", "Loose"])
def test_a_union_with_an_untyped_member_keeps_every_value(models: ModuleType, name: str, value: Any) -> None:
    schema = {"$defs": DEFS, "$ref": f"#/$defs/{name}"}
    assert jsonschema.Draft202012Validator(schema).is_valid(value)
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(models, name))
    for parsed in both_modes(adapter, value):
        assert dump(adapter, parsed) == value


def test_the_typed_members_still_come_first(models: ModuleType) -> None:
    data: TypeAdapter[Any] = TypeAdapter(models.Data)
    for parsed in both_modes(data, {"code": 7}):
        assert isinstance(parsed, models.Known) and parsed.code == 7
    for parsed in both_modes(data, {"code": "seven"}):  # not a Known: kept as it came
        assert parsed == {"code": "seven"}
    tagged: TypeAdapter[Any] = TypeAdapter(models.Open)
    for parsed in both_modes(tagged, {"kind": "tagged", "n": 2}):
        assert isinstance(parsed, models.Tagged) and parsed.n == 2
    for parsed in both_modes(tagged, {"kind": "other", "n": 2}):
        assert parsed == {"kind": "other", "n": 2}


@pytest.mark.parametrize("value", JSON_VALUES, ids=repr)
def test_every_untyped_position_of_a_class_keeps_the_value(models: ModuleType, value: Any) -> None:
    wire = {"data": value, "field": value, "items": [value, value], "values": {"a": value}}
    adapter: TypeAdapter[Any] = TypeAdapter(models.Holder)
    for parsed in both_modes(adapter, wire):
        assert dump(adapter, parsed) == wire


NULL_DEFS: dict[str, Any] = {
    "Server": obj({"name": {"type": "string"}}, ["name"]),
    "Request": obj(
        {
            "cwd": {"type": "string"},
            "servers": {
                "type": "array",
                "items": {"$ref": "#/$defs/Server"},
                "x-deserialize-default-on-null": True,
            },
            "env": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "x-deserialize-default-on-null": True,
            },
            "retries": {"type": "integer", "default": 3, "x-deserialize-default-on-null": True},
            "args": {"type": "array", "items": {"type": "string"}, "x-deserialize-default-on-null": True},
        },
        ["cwd", "args"],
    ),
}


@pytest.fixture(scope="module")
def nulls(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    folder: Path = tmp_path_factory.mktemp("nulls")
    with collecting(strict=True):
        built = surface(NULL_DEFS)
    assert {f.wire_name for f in built.object("Request").fields if f.default_on_null} == {
        "servers",
        "env",
        "retries",
        "args",
    }
    return package(built, folder, "acp_default_on_null_test").schema


def test_null_is_read_as_the_default_and_counts_as_given(nulls: ModuleType) -> None:
    wire = {"cwd": "/w", "servers": None, "env": None, "retries": None, "args": None}
    for parsed in (nulls.Request.model_validate(wire), nulls.Request.model_validate_json(json.dumps(wire))):
        assert (parsed.servers, parsed.env, parsed.retries, parsed.args) == ([], {}, 3, [])
        assert parsed.model_fields_set == {"cwd", "servers", "env", "retries", "args"}
        assert parsed.model_dump(by_alias=True, exclude_unset=True) == {
            "cwd": "/w",
            "servers": [],
            "env": {},
            "retries": 3,
            "args": [],
        }


def test_an_omitted_field_stays_omitted(nulls: ModuleType) -> None:
    parsed = nulls.Request.model_validate_json('{"cwd": "/w", "args": ["-v"]}')
    assert (parsed.servers, parsed.retries) == ([], 3)
    assert parsed.model_dump(by_alias=True, exclude_unset=True) == {"cwd": "/w", "args": ["-v"]}


def test_other_values_are_validated_as_usual(nulls: ModuleType) -> None:
    parsed = nulls.Request.model_validate({"cwd": "/w", "args": [], "servers": [{"name": "a"}], "retries": 0})
    assert parsed.servers == [nulls.Server(name="a")] and parsed.retries == 0
    for bad in ({"servers": [{"nom": "a"}]}, {"servers": "a"}, {"retries": "x"}, {"cwd": None}):
        with pytest.raises(ValidationError):
            nulls.Request.model_validate({"cwd": "/w", "args": [], **bad})


def test_a_required_field_still_has_to_be_there(nulls: ModuleType) -> None:
    with pytest.raises(ValidationError, match="args"):
        nulls.Request.model_validate({"cwd": "/w"})


def test_null_resets_a_patch_field_to_its_default_and_omission_keeps_it(nulls: ModuleType) -> None:
    """docs/patches.md: on a default-on-null patch field, null replaces the stored value with the default."""
    rule = _patch.Upsert("request", nulls.Request, "requests", nulls.Request, key="cwd")
    stored = _patch.patch_entity(
        rule, None, nulls.Request.model_validate({"cwd": "/w", "args": ["a"], "servers": [{"name": "s"}]})
    )
    kept = _patch.patch_entity(rule, stored, nulls.Request.model_validate({"cwd": "/w", "args": ["b"]}))
    assert kept.servers == [nulls.Server(name="s")] and kept.args == ["b"]
    reset = _patch.patch_entity(
        rule, kept, nulls.Request.model_validate({"cwd": "/w", "args": ["b"], "servers": None})
    )
    assert reset.servers == []
    assert reset.model_dump(by_alias=True, exclude_unset=True)["servers"] == []


def test_a_default_factory_that_reads_the_other_fields_gets_them_on_null(nulls: ModuleType) -> None:
    base = sys.modules[nulls.__name__.rsplit(".", 1)[0] + "._base"]

    class Batch(base.AcpModel):  # type: ignore[misc, name-defined]
        size: int
        sizes: Annotated[list[int], base.DefaultOnNull] = Field(default_factory=lambda data: [data["size"]])
        names: Annotated[list[str], base.DefaultOnNull] = Field(default_factory=list)

    for parsed in (
        Batch.model_validate({"size": 2, "sizes": None, "names": None}),
        Batch.model_validate_json('{"size": 2, "sizes": null, "names": null}'),
    ):
        assert (parsed.sizes, parsed.names) == ([2], [])
        assert parsed.model_fields_set == {"size", "sizes", "names"}
    assert Batch.model_validate({"size": 2, "sizes": [5]}).sizes == [5]


def test_a_wire_name_that_is_the_attribute_name_is_looked_up_once(nulls: ModuleType) -> None:
    """Only a field whose wire name differs keeps its alias in the core schema; both names still work."""
    base = sys.modules[nulls.__name__.rsplit(".", 1)[0] + "._base"]

    class Call(base.AcpModel):  # type: ignore[misc, name-defined]
        tool_call_id: str
        title: str | None = None

    fields = Call.__pydantic_core_schema__["schema"]["fields"]
    assert fields["tool_call_id"]["validation_alias"] == "toolCallId"
    assert "validation_alias" not in fields["title"]
    for data in ({"toolCallId": "a", "title": "t"}, {"tool_call_id": "a", "title": "t"}):
        assert Call.model_validate(data).model_dump() == {"tool_call_id": "a", "title": "t"}
        assert Call.model_validate_json(json.dumps(data)).model_fields_set == {"tool_call_id", "title"}
    with pytest.raises(ValidationError) as caught:
        Call.model_validate_json('{"toolCallId": "a", "title": 5}')
    assert [error["loc"] for error in caught.value.errors()] == [("title",)]
