"""The lock: ``lock.json`` records every known release with the sha256 of each of its files and where
it came from (an upstream git tag, or a version of the TypeScript SDK's npm package).

Read (:func:`read_lock`, layered over the bundled one by :func:`layered_lock`) and its
entries made (:func:`lock_entry`, :func:`lock_bytes`); :mod:`.store` writes them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Required, TypedDict

from .. import resources
from ..errors import CodegenError
from ..textfile import read_bytes
from .readers import (
    RELEASE_FILES,
    check_release_file,
    parse_json,
    read_json,
    sha256_bytes,
)

BUNDLED_SCHEMAS = resources.SCHEMAS
"""The project's own schema store: the lock and the files of every locked release."""
DEFAULT_LOCK = BUNDLED_SCHEMAS / "lock.json"
SHARED_SCHEMAS = resources.SHARED_SCHEMAS
"""A folder of upstream files that a checkout may have beside it (``None`` when installed)."""
UPSTREAM_REPOSITORY = "agentclientprotocol/agent-client-protocol"
UPSTREAM_URL = "https://raw.githubusercontent.com/{repository}/{tag}/schema/{major}/{file}"
_NAMED_MAJOR = re.compile(r"v(?P<major>[0-9]+)-(?P<origin>[a-z0-9][a-z0-9.-]*)")
"""A release named after where it came from: ``v2-sdk-2.3.0`` is protocol v2 as npm SDK 2.3.0 shipped it."""


class FileEntry(TypedDict, total=False):
    """A file of a release as ``lock.json`` records it (read back as a :class:`LockedFile`)."""

    sha256: Required[str]
    bytes: int
    url: str
    path: str
    derived_from: str


class NpmEntry(TypedDict, total=False):
    """The npm origin of a release as ``lock.json`` records it (read back as an :class:`NpmOrigin`)."""

    package: Required[str]
    version: Required[str]
    integrity: str
    identical: list[str]


class LockEntry(TypedDict, total=False):
    """One release as ``lock.json`` records it (read back as a :class:`LockedRelease`)."""

    tag: str
    npm: NpmEntry
    files: Required[dict[str, FileEntry]]


@dataclass(frozen=True)
class LockedFile:
    """One file of a locked release: its sha256 and where it came from."""

    name: str
    sha256: str
    url: str = ""
    """Tag releases: the file's upstream address."""
    path: str = ""
    """npm releases: the file's path inside the package tarball (``package/schema/v2/schema.json``)."""
    derived_from: str = ""
    """npm releases: the schema file a meta file was derived from (npm ships no meta files)."""


@dataclass(frozen=True)
class NpmOrigin:
    """The npm package version a release was first shipped in."""

    package: str
    version: str
    integrity: str = ""
    identical: tuple[str, ...] = ()
    """Later versions of the package that ship the same content."""

    @property
    def spec(self) -> str:
        return f"npm:{self.package}@{self.version}"


@dataclass(frozen=True)
class LockedRelease:
    name: str
    tag: str
    files: Mapping[str, LockedFile]
    npm: NpmOrigin | None = None

    @property
    def origin(self) -> str:
        """Where ``fetch`` gets the release when no ``--from`` is given."""
        return self.npm.spec if self.npm is not None else f"git tag {self.tag} of {UPSTREAM_REPOSITORY}"

    def fetch_command(self) -> str:
        if self.npm is not None:
            return f"acp-codegen fetch --from {self.npm.spec}"
        return f"acp-codegen fetch {self.name} --from <folder or URL>"


@dataclass(frozen=True)
class Lock:
    path: Path
    releases: Mapping[str, LockedRelease]
    layers: tuple[Path, ...] = field(default=())
    """Every lock file read, the front one first (``path`` is where new entries are written)."""

    def release(self, name: str) -> LockedRelease:
        try:
            return self.releases[name]
        except KeyError:
            known = ", ".join(self.releases) or "none"
            raise CodegenError(
                f"release {name!r} is not in the lock (known releases: {known}); "
                f"run `acp-codegen lock {name}` to add it",
                file=self.path,
            ) from None

    def newest(self, major: int) -> str | None:
        """The newest locked release of a protocol major version."""
        names = [name for name in self.releases if protocol_major(name) == major]
        return names[-1] if names else None

    def same_content(self, major: int, digests: Mapping[str, str]) -> str | None:
        """The locked release of ``major`` whose schema files have exactly these sha256 sums."""
        for name, locked in self.releases.items():
            if protocol_major(name) == major and all(
                name_ in locked.files and locked.files[name_].sha256 == digest
                for name_, digest in digests.items()
            ):
                return name
        return None


def _release_sort_key(name: str) -> tuple[Any, ...]:
    """Releases of one protocol major together; tags first (``2.0.0-alpha.10`` after ``alpha.9``), then
    the npm releases by package version (``v2-sdk-2.10.0`` after ``v2-sdk-2.9.0``)."""
    named = _NAMED_MAJOR.fullmatch(name)
    major = int(named["major"]) if named else _leading_number(name)
    chunks = (named["origin"] if named else name).replace("-", ".").split(".")
    return (
        major if major is not None else -1,
        1 if named else 0,
        tuple((0, int(chunk)) if chunk.isdigit() else (1, chunk) for chunk in chunks),
    )


