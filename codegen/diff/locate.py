"""Where a JSON pointer is in a schema file: its line, read from the file's text.

GitHub annotations and SARIF results point at a line.  The line of a pointer
is where the member it names starts (the line of its key, for a property);
a pointer the file does not have falls back to its longest prefix that it
has, so a change always lands on the closest place the file shows.
"""

from __future__ import annotations

import bisect
import functools
import re
from pathlib import Path

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


def escape(token: str) -> str:
    """One reference token of a JSON pointer (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


class _Scanner:
    """Reads a JSON text once and records the offset of every value, by its JSON pointer."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offsets: dict[str, int] = {}

    def skip(self, at: int) -> int:
        found = _WHITESPACE.match(self.text, at)
        return found.end() if found else at

    def value(self, at: int, pointer: str, start: int) -> int:
        """Scan the value at ``at`` (its member starts at ``start``); return the offset after it."""
        self.offsets[pointer] = start
        char = self.text[at : at + 1]
        if char == "{":
            return self.container(at + 1, pointer, "}")
        if char == "[":
            return self.container(at + 1, pointer, "]")
        found = (_STRING if char == '"' else _SCALAR).match(self.text, at)
        if found is None:
            raise ValueError(f"not JSON at offset {at}")
        return found.end()

    def container(self, at: int, pointer: str, end: str) -> int:
        index = 0
        at = self.skip(at)
        if self.text[at : at + 1] == end:
            return at + 1
        while True:
            start = at
            if end == "}":
                key = _STRING.match(self.text, at)
                if key is None:
                    raise ValueError(f"not JSON at offset {at}")
                token = escape(_unquote(key.group()))
                at = self.skip(key.end())
                at = self.skip(at + 1)  # the colon
            else:
                token = str(index)
            at = self.skip(self.value(at, f"{pointer}/{token}", start))
            index += 1
            if self.text[at : at + 1] == ",":
                at = self.skip(at + 1)
                continue
            return at + 1


def _unquote(literal: str) -> str:
    import json

    value: str = json.loads(literal)
    return value


class PointerLines:
    """The line of every JSON pointer of one JSON text."""

    def __init__(self, text: str) -> None:
        scanner = _Scanner(text)
        scanner.value(scanner.skip(0), "", 0)
        self._offsets = scanner.offsets
        self._newlines = [i for i, char in enumerate(text) if char == "\n"]

    def line(self, pointer: str) -> int:
        """The 1-based line of ``pointer``, or of its longest prefix the text has (line 1 for none)."""
        current = pointer
        while current not in self._offsets and current:
            current = current.rpartition("/")[0]
        offset = self._offsets.get(current, 0)
        return bisect.bisect_left(self._newlines, offset) + 1


@functools.lru_cache(maxsize=16)
def _lines_of(path: str, mtime_ns: int) -> PointerLines | None:
    try:
        return PointerLines(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, IndexError, RecursionError):
        return None


def line_of(file: str, pointer: str) -> int | None:
    """The line of ``pointer`` in the schema file ``file``; ``None`` if the file cannot be read as JSON."""
    path = Path(file)
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    found = _lines_of(str(path.resolve()), stamp)
    return None if found is None else found.line(pointer)
