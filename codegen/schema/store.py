"""The schema store: ``v<major>/<release>/`` folders of release files, checked against the lock.

:class:`SchemaSource` resolves a release name to verified files (the front store of
``--schemas`` first, then the lock's own); :func:`fetch_release` copies or downloads a
release into a store, and :func:`write_store` writes files and lock entries through
the store's record.
"""

from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from .. import diagnostics
from ..errors import CodegenError
from ..files import Output
from ..textfile import read_bytes
from .lock import (
    BUNDLED_SCHEMAS,
    DEFAULT_LOCK,
    Lock,
    LockedRelease,
    LockEntry,
    layered_lock,
    lock_bytes,
    lock_entry,
    protocol_major,
    read_layers,
    sort_releases,
)
from .readers import (
    META_OF,
    RELEASE_FILES,
    ReleaseFiles,
    SchemaDocument,
    _read_document,
    sha256_bytes,
)

DOWNLOAD_TIMEOUT = 30.0


def default_cache_dir() -> Path:
    """Where the build cache lives: ``$ACP_CODEGEN_CACHE``, else ``$XDG_CACHE_HOME`` or ``~/.cache``."""
    if env := os.environ.get("ACP_CODEGEN_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acp-codegen"


def default_source() -> Path | None:
    """The store put in front of the bundled one when ``--schemas`` is not given: ``$ACP_SCHEMAS``."""
    env = os.environ.get("ACP_SCHEMAS")
    return Path(env) if env else None


def write_store(
    store: Path,
    files: Mapping[str, bytes],
    *,
    command: str,
    force: bool = False,
    lock: Path | None = None,
    entries: Mapping[str, LockEntry] | None = None,
) -> None:
    """Write release files (paths inside ``store``) and lock ``entries`` through the store's record.

    Every path is checked before anything is written: a file at a path the
    command writes that it did not write itself is refused unless ``force``
    (see :mod:`codegen.files.record`). The lock file is the tool's by its
    format: it is read (one line if it is not a lock) and written with every
    entry it had.
    """
    plans = []
    wanted = dict(files)
    if lock is not None and entries:
        content = lock_bytes(lock, entries)
        if lock.parent.resolve() == store.resolve():
            wanted[lock.name] = content
        else:
            side = Output(lock.parent, command, option="--lock", force=force)
            plans.append(side.plan({lock.name: content}, scope=[lock.name], adopt=[lock.name]))
    if wanted:
        output = Output(store, command, option="--schemas", force=force)
        adopt = [lock.name] if lock is not None and lock.name in wanted else []
        plans.insert(0, output.plan(wanted, scope=list(wanted), adopt=adopt))
    for plan in plans:
        refused = plan.refusal()
        if refused is not None:
            raise refused
    for plan in plans:
        plan.apply()


def write_lock_entries(
    path: Path, entries: Mapping[str, LockEntry], command: str = "lock", force: bool = False
) -> None:
    """Add or replace release entries in the lock file at ``path`` (created if absent), atomically."""
    write_store(path.parent, {}, command=command, force=force, lock=path, entries=entries)


def add_to_lock(release: str, folder: Path, path: Path = DEFAULT_LOCK, force: bool = False) -> None:
    """Record the tag release ``release`` (read from ``folder``) in the lock file, atomically."""
    write_lock_entries(path, {release: lock_entry(release, folder)}, force=force)


def release_folder(store: Path, release: str) -> Path:
    """``<store>/v<major>/<release>`` (or ``<store>/<release>`` for a flat folder of releases)."""
    try:
        nested = store / f"v{protocol_major(release)}" / release
    except CodegenError:
        return store / release
    for candidate in (nested, store / release):
        if candidate.is_dir():
            return candidate
    return nested


def _release_folders(base: Path) -> list[Path]:
    return [p for p in base.iterdir() if p.is_dir() and (p / "schema.json").is_file()]


def _major_of(name: str) -> int | None:
    try:
        return protocol_major(name)
    except CodegenError:
        return None


def releases_in(store: Path) -> list[str]:
    """Release names present in a store.

    Each ``v<major>`` folder holds the releases of that protocol major version (a release
    in another major's folder is not one of them); a folder without any is a flat folder of releases.
    """
    if not store.is_dir():
        return []
    majors = [p for p in store.iterdir() if p.is_dir() and re.fullmatch(r"v[0-9]+", p.name)]
    if not majors:
        return sort_releases([p.name for p in _release_folders(store)])
    found = [
        p.name for base in majors for p in _release_folders(base) if f"v{_major_of(p.name)}" == base.name
    ]
    return sort_releases(found)


class SchemaSource:
    """Resolves release names to verified files: the front store (``--schemas``), then the lock's own.

    ``cache`` is where the build cache lives; schema files are never cached outside a store.
    """

    def __init__(
        self,
        lock: Lock,
        source: Path | None = None,
        cache: Path | None = None,
        *,
        behind: tuple[Path, ...] = (),
    ) -> None:
        self.lock = lock
        self.source = source if source is not None else default_source()
        self.cache = cache if cache is not None else default_cache_dir()
        self.behind = behind
        """Stores searched right after the front one (a staged source's: the stores it stands in front of)."""

    def staged(self, folder: Path) -> SchemaSource:
        """This source with ``folder`` in front: what is fetched and locked goes there, and nothing into
        the stores behind it (a dry run's releases, in a folder it deletes)."""
        lock = layered_lock(folder / "lock.json", self.lock)
        return SchemaSource(lock, folder, self.cache, behind=self.stores)

    def reread(self) -> SchemaSource:
        """This source with its lock files read again (a fetch just recorded a release in the front one)."""
        return SchemaSource(read_layers(self.lock.layers), self.source, self.cache, behind=self.behind)

    @property
    def stores(self) -> tuple[Path, ...]:
        """Folders searched for release files: ``--schemas``, each lock's folder, then the bundled store."""
        found: list[Path] = []
        for store in (
            self.source,
            *self.behind,
            *(p.parent for p in self.lock.layers),
            self.lock.path.parent,
            BUNDLED_SCHEMAS,
        ):
            if store is not None and store not in found:
                found.append(store)
        return tuple(found)

    @property
    def target(self) -> Path:
        """Where ``fetch`` writes: the ``--schemas`` store, else the lock's folder."""
        return self.source if self.source is not None else self.lock.path.parent

    def available(self) -> list[str]:
        """Releases that can be generated: the locked ones, plus unlocked ones found in the front store."""
        names = set(self.lock.releases)
        if self.source is not None:
            names.update(releases_in(self.source))
        return sort_releases(list(names))

    def folders(self, release: str) -> Iterator[Path]:
        for store in self.stores:
            yield release_folder(store, release)

    def find_folder(self, release: str) -> Path | None:
        """The first folder holding the release's ``schema.json``."""
        return next((f for f in self.folders(release) if (f / "schema.json").is_file()), None)

    def check_locked(self, release: str) -> LockedRelease:
        if release in self.lock.releases:
            return self.lock.releases[release]
        where = self.find_folder(release)
        if where is not None:
            raise CodegenError(
                f"release {release!r} is in {where.parent} but not in the lock; "
                f"review it, then run `acp-codegen lock {release}` to record its sha256 sums",
                file=self.lock.path,
            )
        raise CodegenError(
            f"unknown release {release!r}; known releases: {', '.join(self.lock.releases)}",
            file=self.lock.path,
        )

    def on_disk(self, release: str) -> bool:
        """Whether some store holds every file of the release (else it must be fetched)."""
        return any(
            all((folder / name).is_file() for name in RELEASE_FILES) for folder in self.folders(release)
        )

    def load(self, release: str) -> ReleaseFiles:
        """The verified files of a locked release, from the first store that holds all four.

        A store folder that holds only some of them is skipped with a warning
        naming what it lacks (an error under ``--strict``), and when no store
        holds them all, the error names the first missing file.
        """
        locked = self.check_locked(release)
        partial: list[tuple[Path, list[str]]] = []
        for folder in self.folders(release):
            missing = [name for name in RELEASE_FILES if not (folder / name).is_file()]
            if not missing:
                for skipped, lacking in partial:
                    diagnostics.gap(
                        f"release {release}: this store folder lacks {', '.join(lacking)}",
                        default=f"its files are read from {folder} instead",
                        file=skipped,
                    )
                return load_release_folder(locked, folder)
            if len(missing) < len(RELEASE_FILES):
                partial.append((folder, missing))
        if partial:
            folder, lacking = partial[0]
            raise CodegenError(
                f"file not found: release {release} needs all of {', '.join(RELEASE_FILES)} here, and no "
                f"schema store holds them all; fetch it with `{locked.fetch_command()}`",
                file=folder / lacking[0],
            )
        searched = ", ".join(str(store) for store in self.stores)
        raise CodegenError(
            f"release {release!r} is locked but its files are in no schema store (searched {searched}); "
            f"fetch it with `{locked.fetch_command()}`",
            file=self.lock.path,
        )


def load_release_folder(locked: LockedRelease, folder: Path) -> ReleaseFiles:
    documents = {
        name: _read_document(locked.name, folder / name, locked.files[name].sha256) for name in RELEASE_FILES
    }
    return ReleaseFiles(locked.name, folder, documents)


def load_schema_folder(folder: Path) -> ReleaseFiles:
    """Read the schema files in ``folder`` without the lock (a draft to compare, say).

    The folder holds the files of one release as upstream lays them out; a
    schema file needs its meta file next to it, and at least one pair must be
    there.  The release is named after the folder.
    """
    if not folder.is_dir():
        raise CodegenError("not a folder", file=folder)
    documents: dict[str, SchemaDocument] = {}
    for schema_name, meta_name in META_OF.items():
        if not (folder / schema_name).is_file():
            continue
        if not (folder / meta_name).is_file():
            raise CodegenError(f"{meta_name} is missing next to {schema_name}", file=folder / meta_name)
        for name in (schema_name, meta_name):
            documents[name] = _read_document(folder.name, folder / name)
    if not documents:
        raise CodegenError(f"no schema here: expected {RELEASE_FILES[0]} or {RELEASE_FILES[1]}", file=folder)
    return ReleaseFiles(folder.name, folder, documents)


def _download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT) as response:
            data: bytes = response.read()
            return data
    except urllib.error.HTTPError as exc:
        raise CodegenError(f"download failed: HTTP {exc.code} {exc.reason}", file=url) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise CodegenError(f"download failed: {reason}", file=url) from None


