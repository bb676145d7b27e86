"""Stage 1: find, verify and read upstream schema releases.

The release lock (``schemas/lock.json``) records every known release with the
sha256 and upstream address of each of its four files.  Schema files are read
from a *source folder* laid out like upstream's ``schema/`` directory
(``<source>/v<major>/<release>/<file>``, where ``<major>`` is the protocol major
version: the first number of the release name) or from the local fetch cache,
and every file is checked against the lock before it is parsed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import tomllib
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CodegenError

RELEASE_FILES = ("schema.json", "schema.unstable.json", "meta.json", "meta.unstable.json")
PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_LOCK = PROJECT_ROOT / "schemas" / "lock.json"
SHARED_SCHEMAS = PROJECT_ROOT.parent / "shared" / "schemas"
UPSTREAM_REPOSITORY = "agentclientprotocol/agent-client-protocol"
UPSTREAM_URL = "https://raw.githubusercontent.com/{repository}/{tag}/schema/{major}/{file}"
DOWNLOAD_TIMEOUT = 30.0
MAX_FILE_BYTES = 8 * 1024 * 1024
"""Schema and meta files larger than this are refused (upstream's largest is 0.4 MB)."""


def default_cache_dir() -> Path:
    """Where ``fetch`` keeps verified copies: ``$ACP_CODEGEN_CACHE`` or ``~/.cache``."""
    if env := os.environ.get("ACP_CODEGEN_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acp-codegen" / "schemas"


def default_source() -> Path | None:
    """The schema folder used when none is given: ``$ACP_SCHEMAS`` or ``../shared/schemas``."""
    if env := os.environ.get("ACP_SCHEMAS"):
        return Path(env)
    if SHARED_SCHEMAS.is_dir():
        return SHARED_SCHEMAS
    return None


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class LockedFile:
    name: str
    sha256: str
    url: str


@dataclass(frozen=True)
class LockedRelease:
    name: str
    tag: str
    files: Mapping[str, LockedFile]


@dataclass(frozen=True)
class Lock:
    path: Path
    releases: Mapping[str, LockedRelease]

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


def _release_sort_key(name: str) -> tuple[Any, ...]:
    """Sort ``2.0.0-alpha.10`` after ``2.0.0-alpha.9`` (numbers compare as numbers)."""
    chunks = name.replace("-", ".").split(".")
    return tuple((0, int(chunk)) if chunk.isdigit() else (1, chunk) for chunk in chunks)


def sort_releases(names: list[str]) -> list[str]:
    return sorted(names, key=_release_sort_key)


def read_lock(path: Path = DEFAULT_LOCK) -> Lock:
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("releases"), dict):
        raise CodegenError("the lock must be an object with a 'releases' object", file=path, pointer="")
    releases: dict[str, LockedRelease] = {}
    for name, entry in data["releases"].items():
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
            files[file_name] = LockedFile(file_name, item["sha256"], str(item.get("url", "")))
        releases[name] = LockedRelease(name, str(entry.get("tag", f"schema-v{name}")), files)
    ordered = {name: releases[name] for name in sort_releases(list(releases))}
    return Lock(path, ordered)


def _leading_number(release: str) -> int | None:
    head = release.split(".", 1)[0].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def protocol_major(release: str) -> int:
    """The protocol major version of a release: the first number of its name (``1.21.0`` -> 1).

    It names the release's folder upstream (``schema/v1/``) and in a schema folder (``v1/1.21.0/``).
    """
    number = _leading_number(release)
    if number is None:
        raise CodegenError(
            f"release name {release!r} must start with its protocol major version "
            "(like 1.21.0 or 2.0.0-alpha.7)"
        )
    return number


def lock_entry(release: str, folder: Path) -> dict[str, Any]:
    """A lock entry for the release files found in ``folder``."""
    tag = f"schema-v{release}"
    major = f"v{protocol_major(release)}"
    files: dict[str, Any] = {}
    for file_name in RELEASE_FILES:
        data = _read_bytes(folder / file_name)
        files[file_name] = {
            "sha256": sha256_bytes(data),
            "bytes": len(data),
            "url": UPSTREAM_URL.format(repository=UPSTREAM_REPOSITORY, tag=tag, major=major, file=file_name),
        }
    return {"tag": tag, "files": files}


def add_to_lock(release: str, folder: Path, path: Path = DEFAULT_LOCK) -> None:
    """Record ``release`` (read from ``folder``) in the lock file, atomically."""
    data = read_json(path)
    data["releases"][release] = lock_entry(release, folder)
    data["releases"] = {n: data["releases"][n] for n in sort_releases(list(data["releases"]))}
    write_atomic(path, (json.dumps(data, indent=2) + "\n").encode())


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CodegenError("file not found", file=path) from None
    except OSError as exc:
        raise CodegenError(f"cannot read file: {exc.strerror}", file=path) from None


class _NotJsonError(ValueError):
    pass


def _no_constant(name: str) -> Any:
    """Python's json reads NaN and Infinity; JSON has no such numbers."""
    raise _NotJsonError(name)


def _decode(data: bytes, file: str | Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CodegenError(f"not UTF-8 text (byte {exc.start})", file=file) from None


def parse_json(data: bytes, file: str | Path) -> Any:
    """Parse JSON bytes; a syntax error becomes a one-line :class:`CodegenError`."""
    text = _decode(data, file)
    try:
        return json.loads(text, parse_constant=_no_constant)
    except _NotJsonError as exc:
        raise CodegenError(f"not valid JSON: {exc} is not a JSON number", file=file) from None
    except json.JSONDecodeError as exc:
        raise CodegenError(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", file=file
        ) from None
    except RecursionError:
        raise CodegenError("not usable JSON: nested too deeply", file=file) from None


def read_json(path: Path) -> Any:
    return parse_json(_read_bytes(path), path)


def read_toml(path: Path) -> dict[str, Any]:
    """Read a TOML file; bad bytes or a syntax error become a one-line :class:`CodegenError`."""
    text = _decode(_read_bytes(path), path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CodegenError(f"not valid TOML: {exc}", file=path) from None


def release_folder(source: Path, release: str) -> Path:
    """``<source>/v<major>/<release>`` (or ``<source>/<release>`` for a flat folder of releases)."""
    number = _leading_number(release)
    nested = source / f"v{number}" / release if number is not None else source / release
    for candidate in (nested, source / release):
        if candidate.is_dir():
            return candidate
    return nested


def _release_folders(base: Path) -> list[Path]:
    return [p for p in base.iterdir() if p.is_dir() and (p / "schema.json").is_file()]


def releases_in(source: Path) -> list[str]:
    """Release names present in a source folder.

    Each ``v<major>`` folder holds the releases of that protocol major version (a release
    in another major's folder is not one of them); a folder without any is a flat folder of releases.
    """
    if not source.is_dir():
        return []
    majors = [p for p in source.iterdir() if p.is_dir() and re.fullmatch(r"v[0-9]+", p.name)]
    if not majors:
        return sort_releases([p.name for p in _release_folders(source)])
    found = [
        p.name
        for base in majors
        for p in _release_folders(base)
        if f"v{_leading_number(p.name)}" == base.name
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
    """Resolves release names to verified files: source folder first, then the cache."""

    def __init__(self, lock: Lock, source: Path | None = None, cache: Path | None = None) -> None:
        self.lock = lock
        self.source = source if source is not None else default_source()
        self.cache = cache if cache is not None else default_cache_dir()

    def available(self) -> list[str]:
        """Releases that can be generated: the locked ones, plus unlocked ones found on disk."""
        names = set(self.lock.releases)
        if self.source is not None:
            names.update(releases_in(self.source))
        return sort_releases(list(names))

    def folders(self, release: str) -> Iterator[Path]:
        if self.source is not None:
            yield release_folder(self.source, release)
        yield self.cache / release

    def find_folder(self, release: str) -> Path | None:
        """The first folder holding the release's ``schema.json`` (source folder, then cache)."""
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
        """Whether some folder holds every file of the release (else it must be fetched)."""
        return any(
            all((folder / name).is_file() for name in RELEASE_FILES) for folder in self.folders(release)
        )

    def load(self, release: str) -> ReleaseFiles:
        locked = self.check_locked(release)
        for folder in self.folders(release):
            if all((folder / name).is_file() for name in RELEASE_FILES):
                return load_release_folder(locked, folder)
        searched = ", ".join(str(f) for f in self.folders(release))
        raise CodegenError(
            f"release {release!r} is locked but its files are not on disk (looked in {searched}); "
            f"run `acp-codegen fetch {release}`",
            file=self.lock.path,
        )


def _read_document(release: str, path: Path, expected_sha256: str | None = None) -> SchemaDocument:
    """Read and parse one schema or meta file: its sha256 checked when one is expected, its size capped."""
    raw = _read_bytes(path)
    digest = sha256_bytes(raw)
    if expected_sha256 is not None and digest != expected_sha256:
        raise CodegenError(
            f"sha256 mismatch: the file has {digest}, the lock expects {expected_sha256}", file=path
        )
    if len(raw) > MAX_FILE_BYTES:
        raise CodegenError(
            f"the file is {len(raw) / 1e6:.1f} MB; "
            f"files over {MAX_FILE_BYTES // (1024 * 1024)} MiB are refused",
            file=path,
            pointer="",
        )
    return SchemaDocument(release, path.name, path, digest, parse_json(raw, path))


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
    for schema_name, meta_name in zip(RELEASE_FILES[:2], RELEASE_FILES[2:], strict=True):
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


def fetch_release(
    locked: LockedRelease,
    origin: str | Path | None,
    cache: Path,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Copy or download every file of ``locked`` into ``cache/<release>``.

    ``origin`` is a folder laid out like ``schemas/`` (``v<major>/<release>/<file>``),
    a base URL laid out the same way, or ``None`` for the upstream addresses in
    the lock.  Every file is checked against its sha256 before anything is
    written; the cache folder is replaced whole.  ``progress`` is called with
    each file's name once it is fetched and verified.
    """
    contents: dict[str, bytes] = {}
    for name, entry in locked.files.items():
        if origin is None:
            raw = _download(entry.url)
            where: str | Path = entry.url
        elif isinstance(origin, str) and "://" in origin:
            where = f"{origin.rstrip('/')}/v{protocol_major(locked.name)}/{locked.name}/{name}"
            raw = _download(where)
        else:
            where = release_folder(Path(origin), locked.name) / name
            raw = _read_bytes(where)
        digest = sha256_bytes(raw)
        if digest != entry.sha256:
            raise CodegenError(
                f"refusing {name}: sha256 is {digest}, the lock expects {entry.sha256}", file=where
            )
        contents[name] = raw
        if progress is not None:
            progress(name)
    target = cache / locked.name
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=cache, prefix=f".{locked.name}."))
    try:
        for name, raw in contents.items():
            (staging / name).write_bytes(raw)
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
