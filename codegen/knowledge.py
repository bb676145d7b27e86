"""Load ``codegen/knowledge.toml``: the declarative facts the schema does not carry."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Literal, overload

from . import resources
from .errors import CodegenError
from .schema.load import read_toml

KNOWLEDGE_FILE = resources.KNOWLEDGE
NONE_KEY = "none"
"""A versioned section holding only this key declares that it does not apply; its value says why."""


@functools.cache
def knowledge(path: Path = KNOWLEDGE_FILE) -> dict[str, Any]:
    return read_toml(path)


@overload
def section(
    name: str, protocol_version: int | None = None, *, optional: Literal[False] = False
) -> dict[str, Any]: ...
@overload
def section(
    name: str, protocol_version: int | None = None, *, optional: Literal[True]
) -> dict[str, Any] | None: ...
def section(
    name: str, protocol_version: int | None = None, *, optional: bool = False
) -> dict[str, Any] | None:
    """The section ``[name]`` shared by every protocol version, or ``[v<protocol_version>.name]``.

    What differs between protocol major versions (the ``protocol_version`` of a surface, from its
    meta file) is keyed by it.  A versioned section may declare that it does not apply
    (``none = "<why>"``): that is ``None`` when the caller can do without it (``optional``),
    an error otherwise, as is a section that is missing.
    """
    where = name if protocol_version is None else f"v{protocol_version}.{name}"
    found: Any = knowledge()
    for key in where.split("."):
        found = found.get(key) if isinstance(found, dict) else None
    if not isinstance(found, dict):
        raise CodegenError(f"missing section [{where}]", file=KNOWLEDGE_FILE)
    if NONE_KEY in found:
        if set(found) != {NONE_KEY} or not isinstance(found[NONE_KEY], str):
            raise CodegenError(
                f"[{where}]: `{NONE_KEY}` (why the section does not apply) must be a string and its only key",
                file=KNOWLEDGE_FILE,
            )
        if not optional:
            raise CodegenError(f"[{where}] is declared none, but acp-codegen needs it", file=KNOWLEDGE_FILE)
        return None
    return found
