"""The IR builder on small hand-written unions: tags, catch-alls, shared fields and nesting at any depth."""

from __future__ import annotations

import pytest

from codegen.schema.ir import (
    ApiSurface,
    ArrayOf,
    Const,
    Constraints,
    Nullable,
    Origin,
    Ref,
    Scalar,
    UnionType,
)
from tests.support.schemas import nested_defs, obj, surface, tagged


@pytest.fixture(scope="module")
def nested() -> ApiSurface:
    return surface(nested_defs())


def union(built: ApiSurface, name: str) -> UnionType:
    found = built.types[name]
    assert isinstance(found, UnionType), name
    return found


def member_types(found: UnionType) -> dict[object, str]:
    return {
        v.tag if v is not found.catch_all else "<other>": v.type.name
        for v in found.members
        if isinstance(v.type, Ref)
    }


def test_an_untyped_member_of_a_union_of_objects_is_any_value_and_opens_it() -> None:
    """2.2.0's ErrorData: two object shapes and ``{"title": "Other"}``, which is no object class."""
    built = surface(
        {
            "NotFound": obj({"sessionId": {"type": "string"}}, ["sessionId"]),
            "Data": {
                "anyOf": [
                    {"title": "NotFound", "allOf": [{"$ref": "#/$defs/NotFound"}]},
                    {"title": "Other", "description": "Any other value."},
                ]
            },
        }
    )
    data = union(built, "Data")
    assert [(v.title, v.type) for v in data.variants] == [
        ("NotFound", Ref("NotFound")),
        ("Other", Scalar("any")),
    ]
    assert data.variants[1].doc == "Any other value."
    assert data.open and not data.tagged and data.catch_all is None
    assert set(built.types) == {"NotFound", "Data"}, "no empty class for the untyped member"


def test_a_scalar_or_array_member_of_a_union_of_objects_keeps_its_type() -> None:
    built = surface(
        {
            "Either": {
                "anyOf": [
                    tagged("kind", "a"),
                    {"title": "Name", "type": "string", "maxLength": 3},
                    {"title": "Names", "type": "array", "items": {"type": "string"}, "minItems": 1},
                ]
            }
        }
    )
    either = union(built, "Either")
    assert either.tag_wire_name == "kind" and not either.open
    assert [v.type for v in either.variants][1:] == [
        Scalar("string", Constraints(max_length=3)),
        ArrayOf(Scalar("string"), Constraints(min_items=1)),
    ]


def test_a_union_is_open_only_with_a_catch_all_or_an_any_member(nested: ApiSurface) -> None:
    assert union(nested, "Update").open  # its catch-all
    closed = surface({"Mixed": {"anyOf": [{"type": "integer"}, {"type": "string"}]}})
    assert not union(closed, "Mixed").open
    loose = surface({"Mixed": {"anyOf": [{"type": "integer"}, {"title": "Anything"}]}})
    assert union(loose, "Mixed").open


def test_each_level_is_a_union_on_its_own_tag(nested: ApiSurface) -> None:
    top = union(nested, "Update")
    assert top.tag_wire_name == "kind"
    assert member_types(top) == {"message": "MessageUpdate", "state": "StateUpdate", "<other>": "OtherUpdate"}
    state = union(nested, "StateUpdate")
    assert state.tag_wire_name == "state"
    assert member_types(state) == {
        "running": "RunningStateUpdate",
        "idle": "IdleStateUpdate",
        "<other>": "OtherStateUpdate",
    }
    idle = union(nested, "IdleStateUpdate")
    assert idle.tag_wire_name == "stopReason"
    assert member_types(idle) == {
        "end_turn": "EndTurnIdleStateUpdate",
        "error": "ErrorIdleStateUpdate",
        None: "NoneIdleStateUpdate",
        "<other>": "OtherIdleStateUpdate",
    }


def test_a_class_at_the_bottom_pins_every_tag_above_it(nested: ApiSurface) -> None:
    tags = {(t.wire_name, t.value) for t in nested.tags_of("ErrorIdleStateUpdate")}
    assert tags == {("kind", "state"), ("state", "idle"), ("stopReason", "error")}
    fields = {f.wire_name for f in nested.all_fields("ErrorIdleStateUpdate")}
    assert fields == {"kind", "state", "stopReason", "error", "note"}
    # it builds on the member of the union one level down, which builds on the payload's member
    assert [o.name for o in nested.lineage("ErrorIdleStateUpdate")] == [
        "ErrorIdleStateUpdate",
        "ErrorIdleState",
        "ErrorIdle",
        "ErrorStopReason",
    ]


