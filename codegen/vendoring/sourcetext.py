"""A source file's text, for the codemod: where an identifier is, and the file with some replaced.

:mod:`ast` gives every node's start and end as a line and a UTF-8 byte
column; this module turns them into the character columns editors count,
finds the few identifiers :mod:`ast` keeps no position for (a ``def``'s name,
the dotted names of an import, ``except ... as name``, names in ``match``
patterns), and replaces identifiers in place.  A replacement only ever swaps
the characters of one identifier (or string literal) for others, so
comments, blank lines and formatting survive untouched, and each is checked
against the text it replaces before anything is written.
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from .scopes import Ident

__all__ = ["SourceText", "Span", "SpanError"]

_NEWLINE = re.compile(r"\r\n|\r|\n")
_NEWLINE_KEPT = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_IDENTIFIER_END = re.compile(r"\w+$")


class SpanError(Exception):
    """The text at a node's position is not what the node says (a bug, never bad input)."""


@dataclass(frozen=True, order=True)
class Span:
    """A stretch of the text: from ``start`` to ``end`` (character offsets, ``end`` excluded)."""

    start: int
    end: int


class SourceText:
    """The decoded text of a source file and its line starts, built on first use."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self._text: str | None = None
        self._encoding = "utf-8"
        self._starts: list[int] | None = None
        self._ascii = source.isascii()
        self._import_names: dict[ast.AST, list[tuple[str, Span]]] = {}

    @property
    def text(self) -> str:
        if self._text is None:
            self._encoding = tokenize.detect_encoding(io.BytesIO(self.source).readline)[0]
            self._text = self.source.decode(self._encoding)
        return self._text

    @property
    def starts(self) -> list[int]:
        """The offset where each line starts (lines end at ``\\n``, ``\\r\\n`` or ``\\r``, as Python's do)."""
        if self._starts is None:
            self._starts = [0, *(m.end() for m in _NEWLINE.finditer(self.text))]
        return self._starts

    def line(self, number: int) -> str:
        starts = self.starts
        end = starts[number] if number < len(starts) else len(self.text)
        return self.text[starts[number - 1] : end]

    def column(self, line: int, byte_column: int) -> int:
        """The character column of an :mod:`ast` byte column (both 0-based)."""
        if self._ascii or byte_column == 0:
            return byte_column
        text = self.line(line)
        if text.isascii():
            return byte_column
        return len(text.encode("utf-8")[:byte_column].decode("utf-8", errors="replace"))

    def offset(self, line: int, byte_column: int) -> int:
        return self.starts[line - 1] + self.column(line, byte_column)

    # -- where identifiers are ------------------------------------------------------------

    def node_span(self, node: ast.AST) -> Span:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return Span(start, end)

    def start_of(self, node: ast.AST) -> tuple[int, int]:
        """``(line, column)`` of a node, both 1-based."""
        line: int = node.lineno  # type: ignore[attr-defined]
        return line, self.column(line, node.col_offset) + 1  # type: ignore[attr-defined]

    def position(self, span: Span) -> tuple[int, int]:
        """``(line, column)`` of an offset, both 1-based."""
        starts = self.starts
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= span.start:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, span.start - starts[lo] + 1

    def ending_identifier(self, node: ast.AST, name: str) -> Span:
        """The identifier ``name`` a node ends with (an attribute's, a capture's)."""
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        start = end - len(name)
        if self.text[start:end] != name:
            found = _IDENTIFIER_END.search(self.text, self.starts[node.end_lineno - 1], end)  # type: ignore[attr-defined]
            if found is None:
                raise SpanError(f"no identifier {name!r} before line {node.end_lineno}")  # type: ignore[attr-defined]
            start = found.start()
        return self.checked(Span(start, end), name)

    def starting_identifier(self, node: ast.AST, name: str) -> Span:
        """The identifier ``name`` a node starts with (a parameter's, a keyword argument's)."""
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = start + len(name)
        if self.text[start:end] != name:
            found = re.compile(r"\w+").match(self.text, start)
            if found is None:
                raise SpanError(f"no identifier {name!r} at line {node.lineno}")  # type: ignore[attr-defined]
            end = found.end()
        return self.checked(Span(start, end), name)

    def checked(self, span: Span, name: str) -> Span:
        """``span`` if it holds the identifier ``name`` (as Python reads identifiers)."""
        text = self.text[span.start : span.end]
        if text != name and unicodedata.normalize("NFKC", text) != name:
            raise SpanError(f"expected {name!r} at {self.position(span)}, found {text!r}")
        return span

    def _tokens(self, start: int, end: int) -> Iterator[tuple[int, str, Span, int]]:
        """The tokens from ``start`` up to ``end``: ``(type, string, span, bracket depth)``.

        Tokenizing starts at the beginning of ``start``'s line, so that the
        indentation reads right; tokens before ``start`` are skipped.
        """
        line, column = self.position(Span(start, start))
        first = start - column + 1
        lines = _NEWLINE_KEPT.findall(self.text, first, end)
        depth = 0
        try:
            for token in tokenize.generate_tokens(iter(lines).__next__):
                kind = token.type
                if kind in (tokenize.ENDMARKER, tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
                    continue
                (row, col), (end_row, end_col) = token.start, token.end
                span = Span(self.starts[line + row - 2] + col, self.starts[line + end_row - 2] + end_col)
                if span.start < start:
                    continue
                if kind == tokenize.OP and token.string in ")]}":
                    depth -= 1
                yield kind, token.string, span, depth
                if kind == tokenize.OP and token.string in "([{":
                    depth += 1
        except (tokenize.TokenError, SyntaxError, StopIteration):
            return

    def def_name(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Span:
        """The name of a ``def`` (ast positions the statement at ``def`` or ``async``)."""
        start = self.offset(node.lineno, node.col_offset)
        previous = ""
        for _, string, span, _ in self._tokens(start, self._end(node)):
            if previous == "def":
                return self.checked(span, node.name)
            previous = string
        raise SpanError(f"no def name at line {node.lineno}")

    def import_names(self, node: ast.Import | ast.ImportFrom) -> list[tuple[str, Span]]:
        """The names of an import statement in order, ``from`` modules and ``as`` names included."""
        names = self._import_names.get(node)
        if names is None:
            start = self.offset(node.lineno, node.col_offset)
            names = [
                (string, span)
                for kind, string, span, _ in self._tokens(start, self._end(node))
                if kind == tokenize.NAME and string not in ("import", "from", "as")
            ]
            self._import_names[node] = names
        return names

    def ident(self, ident: Ident) -> Span:
        """Where an :class:`~.scopes.Ident` is."""
        owner = ident.owner
        if isinstance(owner, ast.ExceptHandler):
            after = owner.type if owner.type is not None else owner
            start = self.offset(after.end_lineno, after.end_col_offset)  # type: ignore[arg-type]
            previous = ""
            for _, string, span, _ in self._tokens(start, self._end(owner)):
                if previous == "as":
                    return self.checked(span, ident.id)
                previous = string
            raise SpanError(f"no except name at line {owner.lineno}")
        if isinstance(owner, ast.MatchAs) and owner.pattern is None:
            return self.checked(self.node_span(owner), ident.id)
        if isinstance(owner, ast.MatchAs | ast.MatchStar):
            return self.ending_identifier(owner, ident.id)
        span = self.node_span(owner)
        tokens = list(self._tokens(span.start, span.end))
        if isinstance(owner, ast.MatchMapping):
            for (_, string, _, depth), following in itertools.pairwise(tokens):
                if string == "**" and depth == 1:
                    return self.checked(following[2], ident.id)
        elif isinstance(owner, ast.MatchClass):
            cls_end = self.offset(owner.cls.end_lineno, owner.cls.end_col_offset)  # type: ignore[arg-type]
            keywords = [
                span
                for (kind, _, span, depth), following in itertools.pairwise(tokens)
                if kind == tokenize.NAME and depth == 1 and span.start >= cls_end and following[1] == "="
            ]
            if ident.index < len(keywords):
                return self.checked(keywords[ident.index], ident.id)
        raise SpanError(f"no {ident.id!r} in the pattern at line {owner.lineno}")  # type: ignore[attr-defined]

    def _end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def is_parenthesized(self, node: ast.Tuple) -> bool:
        """Whether a tuple is written in parentheses of its own (``x[(a, b)]``, not ``x[(a), (b)]``)."""
        span = self.node_span(node)
        if not self.text.startswith("(", span.start):
            return False
        for _, string, token, depth in self._tokens(span.start, span.end):
            if string == ")" and depth == 0:
                return token.end == span.end
        return False

    def is_one_string(self, node: ast.Constant) -> bool:
        """Whether a string constant is one literal (not ``"a" "b"``, which libcst calls concatenated)."""
        span = self.node_span(node)
        tokens = [t for t in self._tokens(span.start, span.end) if t[2].end <= span.end]
        return len(tokens) == 1 and tokens[0][0] == tokenize.STRING

    # -- rewriting ----------------------------------------------------------------------------

    def replaced(self, edits: dict[Span, str]) -> bytes:
        """The source with each span's text replaced, in the file's own encoding."""
        text = self.text
        parts: list[str] = []
        at = 0
        for span in sorted(edits):
            if span.start < at:
                raise SpanError(f"overlapping edits at {self.position(span)}")
            parts += (text[at : span.start], edits[span])
            at = span.end
        parts.append(text[at:])
        if text.encode(self._encoding) != self.source:
            raise SpanError(f"the text does not read back as the same bytes in {self._encoding}")
        return "".join(parts).encode(self._encoding)
