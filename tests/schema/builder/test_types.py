"""The IR builder on small hand-written ``$defs``: objects, fields, enums, stability, refusals.

Each test builds a schema of a few lines and asserts the exact IR that
:mod:`codegen.schema.builder.types` (and :mod:`codegen.schema.builder.context`)
makes of it; unions of objects are tested in ``test_unions.py``, methods in
``test_methods.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from codegen.diagnostics import Gap, collecting
from codegen.errors import CodegenError
from codegen.schema.builder import build_surface
from codegen.schema.ir import (
    MISSING,
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
    Const,
    Constraints,
    EnumType,
    EnumValue,
    Field,
    MapOf,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    Stability,
    UnionType,
    Variant,
)
from tests.support.schemas import META, document, obj, surface

META_DOC = (
    "The _meta property is reserved by ACP to allow clients and agents to attach additional\n"
    "metadata to their interactions."
)


def build(
    defs: dict[str, Any], stability: Stability = "stable", baseline: ApiSurface | None = None
) -> ApiSurface:
    """Like :func:`tests.support.schemas.surface`, with the stable ``baseline`` an unstable surface needs."""
    data = {"$defs": defs, "anyOf": []}
    return build_surface(document(data), document(META, "meta.json"), stability, baseline=baseline)


def fields_of(built: ApiSurface, name: str) -> dict[str, Field]:
    return {f.wire_name: f for f in built.object(name).fields}


def enum(built: ApiSurface, name: str) -> EnumType:
    found = built.types[name]
    assert isinstance(found, EnumType), name
    return found


# -- objects and fields ----------------------------------------------------------


def test_plain_object_fields_keep_wire_order_type_and_requiredness() -> None:
    built = surface({"Person": obj({"name": {"type": "string"}, "age": {"type": "integer"}}, ["name"])})
    person = built.object("Person")
    assert person.fields == (
        Field(wire_name="name", py_name="name", type=Scalar("string"), required=True, nullable=False),
        Field(wire_name="age", py_name="age", type=Scalar("integer"), required=False, nullable=False),
    )
    assert (person.schema_name, person.pointer, person.base, person.extra) == (
        "Person",
        "/$defs/Person",
        None,
        "allow",
    )


def test_a_default_is_kept_and_a_null_default_is_not_a_missing_one() -> None:
    fields = fields_of(
        surface(
            {
                "Settings": obj(
                    {
                        "retries": {"type": "integer", "default": 3},
                        "label": {"type": ["string", "null"], "default": None},
                        "mode": {"type": "string"},
                    }
                )
            }
        ),
        "Settings",
    )
    assert fields["retries"].default == 3 and fields["retries"].has_default
    assert fields["label"].default is None and fields["label"].has_default
    assert fields["mode"].default is MISSING and not fields["mode"].has_default


def test_nullable_written_as_a_type_list() -> None:
    fields = fields_of(
        surface({"Holder": obj({"a": {"type": ["string", "null"]}, "b": {"type": ["string", "integer"]}})}),
        "Holder",
    )
    assert fields["a"].type == Nullable(Scalar("string")) and fields["a"].nullable
    assert fields["b"].type == AnyOf((Scalar("string"), Scalar("integer"))) and not fields["b"].nullable


def test_nullable_written_as_any_of_with_a_null_member() -> None:
    fields = fields_of(
        surface(
            {
                "Other": {"type": "string"},
                "Holder": obj(
                    {
                        "a": {"anyOf": [{"$ref": "#/$defs/Other"}, {"type": "null"}]},
                        "b": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
                        "c": {"anyOf": [{"type": "null"}]},
                    }
                ),
            }
        ),
        "Holder",
    )
    assert fields["a"].type == Nullable(Ref("Other")) and fields["a"].nullable
    assert fields["b"].type == Nullable(AnyOf((Scalar("string"), Scalar("integer"))))
    assert fields["c"].type == Scalar("null") and fields["c"].nullable


def test_a_required_nullable_field_stays_required() -> None:
    field = fields_of(surface({"Holder": obj({"a": {"type": ["integer", "null"]}}, ["a"])}), "Holder")["a"]
    assert (field.type, field.required, field.nullable) == (Nullable(Scalar("integer")), True, True)


def test_a_ref_and_a_described_all_of_ref_both_become_a_ref_to_the_class() -> None:
    built = surface(
        {
            "session_id": {"type": "string"},
            "Holder": obj(
                {
                    "plain": {"$ref": "#/$defs/session_id"},
                    "described": {"description": "The session.", "allOf": [{"$ref": "#/$defs/session_id"}]},
                }
            ),
        }
    )
    fields = fields_of(built, "Holder")
    assert fields["plain"].type == Ref("SessionId")
    assert (fields["described"].type, fields["described"].doc) == (Ref("SessionId"), "The session.")
    assert built.types["SessionId"] == AliasType(
        name="SessionId", target=Scalar("string"), schema_name="session_id", pointer="/$defs/session_id"
    )


def test_a_ref_token_is_unescaped_before_lookup() -> None:
    built = surface({"a/b~c": {"type": "boolean"}, "Holder": obj({"x": {"$ref": "#/$defs/a~1b~0c"}})})
    assert fields_of(built, "Holder")["x"].type == Ref("ABC")
    assert built.types["ABC"].pointer == "/$defs/a~1b~0c"


def test_arrays_carry_their_item_type_and_constraints() -> None:
    fields = fields_of(
        surface(
            {
                "Item": obj({}),
                "Holder": obj(
                    {
                        "refs": {
                            "type": "array",
                            "items": {"$ref": "#/$defs/Item"},
                            "minItems": 1,
                            "maxItems": 9,
                        },
                        "untyped": {"type": "array"},
                    }
                ),
            }
        ),
        "Holder",
    )
    assert fields["refs"].type == ArrayOf(Ref("Item"), Constraints(min_items=1, max_items=9))
    assert fields["untyped"].type == ArrayOf(Scalar("any"))


def test_additional_properties_make_a_map() -> None:
    fields = fields_of(
        surface(
            {
                "Holder": obj(
                    {
                        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
                        "anything": {"type": "object", "additionalProperties": True},
                        "bare": {"type": "object"},
                    }
                )
            }
        ),
        "Holder",
    )
    assert fields["counts"].type == MapOf(Scalar("integer"))
    assert fields["anything"].type == MapOf(Scalar("any"))
    assert fields["bare"].type == MapOf(Scalar("any"))


def test_an_inline_object_with_properties_becomes_a_class_named_after_its_owner_and_field() -> None:
    built = surface({"Holder": obj({"position": obj({"line": {"type": "integer"}}, ["line"])})})
    assert fields_of(built, "Holder")["position"].type == Ref("HolderPosition")
    inline = built.object("HolderPosition")
    assert inline.schema_name is None
    assert inline.pointer == "/$defs/Holder/properties/position"
    assert inline.fields == (
        Field(wire_name="line", py_name="line", type=Scalar("integer"), required=True, nullable=False),
    )


def test_scalar_constraints_are_kept() -> None:
    fields = fields_of(
        surface(
            {
                "Holder": obj(
                    {
                        "uri": {"type": "string", "format": "uri", "pattern": "^file:", "maxLength": 80},
                        "ratio": {"type": "number", "minimum": 0, "exclusiveMaximum": 1.5},
                    }
                )
            }
        ),
        "Holder",
    )
    assert fields["uri"].type == Scalar("string", Constraints(max_length=80, pattern="^file:", format="uri"))
    assert fields["ratio"].type == Scalar("number", Constraints(minimum=0, exclusive_maximum=1.5))


def test_true_an_empty_schema_and_a_required_name_without_a_property_are_any() -> None:
    fields = fields_of(surface({"Holder": obj({"a": True, "b": {}}, ["c"])}), "Holder")
    assert {wire: (f.type, f.required, f.nullable) for wire, f in fields.items()} == {
        "a": (Scalar("any"), False, True),
        "b": (Scalar("any"), False, True),
        "c": (Scalar("any"), True, True),
    }


def test_a_closed_object_without_properties_is_an_empty_class_not_a_map() -> None:
    built = surface({"Holder": obj({"nothing": {"type": "object", "additionalProperties": False}})})
    assert fields_of(built, "Holder")["nothing"].type == Ref("HolderNothing")
    empty = built.object("HolderNothing")
    assert (empty.fields, empty.extra) == ((), "forbid")


def test_additional_properties_false_forbids_extra_keys() -> None:
    built = surface(
        {
            "Closed": obj({"a": {"type": "string"}}, additionalProperties=False),
            "Unevaluated": obj({"a": {"type": "string"}}, unevaluatedProperties=False),
            "Open": obj({"a": {"type": "string"}}),
        }
    )
    assert [built.object(name).extra for name in ("Closed", "Unevaluated", "Open")] == [
        "forbid",
        "forbid",
        "allow",
    ]


def test_all_of_one_object_makes_it_the_base_class() -> None:
    built = surface(
        {
            "Base": obj({"id": {"type": "string"}}, ["id"]),
            "Derived": {**obj({"extra": {"type": "integer"}}), "allOf": [{"$ref": "#/$defs/Base"}]},
        }
    )
    derived = built.object("Derived")
    assert derived.base == "Base"
    assert [f.wire_name for f in derived.fields] == ["extra"]
    assert [f.wire_name for f in built.all_fields("Derived")] == ["id", "extra"]


def test_colliding_names_get_variant_and_trailing_underscores() -> None:
    built = surface(
        {
            "foo_bar": {"type": "string"},
            "FooBar": obj({"fooBar": {"type": "string"}, "foo_bar": {"type": "string"}, "class": True}),
        }
    )
    assert {name: t.schema_name for name, t in built.types.items()} == {
        "FooBar": "foo_bar",
        "FooBarVariant": "FooBar",
    }
    assert {f.wire_name: f.py_name for f in built.object("FooBarVariant").fields} == {
        "fooBar": "foo_bar_",
        "foo_bar": "foo_bar",
        "class": "class_",
    }


# -- enums ---------------------------------------------------------------------------


def test_a_closed_enum_from_the_enum_keyword_or_from_consts() -> None:
    built = surface(
        {
            "Color": {"description": "A color.", "enum": ["red", "green"]},
            "Level": {"oneOf": [{"const": 1, "description": "Low."}, {"const": 2, "title": "High"}]},
        }
    )
    assert enum(built, "Color") == EnumType(
        name="Color",
        base="string",
        values=(EnumValue("red"), EnumValue("green")),
        open=False,
        doc="A color.",
        schema_name="Color",
        pointer="/$defs/Color",
    )
    level = enum(built, "Level")
    assert (level.base, level.open) == ("integer", False)
    assert level.values == (EnumValue(1, "Low."), EnumValue(2, "", "High"))


def test_an_open_enum_is_consts_plus_one_plain_string() -> None:
    built = surface(
        {
            "Mode": {
                "oneOf": [
                    {"const": "ask", "type": "string", "description": "Ask first."},
                    {"const": "auto", "type": "string"},
                    {"type": "string", "description": "A mode from a newer release."},
                ]
            }
        }
    )
    mode = enum(built, "Mode")
    assert (mode.base, mode.open, mode.open_doc) == ("string", True, "A mode from a newer release.")
    assert mode.values == (EnumValue("ask", "Ask first."), EnumValue("auto"))


def test_consts_with_two_plain_members_are_an_untagged_union_not_an_enum() -> None:
    built = surface({"Value": {"anyOf": [{"const": "a"}, {"type": "string"}, {"type": "integer"}]}})
    value = built.types["Value"]
    assert isinstance(value, UnionType)
    assert value.variants == (
        Variant(tag=None, type=Const("a")),
        Variant(tag=None, type=Scalar("string")),
        Variant(tag=None, type=Scalar("integer")),
    )


@pytest.mark.parametrize(
    ("members", "variants"),
    [
        pytest.param(
            [{"const": "a"}, {"const": 1}],
            (Variant(tag=None, type=Const("a")), Variant(tag=None, type=Const(1))),
            id="string-and-integer-consts",
        ),
        pytest.param(
            [{"const": "a"}, {"type": "integer"}],
            (Variant(tag=None, type=Const("a")), Variant(tag=None, type=Scalar("integer"))),
            id="catch-all-of-another-type",
        ),
        pytest.param(
            [{"const": "a"}, {"type": "string", "minLength": 3}],
            (
                Variant(tag=None, type=Const("a")),
                Variant(tag=None, type=Scalar("string", Constraints(min_length=3))),
            ),
            id="constrained-catch-all",
        ),
    ],
)
def test_consts_that_do_not_share_one_plain_type_are_an_untagged_union(
    members: list[dict[str, Any]], variants: tuple[Variant, ...]
) -> None:
    """Only consts of one type, plus at most one plain member of that type, make an enum."""
    with collecting(strict=False):
        value = surface({"Value": {"oneOf": members}}).types["Value"]
    assert isinstance(value, UnionType)
    assert value.variants == variants


def test_a_constrained_union_member_keeps_its_constraints_on_the_member() -> None:
    """The models enforce a member's own constraints (tests/runtime/test_scalar_shapes.py): no gap."""
    defs = {"Value": {"oneOf": [{"const": "a"}, {"type": "string", "minLength": 3}]}}
    with collecting(strict=True):
        built = surface(defs)
    value = built.types["Value"]
    assert isinstance(value, UnionType)
    assert [v.type for v in value.variants] == [Const("a"), Scalar("string", Constraints(min_length=3))]