def test_catch_alls_refuse_the_known_tags_of_their_own_level(nested: ApiSurface) -> None:
    reserved = {(r.wire_name, r.values) for r in nested.reserved_of("OtherIdleStateUpdate")}
    assert reserved == {("stopReason", ("end_turn", "error"))}
    assert {(t.wire_name, t.value) for t in nested.tags_of("OtherIdleStateUpdate")} == {
        ("kind", "state"),
        ("state", "idle"),
    }
    assert {(r.wire_name, r.values) for r in nested.reserved_of("OtherStateUpdate")} == {
        ("state", ("running", "idle"))
    }


def test_a_null_tag_member_takes_a_null_or_absent_tag(nested: ApiSurface) -> None:
    none = nested.object("NoneIdle")
    stop = none.field("stopReason")
    assert stop is not None and stop.type == Scalar("null") and not stop.required
    assert stop.default_on_error, "a malformed stop reason is treated as absent, as the shared property says"
    assert none.origin == Origin("Idle", "stopReason", None, "none", "null")
    assert union(nested, "IdleStateUpdate").members[2].tag is None


def test_properties_next_to_the_any_of_are_shared(nested: ApiSurface) -> None:
    idle = union(nested, "Idle")
    assert [f.wire_name for f in idle.fields] == ["stopReason", "note"]
    for member in ("EndTurnIdle", "ErrorIdle", "OtherIdle", "NoneIdle"):
        assert {"stopReason", "note"} <= {f.wire_name for f in nested.all_fields(member)}
    end_turn = nested.object("EndTurnIdle").field("stopReason")
    assert end_turn is not None and end_turn.type == Const("end_turn")
    assert end_turn.doc == "Why work stopped.", "the member's tag keeps the shared property's description"
    assert not end_turn.default_on_error, "a pinned tag is not lenient"


def test_a_variant_adds_fields_through_all_of(nested: ApiSurface) -> None:
    error = nested.object("ErrorIdle")
    assert error.base == "ErrorStopReason"
    field = nested.all_fields("ErrorIdle")
    found = next(f for f in field if f.wire_name == "error")
    assert found.type == Nullable(Ref("Error")) and found.default_on_error


def test_derived_types_record_which_member_they_are(nested: ApiSurface) -> None:
    assert union(nested, "StateUpdate").origin == Origin("Update", "kind", "state", "state", "tag")
    assert union(nested, "IdleStateUpdate").origin == Origin("StateUpdate", "state", "idle", "idle", "tag")
    assert nested.object("EndTurnIdleStateUpdate").origin == Origin(
        "IdleStateUpdate", "stopReason", "end_turn", "end_turn", "tag"
    )
    assert nested.object("OtherIdleStateUpdate").origin == Origin(
        "IdleStateUpdate", "stopReason", None, "other", "other"
    )
    assert nested.types["Idle"].origin is None, "a $defs type is the payload, not a member"


def test_inline_object_with_properties_and_any_of_keeps_both() -> None:
    """Properties next to an inline ``anyOf`` are shared, and each member gets its own name."""
    built = surface(
        {
            "Holder": obj(
                {
                    "shape": {
                        "type": "object",
                        "properties": {"color": {"type": "string"}},
                        "required": ["color"],
                        "anyOf": [
                            {
                                **tagged("kind", "circle"),
                                "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
                            },
                            {
                                **tagged("kind", "square"),
                                "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                            },
                        ],
                    }
                },
                ["shape"],
            )
        }
    )
    holder = built.object("Holder")
    field = holder.field("shape")
    assert field is not None and field.type == Ref("HolderShape")
    shape = union(built, "HolderShape")
    assert [f.wire_name for f in shape.fields] == ["color"]
    assert member_types(shape) == {"circle": "CircleHolderShape", "square": "SquareHolderShape"}
    for name, own in (("CircleHolderShape", "r"), ("SquareHolderShape", "side")):
        fields = {f.wire_name: f for f in built.all_fields(name)}
        assert set(fields) == {"kind", "color", own}
        assert fields["color"].required


def test_an_inline_union_of_objects_is_named_per_member() -> None:
    """Three inline object members once all claimed one context name (the third one failed)."""
    built = surface(
        {
            "Holder": obj(
                {
                    "item": {
                        "anyOf": [
                            {"title": "a", **obj({"a": {"type": "string"}}, ["a"])},
                            {"title": "b", **obj({"b": {"type": "string"}}, ["b"])},
                            {"title": "c", **obj({"c": {"type": "string"}}, ["c"])},
                            {"type": "null"},
                        ]
                    }
                }
            )
        }
    )
    field = built.object("Holder").field("item")
    assert field is not None and field.type == Nullable(Ref("HolderItem"))
    item = union(built, "HolderItem")
    assert not item.tagged
    assert [v.type for v in item.variants] == [Ref("AHolderItem"), Ref("BHolderItem"), Ref("CHolderItem")]
