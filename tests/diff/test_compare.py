"""The comparison of types and type expressions (``codegen.diff.compare``), on hand-made surfaces.

No method carries these types, so every wire change is ``info`` and breaks nobody: the tests here are
about what is found, not whom it hurts (``test_senders`` and ``test_differ`` cover that).
"""

from __future__ import annotations

import inspect
from typing import get_args

import pytest

from codegen.diff.compare import enums, fields, members, methods, named, python, unions
from codegen.diff.compare.constraints import constraint_changes
from codegen.diff.model import ABSENT
from codegen.diff.rules import RuleId
from codegen.diff.wording import describe
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
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
)
from tests.support.diffkit import AGENT, Defs, base_surface, changes, edited, obj, only, tiny

# --- describe ----------------------------------------------------------------------------

DESCRIBED = [
    (Ref("Cost"), "Cost"),
    (Scalar("integer", Constraints(minimum=0)), "integer"),
    (ArrayOf(Scalar("string")), "list[string]"),
    (MapOf(Ref("Cost")), "dict[str, Cost]"),
    (Const("text"), "'text'"),
    (Const(3), "3"),
    (Nullable(Scalar("string")), "string | null"),
    (AnyOf((Scalar("string"), ArrayOf(Ref("Cost")))), "string | list[Cost]"),
    (
        Nullable(AnyOf((Scalar("string"), MapOf(Nullable(Scalar("number")))))),
        "string | dict[str, number | null] | null",
    ),
]


@pytest.mark.parametrize(("expr", "text"), DESCRIBED, ids=[text for _, text in DESCRIBED])
def test_describe_writes_an_expression_as_a_reader_thinks_of_it(expr: TypeExpr, text: str) -> None:
    assert describe(expr) == text


def test_describe_is_tried_on_every_kind_of_expression() -> None:
    assert {type(expr) for expr, _ in DESCRIBED} == set(get_args(TypeExpr))


# --- constraints ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (Constraints(), Constraints(minimum=0), [(RuleId.CONSTRAINT_TIGHTENED, "minimum", ABSENT, 0)]),
        (Constraints(minimum=0), Constraints(), [(RuleId.CONSTRAINT_LOOSENED, "minimum", 0, ABSENT)]),
        (
            Constraints(min_items=1),
            Constraints(min_items=2),
            [(RuleId.CONSTRAINT_TIGHTENED, "minItems", 1, 2)],
        ),
        (
            Constraints(min_length=2),
            Constraints(min_length=1),
            [(RuleId.CONSTRAINT_LOOSENED, "minLength", 2, 1)],
        ),
        (
            Constraints(max_length=5),
            Constraints(max_length=3),
            [(RuleId.CONSTRAINT_TIGHTENED, "maxLength", 5, 3)],
        ),
        (
            Constraints(max_items=3),
            Constraints(max_items=5),
            [(RuleId.CONSTRAINT_LOOSENED, "maxItems", 3, 5)],
        ),
        (
            Constraints(exclusive_minimum=0),
            Constraints(exclusive_minimum=1),
            [(RuleId.CONSTRAINT_TIGHTENED, "exclusiveMinimum", 0, 1)],
        ),
        (
            Constraints(pattern="^a$"),
            Constraints(pattern="^b$"),
            [(RuleId.CONSTRAINT_CHANGED, "pattern", "^a$", "^b$")],
        ),
        (
            Constraints(format="uri"),
            Constraints(format="email"),
            [(RuleId.FORMAT_CHANGED, "format", "uri", "email")],
        ),
        (
            Constraints(minimum=0, maximum=10),
            Constraints(minimum=1, maximum=20),
            [
                (RuleId.CONSTRAINT_TIGHTENED, "minimum", 0, 1),
                (RuleId.CONSTRAINT_LOOSENED, "maximum", 10, 20),
            ],
        ),
        (Constraints(pattern="^a$"), Constraints(pattern="^a$"), []),
        # format is an annotation in JSON Schema 2020-12: no validator and no model enforces it
        (Constraints(), Constraints(format="uri"), [(RuleId.FORMAT_CHANGED, "format", ABSENT, "uri")]),
        (Constraints(format="int64"), Constraints(), [(RuleId.FORMAT_CHANGED, "format", "int64", ABSENT)]),
    ],
)
def test_constraint_changes_says_which_way_each_keyword_moved(
    old: Constraints, new: Constraints, expected: list[tuple[RuleId, str, object, object]]
) -> None:
    assert list(constraint_changes(old, new)) == expected


