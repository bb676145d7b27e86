"""Renames: ``rename_refs`` on every kind of expression, ``shape``, ``detect_renames``, renames in a diff."""

from __future__ import annotations

import dataclasses
from typing import get_args

import pytest

from codegen.diff.renames import detect_renames, rename_refs, shape
from codegen.schema.ir import (
    AliasType,
    AnyOf,
    ArrayOf,
    Const,
    Constraints,
    EnumType,
    EnumValue,
    Field,
    MapOf,
    NamedType,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
    UnionType,
    Variant,
)
from tests.support.diffkit import (
    PYTHON,
    base_data,
    base_surface,
    changes,
    edited,
    obj,
    only,
    rename,
    renamed,
    surface_from,
    tiny,
)

RENAMES = {"Old": "New"}

# --- rename_refs ------------------------------------------------------------------------

REFS = [
    (Ref("Old"), Ref("New")),
    (Ref("Kept"), Ref("Kept")),
    (Scalar("string", Constraints(min_length=1)), Scalar("string", Constraints(min_length=1))),
    (ArrayOf(Ref("Old"), Constraints(min_items=1)), ArrayOf(Ref("New"), Constraints(min_items=1))),
    (MapOf(Ref("Old")), MapOf(Ref("New"))),
    (Const("Old"), Const("Old")),  # a const is a value on the wire, not a reference
    (Nullable(Ref("Old")), Nullable(Ref("New"))),
    (AnyOf((Ref("Old"), Scalar("null"))), AnyOf((Ref("New"), Scalar("null")))),
    (
        AnyOf((ArrayOf(MapOf(Nullable(Ref("Old")))), Ref("Kept"))),
        AnyOf((ArrayOf(MapOf(Nullable(Ref("New")))), Ref("Kept"))),
    ),
]


@pytest.mark.parametrize(("expr", "expected"), REFS, ids=lambda e: getattr(e, "kind", None))
def test_rename_refs_renames_every_reference_and_keeps_the_rest(expr: TypeExpr, expected: TypeExpr) -> None:
    assert rename_refs(expr, RENAMES) == expected


def test_rename_refs_is_tried_on_every_kind_of_expression() -> None:
    assert {type(expr) for expr, _ in REFS} == set(get_args(TypeExpr))


@pytest.mark.parametrize(("expr", "_expected"), REFS)
def test_rename_refs_without_renames_returns_the_expression_itself(
    expr: TypeExpr, _expected: TypeExpr
) -> None:
    assert rename_refs(expr, {}) is expr


# --- shape ------------------------------------------------------------------------------


def samples(ref: str) -> list[NamedType]:
    """One type of each kind; all but the enum refer to ``ref``."""
    return [
        obj("Thing", ("ref", Ref(ref)), ("count", Scalar("integer")), base=ref),
        UnionType("Choice", (Variant("a", Ref(ref)),), tag_wire_name="type", tag_py_name="type"),
        EnumType("Colour", "string", (EnumValue("red"), EnumValue("blue")), open=False),
        AliasType("Alias", ArrayOf(Ref(ref))),
    ]


SAMPLES = samples("Old")
KIND = [named.kind for named in SAMPLES]


def test_the_samples_hold_every_kind_of_named_type() -> None:
    assert {type(named) for named in SAMPLES} == set(get_args(NamedType))


@pytest.mark.parametrize("named", SAMPLES, ids=KIND)
def test_a_shape_is_hashable_and_names_the_kind(named: NamedType) -> None:
    key = shape(named, {})
    assert hash(key) == hash(shape(named, {}))
    assert key[0] == named.kind


@pytest.mark.parametrize("named", SAMPLES, ids=KIND)
def test_a_shape_ignores_the_name_and_the_docs(named: NamedType) -> None:
    other = dataclasses.replace(named, name="Other", doc="other docs", schema_name="Other")
    assert shape(other, {}) == shape(named, {})


@pytest.mark.parametrize(("old", "new"), list(zip(SAMPLES, samples("New"), strict=True)), ids=KIND)
def test_a_shape_reads_old_references_through_the_renames(old: NamedType, new: NamedType) -> None:
    assert shape(old, RENAMES) == shape(new, {})
    assert (shape(old, RENAMES) != shape(old, {})) == (old.kind != "enum")


# --- detect_renames -----------------------------------------------------------------------


