"""Run the pipeline for many releases, and plan what ``generate`` writes into its output folder.

* Every (release, stability) pair is one unit of work; units run in parallel
  worker processes, and Ctrl-C stops them at once (they ignore SIGINT; the
  command terminates them and exits 130).
* A unit whose inputs (schema, meta, generator source and tool versions) have
  not changed since it was last written is not rendered again: a content-hash
  cache outside the repository remembers the hash of every file it produced.
* What is written goes through :mod:`codegen.files.record`: each package is
  swapped in whole, the index ``README.md`` is written from the record's data
  (never read back from the Markdown), and only packages the record says
  ``generate`` wrote are ever removed.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import hashlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from . import naming, resources
from .diagnostics import Gap, collecting
from .errors import CodegenError
from .files import RECORD_NAME, Output, Plan, write_atomic
from .processes import ctrl_c_held
from .schema.load import SchemaSource, sha256_bytes

GENERATOR_ROOT = resources.PACKAGE
TEMPLATES = resources.TEMPLATES
INDEX_FILE = "README.md"


@dataclass(frozen=True)
class Unit:
    release: str
    unstable: bool

    @property
    def package(self) -> str:
        return naming.package_name(self.release, self.unstable)


@dataclass(frozen=True)
class UnitResult:
    unit: Unit
    files: dict[str, str]
    seconds: float
    cached: bool
    schema_sha256: str
    protocol_version: int
    gaps: tuple[Gap, ...] = ()
    """What the release uses that the generator does not fully know (see :mod:`codegen.diagnostics`)."""


def _generator_fingerprint() -> str:
    """Hash of everything that shapes the output besides the schema itself."""
    digest = hashlib.sha256()
    for root in (GENERATOR_ROOT, TEMPLATES):
        for path in sorted(root.rglob("*")):
            if (
                path.is_file()
                and path.suffix in (".py", ".jinja2", ".toml")
                and "__pycache__" not in path.parts
                and not path.is_relative_to(GENERATOR_ROOT / "data")  # installed: the templates again
            ):
                digest.update(path.relative_to(root.parent).as_posix().encode())
                digest.update(path.read_bytes())
    for dist in ("datamodel-code-generator", "black", "jinja2"):
        try:
            digest.update(f"{dist}=={metadata.version(dist)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(dist.encode())
    return digest.hexdigest()


def _unit_key(fingerprint: str, source: SchemaSource, unit: Unit) -> str:
    locked = source.lock.release(unit.release)
    parts = [fingerprint, unit.release, str(unit.unstable)]
    parts.extend(f"{name}:{f.sha256}" for name, f in sorted(locked.files.items()))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _render_unit(
    locks: tuple[str, ...], source: str | None, cache: str, strict: bool, unit: Unit
) -> UnitResult:
    """Worker: load, build the IR and render one package (runs in a subprocess)."""
    with collecting(strict) as diagnostics:
        result = _render(locks, source, cache, unit)
    return dataclasses.replace(result, gaps=tuple(diagnostics.gaps))


def _render(locks: tuple[str, ...], source: str | None, cache: str, unit: Unit) -> UnitResult:
    from .emit.package import build_package
    from .schema.builder import build_release
    from .schema.load import read_layers

    started = time.perf_counter()
    lock = read_layers(tuple(map(Path, locks)))
    schema_source = SchemaSource(lock, Path(source) if source else None, Path(cache))
    stable, unstable = build_release(schema_source.load(unit.release))
    surface = unstable if unit.unstable else stable
    files = build_package(surface).files()
    return UnitResult(
        unit, files, time.perf_counter() - started, False, surface.schema_sha256, surface.protocol_version
    )


class BuildCache:
    """Remembers, per unit key, the hash of every file the unit produced."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "build-cache.json"
        try:
            self.entries: dict[str, dict[str, object]] = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.entries = {}

    def lookup(self, key: str, out: Path) -> dict[str, str] | None:
        entry = self.entries.get(key)
        recorded = entry.get("files") if isinstance(entry, dict) else None
        if not isinstance(recorded, dict):
            return None
        files: dict[str, str] = {}
        for rel, digest in recorded.items():
            path = out / rel
            try:
                content = path.read_bytes()
            except OSError:
                return None
            if sha256_bytes(content) != digest:
                return None
            files[rel] = content.decode()
        return files

    def meta(self, key: str) -> dict[str, object]:
        return self.entries.get(key, {})

    def store(self, key: str, result: UnitResult) -> None:
        self.entries[key] = {
            "files": {rel: sha256_bytes(text.encode()) for rel, text in result.files.items()},
            "schema_sha256": result.schema_sha256,
            "protocol_version": result.protocol_version,
            "gaps": [dataclasses.asdict(found) for found in result.gaps],
        }

    def gaps(self, key: str) -> tuple[Gap, ...]:
        """The gaps the cached unit was rendered with (they hold as long as its key does)."""
        found = self.entries.get(key, {}).get("gaps", [])
        if not isinstance(found, list):
            return ()
        return tuple(Gap(**item) for item in found if isinstance(item, dict))

    def save(self) -> None:
        with contextlib.suppress(OSError):  # the cache is an optimisation; never fail a run over it
            write_atomic(self.path, json.dumps(self.entries, indent=1, sort_keys=True).encode())