# --- type expressions, through an alias ------------------------------------------------------


def alias_change(old: TypeExpr, new: TypeExpr) -> list[tuple[str, str]]:
    """The rules and details of the changes from ``Alias = old`` to ``Alias = new``, in report order."""
    found = changes(tiny(AliasType("Alias", old)), tiny(AliasType("Alias", new)))
    return [(c.rule.id, c.detail) for c in found]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (Scalar("string"), Scalar("string"), []),
        (Scalar("integer"), Scalar("string"), [("type-changed", "integer -> string")]),
        (Scalar("integer"), AnyOf((Scalar("integer"), Scalar("string"))), [("type-widened", "adds string")]),
        (Nullable(Scalar("integer")), Scalar("integer"), [("type-narrowed", "drops null")]),
        (Scalar("integer"), Scalar("any"), [("type-widened", "integer -> any")]),
        (
            ArrayOf(Scalar("string", Constraints(min_length=1))),
            ArrayOf(Scalar("string", Constraints(min_length=2))),
            [("constraint-tightened", "items: minLength 1 -> 2")],
        ),
        (
            ArrayOf(Scalar("string"), Constraints(min_items=1)),
            ArrayOf(Scalar("integer")),
            [("type-changed", "items: string -> integer"), ("constraint-loosened", "minItems 1 -> none")],
        ),
        (MapOf(Scalar("string")), MapOf(Scalar("integer")), [("type-changed", "values: string -> integer")]),
        (
            MapOf(ArrayOf(Scalar("string"))),
            MapOf(ArrayOf(Nullable(Scalar("string")))),
            [("type-widened", "values: items: adds null")],
        ),
        (Const("a"), Const("b"), [("type-changed", "'a' -> 'b'")]),
        # one JSON type takes the values of another: integer is a number, a constant is of its type
        (Scalar("integer"), Scalar("number"), [("type-widened", "integer -> number")]),
        (Scalar("number"), Scalar("integer"), [("type-narrowed", "number -> integer")]),
        (Const("a"), Scalar("string"), [("type-widened", "'a' -> string")]),
        (
            Scalar("string"),
            AnyOf((Const("a"), Const("b"))),
            [("type-narrowed", "string -> 'a' | 'b'")],
        ),
        (
            MapOf(Scalar("any")),
            MapOf(Scalar("string")),
            [("type-narrowed", "values: any -> string")],
        ),
        (
            ArrayOf(Scalar("integer")),
            ArrayOf(Scalar("number")),
            [("type-widened", "items: integer -> number")],
        ),
        # decided by inclusion, constraints included (issue 32, finding 5)
        (Scalar("string", Constraints(min_length=1)), Const("a"), [("type-narrowed", "string -> 'a'")]),
        (Scalar("string", Constraints(min_length=2)), Const("a"), [("type-changed", "string -> 'a'")]),
        (
            Scalar("integer", Constraints(minimum=0)),
            Scalar("number", Constraints(minimum=0)),
            [("type-widened", "integer -> number")],
        ),
        (
            Scalar("integer", Constraints(minimum=0)),
            Scalar("number", Constraints(minimum=1)),
            [("type-changed", "integer -> number")],
        ),
        (
            Scalar("number", Constraints(minimum=0)),
            Scalar("integer", Constraints(minimum=0, maximum=9)),
            [("type-narrowed", "number -> integer")],
        ),
        (
            Scalar("string"),
            Scalar("string", Constraints(pattern="^a")),
            [("constraint-tightened", "pattern none -> '^a'")],
        ),
        (Scalar("integer"), Nullable(Scalar("integer")), [("type-widened", "adds null")]),
        (
            AnyOf((Scalar("string", Constraints(pattern="^a")), Scalar("integer"))),
            Scalar("string"),
            [("type-changed", "string | integer -> string")],
        ),
        (
            AnyOf((Scalar("string", Constraints(pattern="^a")), Const(1))),
            AnyOf((Scalar("string"), Scalar("integer"))),
            [("type-widened", "1 | string -> integer | string")],
        ),
    ],
)
def test_how_a_type_expression_changed(old: TypeExpr, new: TypeExpr, expected: list[tuple[str, str]]) -> None:
    assert alias_change(old, new) == expected