def release_paths(store: Path, release: str, contents: Mapping[str, bytes]) -> dict[str, bytes]:
    """Where a release's files go in ``store``: ``v<major>/<release>/<file>``, relative to it."""
    target = release_folder(store, release).relative_to(store)
    return {(target / name).as_posix(): raw for name, raw in contents.items()}


def fetch_release(
    locked: LockedRelease,
    origin: str | Path | None,
    store: Path,
    progress: Callable[[str], None] | None = None,
    force: bool = False,
) -> Path:
    """Copy or download every file of a tag release into ``store``.

    ``origin`` is a folder laid out like a store (``v<major>/<release>/<file>``),
    a base URL laid out the same way, or ``None`` for the upstream addresses in
    the lock.  Every file is checked against its sha256 before anything is
    written.  ``progress`` is called with each file's name once it is fetched and verified.
    """
    if isinstance(origin, str) and "://" not in origin:
        origin = Path(origin)
    if isinstance(origin, Path) and not origin.is_dir():
        raise CodegenError("no such folder to fetch from", file=origin)
    contents: dict[str, bytes] = {}
    for name, entry in locked.files.items():
        if origin is None:
            if not entry.url:
                raise CodegenError(
                    f"the lock records no address for {name} of {locked.name}; "
                    f"fetch it with `{locked.fetch_command()}`"
                )
            raw = _download(entry.url)
            where: str | Path = entry.url
        elif isinstance(origin, str):
            where = f"{origin.rstrip('/')}/v{protocol_major(locked.name)}/{locked.name}/{name}"
            raw = _download(where)
        else:
            where = release_folder(origin, locked.name) / name
            raw = read_bytes(where)
        digest = sha256_bytes(raw)
        if digest != entry.sha256:
            raise CodegenError(
                f"refusing {name}: sha256 is {digest}, the lock expects {entry.sha256}", file=where
            )
        contents[name] = raw
        if progress is not None:
            progress(name)
    write_store(store, release_paths(store, locked.name, contents), command="fetch", force=force)
    return release_folder(store, locked.name)
