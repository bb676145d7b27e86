"""Behaviour of the generated models on every release, checked against the schema itself."""

from __future__ import annotations

import ast
import json
import re
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from codegen import naming
from codegen.schema.ir import (
    ApiSurface,
    ArrayOf,
    MapOf,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
    UnionType,
)
from tests.support.instances import example, object_example, schema_errors
from tests.support.releases import GENERATED, SURFACES, package_of, surface_id, surface_of


def wire(model: Any) -> Any:
    return model.model_dump(by_alias=True, exclude_unset=True, mode="json")


def coordinates(surface: ApiSurface) -> tuple[str, bool]:
    return surface.release, surface.stability == "unstable"


def model_class(package: ModuleType, name: str) -> type[BaseModel]:
    cls = getattr(package.schema, name)
    assert isinstance(cls, type) and issubclass(cls, BaseModel)
    return cls


@pytest.mark.parametrize("release, unstable", SURFACES, ids=[surface_id(s) for s in SURFACES])
def test_package_imports_and_every_type_builds(release: str, unstable: bool) -> None:
    package = package_of(release, unstable)
    surface = surface_of(release, unstable)
    assert release == package.RELEASE
    assert ("unstable" if unstable else "stable") == package.STABILITY
    assert surface.schema_sha256 == package.SCHEMA_SHA256
    for name in surface.types:
        value = getattr(package.schema, name)
        if isinstance(value, type) and issubclass(value, BaseModel):
            value.model_rebuild(force=True)
        else:
            TypeAdapter(value)


def session_update_examples(surface: ApiSurface) -> list[tuple[str, str, bool]]:
    """(variant class, tag, full) for every class every ``sessionUpdate`` tag stands for."""
    union = surface.type("SessionUpdate")
    assert isinstance(union, UnionType)
    out = []
    for variant in union.variants:
        for name in surface.classes_of(variant.type):
            out.extend([(name, str(variant.tag), False), (name, str(variant.tag), True)])
    return out


def test_every_session_update_tag_round_trips(surface_and_package: tuple[ApiSurface, ModuleType]) -> None:
    surface, package = surface_and_package
    release, unstable = coordinates(surface)
    params = next(m.params for m in surface.methods if m.wire_name == "session/update")
    notification = getattr(package.schema, params)  # UpdateSessionNotification (v2), SessionNotification (v1)
    tags_seen = set()
    for class_name, tag, full in session_update_examples(surface):
        update = object_example(surface, class_name, full=full)
        assert update["sessionUpdate"] == tag
        message = {"sessionId": "sess-1", "update": update}
        assert schema_errors(release, unstable, params, message) == []
        parsed = notification.model_validate_json(json.dumps(message))
        assert type(parsed.update).__name__ == class_name
        assert wire(parsed) == message
        tags_seen.add(tag)
    union = surface.type("SessionUpdate")
    assert isinstance(union, UnionType)
    assert tags_seen == {str(t) for t in union.known_tags}


def tagged_unions(surface: ApiSurface) -> list[UnionType]:
    return [u for u in surface.unions() if u.tagged and u.schema_name is not None]


def invalid_value(surface: ApiSurface, expr: TypeExpr) -> Any:
    """A value the type rejects, or ``None`` when every JSON value fits."""
    inner = expr.inner if isinstance(expr, Nullable) else expr
    if isinstance(inner, Scalar):
        return None if inner.type == "any" else {"not": "a scalar"}
    if isinstance(inner, (ArrayOf, MapOf)):
        return 12345
    if isinstance(inner, Ref):
        found = surface.types[inner.name]
        if isinstance(found, ObjectType):
            return "not an object"
        if isinstance(found, UnionType):  # a member of any JSON value takes everything
            return None if any(v.type == Scalar("any") for v in found.members) else [{"bogus": True}]
        return {"not": "a scalar"}
    return {"not": "valid"}


def test_known_tag_with_bad_payload_is_rejected_naming_the_variant(
    surface_and_package: tuple[ApiSurface, ModuleType],
) -> None:
    surface, package = surface_and_package
    release, unstable = coordinates(surface)
    checked = 0
    for union in tagged_unions(surface):
        adapter = TypeAdapter(getattr(package.schema, union.name))
        for variant in union.variants:
            for class_name in surface.classes_of(variant.type):
                instance = object_example(surface, class_name)
                tags = {t.wire_name for t in surface.tags_of(class_name)}
                tags |= {r.wire_name for r in surface.reserved_of(class_name)}
                broken = next(
                    (
                        f
                        for f in surface.all_fields(class_name)
                        if f.required
                        and not f.lenient
                        and f.wire_name not in tags
                        and invalid_value(surface, f.type) is not None
                    ),
                    None,
                )
                if broken is None:
                    continue
                instance[broken.wire_name] = invalid_value(surface, broken.type)
                assert schema_errors(release, unstable, union.schema_name or "", instance), (
                    union.name,
                    class_name,
                )
                with pytest.raises(ValidationError) as caught:
                    adapter.validate_python(instance)
                errors = caught.value.errors()
                label = variant.tag if variant.tag is not None else "|".join(surface.classes_of(variant.type))
                assert all(error["loc"][0] == label for error in errors), errors
                assert any(broken.wire_name in error["loc"] for error in errors), errors
                checked += 1
    assert checked > 20


