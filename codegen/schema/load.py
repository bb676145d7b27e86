"""Stage 1: find, verify and read upstream schema releases.

The project keeps a *schema store*: ``schemas/lock.json`` records every known
release with the sha256 of each of its four files and where it came from (an
upstream git tag, or a version of the TypeScript SDK's npm package), and
``schemas/v<major>/<release>/`` holds the files themselves, as they came from
there.  ``generate`` and every other command read releases from the store and
check each file against the lock before it is parsed; nothing is downloaded
behind the user's back.  ``--schemas DIR`` (or ``$ACP_SCHEMAS``) puts another
store in front: its files are looked for first, and its own ``lock.json``, if
it has one, adds releases to the bundled lock or overrides them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import diagnostics, resources
from ..errors import CodegenError
from ..files import Output
from ..textfile import decode, read_bytes
from ..textfile import read_toml as read_toml  # re-exported: diff/waivers reads its TOML through here

RELEASE_FILES = ("schema.json", "schema.unstable.json", "meta.json", "meta.unstable.json")
SCHEMA_FILES = RELEASE_FILES[:2]
META_OF = {"schema.json": "meta.json", "schema.unstable.json": "meta.unstable.json"}
BUNDLED_SCHEMAS = resources.SCHEMAS
"""The project's own schema store: the lock and the files of every locked release."""
DEFAULT_LOCK = BUNDLED_SCHEMAS / "lock.json"
SHARED_SCHEMAS = resources.SHARED_SCHEMAS
"""A folder of upstream files that a checkout may have beside it (``None`` when installed)."""
UPSTREAM_REPOSITORY = "agentclientprotocol/agent-client-protocol"
UPSTREAM_URL = "https://raw.githubusercontent.com/{repository}/{tag}/schema/{major}/{file}"
DOWNLOAD_TIMEOUT = 30.0
MAX_FILE_BYTES = 8 * 1024 * 1024
"""Schema and meta files larger than this are refused (upstream's largest is 0.6 MB)."""
_NAMED_MAJOR = re.compile(r"v(?P<major>[0-9]+)-(?P<origin>[a-z0-9][a-z0-9.-]*)")
"""A release named after where it came from: ``v2-sdk-2.3.0`` is protocol v2 as npm SDK 2.3.0 shipped it."""


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


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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


def lock_entry(release: str, folder: Path) -> dict[str, Any]:
    """A lock entry for the files of a tag release found in ``folder``."""
    tag = f"schema-v{release}"
    major = f"v{protocol_major(release)}"
    files: dict[str, Any] = {}
    for file_name in RELEASE_FILES:
        data = read_bytes(folder / file_name)
        check_release_file(parse_json(data, folder / file_name), folder / file_name)  # never lock what is not
        files[file_name] = {
            "sha256": sha256_bytes(data),
            "bytes": len(data),
            "url": UPSTREAM_URL.format(repository=UPSTREAM_REPOSITORY, tag=tag, major=major, file=file_name),
        }
    return {"tag": tag, "files": files}


def check_release_file(data: Any, path: Path) -> None:
    """One line unless ``data`` can be a release file: a JSON Schema object with ``$defs``, or an object."""
    if path.name in SCHEMA_FILES:
        if not isinstance(data, dict) or not isinstance(data.get("$defs"), dict):
            raise CodegenError(
                "is not a JSON Schema object with a '$defs' object, so it is not a release's schema",
                file=path,
                pointer="",
            )
    elif not isinstance(data, dict):
        raise CodegenError("is not a JSON object, so it is not a release's meta table", file=path, pointer="")


def _lock_data(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"format": 1, "releases": {}}
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("releases"), dict):
        raise CodegenError("the lock must be an object with a 'releases' object", file=path, pointer="")
    return data


def lock_bytes(path: Path, entries: Mapping[str, dict[str, Any]]) -> bytes:
    """The lock file at ``path`` (created if absent) with ``entries`` added or replaced."""
    data = _lock_data(path)
    data["releases"].update(entries)
    data["releases"] = {n: data["releases"][n] for n in sort_releases(list(data["releases"]))}
    return (json.dumps(data, indent=2) + "\n").encode()


