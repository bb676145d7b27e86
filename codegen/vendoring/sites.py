"""Where an identifier is, as the codemod's analysis names it, and where it is in the text.

A site is one of a few small dataclasses, each holding the :mod:`ast` node
it is about (compared by identity, as the nodes are): a name or any other
expression, an attribute's name, a parameter's name, a keyword argument's
name, a ``def``'s name, or the ``i``-th name of an import statement.
:func:`span` finds its identifier in the text (checked against the name the
node holds), :func:`position` its line and column for a finding.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TypeAlias

from .scopes import Ident
from .sourcetext import SourceText, Span, SpanError

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class NameSite:
    """A name (an :class:`ast.Name` or an :class:`~.scopes.Ident`), a string annotation, or any other
    expression (its start)."""

    node: ast.expr | Ident


@dataclass(frozen=True)
class AttrSite:
    """The name after the dot of an attribute."""

    node: ast.Attribute


@dataclass(frozen=True)
class ArgSite:
    """A parameter's name."""

    node: ast.arg


@dataclass(frozen=True)
class KeywordSite:
    """A keyword argument's name."""

    node: ast.keyword


@dataclass(frozen=True)
class DefSite:
    """A ``def``'s name."""

    node: ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class ImportSite:
    """The ``index``-th name of an import statement: its ``from`` module's names, then each alias's
    dotted name and ``as`` name."""

    node: ast.Import | ast.ImportFrom
    index: int


Site: TypeAlias = NameSite | AttrSite | ArgSite | KeywordSite | DefSite | ImportSite


def import_names(statement: ast.Import | ast.ImportFrom) -> list[str]:
    """The names of an import statement as :meth:`SourceText.import_names` finds them in the text."""
    names = statement.module.split(".") if isinstance(statement, ast.ImportFrom) and statement.module else []
    for alias in statement.names:
        if alias.name != "*":
            names += alias.name.split(".")
        if alias.asname is not None:
            names.append(alias.asname)
    return names


def span(text: SourceText, site: Site) -> Span:
    """The identifier (or string) a site names, checked against the text."""
    match site:
        case NameSite(node=Ident() as ident):
            return text.ident(ident)
        case NameSite(node=ast.Name() as name):
            return text.checked(text.node_span(name), name.id)
        case NameSite(node=ast.expr() as expr):
            return text.node_span(expr)
        case AttrSite(node=attribute):
            return text.ending_identifier(attribute, attribute.attr)
        case ArgSite(node=param):
            return text.starting_identifier(param, param.arg)
        case KeywordSite(node=keyword):
            assert keyword.arg is not None
            return text.starting_identifier(keyword, keyword.arg)
        case DefSite(node=function):
            return text.def_name(function)
        case ImportSite(node=statement, index=index):
            names = text.import_names(statement)
            expected = import_names(statement)
            if len(names) != len(expected):
                raise SpanError(f"the import at line {statement.lineno} does not read as {expected}")
            return text.checked(names[index][1], expected[index])
    raise AssertionError(f"not a site: {site!r}")


def position(text: SourceText, site: Site) -> tuple[int, int]:
    """``(line, column)`` of a site, both 1-based."""
    match site:
        case NameSite(node=Ident()):
            return text.position(span(text, site))
        case NameSite(node=ast.expr() as node) | ArgSite(node=node) | KeywordSite(node=node):
            return text.start_of(node)
        case _:
            return text.position(span(text, site))