def test_an_array_member_keeps_its_min_items() -> None:
    """2.2.0's SessionConfigSelectOptions: two arrays, each with ``minItems: 1``."""
    defs = {
        "Option": obj({"value": {"type": "string"}}, ["value"]),
        "Options": {
            "anyOf": [
                {"title": "Flat", "type": "array", "items": {"$ref": "#/$defs/Option"}, "minItems": 1},
                {"title": "Pairs", "type": "array", "items": {"type": "string"}, "maxItems": 2},
            ]
        },
    }
    with collecting(strict=True):
        built = surface(defs)
    options = built.types["Options"]
    assert isinstance(options, UnionType)
    assert [v.type for v in options.variants] == [
        ArrayOf(Ref("Option"), Constraints(min_items=1)),
        ArrayOf(Scalar("string"), Constraints(max_items=2)),
    ]
    assert [v.title for v in options.variants] == ["Flat", "Pairs"]


@pytest.mark.parametrize(
    "node",
    [
        {"$ref": "#/$defs/Name", "maxLength": 3},
        {"allOf": [{"$ref": "#/$defs/Name"}], "minLength": 1},
    ],
    ids=["ref", "single-allOf"],
)
def test_constraints_beside_a_reference_are_a_gap(node: dict[str, Any]) -> None:
    defs = {"Name": {"type": "string"}, "T": obj({"n": node})}
    with collecting(strict=False) as found:
        built = surface(defs)
    assert fields_of(built, "T")["n"].type == Ref("Name")
    assert [(g.message.split(":")[0], g.default, g.pointer) for g in found.gaps] == [
        (
            "constraints beside a reference are not enforced by the generated models",
            "the value is checked against the referenced type only",
            "/$defs/T/properties/n",
        )
    ]


