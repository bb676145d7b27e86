"""A node of the schema being built: its JSON value and where it is.

The builder reads the schema as :class:`Node` values: each carries the parsed
JSON (an object, array, string, number, boolean or null) and its
:class:`Pointer`, and :meth:`Node.child` steps into it with the pointer kept
in step.  So a type, an error or a gap always knows where in the file it
comes from, and no part of the builder passes a pointer beside a value.
"""

from __future__ import annotations

from collections.abc import Iterator, KeysView
from dataclasses import dataclass
from typing import Any

from ...errors import escape_pointer_token


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


@dataclass(frozen=True)
class Pointer:
    """A JSON pointer (RFC 6901) as its reference tokens: ``/$defs/A~1B`` is ``("$defs", "A/B")``."""

    tokens: tuple[str, ...] = ()

    def child(self, *tokens: str | int) -> Pointer:
        return Pointer(self.tokens + tuple(str(t) for t in tokens))

    def __str__(self) -> str:
        return "".join("/" + escape_pointer_token(t) for t in self.tokens)

    @property
    def depth(self) -> int:
        return len(self.tokens)

    @classmethod
    def parse(cls, text: str) -> Pointer:
        """The pointer written as ``text`` (``""`` is the root)."""
        if not text:
            return cls()
        return cls(tuple(_unescape(t) for t in text.removeprefix("/").split("/")))

    @property
    def defs_entry(self) -> str | None:
        """The ``$defs`` entry the pointer is in (``/$defs/A/properties/b`` is in ``A``), if any."""
        if len(self.tokens) < 2 or self.tokens[0] != "$defs":
            return None
        return self.tokens[1]


ROOT = Pointer()
_NO_KEYS: KeysView[str] = {}.keys()


@dataclass(frozen=True)
class Node:
    """One JSON value of the schema and its pointer.

    ``value`` is what the JSON parser gave (a ``dict``, ``list``, ``str``, ``int``,
    ``float``, ``bool`` or ``None``).  Reading a keyword of an object (:meth:`get`,
    ``in``) is safe on any node: on a node that is no object it finds nothing.
    """

    value: Any
    pointer: Pointer = ROOT

    def __str__(self) -> str:
        return str(self.pointer)

    # -- reading an object --------------------------------------------------------

    @property
    def is_object(self) -> bool:
        return isinstance(self.value, dict)

    def __contains__(self, key: str) -> bool:
        return isinstance(self.value, dict) and key in self.value

    def get(self, key: str, default: Any = None) -> Any:
        """The value of keyword ``key`` (``default`` when it is missing or the node is no object)."""
        return self.value.get(key, default) if isinstance(self.value, dict) else default

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def keys(self) -> KeysView[str]:
        """The keywords of an object, in the file's order (none for a node that is no object)."""
        keys: KeysView[str] = self.value.keys() if isinstance(self.value, dict) else _NO_KEYS
        return keys

    def doc(self) -> str:
        """The node's ``description``, stripped (``""`` if it has none)."""
        text = self.get("description")
        return text.strip() if isinstance(text, str) else ""

    def title(self) -> str:
        """The node's ``title`` as text (``""`` if it has none)."""
        return str(self.get("title", ""))

    # -- stepping in -----------------------------------------------------------------

    def child(self, *tokens: str | int) -> Node:
        """The node ``tokens`` lead to; each must exist (a key of an object, an index of an array)."""
        value = self.value
        for token in tokens:
            value = value[token]
        return Node(value, self.pointer.child(*tokens))

    def at(self, *tokens: str | int) -> Pointer:
        """Where ``tokens`` lead, whether or not anything is there (for an error about a missing key)."""
        return self.pointer.child(*tokens)

    def items(self) -> Iterator[tuple[str, Node]]:
        """Each key of an object and the node it holds (none for a node that is no object)."""
        if isinstance(self.value, dict):
            for key in self.value:
                yield key, self.child(key)

    def elements(self) -> Iterator[Node]:
        """Each item of an array (none for a node that is no array)."""
        if isinstance(self.value, list):
            for index in range(len(self.value)):
                yield self.child(index)

    def entries(self, key: str) -> list[Node]:
        """The items of the array ``key`` holds (none when it holds no array)."""
        return list(self.child(key).elements()) if isinstance(self.get(key), list) else []

    def with_value(self, value: Any) -> Node:
        """Another value at the same place (a schema the builder rewrote, such as one JSON type of a list)."""
        return Node(value, self.pointer)
