"""Reading ``knowledge.toml`` into typed values, with one error style for a bad entry.

Every section is read through a :class:`Table`: it hands out values of the
type asked for (a string, a flag, a list of strings, a subtable) and refuses
anything else as a :class:`~codegen.errors.CodegenError` naming the file and
the line of the entry (``knowledge.toml:214: [v2.patches.updates]
terminal_output_chunk: `join` must be 'base64', not 'list'``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from ..errors import CodegenError
from ..textfile import KeyPath, TomlDocument


def listing(values: Sequence[object]) -> str:
    """``a, b or c``: the values a key may take, for an error message."""
    words = [repr(v) for v in values]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


@dataclass(frozen=True)
class Table:
    """One table of the knowledge file, and where it is."""

    document: TomlDocument
    keys: KeyPath
    data: Mapping[str, object]
    entry_name: str | None = None
    """The key of an inline table (``tag = { ... }``): its errors name it, and its line."""

    @property
    def name(self) -> str:
        """``v2.patches.updates``: the table as its header names it."""
        return ".".join(self.keys)

    def where(self, *key: str) -> str:
        """``file:line`` of ``key`` in this table (of the table itself without one).

        An inline table is written on one line: everything in it is on that line.
        """
        if self.entry_name is not None:
            return self.document.where((*self.keys, self.entry_name))
        return self.document.where(self.keys + key)

    def error(self, message: str, *key: str) -> CodegenError:
        table = f"[{self.name}] " if self.keys else ""
        entry = f"{self.entry_name}: " if self.entry_name is not None else ""
        return CodegenError(f"{table}{entry}{message}", file=self.where(*key))

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __contains__(self, key: object) -> bool:
        return key in self.data

    def items(self) -> Iterator[tuple[str, object]]:
        return iter(self.data.items())

    # -- shapes ---------------------------------------------------------------

    def only(self, required: Sequence[str], optional: Sequence[str] = (), *, what: str = "") -> None:
        """Refuse a missing key of ``required`` and any key of neither list (``what``: the entry's kind)."""
        missing = [k for k in required if k not in self.data]
        unknown = sorted(set(self.data) - {*required, *optional})
        kind = f"a {what} " if what else ""
        if missing:
            raise self.error(f"{kind}needs {', '.join(missing)}")
        if unknown:
            raise self.error(f"{kind}does not take {', '.join(unknown)}", unknown[0])

    def table(self, key: str) -> Table:
        """The subtable ``key`` (a missing one is an error)."""
        found = self.optional_table(key)
        if found is None:
            raise self.error(f"needs [{self.name}.{key}]")
        return found

    def optional_table(self, key: str) -> Table | None:
        if key not in self.data:
            return None
        value = self.data[key]
        if not isinstance(value, dict):
            raise self.error(f"`{key}` must be a table, not {value!r}", key)
        return Table(self.document, (*self.keys, key), value)

    def entry(self, key: str) -> Table:
        """The inline table ``key = { ... }``, whose errors name the entry (``key: ...``)."""
        value = self.data[key]
        if not isinstance(value, dict):
            raise self.error(f"{key}: must be a table, not {value!r}", key)
        return Table(self.document, self.keys, value, entry_name=key)

    def subtables(self) -> Iterator[tuple[str, Table]]:
        """Every subtable, in the file's order (a plain value among them is an error)."""
        for key in self.data:
            yield key, self.table(key)

    # -- values ---------------------------------------------------------------

    def _wrong(self, key: str, expected: str) -> CodegenError:
        return self.error(f"`{key}` must be {expected}, not {self.data[key]!r}", key)

    def string(self, key: str) -> str:
        """The string ``key`` (a missing one is an error)."""
        if key not in self.data:
            raise self.error(f"needs `{key}`", key)
        value = self.data[key]
        if not isinstance(value, str):
            raise self._wrong(key, "a string")
        return value

    def optional_string(self, key: str) -> str | None:
        return self.string(key) if key in self.data else None

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self._wrong(key, "true or false")
        return value

    def strings(self, key: str) -> tuple[str, ...]:
        """The list of strings ``key`` (none when it is missing)."""
        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._wrong(key, "a list of strings")
        return tuple(value)

    def choice(self, key: str, choices: Sequence[str]) -> str:
        """The string ``key``, one of ``choices``."""
        value = self.data.get(key)
        if value not in choices:
            if key not in self.data:
                raise self.error(f"needs `{key}`", key)
            raise self._wrong(key, listing(choices))
        return str(value)

    def dotted(self, key: str) -> tuple[str, ...]:
        """The dotted path ``key`` names (``output.data``), split; an empty step is an error."""
        steps = tuple(self.string(key).split("."))
        if not all(steps):
            raise self._wrong(key, "a dotted path of names")
        return steps