def test_each_type_of_a_type_list_keeps_the_constraints_that_apply_to_it() -> None:
    prop = {"type": ["integer", "string", "null"], "minimum": 0, "maxLength": 3, "format": "id"}
    with collecting(strict=False) as found:
        built = surface({"T": obj({"v": prop})})
    assert fields_of(built, "T")["v"].type == Nullable(
        AnyOf(
            (
                Scalar("integer", Constraints(minimum=0, format="id")),
                Scalar("string", Constraints(max_length=3, format="id")),
            )
        )
    )
    assert found.gaps == [], "each member's constraints are enforced (tests/runtime/test_scalar_shapes.py)"


def test_a_constrained_nullable_property_is_not_a_union_member() -> None:
    with collecting(strict=True):
        built = surface({"T": obj({"n": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}})})
    assert fields_of(built, "T")["n"].type == Nullable(Scalar("integer", Constraints(minimum=1)))


def test_an_enum_of_other_scalars_is_an_alias_of_its_literals() -> None:
    with collecting(strict=False) as found:
        built = surface({"Flag": {"enum": [True, False]}, "Mixed": {"enum": ["a", 1]}})
    flag, mixed = built.types["Flag"], built.types["Mixed"]
    assert isinstance(flag, AliasType) and isinstance(mixed, AliasType)
    assert flag.target == AnyOf((Const(True), Const(False)))
    assert mixed.target == AnyOf((Const("a"), Const(1)))
    assert [(g.message, g.default) for g in found.gaps] == [
        ("the models match the boolean constant true as pydantic does", "1 and 1.0 are accepted for it too"),
        ("the models match the boolean constant false as pydantic does", "0 and 0.0 are accepted for it too"),
    ]


