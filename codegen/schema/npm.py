"""Releases from the official TypeScript SDK's npm package.

Upstream's newest schemas are not tagged files: they ship inside
``@agentclientprotocol/sdk`` as ``schema/v<major>/schema.json`` and
``schema.unstable.json``, with no meta tables.  :func:`fetch_npm` fetches one
version of the package through the machine's own ``npm`` (so its registry,
proxy and auth settings apply), reads those files from the tarball without
unpacking it, derives each meta table from the schema's ``x-method`` and
``x-side`` keywords, and writes one release per protocol major version it
ships, named ``v<major>-<package>-<version>`` (``v2-sdk-2.3.0``).
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .. import naming
from ..errors import CodegenError
from .load import (
    MAX_FILE_BYTES,
    META_OF,
    SCHEMA_FILES,
    FileEntry,
    Lock,
    LockEntry,
    NpmEntry,
    parse_json,
    protocol_major,
    release_folder,
    release_paths,
    sha256_bytes,
    write_store,
)

NPM_PREFIX = "npm:"
NPM_TIMEOUT = 300.0
_SCHEMA_PATH = re.compile(r"package/schema/v(?P<major>[0-9]+)/(?P<file>schema(?:\.unstable)?\.json)")
_PACKAGE = r"(?P<package>(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*)"
_SPEC = re.compile(_PACKAGE + r"@(?P<version>[0-9][\w.+-]*)")
_PACKAGE_OR_SPEC = re.compile(_PACKAGE + r"(?:@(?P<version>[0-9][\w.+-]*))?")
META_TABLE_SUFFIX = "Methods"
"""A meta table per side: ``agentMethods``, ``clientMethods``, ``protocolMethods``..."""


@dataclass(frozen=True)
class Package:
    """One fetched version of an npm package: its name, version, integrity and tarball."""

    name: str
    version: str
    integrity: str
    tarball: bytes


@dataclass(frozen=True)
class NpmRelease:
    """What a package version ships for one protocol major version."""

    name: str
    major: int
    files: Mapping[str, bytes]
    """All four release files: the schemas as shipped, and the derived meta tables."""
    paths: Mapping[str, str]
    """Each schema file's path inside the tarball."""


Status = Literal["locked", "identical", "verified", "tag"]


@dataclass(frozen=True)
class Fetched:
    """One release a fetch found, and whether its content was new or already locked."""

    release: str
    folder: Path | None
    """Where its files were written (``None``: nothing was written)."""
    status: Status
    """``locked``: new content, recorded in the lock; ``identical``: the same content as the locked
    npm release of that name (the version is recorded beside it); ``verified``: a locked release
    fetched again; ``tag``: the same schema files as a release from a git tag, whose meta tables are
    upstream's own, so nothing is written."""
    version: str


def release_name(package: str, version: str, major: int) -> str:
    """``v2-sdk-2.3.0``: protocol v2 as version 2.3.0 of ``@agentclientprotocol/sdk`` shipped it."""
    short = package.rsplit("/", 1)[-1].lower()
    slug = re.sub(r"[^a-z0-9.]+", "-", f"{short}-{version.lower()}").strip("-")
    return f"v{major}-{slug}"


def parse_spec(origin: str) -> str:
    """The package spec of ``--from npm:PACKAGE@VERSION``, checked for shape."""
    spec = origin.removeprefix(NPM_PREFIX)
    if not _SPEC.fullmatch(spec):
        raise CodegenError(
            f"--from {origin}: expected npm:PACKAGE@VERSION with an exact version "
            "(like npm:@agentclientprotocol/sdk@2.4.0)"
        )
    return spec


def parse_package(origin: str) -> tuple[str, str | None]:
    """The package and the exact version (``None``: the newest) of ``--from npm:PACKAGE[@VERSION]``."""
    matched = _PACKAGE_OR_SPEC.fullmatch(origin.removeprefix(NPM_PREFIX))
    if not origin.startswith(NPM_PREFIX) or matched is None:
        raise CodegenError(
            f"--from {origin}: expected npm:PACKAGE or npm:PACKAGE@VERSION with an exact version "
            "(like npm:@agentclientprotocol/sdk or npm:@agentclientprotocol/sdk@2.4.0)"
        )
    return matched["package"], matched["version"]


