"""``VENDORED.json``: what a vendored package was generated from, and the sha256 of each of its files.

The manifest lives inside the package folder.  Its name is not a Python
module name, so it never shadows one and the package imports the same with
or without it.  It records:

* ``release``, ``stability`` and ``package`` (the folder name it was written as);
* ``generator_version``: the acp-codegen that wrote it;
* ``transports``: the transports it carries (``vendor --transports``); a manifest
  written before the option has none, and its copy carries every transport;
* ``source``: the sha256 of the schema and meta file the package was generated from;
* ``files``: the sha256 of every file of the package, by path inside the package.

Everything a check or an upgrade does starts with :func:`read_manifest`,
which turns every problem into one :class:`~codegen.errors.CodegenError` line.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import CodegenError, pointer_join
from .source import ApiSurface, Stability, sha256_bytes, transports

MANIFEST_NAME = "VENDORED.json"
FORMAT = 1
_SHA256 = re.compile(r"[0-9a-f]{64}")
_KEYS = ("format", "release", "stability", "package", "generator_version", "source", "files")


def generator_version() -> str:
    """The installed acp-codegen's version (``0+unknown`` when it runs from a bare checkout)."""
    try:
        return metadata.version("acp-codegen")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def check_package_name(name: str) -> str:
    """``name`` if it can be imported as a top-level package of its own; a one-line error otherwise.

    A keyword cannot be imported, and a module name of the standard library
    (``json``, ``typing``) would shadow that module for the whole project.
    """
    if not name.isidentifier() or not name.isascii():
        raise CodegenError(f"{name!r} is not a valid Python package name")
    if keyword.iskeyword(name):
        raise CodegenError(f"{name!r} is a Python keyword, so no import can name it; choose another --name")
    if name in sys.stdlib_module_names:
        raise CodegenError(
            f"{name!r} is a module of Python's standard library, which a package of that name would "
            "shadow; choose another --name"
        )
    return name


@dataclass(frozen=True)
class Manifest:
    release: str
    stability: Stability
    package: str
    generator_version: str
    source: Mapping[str, str] = field(default_factory=dict)
    """Schema and meta file name -> sha256."""
    files: Mapping[str, str] = field(default_factory=dict)
    """Path inside the package (``schema.py``) -> sha256 of its bytes."""
    transports: tuple[str, ...] = transports.NAMES
    """The transports the copy carries (a manifest without the field: every one, as copies made
    before ``--transports`` hold them all)."""

    @property
    def unstable(self) -> bool:
        return self.stability == "unstable"

    def to_json(self) -> str:
        data = {
            "format": FORMAT,
            "release": self.release,
            "stability": self.stability,
            "package": self.package,
            "generator_version": self.generator_version,
            "transports": list(self.transports),
            "source": dict(sorted(self.source.items())),
            "files": dict(sorted(self.files.items())),
        }
        return json.dumps(data, indent=2) + "\n"


def file_digests(files: Mapping[str, str]) -> dict[str, str]:
    """Path -> sha256 of the UTF-8 bytes, for every file but the manifest."""
    return {rel: sha256_bytes(text.encode()) for rel, text in sorted(files.items()) if rel != MANIFEST_NAME}


def manifest_for(
    surface: ApiSurface, package: str, files: Mapping[str, str], carried: tuple[str, ...]
) -> Manifest:
    """The manifest of ``files``, the package generated from ``surface`` and written as ``package``
    with the transports ``carried``."""
    return Manifest(
        release=surface.release,
        stability=surface.stability,
        package=package,
        generator_version=generator_version(),
        source={surface.schema_file: surface.schema_sha256, surface.meta_file: surface.meta_sha256},
        files=file_digests(files),
        transports=transports.normalised(carried),
    )


def manifest_path(path: Path) -> Path:
    """The manifest of the vendored package at ``path`` (the package folder or the manifest itself).

    Any other file is refused in one line that says what to name instead: the
    folder holding it, when that is a vendored package.
    """
    if path.is_dir():
        return path / MANIFEST_NAME
    if path.name == MANIFEST_NAME:
        return path
    if path.is_file() or path.is_symlink():
        holder = next((f for f in path.parents if (f / MANIFEST_NAME).is_file()), None)
        instead = f"; did you mean {holder}, the package holding it?" if holder is not None else ""
        raise CodegenError(
            f"is a file, not a vendored package: name the folder holding {MANIFEST_NAME} (the package "
            f"`acp-codegen vendor` wrote){instead}",
            file=path,
        )
    raise CodegenError("no such folder", file=path)


def read_manifest(path: Path) -> tuple[Path, Manifest]:
    """The package folder and its manifest; bad input is one :class:`CodegenError` line."""
    file = manifest_path(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise CodegenError(
            f"no {MANIFEST_NAME} here: not a package written by `acp-codegen vendor`", file=file.parent
        ) from None
    except OSError as exc:
        raise CodegenError(f"cannot read the manifest: {exc.strerror}", file=file) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CodegenError(f"not UTF-8 text (byte {exc.start})", file=file) from None
    except json.JSONDecodeError as exc:
        raise CodegenError(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", file=file
        ) from None
    return file.parent, parse_manifest(data, file)


def parse_manifest(data: Any, file: Path) -> Manifest:
    if not isinstance(data, dict):
        raise CodegenError("the manifest must be a JSON object", file=file)
    version = data.get("format")
    if version != FORMAT:
        raise CodegenError(
            f"unsupported manifest format {version!r}; this acp-codegen reads format {FORMAT}",
            file=file,
            pointer="/format",
        )
    missing = [key for key in _KEYS if key not in data]
    if missing:
        raise CodegenError(f"the manifest has no {missing[0]!r}", file=file)
    for key in ("release", "package", "generator_version"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise CodegenError(f"{key!r} must be a non-empty string", file=file, pointer=f"/{key}")
    stability = data["stability"]
    if stability not in ("stable", "unstable"):
        raise CodegenError("'stability' must be 'stable' or 'unstable'", file=file, pointer="/stability")
    package = data["package"]
    if not package.isidentifier() or keyword.iskeyword(package):
        raise CodegenError(f"{package!r} is not a Python package name", file=file, pointer="/package")
    source = _digests(data["source"], file, "source")
    files = _digests(data["files"], file, "files")
    for rel in files:
        path = PurePosixPath(rel)
        if path.is_absolute() or ".." in path.parts or "\\" in rel or rel == MANIFEST_NAME or not rel:
            raise CodegenError(
                f"{rel!r} is not a path inside the package", file=file, pointer=pointer_join("/files", rel)
            )
    return Manifest(
        release=data["release"],
        stability=stability,
        package=package,
        generator_version=data["generator_version"],
        source=source,
        files=files,
        transports=_transports(data.get("transports", list(transports.NAMES)), file),
    )


def _transports(value: Any, file: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise CodegenError("'transports' must be a list of transport names", file=file, pointer="/transports")
    try:
        return transports.normalised(value)
    except CodegenError as error:
        message = error.message.removeprefix("--transports: ")
        raise CodegenError(message, file=file, pointer="/transports") from None


def _digests(value: Any, file: Path, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not value:
        raise CodegenError(f"{key!r} must be a non-empty object of sha256 sums", file=file, pointer=f"/{key}")
    for name, digest in value.items():
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise CodegenError(
                "must be a sha256 sum (64 lower-case hex digits)",
                file=file,
                pointer=pointer_join(f"/{key}", name),
            )
    return dict(value)