def test_null_in_an_enum_makes_it_nullable() -> None:
    fields = fields_of(
        surface(
            {
                "Holder": obj(
                    {
                        "mode": {"type": ["string", "null"], "enum": ["a", "b", None]},
                        "only": {"enum": [None]},
                    }
                )
            }
        ),
        "Holder",
    )
    assert (fields["mode"].type, fields["mode"].nullable) == (Nullable(AnyOf((Const("a"), Const("b")))), True)
    assert fields["only"].type == Scalar("null")


def test_enum_and_const_on_a_property_are_literal_types() -> None:
    fields = fields_of(
        surface(
            {"Holder": obj({"kind": {"enum": ["a", "b"]}, "one": {"enum": ["x"]}, "pinned": {"const": 7}})}
        ),
        "Holder",
    )
    assert fields["kind"].type == AnyOf((Const("a"), Const("b")))
    assert fields["one"].type == Const("x")
    assert fields["pinned"].type == Const(7)


# -- docs and extension keywords --------------------------------------------------------


def test_descriptions_become_stripped_docs() -> None:
    built = surface(
        {
            "Thing": {
                "description": "  A thing.\n\nMore.\n",
                **obj({"a": {"type": "string", "description": "\tA.\n"}}),
            }
        }
    )
    thing = built.object("Thing")
    assert thing.doc == "A thing.\n\nMore."
    assert fields_of(built, "Thing")["a"].doc == "A."