def newest_version(package: str) -> str:
    """The version the registry tags ``latest``, asked with ``npm view`` (the machine's npm configuration)."""
    npm = _npm()
    try:
        done = _view(npm, package)
    except subprocess.TimeoutExpired:
        raise CodegenError(f"npm view {package} version did not finish in {NPM_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        raise CodegenError(f"npm view {package} version failed: {_npm_reason(npm, package, done)}")
    try:
        version = json.loads(done.stdout)
    except ValueError:
        version = None
    if isinstance(version, list) and version:  # an npm that answers every version a range matches
        version = version[-1]
    if not isinstance(version, str) or not _SPEC.fullmatch(f"{package}@{version}"):
        raise CodegenError(f"npm view {package} version: unexpected output {done.stdout.strip()[:80]!r}")
    return version


def _view(npm: str, package: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [npm, "view", package, "version", "--json"],
        capture_output=True,
        text=True,
        timeout=NPM_TIMEOUT,
        check=False,
    )


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise CodegenError("npm is not on PATH; fetching from npm: needs Node.js's npm client")
    return npm


def locked_releases(lock: Lock, package: str, version: str) -> list[str]:
    """The locked releases the lock records ``package@version`` as shipping, one per protocol major.

    A release records the version that first shipped it and the later ones
    that ship the same content (``v2-sdk-2.3.0`` is also 2.4.0), so a version
    the lock names needs no download to be recognised.
    """
    return [
        name
        for name, locked in lock.releases.items()
        if locked.npm is not None
        and locked.npm.package == package
        and version in (locked.npm.version, *locked.npm.identical)
    ]


def locked_version(lock: Lock, package: str, version: str, major: int) -> str | None:
    """The locked release of protocol ``major`` that ``package@version`` ships, if the lock says which."""
    return next(
        (name for name in locked_releases(lock, package, version) if protocol_major(name) == major), None
    )


def pack(spec: str) -> Package:
    """Fetch a package version's tarball with ``npm pack`` (the machine's npm configuration applies)."""
    npm = _npm()
    with tempfile.TemporaryDirectory(prefix="acp-codegen-npm-") as folder:
        try:
            done = subprocess.run(
                [npm, "pack", spec, "--json", "--ignore-scripts", "--pack-destination", folder],
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT,
                cwd=folder,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise CodegenError(f"npm pack {spec} did not finish in {NPM_TIMEOUT:.0f} s") from None
        if done.returncode != 0:
            raise CodegenError(f"npm pack {spec} failed: {_npm_reason(npm, spec, done)}")
        try:
            (info,) = json.loads(done.stdout)
            (tarball_path,) = Path(folder).glob("*.tgz")
            tarball = tarball_path.read_bytes()
        except (ValueError, KeyError, TypeError, OSError) as exc:
            raise CodegenError(f"npm pack {spec}: unexpected output ({exc})") from None
    return Package(str(info["name"]), str(info["version"]), str(info.get("integrity", "")), tarball)


def _npm_reason(npm: str, spec: str, done: subprocess.CompletedProcess[str]) -> str:
    """Why ``npm pack`` failed, in words: no such version (and the newest), no such package, or npm's own."""
    package, at, version = spec.rpartition("@")
    if not at or not package:  # a package name alone (npm view)
        package, version = spec, ""
    try:
        error = json.loads(done.stdout)["error"]
        code, summary = str(error.get("code", "")), " ".join(str(error.get("summary", "")).split())
    except (ValueError, KeyError, TypeError, AttributeError):
        code, summary = "", ""
    if code == "ETARGET":
        newest = _newest(npm, package)
        return f"no version {version}" + (f"; the newest is {newest}" if newest else "")
    if code == "E404":
        return f"no package {package} in the registry ({summary})" if summary else f"no package {package}"
    if summary:
        return f"{summary} ({code})" if code else summary
    lines = [
        line.removeprefix("npm error").removeprefix("npm ERR!").strip()
        for line in done.stderr.splitlines()
        if line.strip() and "complete log of this run" not in line
    ]
    return next(
        (line for line in lines if line and not line.startswith("code ")), f"exit status {done.returncode}"
    )


def _newest(npm: str, package: str) -> str | None:
    """The version the registry tags ``latest`` (``None`` if it cannot say)."""
    try:
        done = _view(npm, package)
        newest = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    return newest if isinstance(newest, str) and newest else None


def schema_files(tarball: bytes, where: str) -> dict[int, dict[str, tuple[str, bytes]]]:
    """``major -> file name -> (path in the tarball, bytes)`` of every schema file the tarball ships."""
    found: dict[int, dict[str, tuple[str, bytes]]] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
            for member in archive:
                matched = _SCHEMA_PATH.fullmatch(member.name)
                if matched is None or not member.isfile():
                    continue
                if member.size > MAX_FILE_BYTES:
                    raise CodegenError(
                        f"{member.name} is {member.size / 1e6:.1f} MB; files over "
                        f"{MAX_FILE_BYTES // (1024 * 1024)} MiB are refused",
                        file=where,
                    )
                handle = archive.extractfile(member)
                if handle is None:
                    continue
                raw = handle.read()
                found.setdefault(int(matched["major"]), {})[matched["file"]] = (member.name, raw)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise CodegenError(f"not a readable npm tarball: {exc}", file=where) from None
    return found


def meta_key(wire: str) -> str:
    """The meta table key of a method, as upstream spells it: ``session/set_config_option`` ->
    ``session_set_config_option``, ``document/didOpen`` -> ``document_did_open``."""
    return naming.snake(wire.removeprefix("$/"))


def derive_meta(schema: Any, major: int, file: str) -> bytes:
    """The meta table of a schema, from the ``x-method`` and ``x-side`` of its ``$defs``.

    Each side's table lists the methods whose types carry that ``x-side``; ``both`` puts a
    method in the agent's and the client's table.  Methods keep the order of their first type.
    """
    defs = schema.get("$defs") if isinstance(schema, dict) else None
    if not isinstance(defs, dict):
        raise CodegenError(
            "the schema has no '$defs' object to derive a meta table from", file=file, pointer=""
        )
    tables: dict[str, dict[str, str]] = {}
    for node in defs.values():
        if not isinstance(node, dict):
            continue
        wire, side = node.get("x-method"), node.get("x-side")
        if not isinstance(wire, str) or not isinstance(side, str):
            continue
        for each in ("agent", "client") if side == "both" else (side,):
            tables.setdefault(each + META_TABLE_SUFFIX, {}).setdefault(meta_key(wire), wire)
    known = [f"{side}{META_TABLE_SUFFIX}" for side in ("agent", "client", "protocol")]
    ordered: dict[str, Any] = {"version": major}
    for name in [*known, *sorted(set(tables) - set(known))]:
        ordered[name] = tables.get(name, {})
    return (json.dumps(ordered, indent=2) + "\n").encode()


def releases_of(package: Package, where: str) -> tuple[list[NpmRelease], list[str]]:
    """The releases a package version ships, and a notice for each schema folder it ships only in part."""
    releases: list[NpmRelease] = []
    notices: list[str] = []
    for major, files in sorted(schema_files(package.tarball, where).items()):
        missing = [name for name in SCHEMA_FILES if name not in files]
        if missing:
            notices.append(
                f"{package.name}@{package.version} ships schema/v{major}/ without {', '.join(missing)}; "
                "a release needs both schema files, so it is skipped"
            )
            continue
        contents: dict[str, bytes] = {}
        for schema_name, meta_name in META_OF.items():
            path, raw = files[schema_name]
            contents[schema_name] = raw
            contents[meta_name] = derive_meta(parse_json(raw, f"{where}:{path}"), major, f"{where}:{path}")
        paths = {name: files[name][0] for name in SCHEMA_FILES}
        name = release_name(package.name, package.version, major)
        releases.append(NpmRelease(name, major, contents, paths))
    return releases, notices


def lock_entry(package: Package, release: NpmRelease) -> LockEntry:
    files: dict[str, FileEntry] = {}
    for name in (*SCHEMA_FILES, *META_OF.values()):
        raw = release.files[name]
        item: FileEntry = {"sha256": sha256_bytes(raw), "bytes": len(raw)}
        if name in release.paths:
            item["path"] = release.paths[name]
        else:
            item["derived_from"] = next(s for s, m in META_OF.items() if m == name)
        files[name] = item
    origin: NpmEntry = {"package": package.name, "version": package.version, "integrity": package.integrity}
    return {"npm": origin, "files": files}


def fetch_npm(
    origin: str, lock: Lock, store: Path, only: str | None = None, force: bool = False
) -> tuple[list[Fetched], list[str]]:
    """Fetch ``npm:PACKAGE@VERSION`` into ``store`` and record what is new in ``lock``'s file.

    A protocol major whose schema files equal a locked release's is written under that
    release's name and not locked again; the version is recorded beside it when that
    release's entry is in the lock being written.  ``only`` keeps just the release of that
    name: one protocol major of the package, or a locked release fetched again.
    """
    spec = parse_spec(origin)
    package = pack(spec)
    where = f"{NPM_PREFIX}{package.name}@{package.version}"
    releases, notices = releases_of(package, where)
    if not releases:
        found = f" ({'; '.join(notices)})" if notices else ""
        raise CodegenError(f"{where} ships no schema/v<major>/schema.json and schema.unstable.json{found}")
    fetched: list[Fetched] = []
    entries: dict[str, LockEntry] = {}
    files: dict[str, bytes] = {}
    own = _own_entries(lock)
    for release in releases:
        if only is not None and only not in (
            release.name,
            lock.same_content(release.major, _digests(release)),
        ):
            continue
        same = lock.same_content(release.major, _digests(release))
        if same is None and release.name in lock.releases:
            raise CodegenError(
                f"{where} ships different schema files than the lock records for {release.name}",
                file=lock.path,
                pointer=f"/releases/{release.name}",
            )
        if same is None:
            entries[release.name] = lock_entry(package, release)
            files.update(release_paths(store, release.name, release.files))
            fetched.append(
                Fetched(release.name, release_folder(store, release.name), "locked", package.version)
            )
            continue
        locked = lock.releases[same]
        if locked.npm is None:
            # a tag release keeps upstream's own meta tables; derived ones would not match the lock
            fetched.append(Fetched(same, None, "tag", package.version))
            continue
        for meta_name in META_OF.values():
            if sha256_bytes(release.files[meta_name]) != locked.files[meta_name].sha256:
                raise CodegenError(
                    f"the meta table derived for {same} differs from the locked one ({meta_name})",
                    file=lock.path,
                    pointer=f"/releases/{same}/files/{meta_name}",
                )
        status: Status = "verified" if locked.npm.version == package.version else "identical"
        if status == "identical" and same in own:
            entry = own[same]
            recorded = entry["npm"].setdefault("identical", [])
            if package.version not in recorded:
                recorded.append(package.version)
                entries[same] = entry
        files.update(release_paths(store, same, release.files))
        fetched.append(Fetched(same, release_folder(store, same), status, package.version))
    if only is not None and not fetched:
        shipped = ", ".join(r.name for r in releases)
        raise CodegenError(f"{where} ships no release {only} (it ships {shipped})", file=lock.path)
    write_store(store, files, command="fetch", force=force, lock=lock.path, entries=entries)
    return fetched, notices


def _digests(release: NpmRelease) -> dict[str, str]:
    return {name: sha256_bytes(release.files[name]) for name in SCHEMA_FILES}


def _own_entries(lock: Lock) -> dict[str, LockEntry]:
    """The raw entries of the lock file new entries are written to (empty if it does not exist yet)."""
    if not lock.path.exists():
        return {}
    data = json.loads(lock.path.read_text(encoding="utf-8"))
    releases = data.get("releases", {}) if isinstance(data, dict) else {}
    return dict(releases) if isinstance(releases, dict) else {}


def is_npm(origin: str | None) -> bool:
    return origin is not None and origin.startswith(NPM_PREFIX)