def test_unknown_tag_lands_in_the_catch_all_and_round_trips(
    surface_and_package: tuple[ApiSurface, ModuleType],
) -> None:
    surface, package = surface_and_package
    release, unstable = coordinates(surface)
    checked = 0
    for union in tagged_unions(surface):
        adapter = TypeAdapter(getattr(package.schema, union.name))
        tag = union.tag_wire_name or ""
        checked += 1
        if union.catch_all is None:
            instance = object_example(surface, surface.classes_of(union.variants[0].type)[0])
            instance[tag] = "_vendor/unknown"
            untagged = [v for v in union.variants if v.tag is None]
            if not untagged and schema_errors(release, unstable, union.schema_name or "", instance):
                with pytest.raises(ValidationError, match=r"does not match any of the expected tags"):
                    adapter.validate_python(instance)
                continue
            # a member without the tag property takes the unknown tag, as the JSON Schema does
            (member,) = untagged
            fallback = object_example(surface, surface.classes_of(member.type)[0])
            fallback[tag] = "_vendor/unknown"
            assert schema_errors(release, unstable, union.schema_name or "", fallback) == [], union.name
            parsed = adapter.validate_python(fallback)
            assert type(parsed).__name__ in surface.classes_of(member.type)
            assert wire(parsed) == fallback
            continue
        for class_name in surface.classes_of(union.catch_all.type):
            instance = object_example(surface, class_name)
            instance[tag] = "_vendor/future"
            instance["vendorPayload"] = {"nested": [1, {"deep": None}], "flag": True}
            assert schema_errors(release, unstable, union.schema_name or "", instance) == [], union.name
            parsed = adapter.validate_json(json.dumps(instance))
            assert type(parsed).__name__ in surface.classes_of(union.catch_all.type)
            assert wire(parsed) == instance
    assert checked > 0


def test_catch_all_refuses_every_reserved_tag(surface_and_package: tuple[ApiSurface, ModuleType]) -> None:
    surface, package = surface_and_package
    checked = 0
    for type_ in surface.types.values():
        if not (isinstance(type_, ObjectType) and type_.reserved):
            continue
        cls = model_class(package, type_.name)
        for value in type_.reserved.values:
            instance = object_example(surface, type_.name)
            instance[type_.reserved.wire_name] = value
            with pytest.raises(ValidationError) as caught:
                cls.model_validate(instance)
            assert [e["type"] for e in caught.value.errors()] == ["reserved_tag"]
            checked += 1
    assert checked > 0 or not any(union.open for union in surface.unions())  # no catch-all, nothing reserved


def pinned_classes(surface: ApiSurface) -> list[ObjectType]:
    return [t for t in surface.types.values() if isinstance(t, ObjectType) and t.tag is not None]


def test_tags_are_required_when_validating_and_filled_when_building(
    surface_and_package: tuple[ApiSurface, ModuleType],
) -> None:
    surface, package = surface_and_package
    classes = pinned_classes(surface)
    assert classes
    for obj in classes:
        cls = model_class(package, obj.name)
        instance = object_example(surface, obj.name)
        tags = surface.tags_of(obj.name)
        without = {k: v for k, v in instance.items() if k not in {t.wire_name for t in tags}}
        with pytest.raises(ValidationError) as caught:
            cls.model_validate(without)
        assert {e["loc"] for e in caught.value.errors()} == {(t.wire_name,) for t in tags}
        assert {e["type"] for e in caught.value.errors()} == {"missing"}
        parsed = cls.model_validate(instance)
        kwargs = {
            name: getattr(parsed, name)
            for name in parsed.model_fields_set
            if name not in {t.py_name for t in tags}
        }
        built = cls(**kwargs)
        assert wire(built) == instance
        for tag in tags:
            assert getattr(built, tag.py_name) == tag.value
            assert tag.py_name in built.model_fields_set