def write_store(
    store: Path,
    files: Mapping[str, bytes],
    *,
    command: str,
    force: bool = False,
    lock: Path | None = None,
    entries: Mapping[str, dict[str, Any]] | None = None,
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
    path: Path, entries: Mapping[str, dict[str, Any]], command: str = "lock", force: bool = False
) -> None:
    """Add or replace release entries in the lock file at ``path`` (created if absent), atomically."""
    write_store(path.parent, {}, command=command, force=force, lock=path, entries=entries)


def add_to_lock(release: str, folder: Path, path: Path = DEFAULT_LOCK, force: bool = False) -> None:
    """Record the tag release ``release`` (read from ``folder``) in the lock file, atomically."""
    write_lock_entries(path, {release: lock_entry(release, folder)}, force=force)


class _NotJsonError(ValueError):
    pass


def _no_constant(name: str) -> Any:
    """Python's json reads NaN and Infinity; JSON has no such numbers."""
    raise _NotJsonError(name)


def parse_json(data: bytes, file: str | Path) -> Any:
    """Parse JSON bytes; a syntax error becomes a one-line :class:`CodegenError`."""
    text = decode(data, file)
    try:
        return json.loads(text, parse_constant=_no_constant)
    except _NotJsonError as exc:
        raise CodegenError(f"not valid JSON: {exc} is not a JSON number", file=file) from None
    except json.JSONDecodeError as exc:
        # some messages end with "starting at", which the position completes
        where = f"line {exc.lineno} column {exc.colno}"
        text = f"{exc.msg} {where}" if exc.msg.endswith(" at") else f"{exc.msg} at {where}"
        raise CodegenError(f"not valid JSON: {text}", file=file) from None
    except RecursionError:
        raise CodegenError("not usable JSON: nested too deeply", file=file) from None


def read_json(path: Path) -> Any:
    return parse_json(read_bytes(path), path)


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


@dataclass(frozen=True)
class SchemaDocument:
    """One parsed and verified schema file."""

    release: str
    file_name: str
    path: Path
    sha256: str
    data: Any


@dataclass(frozen=True)
class ReleaseFiles:
    """The four verified files of one release."""

    release: str
    folder: Path
    documents: Mapping[str, SchemaDocument]

    def schema(self, unstable: bool) -> SchemaDocument:
        return self.documents["schema.unstable.json" if unstable else "schema.json"]

    def meta(self, unstable: bool) -> SchemaDocument:
        return self.documents["meta.unstable.json" if unstable else "meta.json"]


class SchemaSource:
    """Resolves release names to verified files: the front store (``--schemas``), then the lock's own.

    ``cache`` is where the build cache lives; schema files are never cached outside a store.
    """

    def __init__(self, lock: Lock, source: Path | None = None, cache: Path | None = None) -> None:
        self.lock = lock
        self.source = source if source is not None else default_source()
        self.cache = cache if cache is not None else default_cache_dir()

    @property
    def stores(self) -> tuple[Path, ...]:
        """Folders searched for release files: ``--schemas``, each lock's folder, then the bundled store."""
        found: list[Path] = []
        for store in (
            self.source,
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


def _read_document(release: str, path: Path, expected_sha256: str | None = None) -> SchemaDocument:
    """Read and parse one schema or meta file: its sha256 checked when one is expected, its size capped."""
    raw = read_bytes(path)
    digest = sha256_bytes(raw)
    if expected_sha256 is not None and digest != expected_sha256:
        raise CodegenError(
            f"sha256 mismatch: the file has {digest}, the lock expects {expected_sha256}", file=path
        )
    check_size(raw, path)
    return SchemaDocument(release, path.name, path, digest, parse_json(raw, path))


def check_size(raw: bytes, path: str | Path) -> None:
    if len(raw) > MAX_FILE_BYTES:
        raise CodegenError(
            f"the file is {len(raw) / 1e6:.1f} MB; "
            f"files over {MAX_FILE_BYTES // (1024 * 1024)} MiB are refused",
            file=path,
            pointer="",
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