def units_for(source: SchemaSource, releases: Iterable[str]) -> list[Unit]:
    units = []
    for release in releases:
        source.check_locked(release)
        units.extend([Unit(release, False), Unit(release, True)])
    return units


def render(
    source: SchemaSource,
    units: list[Unit],
    *,
    jobs: int | None = None,
    out: Path | None = None,
    use_cache: bool = True,
    strict: bool = False,
    progress: Callable[[UnitResult], None] | None = None,
) -> list[UnitResult]:
    """Render ``units``; reuse cached output found in ``out`` when allowed.

    ``strict`` makes every gap an error, also the gaps a cached unit was rendered with.
    """
    for unit in units:
        source.load(unit.release)  # fail fast, in this process, on a missing or tampered file
    fingerprint = _generator_fingerprint()
    cache = BuildCache(source.cache)
    results: dict[Unit, UnitResult] = {}
    todo: list[Unit] = []
    for unit in units:
        key = _unit_key(fingerprint, source, unit)
        found = cache.lookup(key, out) if use_cache and out is not None else None
        if found is not None:
            meta = cache.meta(key)
            gaps = cache.gaps(key)
            if strict and gaps:
                raise gaps[0].error()
            results[unit] = UnitResult(
                unit,
                found,
                0.0,
                True,
                str(meta.get("schema_sha256", "")),
                int(str(meta.get("protocol_version", 0))),
                gaps,
            )
            if progress:
                progress(results[unit])
        else:
            todo.append(unit)
    # biggest first (the unstable schemas), so two workers finish together
    todo.sort(key=lambda u: (not u.unstable, u.release))
    workers = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
    locks = tuple(map(str, source.lock.layers or (source.lock.path,)))
    args = (locks, str(source.source) if source.source else None, str(source.cache), strict)
    if workers == 1:
        rendered = (_render_unit(*args, unit) for unit in todo)
        for result in rendered:
            results[result.unit] = result
            if progress:
                progress(result)
    elif todo:
        pool = concurrent.futures.ProcessPoolExecutor(max_workers=workers, initializer=_quiet_worker)
        try:
            with ctrl_c_held():  # the workers and the executor's threads start with Ctrl-C blocked
                pending = {pool.submit(_render_unit, *args, unit) for unit in todo}
            while pending:
                # a short wait, again and again: Ctrl-C is seen as soon as it comes
                done, pending = concurrent.futures.wait(pending, timeout=0.1, return_when="FIRST_COMPLETED")
                for future in sorted(done, key=lambda f: todo.index(f.result().unit)):
                    result = future.result()
                    results[result.unit] = result
                    if progress:
                        progress(result)
        except BaseException:
            _stop(pool)  # Ctrl-C or an error: do not wait for the other packages to render
            raise
        pool.shutdown()
    for unit in todo:
        cache.store(_unit_key(fingerprint, source, unit), results[unit])
    if todo:
        cache.save()
    return [results[unit] for unit in units]


