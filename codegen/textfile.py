"""Reading the tool's own input files: bytes, UTF-8 text, and TOML with the line of every key.

A leaf: the schema store (:mod:`codegen.schema.load`), the knowledge file
(:mod:`codegen.knowledge`) and the differ's waivers read through it, and a
file that cannot be read, is not UTF-8 or is not TOML becomes one
:class:`~codegen.errors.CodegenError` naming the file.

:func:`read_toml_document` also tells on which line each key of a TOML file
is written, so that a reader that refuses an entry can point at it
(``knowledge.toml:214``).  ``tomllib`` gives values, not places: the lines
come from a scan of the text for table headers (``[a.b]``) and ``key =``
at the start of a line, outside strings and multi-line arrays.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import CodegenError

KeyPath = tuple[str, ...]
"""The keys leading to a value of a TOML document, outermost first."""


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CodegenError("file not found", file=path) from None
    except OSError as exc:
        raise CodegenError(f"cannot read file: {exc.strerror}", file=path) from None


def decode(data: bytes, file: str | Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CodegenError(f"not UTF-8 text (byte {exc.start})", file=file) from None


def _parse_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CodegenError(f"not valid TOML: {exc}", file=path) from None


def read_toml(path: Path) -> dict[str, Any]:
    """Read a TOML file; bad bytes or a syntax error become a one-line :class:`CodegenError`."""
    return _parse_toml(decode(read_bytes(path), path), path)


@dataclass(frozen=True)
class TomlDocument:
    """A TOML file's data, and the line each of its keys is written on."""

    path: Path
    data: dict[str, object]
    lines: Mapping[KeyPath, int]

    def line(self, keys: KeyPath) -> int | None:
        """The line of ``keys``: where it is written, else where the nearest key around it is.

        A table that no header names (``[v2]`` above ``[v2.protocol]``) is at its first subtable.
        """
        for end in range(len(keys), 0, -1):
            found = self.lines.get(keys[:end])
            if found is not None:
                return found
            inside = [line for path, line in self.lines.items() if path[:end] == keys[:end]]
            if inside:
                return min(inside)
        return None

    def where(self, keys: KeyPath) -> str:
        """``file:line`` of ``keys`` (the file alone when no line holds it)."""
        line = self.line(keys)
        return f"{self.path}:{line}" if line is not None else str(self.path)


def read_toml_document(path: Path) -> TomlDocument:
    """:func:`read_toml`, with the line of every key."""
    text = decode(read_bytes(path), path)
    return TomlDocument(path, _parse_toml(text, path), key_lines(text))


_BARE = r"[A-Za-z0-9_-]+"
_BASIC = r'"(?:[^"\\]|\\.)*"'
_LITERAL = r"'[^']*'"
_KEY = rf"(?:{_BARE}|{_BASIC}|{_LITERAL})"
_DOTTED = re.compile(rf"\s*({_KEY})\s*(\.)?")
_HEADER = re.compile(rf"\s*\[\[?\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*\]\]?")
_ASSIGN = re.compile(rf"\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*=")


def _keys(dotted: str) -> KeyPath:
    """``a."b.c".d`` -> ``("a", "b.c", "d")``."""
    out: list[str] = []
    position = 0
    while position < len(dotted):
        match = _DOTTED.match(dotted, position)
        if match is None:
            break
        key = match.group(1)
        if key.startswith('"'):
            key = _basic_string(key)
        elif key.startswith("'"):
            key = key[1:-1]
        out.append(key)
        position = match.end()
    return tuple(out)


def _basic_string(quoted: str) -> str:
    """A TOML basic string's value (its escapes are JSON's, but for ``\\e`` and ``\\U``)."""
    try:
        value = json.loads(quoted)
    except ValueError:
        return quoted[1:-1]
    return value if isinstance(value, str) else quoted[1:-1]


def _open_brackets(value: str) -> int:
    """How many ``[`` and ``{`` a value leaves open (strings and comments skipped)."""
    depth = 0
    quote = ""
    index = 0
    while index < len(value):
        char = value[index]
        if quote:
            if char == "\\" and quote == '"':
                index += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "#":
            break
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        index += 1
    return depth


def key_lines(text: str) -> dict[KeyPath, int]:
    """The line (from 1) of every table header and every ``key =`` of a TOML text.

    The lines of a multi-line array or inline table belong to the key that opens it.  Multi-line
    strings are not followed (the knowledge file has none); a key inside one would be misplaced,
    never a value misread: the values come from ``tomllib``.
    """
    found: dict[KeyPath, int] = {}
    table: KeyPath = ()
    depth = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if depth > 0:
            depth += _open_brackets(line)
            continue
        header = _HEADER.match(line)
        if header is not None and line.lstrip().startswith("["):
            table = _keys(header.group(1))
            found.setdefault(table, number)
            continue
        assign = _ASSIGN.match(line)
        if assign is not None:
            found.setdefault(table + _keys(assign.group(1)), number)
            depth = max(0, _open_brackets(line[assign.end() :]))
    return found