def test_lenient_flags_are_read_from_the_property() -> None:
    fields = fields_of(
        surface(
            {
                "Holder": obj(
                    {
                        "caps": {"type": "object", "default": {}, "x-deserialize-default-on-error": True},
                        "items": {
                            "type": "array",
                            "items": {"type": "string"},
                            "x-deserialize-skip-invalid-items": True,
                        },
                        "strict": {"type": "string"},
                        "servers": {
                            "type": "array",
                            "items": {"type": "string"},
                            "x-deserialize-default-on-null": True,
                        },
                    }
                )
            }
        ),
        "Holder",
    )
    flags = {
        wire: (f.default_on_error, f.skip_invalid_items, f.default_on_null) for wire, f in fields.items()
    }
    assert flags == {
        "caps": (True, False, False),
        "items": (False, True, False),
        "strict": (False, False, False),
        "servers": (False, False, True),
    }
    assert {wire for wire, f in fields.items() if f.lenient} == {"caps", "items", "servers"}
    assert fields["caps"].default == {}
    # default-on-null leaves the type as the schema writes it: a list, not a nullable one
    assert fields["servers"].type == ArrayOf(Scalar("string")) and not fields["servers"].nullable


@pytest.mark.parametrize(
    "node",
    [{}, True, {"title": "Anything"}, {"description": "Any value."}],
    ids=["empty", "true", "title-only", "description-only"],
)
def test_an_untyped_schema_is_any_value_at_every_position(node: Any) -> None:
    built = surface(
        {
            "Holder": obj(
                {
                    "field": node,
                    "items": {"type": "array", "items": node},
                    "values": {"type": "object", "additionalProperties": node},
                    # a boolean union member is refused outright ("a union member must be an object")
                    "choice": {"anyOf": [{"type": "integer"}, node if isinstance(node, dict) else {}]},
                }
            ),
            "Alias": node if isinstance(node, dict) else {"allOf": [True]},
        }
    )
    fields = fields_of(built, "Holder")
    assert fields["field"].type == Scalar("any") and fields["field"].nullable
    assert fields["items"].type == ArrayOf(Scalar("any"))
    assert fields["values"].type == MapOf(Scalar("any"))
    assert fields["choice"].type == AnyOf((Scalar("integer"), Scalar("any")))
    alias = built.types["Alias"]
    assert isinstance(alias, AliasType) and alias.target == Scalar("any")


