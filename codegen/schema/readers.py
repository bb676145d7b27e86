"""Reading a release's files: JSON parsed strictly, sizes capped, contents hashed.

A release has four files (:data:`RELEASE_FILES`); each is read into a
:class:`SchemaDocument` with its sha256, and a release's into :class:`ReleaseFiles`.
Nothing here knows the lock or a store (:mod:`.lock`, :mod:`.store`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CodegenError
from ..textfile import decode, read_bytes

RELEASE_FILES = ("schema.json", "schema.unstable.json", "meta.json", "meta.unstable.json")
SCHEMA_FILES = RELEASE_FILES[:2]
META_OF = {"schema.json": "meta.json", "schema.unstable.json": "meta.unstable.json"}
MAX_FILE_BYTES = 8 * 1024 * 1024
"""Schema and meta files larger than this are refused (upstream's largest is 0.6 MB)."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