def test_a_type_gone_while_one_of_its_shape_arrived_is_a_rename() -> None:
    old = tiny(obj("Cost", ("amount", Scalar("number"))))
    new = tiny(obj("Price", ("amount", Scalar("number"))))
    assert detect_renames(old, new) == {"Cost": "Price"}


def test_renamed_types_that_refer_to_each_other_are_found_together() -> None:
    old = tiny(obj("Usage", ("cost", Ref("Cost"))), obj("Cost", ("amount", Scalar("number"))))
    new = tiny(obj("Report", ("cost", Ref("Price"))), obj("Price", ("amount", Scalar("number"))))
    assert detect_renames(old, new) == {"Cost": "Price", "Usage": "Report"}


def test_a_rename_must_be_one_to_one() -> None:
    """Two types of one shape gone and two arrived: which went where is a guess, so none is a rename."""
    old = tiny(obj("A", ("x", Scalar("string"))), obj("B", ("x", Scalar("string"))))
    new = tiny(obj("C", ("x", Scalar("string"))), obj("D", ("x", Scalar("string"))))
    assert detect_renames(old, new) == {}


def test_an_alias_of_a_bare_scalar_is_never_a_rename() -> None:
    old = tiny(AliasType("ConnectionId", Scalar("string")))
    new = tiny(AliasType("RequestId", Scalar("string")))
    assert detect_renames(old, new) == {}


def test_a_type_kept_by_name_is_no_rename() -> None:
    surface = tiny(obj("Cost", ("amount", Scalar("number"))))
    assert detect_renames(surface, surface) == {}


# --- renames in a diff of a real release ---------------------------------------------------


def test_a_renamed_type_is_one_python_change_and_nothing_on_the_wire() -> None:
    found = changes(base_surface(), edited(rename("Cost", "Price")))
    assert [(c.rule.id, c.subject, c.detail, c.roles) for c in found] == [
        ("python-class-renamed", "Cost", "now Price", PYTHON)
    ]


def test_a_renamed_params_type_renames_the_python_method() -> None:
    found = changes(base_surface(), edited(rename("ListSessionsRequest", "ListRequest")))
    assert {(c.rule.id, c.subject, c.detail) for c in found} == {
        ("python-class-renamed", "ListSessionsRequest", "now ListRequest"),
        ("python-method-renamed", "agent.list", "list_sessions -> list"),
    }
    assert all(c.layer == "python" for c in found)


def test_renames_are_found_through_references_to_renamed_types() -> None:
    data = renamed(renamed(base_data(), "UsageUpdate", "UsageReport"), "Cost", "Price")
    found = changes(base_surface(), surface_from(data))
    renames = {(c.subject, c.detail) for c in found if c.rule.id == "python-class-renamed"}
    assert ("Cost", "now Price") in renames
    assert ("UsageUpdate", "now UsageReport") in renames
    assert not [c for c in found if c.layer == "wire"]


def test_a_changed_shape_is_a_removal_and_an_addition_not_a_rename() -> None:
    data = renamed(base_data(), "Cost", "Price")
    data["$defs"]["Price"]["properties"]["extra"] = {"type": "string"}
    found = changes(base_surface(), surface_from(data))
    assert only(found, "python-class-removed").subject == "Cost"
    assert only(found, "python-class-added").subject == "Price"
    # the field now refers to another class, compared by shape: one optional field more on the wire
    replaced = only(found, "python-class-replaced")
    assert (replaced.subject, replaced.detail) == ("UsageUpdate.cost", "Cost -> Price")
    assert only(found, "field-added-optional").subject == "UsageUpdate.cost.extra"
    assert len(found) == 4


def _with_default(name: str, default: object) -> ObjectType:
    return ObjectType(name, (Field("mode", "mode", Scalar("any"), False, False, default=default),))


def test_a_shape_compares_defaults_as_json_values_not_by_repr() -> None:
    """An object default's key order is no change; ``1``, ``1.0`` and ``true`` are three defaults."""
    ordered = shape(_with_default("A", {"a": 1, "b": 2}), {})
    assert ordered == shape(_with_default("B", {"b": 2, "a": 1}), {})
    assert len({shape(_with_default("C", value), {}) for value in (1, 1.0, True)}) == 3
    old = tiny(_with_default("Cost", {"a": 1, "b": 2}))
    assert detect_renames(old, tiny(_with_default("Price", {"b": 2, "a": 1}))) == {"Cost": "Price"}
    assert detect_renames(tiny(_with_default("Cost", 1)), tiny(_with_default("Price", True))) == {}