# --- named types -------------------------------------------------------------------------------


def test_a_type_of_another_kind_is_type_changed() -> None:
    old = tiny(obj("Colour", ("name", Scalar("string"))))
    new = tiny(EnumType("Colour", "string", (EnumValue("red"),), open=False))
    [change] = changes(old, new)
    assert (change.rule.id, change.subject, change.detail) == ("type-changed", "Colour", "object -> enum")


def test_an_enum_of_another_base_is_type_changed() -> None:
    old = tiny(EnumType("Level", "string", (EnumValue("1"),), open=False))
    new = tiny(EnumType("Level", "integer", (EnumValue(1),), open=False))
    [change] = changes(old, new)
    assert (change.rule.id, change.detail) == ("type-changed", "string enum -> integer enum")


def test_internal_types_are_compared_like_any_other() -> None:
    """The JSON-RPC envelopes are data too (an error response's ``id``); only their payloads are not here."""
    old = tiny(AliasType("Envelope", Scalar("string"), internal=True))
    new = tiny(AliasType("Envelope", Scalar("integer"), internal=True))
    [change] = changes(old, new)
    assert (change.rule.id, change.subject) == ("type-changed", "Envelope")


def test_an_inherited_field_is_compared_when_the_base_changes() -> None:
    """With another base, the fields are compared with the inherited ones: the move itself is no change."""
    base = obj("Base", ("id", Scalar("string")))
    old = tiny(base, obj("Item", ("id", Scalar("string"))))
    new = tiny(base, obj("Item", base="Base"))
    assert changes(old, new) == ()


@pytest.mark.parametrize(
    "function",
    [
        named.compare_types,
        named.compare_type,
        fields.compare_object,
        fields.compare_field,
        named.compare_expr,
        unions.compare_union,
        enums.compare_enum,
        members.compare_members,
        methods.compare_methods,
        methods.compare_method,
        python.compare_signature,
    ],
    ids=lambda f: f.__name__,
)
def test_the_comparisons_are_generators_of_changes(function: object) -> None:
    assert inspect.isgeneratorfunction(function)


# --- unions on a real release ------------------------------------------------------------------


def test_untagged_union_members_are_matched_by_type() -> None:
    """``ElicitationContentValue`` has no tag and no catch-all: a new member is a closed-union addition."""

    def add_integer_list(defs: Defs) -> None:
        member = {"title": "IntegerArray", "type": "array", "items": {"type": "integer"}}
        defs["ElicitationContentValue"]["anyOf"].append(member)

    found = changes(base_surface(), edited(add_integer_list))
    change = only(found, "union-variant-added-closed")
    assert (change.subject, change.roles) == ("ElicitationContentValue[list[integer]]", AGENT)
    assert len(found) == 1


# --- defaults ------------------------------------------------------------------------------

DEFAULTS = [
    (1, 1.0, True),  # an integer and a number: the generated default's Python type changes
    (1, True, True),
    (0, False, True),
    (None, ABSENT, True),  # null is a default; no default is none
    ({"a": 1, "b": [2]}, {"b": [2], "a": 1}, False),  # the same object, its keys in another order
    ([1, {"x": None}], [1, {"x": None}], False),
    ([1, True], [1, 1], True),
]


@pytest.mark.parametrize(("before", "after", "changed"), DEFAULTS, ids=[repr(d[:2]) for d in DEFAULTS])
def test_defaults_are_compared_as_json_values_of_their_json_type(
    before: object, after: object, changed: bool
) -> None:
    def with_default(default: object) -> ObjectType:
        field = Field("cost", "cost", Scalar("any"), False, False, default=default)
        return ObjectType("Priced", (field,))

    found = changes(tiny(with_default(before)), tiny(with_default(after)))
    assert [c.rule.id for c in found] == ([RuleId.DEFAULT_CHANGED] if changed else [])
