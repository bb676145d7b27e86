"""Run the pipeline for many releases and write ``generated/`` atomically.

* Every (release, stability) pair is one unit of work; units run in parallel
  worker processes.
* A unit whose inputs (schema, meta, generator source and tool versions) have
  not changed since it was last written is not rendered again: a content-hash
  cache outside the repository remembers the hash of every file it produced.
* Output is assembled in a temporary sibling folder and swapped in whole, so a
  failed or killed run leaves ``generated/`` exactly as it was.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from . import naming, resources
from .diagnostics import Gap, collecting
from .emit.tree import read_tree, recover
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
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.entries, indent=1, sort_keys=True))
        except OSError:
            pass  # the cache is an optimisation; never fail a run over it


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
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(_render_unit, *args, unit) for unit in todo]
            for future in concurrent.futures.as_completed(futures):
                result = future.result()
                results[result.unit] = result
                if progress:
                    progress(result)
    for unit in todo:
        cache.store(_unit_key(fingerprint, source, unit), results[unit])
    if todo:
        cache.save()
    return [results[unit] for unit in units]


def index_source(packages: dict[str, tuple[str, str, str, int]]) -> str:
    """``generated/README.md``: which package is which release."""
    lines = [
        "# Generated ACP bindings",
        "",
        "Written by `acp-codegen generate`; do not edit. Each folder is one self-contained",
        "package that needs only pydantic (2.11 or later) and the standard library.",
        "",
        "| package | release | schema | protocol version | schema sha256 |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, (release, stability, sha, version) in sorted(packages.items()):
        lines.append(f"| `{name}` | {release} | {stability} | {version} | `{sha}` |")
    return "\n".join(lines) + "\n"


def assemble(out: Path, results: list[UnitResult], replace_all: bool) -> dict[str, str]:
    """The complete new tree: the rendered packages plus, unless all were rendered, the old ones."""
    recover(out)
    tree = {} if replace_all else read_tree(out)
    rendered = {r.unit.package for r in results}
    tree = {
        rel: text for rel, text in tree.items() if rel.split("/", 1)[0] not in rendered and rel != INDEX_FILE
    }
    for result in results:
        tree.update(result.files)
    packages: dict[str, tuple[str, str, str, int]] = {}
    old_index = read_tree(out).get(INDEX_FILE, "") if not replace_all else ""
    for line in old_index.splitlines():
        cells = [c.strip().strip("`") for c in line.split("|")[1:-1]]
        if (
            len(cells) == 5
            and cells[0] not in rendered
            and cells[0] != "package"
            and not cells[0].startswith("-")
        ):
            packages[cells[0]] = (cells[1], cells[2], cells[4], int(cells[3]) if cells[3].isdigit() else 0)
    for result in results:
        stability = "unstable" if result.unit.unstable else "stable"
        packages[result.unit.package] = (
            result.unit.release,
            stability,
            result.schema_sha256,
            result.protocol_version,
        )
    tree[INDEX_FILE] = index_source(packages)
    return dict(sorted(tree.items()))


def all_releases(source: SchemaSource) -> list[str]:
    """Every locked release: what ``generate`` writes when no release is named."""
    return list(source.lock.releases)


def unlocked_releases(source: SchemaSource) -> list[str]:
    """Releases found on disk that the lock does not name: ``generate`` skips them with a notice."""
    return [release for release in source.available() if release not in source.lock.releases]