def test_snake_case_attributes_accept_both_names() -> None:
    schema = package_of("2.0.0-alpha.7", False).schema
    by_wire = schema.ToolCallUpdate.model_validate(
        {"toolCallId": "t1", "rawInput": {"a": 1}, "_meta": {"k": 2}}
    )
    by_name = schema.ToolCallUpdate.model_validate(
        {"tool_call_id": "t1", "raw_input": {"a": 1}, "field_meta": {"k": 2}}
    )
    built = schema.ToolCallUpdate(tool_call_id="t1", raw_input={"a": 1}, field_meta={"k": 2})
    assert by_wire == by_name == built
    assert by_wire.field_meta == {"k": 2}
    assert wire(built) == {"toolCallId": "t1", "rawInput": {"a": 1}, "_meta": {"k": 2}}


def test_dump_keeps_tags_and_explicit_nulls_and_drops_unset() -> None:
    schema = package_of("2.0.0-alpha.7", False).schema
    update = schema.ToolCallSessionUpdate(tool_call_id="tool-1", name=None)
    assert wire(update) == {"toolCallId": "tool-1", "name": None, "sessionUpdate": "tool_call_update"}
    parsed = TypeAdapter(schema.SessionUpdate).validate_python(
        {"sessionUpdate": "tool_call_update", "toolCallId": "t"}
    )
    assert wire(parsed) == {"sessionUpdate": "tool_call_update", "toolCallId": "t"}


def lenient_fields(surface: ApiSurface) -> list[tuple[ObjectType, Any]]:
    return [
        (t, f)
        for t in surface.types.values()
        if isinstance(t, ObjectType)
        for f in t.fields
        if f.default_on_error and invalid_value(surface, f.type) is not None
    ]


def test_invalid_lenient_value_counts_as_omitted_never_as_null(
    surface_and_package: tuple[ApiSurface, ModuleType],
) -> None:
    surface, package = surface_and_package
    release, unstable = coordinates(surface)
    fields = lenient_fields(surface)
    assert len(fields) > 50
    for obj, field in fields:
        cls = model_class(package, obj.name)
        instance = object_example(surface, obj.name, full=False)
        instance[field.wire_name] = invalid_value(surface, field.type)
        if obj.schema_name:
            assert schema_errors(release, unstable, obj.schema_name, instance), (obj.name, field.wire_name)
        parsed = cls.model_validate(instance)
        dumped = wire(parsed)
        if field.required:
            assert dumped[field.wire_name] in ([], {}), (obj.name, field.wire_name)
        else:
            assert field.py_name not in parsed.model_fields_set, (obj.name, field.wire_name)
            assert field.wire_name not in dumped


def test_invalid_list_items_are_skipped(surface_and_package: tuple[ApiSurface, ModuleType]) -> None:
    surface, package = surface_and_package
    checked = 0
    for obj in surface.types.values():
        if not isinstance(obj, ObjectType):
            continue
        for field in obj.fields:
            inner = field.type.inner if isinstance(field.type, Nullable) else field.type
            if not (field.skip_invalid_items and isinstance(inner, ArrayOf)):
                continue
            bad_item = invalid_value(surface, inner.item)
            if bad_item is None:
                continue
            good_item = example(surface, inner.item)
            instance = object_example(surface, obj.name, full=False)
            instance[field.wire_name] = [good_item, bad_item, good_item]
            parsed = model_class(package, obj.name).model_validate(instance)
            assert wire(parsed)[field.wire_name] == [good_item, good_item], (obj.name, field.wire_name)
            checked += 1
    assert checked > 5


def test_unstable_types_say_so_in_their_docstrings() -> None:
    surface = surface_of("2.0.0-alpha.7", True)
    package = package_of("2.0.0-alpha.7", True)
    unstable_classes = [t for t in surface.types.values() if isinstance(t, ObjectType) and t.unstable]
    assert len(unstable_classes) > 20
    for obj in unstable_classes:
        assert "**UNSTABLE**" in (model_class(package, obj.name).__doc__ or ""), obj.name
    stable_source = (GENERATED / "acp_2_0_0_alpha_7" / "schema.py").read_text()
    assert "UNSTABLE" not in stable_source


def defined_names(source: str) -> list[str]:
    tree = ast.parse(source)
    names = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
    names += [
        node.target.id
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    ]
    return names


@pytest.mark.parametrize("release, unstable", SURFACES, ids=[surface_id(s) for s in SURFACES])
def test_no_numbered_names(release: str, unstable: bool) -> None:
    surface = surface_of(release, unstable)
    upstream = {t.schema_name for t in surface.types.values() if t.schema_name}
    source = (GENERATED / package_of(release, unstable).__name__ / "schema.py").read_text()
    names = defined_names(source)
    assert names.count(naming.META_BASE) == 1  # the base class that declares _meta once
    assert sorted(n for n in names if n != naming.META_BASE) == sorted(surface.types)
    numbered = [n for n in names if re.search(r"\d$", n) and n not in upstream]
    assert numbered == []


