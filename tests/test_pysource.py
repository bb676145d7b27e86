"""The small source-writing helpers every emitter shares."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.pysource import NULL, annotation, annotation_names, import_block, join_types
from codegen.schema.ir import AnyOf, ArrayOf, Const, Constraints, MapOf, Nullable, Ref, Scalar, TypeExpr

TABLE = {
    "uuid": "",
    "asyncio": "",
    "Mapping": "collections.abc",
    "Any": "typing",
    "Final": "typing",
    "Field": "pydantic",
    "schema": ".",
    "UNSET": "._params",
    "Unset": "._params",
    "build": "._params",
}


def test_import_block_groups_sections_and_sorts_like_isort() -> None:
    names = {"uuid", "asyncio", "Any", "Final", "Mapping", "Field", "schema", "build", "Unset", "UNSET"}
    names.add("other")  # not in the table: not imported
    assert import_block(names, TABLE) == (
        "from __future__ import annotations\n\n"
        "import asyncio\nimport uuid\nfrom collections.abc import Mapping\nfrom typing import Any, Final\n\n"
        "from pydantic import Field\n\n"
        "from . import schema\nfrom ._params import UNSET, Unset, build\n"
    )


def test_import_block_imports_only_what_is_used() -> None:
    assert import_block({"Any"}, TABLE, future=False) == "from typing import Any\n"
    assert import_block({"other"}, TABLE, future=False) == ""


# --- annotations of joined type expressions ------------------------------------------------

STRING, INTEGER = Scalar("string"), Scalar("integer")


def test_a_constant_containing_the_union_operator_stays_one_member() -> None:
    piped = Const("a | b")
    assert annotation(AnyOf((piped, Const("c")))) == "Literal['a | b', 'c']"
    assert annotation(join_types([Nullable(piped), Ref("Mode")]), "schema") == (
        "Literal['a | b'] | schema.Mode | None"
    )
    assert join_types([piped, Const("a"), Const("b")]) == AnyOf((piped, Const("a"), Const("b")))


def test_join_types_flattens_and_drops_repeats_of_what_is_written() -> None:
    nested = AnyOf((Ref("A"), AnyOf((Ref("B"), Nullable(Ref("A"))))))
    assert join_types([nested, Ref("B")]) == Nullable(AnyOf((Ref("A"), Ref("B"))))
    # constraints are not written, so two strings are one member; true and 1 are two constants
    assert join_types([STRING, Scalar("string", Constraints(min_length=1))]) == STRING
    assert join_types([Const(True), Const(1)]) == AnyOf((Const(True), Const(1)))
    assert annotation(AnyOf((Const(True), Const(1)))) == "Literal[True, 1]"


def test_any_absorbs_everything_and_a_string_its_constants() -> None:
    assert join_types([Ref("A"), Scalar("any"), NULL]) == Scalar("any")
    assert annotation(Nullable(Scalar("any"))) == "Any"
    assert join_types([Const("x"), STRING, Const(2)]) == AnyOf((STRING, Const(2)))
    assert join_types([NULL]) == NULL


def test_none_is_written_last_and_extra_names_before_it() -> None:
    assert annotation(AnyOf((NULL, INTEGER, STRING))) == "int | str | None"
    assert annotation(Ref("Id"), "schema", extra=("Unset",)) == "schema.Id | Unset"
    assert annotation(Nullable(INTEGER), extra=("Unset",)) == "int | Unset | None"
    assert annotation(Scalar("any"), extra=("Unset",)) == "Any"
    assert annotation(ArrayOf(AnyOf((Const("a"), Const("b"))))) == "list[Literal['a', 'b']]"


_BUILTINS = frozenset({"str", "int", "float", "bool", "list", "dict"})
_LEAVES = (
    st.sampled_from([Scalar(t) for t in ("string", "integer", "number", "boolean", "any", "null")])
    | st.builds(Ref, st.sampled_from(["Plan", "ToolCall"]))
    | st.builds(Const, st.sampled_from([1, True, "x", None]))
)
_EXPRS = st.recursive(
    _LEAVES,
    lambda inner: (
        st.builds(ArrayOf, inner)
        | st.builds(MapOf, inner)
        | st.builds(Nullable, inner)
        | st.builds(AnyOf, st.lists(inner, min_size=1, max_size=3).map(tuple))
    ),
    max_leaves=6,
)


def _written(source: str) -> frozenset[str]:
    """The names an annotation's text reads (what the test checks the data against)."""
    tree = ast.parse(source, mode="eval")
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)) - _BUILTINS


@given(_EXPRS, st.sampled_from(["", "schema"]), st.sampled_from([(), ("Unset",)]))
@settings(max_examples=300, deadline=None)
def test_annotation_names_are_the_names_the_annotation_writes(
    expr: TypeExpr, module: str, extra: tuple[str, ...]
) -> None:
    assert annotation_names(expr, module, extra) == _written(annotation(expr, module, extra))


def test_annotation_names_of_a_named_type_are_its_module_or_itself() -> None:
    assert annotation_names(Ref("Plan"), "schema") == {"schema"}
    assert annotation_names(Nullable(AnyOf((Ref("Plan"), Const(1)))), "") == {"Plan", "Literal"}
    assert annotation_names(Scalar("any"), "schema", ("Unset",)) == {"Any"}
