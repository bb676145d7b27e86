"""Where a change attaches: a JSON pointer's line in a schema file, and files named from the repository.

GitHub annotations and SARIF results point at a file and a line.  The line of
a pointer is where the member it names starts (the line of its key, for a
property); a pointer the file does not have falls back to its longest prefix
that it has, so a change always lands on the closest place the file shows.
Files are named from the root of the git repository holding the folder the
command runs in (:class:`Repository`), as GitHub resolves them, whatever the
current folder; ``--path-prefix`` goes before them.  A change attaches
(:data:`Locate`) to its schema file here (:func:`schema_anchors`); the
vendoring stage attaches it to the vendored package's class instead.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypeAlias

from ..schema.load import DEFAULT_LOCK, read_lock
from ..schema.lock import LockedRelease
from .model import Change, FieldPart

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


# --- where an annotation attaches -----------------------------------------------------------------


@dataclass(frozen=True)
class Anchor:
    """Where a GitHub annotation or a SARIF result attaches: a file as the repository names it, a line
    (1-based) and, for a place in the user's code, a column (1-based)."""

    file: str
    line: int
    column: int | None = None

    def github(self) -> str:
        """The ``file=...,line=...[,col=...]`` properties of a workflow command."""
        column = "" if self.column is None else f",col={self.column}"
        return f"file={github_property(self.file)},line={self.line}{column}"

    def sarif(self) -> dict[str, Any]:
        """The ``physicalLocation`` of a SARIF result."""
        region: dict[str, int] = {"startLine": self.line}
        if self.column is not None:
            region["startColumn"] = self.column
        return {"artifactLocation": {"uri": self.file}, "region": region}


Locate: TypeAlias = Callable[[Change], Anchor | None]
"""Where a change of the differ attaches (``None``: to no file of the repository)."""


def github_data(text: str) -> str:
    """Text as the data of a GitHub workflow command (after its ``::``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """Text as the value of one ``key=value`` property of a GitHub workflow command."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def repository_root(start: Path | None = None) -> Path:
    """The git repository holding ``start`` (default: the current folder): the nearest folder at or
    above it with a ``.git``, as GitHub names files from its root; the current folder when none has."""
    here = Path.cwd().resolve()
    begin = start.resolve() if start is not None else here
    return next((f for f in (begin, *begin.parents) if (f / ".git").exists()), here)


@dataclass(frozen=True)
class Repository:
    """The root that annotations name files from, and the ``--path-prefix`` put before every path."""

    root: Path
    prefix: str = ""

    @classmethod
    def around(cls, start: Path | None = None, prefix: str = "") -> Repository:
        return cls(repository_root(start), prefix)

    def path(self, file: str | Path) -> str | None:
        """``file`` (relative to the current folder, or absolute) as the repository names it, under the
        prefix; ``None`` for a file outside the repository (an installed tool's bundled store, a cache)."""
        if not str(file):
            return None
        try:
            inside = Path(os.path.abspath(file)).resolve().relative_to(self.root.resolve())
        except ValueError:
            return None
        shown = PurePosixPath(inside.as_posix())
        return (PurePosixPath(self.prefix) / shown).as_posix() if self.prefix else shown.as_posix()


def change_line(change: Change) -> int | None:
    """The line of the change in its schema file: its field's, else its type's (``None`` if unknown)."""
    if not change.file or not change.pointer:
        return None
    pointer = change.pointer
    if len(change.path) > 1 and isinstance(change.path[1], FieldPart):
        pointer = f"{pointer}/properties/{escape(change.path[1].name)}"
    return line_of(change.file, pointer)


def schema_anchors(repository: Repository) -> Locate:
    """Changes at their schema file: the line of their ``$defs`` entry (their field's, for a field), when
    the file is in the repository (a store under it, or this checkout's ``schemas/``)."""

    def locate(change: Change) -> Anchor | None:
        file = repository.path(change.file)
        if file is None:
            return None
        return Anchor(file, change_line(change) or 1)

    return locate


def unattached(changes: Iterable[Change], locate: Locate) -> list[str]:
    """The schema files, sorted, of the changes that attach to no file of the repository."""
    return sorted({c.file for c in changes if c.waiver is None and locate(c) is None})


# --- an address anyone can open ------------------------------------------------------------------

_RAW = re.compile(
    r"https://raw\.githubusercontent\.com/(?P<repository>[^/]+/[^/]+)/(?P<tag>[^/]+)/(?P<path>.+)"
)


def public_url(file: str, pointer: str) -> str | None:
    """Where anyone can read ``pointer`` of a schema file outside the repository: for a file of a release
    the bundled lock took from an upstream git tag, the file on GitHub at that tag, at the pointer's line;
    ``None`` for any other (an npm release, a store of the user's: no address that survives sharing)."""
    path = Path(file)
    entry = _bundled_releases().get(path.parent.name)
    locked = entry.files.get(path.name) if entry is not None and entry.npm is None else None
    found = _RAW.fullmatch(locked.url) if locked is not None else None
    if found is None:
        return None
    line = line_of(file, pointer)
    anchor = f"#L{line}" if line is not None else ""
    return f"https://github.com/{found['repository']}/blob/{found['tag']}/{found['path']}{anchor}"


@functools.cache
def _bundled_releases() -> Mapping[str, LockedRelease]:
    return read_lock(DEFAULT_LOCK).releases
