"""Releases as the commands name them: the two sides of a comparison, and the table of locked ones.

Reading and building releases is the schema stage's work; the differ
(:mod:`codegen.diff`) only compares the surfaces it is given.
:func:`release_table` is what ``acp-codegen releases`` prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CodegenError
from .builder import build_surface
from .ir import ApiSurface, Stability
from .load import (
    BUNDLED_SCHEMAS,
    DEFAULT_LOCK,
    RELEASE_FILES,
    SCHEMA_FILES,
    UPSTREAM_REPOSITORY,
    ReleaseFiles,
    SchemaSource,
    load_schema_folder,
    protocol_major,
    read_lock,
)


def open_side(spec: str, source: SchemaSource) -> ReleaseFiles:
    """A side of the diff: a schema folder if ``spec`` is a path, else a locked release."""
    path = Path(spec)
    if path.is_dir() or "/" in spec or spec.startswith("."):
        return load_schema_folder(path)
    return source.load(spec)


def surfaces_of(files: ReleaseFiles, stabilities: Iterable[Stability]) -> dict[Stability, ApiSurface]:
    """The surfaces of one side; the unstable one is built on the stable one when both are there."""
    wanted = set(stabilities)
    out: dict[Stability, ApiSurface] = {}
    for stability in ("stable", "unstable"):
        unstable = stability == "unstable"
        schema_name = "schema.unstable.json" if unstable else "schema.json"
        if schema_name not in files.documents:
            if stability in wanted:
                raise CodegenError(
                    f"{schema_name} is missing, and --stability {stability} needs it",
                    file=files.folder / schema_name,
                )
            continue
        if stability not in wanted and not (stability == "stable" and "unstable" in wanted):
            continue
        out[stability] = build_surface(
            files.schema(unstable), files.meta(unstable), stability, out.get("stable")
        )
    return {s: out[s] for s in ("stable", "unstable") if s in wanted}


@dataclass(frozen=True)
class LockedInfo:
    """One locked release as ``acp-codegen releases`` lists it."""

    name: str
    protocol: int
    origin: str
    """``git tag <tag>`` (of the upstream repository), or ``npm <package>@<version>``."""
    also: tuple[str, ...]
    """Later versions of the npm package that ship the same content."""
    lock: Path
    """The lock file that records it (the front one that names it)."""
    bundled: bool
    """Whether that lock is the one the tool carries."""
    folder: Path | None
    """The store folder that holds its four files (``None``: not fetched)."""
    identical: tuple[str, ...]
    """The other locked releases whose schema files have the same sha256 sums."""

    def to_json(self) -> dict[str, Any]:
        return {
            "release": self.name,
            "protocol": self.protocol,
            "origin": self.origin,
            "repository": UPSTREAM_REPOSITORY if self.origin.startswith("git tag") else None,
            "also_shipped_by": list(self.also),
            "lock": str(self.lock),
            "bundled": self.bundled,
            "files": str(self.folder) if self.folder is not None else None,
            "identical_to": list(self.identical),
        }

    def cells(self) -> tuple[str, ...]:
        """The row of the text table: release, protocol, origin, lock, files, same content as."""
        also = f" (also {', '.join(self.also)})" if self.also else ""
        lock = "bundled" if self.bundled else str(self.lock)
        if self.folder is None:
            files = "not fetched"
        elif self.folder.resolve().is_relative_to(BUNDLED_SCHEMAS.resolve()):
            files = "bundled"
        else:
            files = str(self.folder)
        same = ", ".join(self.identical) or "-"
        return (self.name, f"v{self.protocol}", self.origin + also, lock, files, same)


def release_table(source: SchemaSource) -> list[LockedInfo]:
    """Every locked release of ``source``, in the lock's order, with its origin and its twins."""
    layers = [read_lock(path, missing_ok=True) for path in source.lock.layers or (source.lock.path,)]
    content: dict[tuple[str, ...], list[str]] = {}
    for name, locked in source.lock.releases.items():
        key = tuple(locked.files[file].sha256 for file in SCHEMA_FILES)
        content.setdefault(key, []).append(name)
    rows = []
    for name, locked in source.lock.releases.items():
        recorded = next((layer.path for layer in layers if name in layer.releases), source.lock.path)
        if locked.npm is not None:
            origin, also = f"npm {locked.npm.package}@{locked.npm.version}", locked.npm.identical
        else:
            origin, also = f"git tag {locked.tag}", ()
        key = tuple(locked.files[file].sha256 for file in SCHEMA_FILES)
        twins = tuple(other for other in content[key] if other != name)
        folder = next(
            (f for f in source.folders(name) if all((f / file).is_file() for file in RELEASE_FILES)), None
        )
        bundled = recorded.resolve() == DEFAULT_LOCK.resolve()
        rows.append(
            LockedInfo(name, protocol_major(name), origin, tuple(also), recorded, bundled, folder, twins)
        )
    return rows
