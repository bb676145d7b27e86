"""``[v<N>.patches]``: what each ``session/update`` tag does, as a tagged union of entries.

The schema gives field names, types and nullability; the table says only
what each update *does*, with one entry class per role of the runtime
(``codegen/runtime/_patch.py``).  :mod:`codegen.emit.patches` joins the
entries with the IR of each release.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal, cast, get_args

from ..runtime._patch import Activity
from .reader import Table

Join = Literal["base64"]
"""How a chunk joins ``append`` to ``into`` instead of adding an item: ``base64``, the decoded bytes."""


@dataclass(frozen=True)
class UpsertEntry:
    """Creates or patches the entity of ``collection`` its ``key`` field names (no key: the single one)."""

    tag: str
    collection: str
    key: str | None = None
    keep_on_null: tuple[str, ...] = ()
    """Fields whose ``null`` is treated like omission."""
    where: str = field(default="", compare=False, repr=False)
    role: ClassVar[str] = "upsert"


@dataclass(frozen=True)
class ChunkEntry:
    """Appends its ``append`` field to the ``into`` field of the entity the upsert ``of`` keeps."""

    tag: str
    of: str
    append: str
    into: tuple[str, ...]
    """A dotted path of fields, split."""
    creates: bool
    """Whether a chunk for an unknown key starts the entity (otherwise it is an error)."""
    join: Join | None = None
    where: str = field(default="", compare=False, repr=False)
    role: ClassVar[str] = "chunk"


@dataclass(frozen=True)
class SnapshotEntry:
    """Replaces the entry ``key`` names in ``collection`` (or all of it) with its ``value`` field."""

    tag: str
    collection: str
    key: tuple[str, ...] = ()
    """A dotted path of fields, split; empty: the whole collection."""
    value: str | None = None
    """The field holding the new value; ``None``: the update itself."""
    where: str = field(default="", compare=False, repr=False)
    role: ClassVar[str] = "snapshot"


@dataclass(frozen=True)
class RemovalEntry:
    """Removes the entry its ``key`` field names from ``collection``."""

    tag: str
    collection: str
    key: str
    where: str = field(default="", compare=False, repr=False)
    role: ClassVar[str] = "removal"


@dataclass(frozen=True)
class StateEntry:
    """The aggregate foreground-state snapshot (see ``[patches.activity]``)."""

    tag: str
    where: str = field(default="", compare=False, repr=False)
    role: ClassVar[str] = "state"


@dataclass(frozen=True)
class LiveEntry:
    """A live-only notice outside session history: never stored."""

    tag: str
    where: str = field(default="", compare=False, repr=False)
    role: ClassVar[str] = "live"


PatchEntry = UpsertEntry | ChunkEntry | SnapshotEntry | RemovalEntry | StateEntry | LiveEntry
"""One entry of ``[v<N>.patches.updates]``."""


@dataclass(frozen=True)
class Patches:
    """``[v<N>.patches]``."""

    method: str
    """The notification whose params carry one session update."""
    metadata: str
    """The top-level field upserts patch by key."""
    updates: tuple[PatchEntry, ...]
    """In the file's order."""
    activity: Mapping[str, Activity]
    """What each foreground state of a state update means for the work a client waits on."""
    where: str = field(default="", compare=False, repr=False)

    def entry(self, tag: str) -> PatchEntry | None:
        return next((e for e in self.updates if e.tag == tag), None)


def _upsert(tag: str, entry: Table) -> UpsertEntry:
    entry.only(["collection"], ["key", "keep_on_null"], what="upsert")
    return UpsertEntry(
        tag,
        entry.string("collection"),
        entry.optional_string("key"),
        entry.strings("keep_on_null"),
        where=entry.where(),
    )


def _chunk(tag: str, entry: Table) -> ChunkEntry:
    entry.only(["of", "append", "into", "creates"], ["join"], what="chunk")
    join = entry.choice("join", get_args(Join)) if "join" in entry else None
    return ChunkEntry(
        tag,
        entry.string("of"),
        entry.string("append"),
        entry.dotted("into"),
        entry.flag("creates"),
        cast(Join, join),
        where=entry.where(),
    )


def _snapshot(tag: str, entry: Table) -> SnapshotEntry:
    entry.only(["collection"], ["key", "value"], what="snapshot")
    key = entry.dotted("key") if "key" in entry else ()
    return SnapshotEntry(
        tag, entry.string("collection"), key, entry.optional_string("value"), where=entry.where()
    )


def _removal(tag: str, entry: Table) -> RemovalEntry:
    entry.only(["collection", "key"], what="removal")
    return RemovalEntry(tag, entry.string("collection"), entry.string("key"), where=entry.where())


def _state(tag: str, entry: Table) -> StateEntry:
    entry.only([], what="state")
    return StateEntry(tag, where=entry.where())


def _live(tag: str, entry: Table) -> LiveEntry:
    entry.only([], what="live")
    return LiveEntry(tag, where=entry.where())


_READERS: dict[str, Callable[[str, Table], PatchEntry]] = {
    UpsertEntry.role: _upsert,
    ChunkEntry.role: _chunk,
    SnapshotEntry.role: _snapshot,
    RemovalEntry.role: _removal,
    StateEntry.role: _state,
    LiveEntry.role: _live,
}
ROLES: tuple[str, ...] = tuple(_READERS)
"""The roles an update may have: one entry class each."""


def read_entry(tag: str, entry: Table) -> PatchEntry:
    """One entry: its ``role`` picks the class, which takes exactly the keys of that role."""
    role = entry.choice("role", ROLES)
    others = {k: v for k, v in entry.items() if k != "role"}
    fields = Table(entry.document, entry.keys, others, entry.entry_name)
    return _READERS[role](tag, fields)


def read_patches(table: Table) -> Patches:
    table.only(["method", "metadata", "updates", "activity"])
    updates = table.table("updates")
    activity = table.table("activity")
    return Patches(
        method=table.string("method"),
        metadata=table.string("metadata"),
        updates=tuple(read_entry(tag, updates.entry(tag)) for tag in updates),
        activity={state: cast(Activity, activity.choice(state, get_args(Activity))) for state in activity},
        where=table.where(),
    )
