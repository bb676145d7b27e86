"""Where identifiers are in a source file's text, and the text with some replaced."""

from __future__ import annotations

import ast

import pytest

from codegen.vendoring.scopes import Ident
from codegen.vendoring.sourcetext import SourceText, Span, SpanError


def parsed(source: bytes) -> tuple[ast.Module, SourceText]:
    return ast.parse(source), SourceText(source)


def at(text: SourceText, span: Span) -> str:
    return text.text[span.start : span.end]


def test_columns_count_characters_and_lines_end_as_python_ends_them() -> None:
    tree, text = parsed("é = 1\r\nx = 'é'; Zé = y\rz\n".encode())
    names = {n.id: n for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert text.start_of(names["y"]) == (2, 15)  # ast says byte 15 (0-based); é is one column
    assert text.start_of(names["Zé"]) == (2, 10)
    assert text.start_of(names["z"]) == (3, 1)
    assert at(text, text.node_span(names["Zé"])) == "Zé"


def test_attribute_parameter_and_keyword_names() -> None:
    tree, text = parsed(b"def f(a, *args, k=1, **kw): ...\nx = (obj .\n  attr)\ng(key = 1)\n")
    attribute = next(n for n in ast.walk(tree) if isinstance(n, ast.Attribute))
    keyword = next(n for n in ast.walk(tree) if isinstance(n, ast.keyword))
    params = next(n for n in ast.walk(tree) if isinstance(n, ast.arguments))
    assert at(text, text.ending_identifier(attribute, "attr")) == "attr"
    assert text.position(text.ending_identifier(attribute, "attr")) == (3, 3)
    assert at(text, text.starting_identifier(keyword, "key")) == "key"
    assert [at(text, text.starting_identifier(p, p.arg)) for p in (params.vararg, params.kwarg)] == [
        "args",
        "kw",
    ]


def test_a_def_name_after_decorators_async_and_odd_spacing() -> None:
    tree, text = parsed(b"@decorator\nasync  def \\\n  handler(self): ...\n")
    function = tree.body[0]
    assert isinstance(function, ast.AsyncFunctionDef)
    assert text.position(text.def_name(function)) == (3, 3)


def test_the_names_of_import_statements() -> None:
    tree, text = parsed(
        b"from ..vendor.acp . schema import (  # the models\n    X as Y,\n    Z,\n)\nimport a.b as c\n"
    )
    assert [name for name, _ in text.import_names(tree.body[0])] == ["vendor", "acp", "schema", "X", "Y", "Z"]  # type: ignore[arg-type]
    assert [name for name, _ in text.import_names(tree.body[1])] == ["a", "b", "c"]  # type: ignore[arg-type]


def test_names_ast_keeps_as_strings() -> None:
    source = (
        b"try:\n    pass\nexcept (\n    E\n) as err:\n    pass\n"
        b"match v:\n    case P(a=1, bb=Q(a=2)) | {1: _, **rest} | [*tail] | (1 as one) | cap:\n        pass\n"
    )
    tree, text = parsed(source)
    handler = next(n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler))
    assert text.position(text.ident(Ident("err", handler))) == (5, 6)
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.MatchClass) and n.kwd_attrs == ["a", "bb"])
    assert [text.position(text.ident(Ident(k, cls, i))) for i, k in enumerate(cls.kwd_attrs)] == [
        (8, 12),
        (8, 17),
    ]
    mapping = next(n for n in ast.walk(tree) if isinstance(n, ast.MatchMapping))
    assert at(text, text.ident(Ident("rest", mapping))) == "rest"
    star = next(n for n in ast.walk(tree) if isinstance(n, ast.MatchStar))
    assert at(text, text.ident(Ident("tail", star))) == "tail"
    captures = [n for n in ast.walk(tree) if isinstance(n, ast.MatchAs) and n.name in ("one", "cap")]
    assert sorted(at(text, text.ident(Ident(n.name, n))) for n in captures if n.name) == ["cap", "one"]


def test_strings_and_tuples() -> None:
    tree, text = parsed(b'x: "A" = 1\ny: ("A"\n   "B") = 2\nz[(a, b)], z[(a), (b)], z[a, b]\n')
    strings = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)),
        key=lambda n: n.lineno,
    )
    assert [text.is_one_string(s) for s in strings] == [True, False]
    tuples = sorted(
        (n.slice for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Tuple)),
        key=lambda n: n.col_offset,
    )
    assert [text.is_parenthesized(t) for t in tuples] == [True, False, False]  # type: ignore[arg-type]


def test_replacing_keeps_every_other_byte_and_the_encoding() -> None:
    source = "# -*- coding: latin-1 -*-\r\nnom = 'café'  # é\r\nprint(nom)\r\n".encode("latin-1")
    tree, text = parsed(source)
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "nom"]
    after = text.replaced({text.checked(text.node_span(n), "nom"): "name" for n in names})
    assert after == source.replace(b"nom", b"name")


def test_a_byte_order_mark_stays() -> None:
    source = b"\xef\xbb\xbfx = 1\n"
    tree, text = parsed(source)
    name = tree.body[0].targets[0]  # type: ignore[attr-defined]
    assert text.replaced({text.node_span(name): "y"}) == b"\xef\xbb\xbfy = 1\n"


def test_a_span_that_does_not_hold_the_identifier_is_an_error() -> None:
    _, text = parsed(b"abc = 1\n")
    with pytest.raises(SpanError):
        text.checked(Span(0, 3), "abd")
    with pytest.raises(SpanError):
        text.replaced({Span(0, 2): "x", Span(1, 3): "y"})