def _quiet_worker() -> None:
    """A worker ignores Ctrl-C: the command stops the workers itself, so none prints a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now, instead of waiting for their packages."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # no terminate() before 3.14
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)  # this forgets both: they were taken first
    for process in workers:
        process.terminate()
    for process in workers:
        process.join(timeout=5)
    if manager is not None:  # it closes its pipes on seeing the workers gone; the exit hook then skips them
        manager.join(timeout=5)


@dataclass(frozen=True)
class IndexEntry:
    """One package of the index: what ``generate`` records about each package folder it writes."""

    release: str
    stability: str
    protocol_version: int
    schema_sha256: str

    @classmethod
    def of(cls, result: UnitResult) -> IndexEntry:
        stability = "unstable" if result.unit.unstable else "stable"
        return cls(result.unit.release, stability, result.protocol_version, result.schema_sha256)

    @classmethod
    def from_record(cls, name: str, about: Mapping[str, str | int], record: Path) -> IndexEntry:
        """The entry the record keeps for the package ``name`` (one line if it is not one)."""
        release, stability = about.get("release"), about.get("stability")
        version, sha = about.get("protocol_version"), about.get("schema_sha256")
        if not (
            isinstance(release, str)
            and stability in ("stable", "unstable")
            and isinstance(version, int)
            and isinstance(sha, str)
        ):
            raise CodegenError(
                "a package of the record needs release, stability, protocol_version and schema_sha256",
                file=record,
                pointer=f"/written/generate/folders/{name}",
            )
        return cls(release, str(stability), version, sha)

    def about(self) -> dict[str, str | int]:
        return dataclasses.asdict(self)


def index_source(packages: Mapping[str, IndexEntry]) -> str:
    """``README.md`` of the output folder: which package is which release."""
    lines = [
        "# Generated ACP bindings",
        "",
        "Written by `acp-codegen generate`; do not edit. Each folder is one self-contained",
        "package that needs only pydantic (2.12 or later) and the standard library.",
        f"`{RECORD_NAME}` records every file acp-codegen wrote here; it changes nothing else.",
        "",
        "| package | release | schema | protocol version | schema sha256 |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, entry in sorted(packages.items()):
        lines.append(
            f"| `{name}` | {entry.release} | {entry.stability} | {entry.protocol_version} "
            f"| `{entry.schema_sha256}` |"
        )
    return "\n".join(lines) + "\n"


def plan(output: Output, results: list[UnitResult], *, every: bool) -> Plan:
    """What ``generate`` writes: the rendered packages and the index, each package in one step.

    ``every``: all locked releases were rendered, so a package the record
    says ``generate`` wrote and that is no longer rendered is removed (only
    the files it wrote). Otherwise the other recorded packages stay as they
    are, and in the index.
    """
    rendered = {result.unit.package: IndexEntry.of(result) for result in results}
    scope = None if every else [*rendered, INDEX_FILE]
    record = output.folder / RECORD_NAME
    kept = {
        name: IndexEntry.from_record(name, about, record)
        for name, about in ({} if every else output.kept([*rendered, INDEX_FILE])).items()
    }
    files = {INDEX_FILE: index_source({**kept, **rendered}).encode()}
    for result in results:
        files.update({rel: text.encode() for rel, text in result.files.items()})
    return output.plan(files, whole={name: entry.about() for name, entry in rendered.items()}, scope=scope)


def all_releases(source: SchemaSource) -> list[str]:
    """Every locked release: what ``generate`` writes when no release is named."""
    return list(source.lock.releases)


def unlocked_releases(source: SchemaSource) -> list[str]:
    """Releases found on disk that the lock does not name: ``generate`` skips them with a notice."""
    return [release for release in source.available() if release not in source.lock.releases]