def test_meta_field_is_an_optional_nullable_lenient_map() -> None:
    meta = {
        "description": META_DOC,
        "type": ["object", "null"],
        "x-deserialize-default-on-error": True,
        "additionalProperties": True,
    }
    field = fields_of(surface({"Request": obj({"_meta": meta})}), "Request")["_meta"]
    assert field == Field(
        wire_name="_meta",
        py_name="field_meta",
        type=Nullable(MapOf(Scalar("any"))),
        required=False,
        nullable=True,
        doc=META_DOC,
        default_on_error=True,
    )


def test_x_docs_ignore_marks_a_type_internal() -> None:
    built = surface({"Envelope": {**obj({}), "x-docs-ignore": True}, "Payload": obj({})})
    assert (built.object("Envelope").internal, built.object("Payload").internal) == (True, False)


UNKNOWN_EXTENSIONS: dict[str, Any] = {
    "Thing": {
        **obj({"a": {"type": "string", "x-order": 1}}),
        "x-rust-type": "acp::Thing",
    }
}


def test_unknown_x_keywords_are_gaps_whose_default_is_to_ignore_them() -> None:
    with collecting(strict=False) as found:
        built = surface(UNKNOWN_EXTENSIONS)
    assert found.gaps == [
        Gap(
            "unknown extension keyword 'x-order'",
            default="ignored",
            section="[extensions]",
            file="schema.json",
            pointer="/$defs/Thing/properties/a/x-order",
        ),
        Gap(
            "unknown extension keyword 'x-rust-type'",
            default="ignored",
            section="[extensions]",
            file="schema.json",
            pointer="/$defs/Thing/x-rust-type",
        ),
    ]
    assert built.types == surface({"Thing": obj({"a": {"type": "string"}})}).types


@pytest.mark.parametrize("strict", [None, True], ids=["no-collector", "strict-collector"])
def test_an_unknown_x_keyword_is_an_error_outside_a_lenient_collector(strict: bool | None) -> None:
    with pytest.raises(CodegenError) as raised:
        if strict is None:
            surface(UNKNOWN_EXTENSIONS)
        else:
            with collecting(strict=True):
                surface(UNKNOWN_EXTENSIONS)
    assert raised.value.message == (
        "unknown extension keyword 'x-order' (extend [extensions] in codegen/knowledge.toml)"
    )
    assert raised.value.pointer == "/$defs/Thing/properties/a/x-order"


def test_gaps_follow_the_order_of_the_file() -> None:
    """Strict mode stops at the first unknown keyword in the file, not the first in the alphabet."""
    defs = {"Thing": {**obj({"a": {"type": "string", "x-zeta": 1}}), "x-alpha": 2}}
    with collecting(strict=False) as found:
        surface(defs)
    assert [g.message for g in found.gaps] == [
        "unknown extension keyword 'x-zeta'",
        "unknown extension keyword 'x-alpha'",
    ]
    with pytest.raises(CodegenError, match="x-zeta"):
        surface(defs)