def sort_releases(names: list[str]) -> list[str]:
    return sorted(names, key=_release_sort_key)


def _locked_release(name: str, entry: Any, path: Path) -> LockedRelease:
    pointer = f"/releases/{name}"
    if not isinstance(entry, dict) or not isinstance(entry.get("files"), dict):
        raise CodegenError("a release entry needs a 'files' object", file=path, pointer=pointer)
    files: dict[str, LockedFile] = {}
    for file_name in RELEASE_FILES:
        item = entry["files"].get(file_name)
        if not isinstance(item, dict) or not isinstance(item.get("sha256"), str):
            raise CodegenError(
                f"the lock has no sha256 for {file_name}", file=path, pointer=f"{pointer}/files"
            )
        files[file_name] = LockedFile(
            file_name,
            item["sha256"],
            str(item.get("url", "")),
            str(item.get("path", "")),
            str(item.get("derived_from", "")),
        )
    npm = entry.get("npm")
    origin = None
    if npm is not None:
        if not isinstance(npm, dict) or not all(isinstance(npm.get(k), str) for k in ("package", "version")):
            raise CodegenError("'npm' needs a 'package' and a 'version'", file=path, pointer=f"{pointer}/npm")
        identical = npm.get("identical", [])
        origin = NpmOrigin(
            npm["package"], npm["version"], str(npm.get("integrity", "")), tuple(map(str, identical))
        )
    return LockedRelease(name, str(entry.get("tag", "" if origin else f"schema-v{name}")), files, origin)


def read_lock(path: Path = DEFAULT_LOCK, *, missing_ok: bool = False) -> Lock:
    """Read one lock file (``missing_ok``: a lock that does not exist yet is an empty one)."""
    if missing_ok and not path.exists():
        return Lock(path, {}, (path,))
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("releases"), dict):
        raise CodegenError("the lock must be an object with a 'releases' object", file=path, pointer="")
    releases = {name: _locked_release(name, entry, path) for name, entry in data["releases"].items()}
    ordered = {name: releases[name] for name in sort_releases(list(releases))}
    return Lock(path, ordered, (path,))


def layered_lock(front: Path, behind: Lock) -> Lock:
    """``front`` (a store's ``lock.json``, possibly absent) over ``behind``; new entries go to ``front``."""
    top = read_lock(front, missing_ok=True)
    merged = {**behind.releases, **top.releases}
    return Lock(front, {name: merged[name] for name in sort_releases(list(merged))}, (front, *behind.layers))


def read_layers(layers: tuple[Path, ...]) -> Lock:
    """The lock a command read, again (in a worker process): ``layers`` as :attr:`Lock.layers` gives them."""
    *front, base = layers
    lock = read_lock(base)
    for path in reversed(front):
        lock = layered_lock(path, lock)
    return lock


def _leading_number(release: str) -> int | None:
    head = release.split(".", 1)[0].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def protocol_major(release: str) -> int:
    """The protocol major version of a release.

    A release from a git tag starts with it (``1.21.0`` -> 1, ``2.0.0-alpha.7`` -> 2); one named
    after the npm package version that shipped it says it first (``v2-sdk-2.3.0`` -> 2).  It names
    the release's folder upstream (``schema/v1/``) and in a store (``v1/1.21.0/``).
    """
    named = _NAMED_MAJOR.fullmatch(release)
    number = int(named["major"]) if named else _leading_number(release)
    if number is None:
        raise CodegenError(
            f"release name {release!r} must start with its protocol major version "
            "(like 1.21.0, 2.0.0-alpha.7 or v2-sdk-2.3.0)"
        )
    return number


def lock_entry(release: str, folder: Path) -> LockEntry:
    """A lock entry for the files of a tag release found in ``folder``."""
    tag = f"schema-v{release}"
    major = f"v{protocol_major(release)}"
    files: dict[str, FileEntry] = {}
    for file_name in RELEASE_FILES:
        data = read_bytes(folder / file_name)
        check_release_file(parse_json(data, folder / file_name), folder / file_name)  # never lock what is not
        files[file_name] = {
            "sha256": sha256_bytes(data),
            "bytes": len(data),
            "url": UPSTREAM_URL.format(repository=UPSTREAM_REPOSITORY, tag=tag, major=major, file=file_name),
        }
    return {"tag": tag, "files": files}


def _lock_data(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"format": 1, "releases": {}}
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("releases"), dict):
        raise CodegenError("the lock must be an object with a 'releases' object", file=path, pointer="")
    return data


def lock_bytes(path: Path, entries: Mapping[str, LockEntry]) -> bytes:
    """The lock file at ``path`` (created if absent) with ``entries`` added or replaced."""
    data = _lock_data(path)
    data["releases"].update(entries)
    data["releases"] = {n: data["releases"][n] for n in sort_releases(list(data["releases"]))}
    return (json.dumps(data, indent=2) + "\n").encode()