# -- _meta, declared once ------------------------------------------------------------------------


@pytest.mark.parametrize("release, unstable", SURFACES, ids=[surface_id(s) for s in SURFACES])
def test_every_class_has_exactly_the_fields_of_its_schema_type(release: str, unstable: bool) -> None:
    """Declaring _meta on WithMeta loses no field and adds none: each class's fields, aliases and
    defaults are the IR's."""
    surface = surface_of(release, unstable)
    package = package_of(release, unstable)
    for obj in surface.types.values():
        if not isinstance(obj, ObjectType):
            continue
        fields = model_class(package, obj.name).model_fields
        expected = {f.py_name: f for f in surface.all_fields(obj.name)}
        assert set(fields) == set(expected), obj.name
        for name, info in fields.items():
            alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
            assert alias == expected[name].wire_name, (obj.name, name)


def test_the_classes_that_declare_meta_alike_extend_one_base() -> None:
    surface = surface_of("v2-sdk-2.3.0", False)
    package = package_of("v2-sdk-2.3.0", False)
    base = package.schema.WithMeta
    assert list(base.model_fields) == ["field_meta"] and base.__bases__ == (package.schema.AcpModel,)
    source = (GENERATED / package.__name__ / "schema.py").read_text()
    assert source.count("The _meta property is reserved by ACP") == 150 - 124 + 1  # said once for the 124
    shared = [
        name
        for name, t in surface.types.items()
        if isinstance(t, ObjectType) and base in model_class(package, name).__bases__
    ]
    assert len(shared) == 124  # of the 150 classes with _meta: 139 say it alike, 15 of those extend a class
    for name in shared:
        cls = model_class(package, name)
        assert "field_meta" not in vars(cls).get("__annotations__", {})
        assert next(iter(cls.model_fields)) == "field_meta"  # the order change docs/models.md describes
    # a class whose _meta says more (an upsert patches it key by key) keeps its own
    update = surface.object("ToolCallUpdate")
    assert any(f.wire_name == "_meta" for f in update.fields)
    assert base not in package.schema.ToolCallUpdate.__bases__


def test_meta_reads_and_writes_as_before_on_a_class_that_extends_the_base() -> None:
    schema = package_of("v2-sdk-2.3.0", False).schema
    message = {"sessionId": "s", "_meta": {"trace": "1"}}
    parsed = schema.CancelSessionNotification.model_validate(message)
    assert parsed.field_meta == {"trace": "1"}
    assert wire(parsed) == message  # the same keys and values; _meta now comes first
    assert list(wire(parsed)) == ["_meta", "sessionId"]
    lenient = schema.CancelSessionNotification.model_validate({"sessionId": "s", "_meta": "not an object"})
    assert lenient.field_meta is None and "field_meta" not in lenient.model_fields_set
    built = schema.CancelSessionNotification(session_id="s", field_meta=None)
    assert wire(built) == {"_meta": None, "sessionId": "s"}


def imported_and_used(source: str) -> tuple[set[str], set[str]]:
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module != "__future__"
        for alias in node.names
    }
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return imported, used & set(naming.MODEL_IMPORTS)


@pytest.mark.parametrize("release, unstable", SURFACES, ids=[surface_id(s) for s in SURFACES])
def test_the_models_import_what_the_normaliser_declares_and_use_all_of_it(
    release: str, unstable: bool
) -> None:
    """The imports come from the names each class and alias declares, not from reading the code back:
    they must be what the code uses."""
    source = (GENERATED / package_of(release, unstable).__name__ / "schema.py").read_text()
    imported, used = imported_and_used(source)
    assert imported == used


def test_declared_names_cover_constraints_open_enums_and_maps() -> None:
    from codegen.emit.models import render_models
    from tests.support.schemas import surface as hand_made

    built = hand_made(
        {
            "Size": {"type": "integer", "minimum": 0},
            "Kind": {"anyOf": [{"const": 1}, {"const": 2}, {"type": "integer"}]},
            "Box": {
                "type": "object",
                "properties": {
                    "tags": {"type": "array", "items": {"type": "string", "minLength": 1}},
                    "extra": {"type": "object", "additionalProperties": True},
                    "ratio": {"type": ["number", "null"]},
                    "on": {"type": "boolean", "default": True},
                },
                "required": ["tags"],
                "additionalProperties": False,
            },
        }
    )
    imported, used = imported_and_used(render_models(built))
    assert imported == used
    assert {"Annotated", "Field", "JsonInt", "Literal", "Any", "ConfigDict", "TypeAlias"} <= imported