def test_a_validation_keyword_the_models_cannot_enforce_is_a_gap() -> None:
    defs = {
        "Thing": obj(
            {
                "count": {"type": "integer", "multipleOf": 2},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            }
        )
    }
    with collecting(strict=False) as found:
        built = surface(defs)
    assert found.gaps == [
        Gap(
            f"JSON Schema keyword {keyword!r} is not enforced by the generated models",
            default="the models accept what it would reject",
            file="schema.json",
            pointer=f"/$defs/Thing/properties/{field}/{keyword}",
        )
        for field, keyword in (("count", "multipleOf"), ("tags", "uniqueItems"))
    ]
    assert fields_of(built, "Thing")["count"].type == Scalar("integer")
    with pytest.raises(CodegenError) as raised:
        surface(defs)
    assert raised.value.message == "JSON Schema keyword 'multipleOf' is not enforced by the generated models"


def test_x_prefixed_property_names_and_data_are_not_keywords() -> None:
    built = surface(
        {"Thing": obj({"x-name": {"type": "string"}, "d": {"type": "object", "default": {"x-k": 1}}})}
    )
    fields = fields_of(built, "Thing")
    assert (fields["x-name"].py_name, fields["x-name"].type) == ("x_name", Scalar("string"))
    assert fields["d"].default == {"x-k": 1}


# -- stability ------------------------------------------------------------------------

STABLE_DEFS: dict[str, Any] = {"Old": obj({"a": {"type": "string"}})}
UNSTABLE_DEFS: dict[str, Any] = {
    "Old": obj(
        {
            "a": {"type": "string"},
            "b": {"type": "string"},
            "c": {"type": "string", "description": "**UNSTABLE**\n\nMay change."},
        }
    ),
    "New": obj({"z": {"type": "string"}}),
    "Marked": {"description": "**UNSTABLE**", "type": "string"},
}


def unstable_flags(built: ApiSurface) -> dict[str, Any]:
    """Each type's ``unstable`` flag, with its fields' flags if it is an object."""
    return {
        name: (
            (t.unstable, {f.wire_name: f.unstable for f in t.fields})
            if isinstance(t, ObjectType)
            else t.unstable
        )
        for name, t in built.types.items()
    }


def test_a_stable_surface_marks_nothing_unstable_even_under_the_marker() -> None:
    assert unstable_flags(build(UNSTABLE_DEFS)) == {
        "Marked": False,
        "New": (False, {"z": False}),
        "Old": (False, {"a": False, "b": False, "c": False}),
    }


def test_what_the_stable_baseline_lacks_or_the_marker_names_is_unstable() -> None:
    built = build(UNSTABLE_DEFS, "unstable", baseline=build(STABLE_DEFS))
    assert unstable_flags(built) == {
        "Marked": True,
        "New": (True, {"z": False}),
        "Old": (False, {"a": False, "b": True, "c": True}),
    }


def test_without_a_baseline_only_the_marker_makes_unstable() -> None:
    assert unstable_flags(build(UNSTABLE_DEFS, "unstable")) == {
        "Marked": True,
        "New": (False, {"z": False}),
        "Old": (False, {"a": False, "b": False, "c": True}),
    }


