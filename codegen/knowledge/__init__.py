"""``codegen/knowledge.toml`` as typed values: the declarative facts the schema does not carry.

The file is read and checked once (:func:`knowledge`), section by section,
into one dataclass per section; a bad entry is one
:class:`~codegen.errors.CodegenError` naming ``knowledge.toml:<line>``.
Every stage reads the knowledge through the accessors below, never the TOML.

* ``[extensions]`` -> :class:`Extensions`, ``[sides]`` -> :class:`ProtocolSide`,
  ``[connections]`` -> :class:`Role`, ``[models]`` -> :class:`Models`: shared by
  every protocol version;
* ``[v<N>.protocol]`` -> :class:`Protocol`, ``[v<N>.prompt_echo]`` -> :class:`PromptEcho`,
  ``[v<N>.capability_gates]`` -> :class:`CapabilityGates` (keys parsed into
  :class:`GateKey`), ``[v<N>.patches]`` -> :class:`Patches` (entries a tagged
  union, :data:`PatchEntry`): keyed by protocol major version.  A versioned
  section may say it does not apply (``none = "<why>"``): :class:`Declined`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from .. import resources
from ..errors import CodegenError
from ..textfile import TomlDocument, read_toml_document
from .connections import Role, Selection, read_roles
from .patches import (
    ChunkEntry,
    LiveEntry,
    PatchEntry,
    Patches,
    RemovalEntry,
    SnapshotEntry,
    StateEntry,
    UpsertEntry,
    read_patches,
)
from .reader import Table
from .sections import (
    CapabilityGates,
    Extension,
    Extensions,
    Gate,
    GateKey,
    Models,
    PromptEcho,
    Protocol,
    ProtocolSide,
    read_capability_gates,
    read_extensions,
    read_models,
    read_prompt_echo,
    read_protocol,
    read_sides,
)

__all__ = [
    "KNOWLEDGE_FILE",
    "NONE_KEY",
    "CapabilityGates",
    "ChunkEntry",
    "Declined",
    "Extension",
    "Extensions",
    "Gate",
    "GateKey",
    "Knowledge",
    "LiveEntry",
    "Models",
    "PatchEntry",
    "Patches",
    "PromptEcho",
    "Protocol",
    "ProtocolSide",
    "RemovalEntry",
    "Role",
    "Selection",
    "SnapshotEntry",
    "StateEntry",
    "UpsertEntry",
    "Versioned",
    "capability_gates",
    "extensions",
    "handlers",
    "knowledge",
    "load",
    "models",
    "needed",
    "optional",
    "patches",
    "prompt_echo",
    "protocol",
    "role",
    "roles",
    "sides",
]

KNOWLEDGE_FILE = resources.KNOWLEDGE
NONE_KEY = "none"
"""A versioned section holding only this key declares that it does not apply; its value says why."""

T = TypeVar("T")


@dataclass(frozen=True)
class Declined:
    """A versioned section declared ``none``: it does not apply to that protocol version, and why."""

    section: str
    """``v1.patches``."""
    why: str
    where: str


@dataclass(frozen=True)
class Versioned:
    """``[v<N>]``: what differs between protocol major versions."""

    version: int
    protocol: Protocol | Declined
    prompt_echo: PromptEcho | Declined
    capability_gates: CapabilityGates | Declined
    patches: Patches | Declined


VERSIONED = ("protocol", "prompt_echo", "capability_gates", "patches")
"""The sections of ``[v<N>]``; each is given, or declared none."""


@dataclass(frozen=True)
class Knowledge:
    """The whole file."""

    path: Path
    extensions: Extensions
    sides: tuple[ProtocolSide, ...]
    roles: tuple[Role, ...]
    models: Models
    versions: Mapping[int, Versioned]

    def version(self, version: int, section: str) -> Versioned:
        """``[v<version>]``; ``section`` names what was asked for, when it is missing."""
        found = self.versions.get(version)
        if found is None:
            raise CodegenError(f"missing section [v{version}.{section}]", file=self.path)
        return found


def _declined(table: Table) -> Declined | None:
    """The declaration ``none = "<why>"``, if the table is one."""
    if NONE_KEY not in table:
        return None
    why = table.data[NONE_KEY]
    if set(table) != {NONE_KEY} or not isinstance(why, str):
        raise table.error(f"`{NONE_KEY}` (why the section does not apply) must be a string and its only key")
    return Declined(table.name, why, table.where())


def _versioned(table: Table, name: str, read: Callable[[Table], T]) -> T | Declined:
    section = table.table(name)
    declined = _declined(section)
    return declined if declined is not None else read(section)


def _read_version(version: int, table: Table, sides: tuple[str, ...]) -> Versioned:
    table.only([], VERSIONED)  # each missing one is named by table.table()
    return Versioned(
        version,
        _versioned(table, "protocol", read_protocol),
        _versioned(table, "prompt_echo", read_prompt_echo),
        _versioned(table, "capability_gates", lambda t: read_capability_gates(t, sides)),
        _versioned(table, "patches", read_patches),
    )


_VERSION = re.compile(r"v([1-9][0-9]*)")
SHARED = ("extensions", "sides", "connections", "models")
"""The sections every protocol version shares."""


def read(document: TomlDocument) -> Knowledge:
    """The typed knowledge of a read TOML file; refuses a section or entry it cannot use."""
    root = Table(document, (), document.data)
    for key in root:
        if key not in SHARED and _VERSION.fullmatch(key) is None:
            raise root.error(f"unknown section [{key}] (not one of {', '.join(SHARED)}, nor v<N>)", key)
    side_table = root.table("sides")
    found_sides = read_sides(side_table)
    names = tuple(s.name for s in found_sides)
    versions = {}
    for key in root:
        matched = _VERSION.fullmatch(key)
        if matched is not None:
            versions[int(matched.group(1))] = _read_version(int(matched.group(1)), root.table(key), names)
    return Knowledge(
        path=document.path,
        extensions=read_extensions(root.table("extensions")),
        sides=found_sides,
        roles=read_roles(root.table("connections"), names),
        models=read_models(root.table("models")),
        versions=versions,
    )


def load(path: Path) -> Knowledge:
    """Read and check a knowledge file."""
    return read(read_toml_document(path))


@functools.cache
def knowledge() -> Knowledge:
    """``codegen/knowledge.toml``, read and checked once."""
    return load(KNOWLEDGE_FILE)


# --- what the stages ask -------------------------------------------------------------


def needed(found: T | Declined) -> T:
    """A versioned section the caller cannot do without: one declared none is an error."""
    if isinstance(found, Declined):
        raise CodegenError(f"[{found.section}] is declared none, but acp-codegen needs it", file=found.where)
    return found


def optional(found: T | Declined) -> T | None:
    """A versioned section the caller can do without (``None``: declared none)."""
    return None if isinstance(found, Declined) else found


def extensions() -> Extensions:
    return knowledge().extensions


def sides() -> tuple[ProtocolSide, ...]:
    return knowledge().sides


def handlers() -> dict[str, str]:
    """Each side of ``[sides]`` -> the side that handles what it sends."""
    return {s.name: s.handler for s in sides()}


def roles() -> tuple[Role, ...]:
    """Every role of ``[connections]``, in the order the file gives them."""
    return knowledge().roles


def role(name: str) -> Role:
    """The role ``name`` of ``[connections]``."""
    found = next((r for r in roles() if r.name == name), None)
    if found is None:
        raise CodegenError(f"[connections] has no role {name!r}", file=knowledge().path)
    return found


def models() -> Models:
    return knowledge().models


def protocol(version: int) -> Protocol:
    return needed(knowledge().version(version, "protocol").protocol)


def prompt_echo(version: int) -> PromptEcho | None:
    return optional(knowledge().version(version, "prompt_echo").prompt_echo)


def capability_gates(version: int) -> CapabilityGates:
    return needed(knowledge().version(version, "capability_gates").capability_gates)


def patches(version: int) -> Patches | Declined:
    """``[v<version>.patches]``, or its declaration that patches do not apply."""
    return knowledge().version(version, "patches").patches