# -- refusals --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("defs", "message", "pointer"),
    [
        pytest.param({"T": 3}, "a type definition must be a JSON object", "/$defs/T", id="def-not-object"),
        pytest.param(
            {"T": obj({"x": {"$ref": "#/definitions/A"}})},
            "unsupported $ref '#/definitions/A': only '#/$defs/<name>' is supported",
            "/$defs/T/properties/x/$ref",
            id="ref-outside-defs",
        ),
        pytest.param(
            {"T": obj({"x": {"$ref": "#/$defs/Nowhere"}})},
            "$ref points to nowhere: #/$defs/Nowhere",
            "/$defs/T/properties/x/$ref",
            id="ref-to-missing-def",
        ),
        pytest.param(
            {"T": obj({"x": {"type": "float"}})},
            "unknown JSON type 'float'",
            "/$defs/T/properties/x/type",
            id="unknown-type",
        ),
        pytest.param(
            {"T": obj({"x": {"type": ["string", 3]}})},
            "'type' must name JSON types",
            "/$defs/T/properties/x/type",
            id="type-list-not-names",
        ),
        pytest.param(
            {"T": obj({"x": {"const": {"a": 1}}})},
            "only scalar const values are supported",
            "/$defs/T/properties/x/const",
            id="object-const",
        ),
        pytest.param(
            {"E": {"enum": ["a", 2.5]}},
            "only string, integer, boolean or null enum values are supported",
            "/$defs/E/enum",
            id="object-enum-value",
        ),
        pytest.param(
            {"E": {"oneOf": [{"const": "a"}, {"const": "a"}]}},
            "enum value 'a' appears twice",
            "/$defs/E/oneOf/1",
            id="duplicate-enum-value",
        ),
        pytest.param(
            {"T": obj({"x": {"anyOf": []}})},
            "'anyOf' must be a non-empty array",
            "/$defs/T/properties/x/anyOf",
            id="empty-any-of",
        ),
        pytest.param(
            {"T": obj({"x": {"anyOf": [1]}})},
            "a union member must be an object",
            "/$defs/T/properties/x/anyOf/0",
            id="any-of-member-not-object",
        ),
        pytest.param(
            {"T": obj({"x": False})},
            "a property schema must be an object",
            "/$defs/T/properties/x",
            id="false-property",
        ),
        pytest.param(
            {"T": {"type": "object", "properties": []}},
            "'properties' must be an object",
            "/$defs/T/properties",
            id="properties-not-object",
        ),
        pytest.param(
            {"T": {"type": "object", "properties": {}, "required": "x"}},
            "'required' must be an array of strings",
            "/$defs/T/required",
            id="required-not-list",
        ),
        pytest.param(
            {"T": obj({"x": {"type": "array", "items": 3}})},
            "a schema must be an object or a boolean",
            "/$defs/T/properties/x/items",
            id="items-not-schema",
        ),
        pytest.param(
            {"S": {"type": "string"}, "T": {"type": "object", "allOf": [{"$ref": "#/$defs/S"}]}},
            "allOf may only combine object types",
            "/$defs/T/allOf/0",
            id="all-of-a-scalar",
        ),
        pytest.param(
            {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
            "$ref cycle cannot be typed: A -> B -> A",
            "/$defs/A",
            id="alias-cycle",
        ),
        pytest.param(
            {
                "A": {"type": "object", "allOf": [{"$ref": "#/$defs/B"}]},
                "B": {"type": "object", "allOf": [{"$ref": "#/$defs/A"}]},
            },
            "$ref cycle cannot be typed: A -> B -> A",
            "/$defs/A",
            id="all-of-cycle",
        ),
    ],
)
def test_bad_input_is_refused_at_its_pointer(defs: dict[str, Any], message: str, pointer: str) -> None:
    with pytest.raises(CodegenError) as raised:
        surface(defs)
    assert (raised.value.message, raised.value.file, raised.value.pointer) == (
        message,
        "schema.json",
        pointer,
    )


def test_a_class_may_refer_to_itself() -> None:
    """Unlike an alias cycle, a field is evaluated lazily: a recursive class is fine."""
    built = surface({"Node": obj({"next": {"$ref": "#/$defs/Node"}})})
    assert fields_of(built, "Node")["next"].type == Ref("Node")
    assert built.recursive_types()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param([], "the schema root must be a JSON object", id="root-not-object"),
        pytest.param({"anyOf": []}, "the schema has no '$defs' object", id="no-defs"),
    ],
)
def test_a_schema_without_defs_object_is_refused_at_the_root(data: Any, message: str) -> None:
    with pytest.raises(CodegenError) as raised:
        build_surface(document(data), document(META, "meta.json"), "stable")
    assert (raised.value.message, raised.value.pointer) == (message, "")
