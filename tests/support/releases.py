"""The real releases, their IR and their generated packages, as the tests use them."""

from __future__ import annotations

import functools
import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
GENERATED = ROOT / "generated"
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))

from codegen import naming  # noqa: E402
from codegen.knowledge import KNOWLEDGE_FILE, NONE_KEY  # noqa: E402
from codegen.schema.builder import build_release  # noqa: E402
from codegen.schema.ir import ApiSurface  # noqa: E402
from codegen.schema.load import ReleaseFiles, SchemaSource, protocol_major, read_lock  # noqa: E402
from codegen.textfile import read_toml  # noqa: E402

RELEASES: list[str] = list(read_lock().releases)
SURFACES: list[tuple[str, bool]] = [(r, u) for r in RELEASES for u in (False, True)]
_BY_MAJOR: dict[int, list[str]] = {}
for _release in RELEASES:
    _BY_MAJOR.setdefault(protocol_major(_release), []).append(_release)
REPRESENTATIVE: frozenset[str] = frozenset(r for names in _BY_MAJOR.values() for r in (names[0], names[-1]))
"""The oldest and the newest locked release of each protocol major: what ``make test`` sweeps over."""


def newest(major: int) -> str:
    """The newest locked release of a protocol major version (the lock's order: tags, then npm)."""
    found = read_lock().newest(major)
    assert found is not None, f"no v{major} release is locked"
    return found


def surface_id(param: tuple[str, bool]) -> str:
    release, unstable = param
    return release + ("-unstable" if unstable else "")


def sweep(surfaces: list[tuple[str, bool]]) -> list[Any]:
    """``surfaces`` as ``pytest.param``s for ``parametrize("release, unstable", ...)``, the ones
    between the oldest and the newest release of a major marked ``sweep`` (``make test-all`` only).

    For a slow check repeated on every release, where the releases in between exercise the
    same code as the two ends (see the README's test section).
    """
    return [
        pytest.param(
            release,
            unstable,
            id=surface_id((release, unstable)),
            marks=() if release in REPRESENTATIVE else (pytest.mark.sweep,),
        )
        for release, unstable in surfaces
    ]


@functools.cache
def release_files(release: str) -> ReleaseFiles:
    return SchemaSource(read_lock()).load(release)


@functools.cache
def surfaces_of(release: str) -> tuple[ApiSurface, ApiSurface]:
    return build_release(release_files(release))


def surface_of(release: str, unstable: bool) -> ApiSurface:
    stable, unstable_surface = surfaces_of(release)
    return unstable_surface if unstable else stable


def package_of(release: str, unstable: bool) -> ModuleType:
    """The generated package of a release, imported from generated/."""
    return importlib.import_module(naming.package_name(release, unstable))


@functools.cache
def raw_knowledge() -> dict[str, Any]:
    """codegen/knowledge.toml as plain TOML data: what the tests check the typed reading against."""
    return read_toml(KNOWLEDGE_FILE)


def knowledge_of(surface: ApiSurface, name: str) -> dict[str, Any] | None:
    """Section ``name`` of codegen/knowledge.toml for the surface's protocol version, as plain TOML data
    (``None``: declared none)."""
    found: dict[str, Any] = raw_knowledge()[f"v{surface.protocol_version}"][name]
    return None if NONE_KEY in found else found


def surfaces_with(name: str) -> list[tuple[str, bool]]:
    """The surfaces whose protocol version has section ``name`` in the knowledge file (not declared none)."""
    return [(r, u) for r, u in SURFACES if knowledge_of(surface_of(r, u), name) is not None]


def newest_release(major: int) -> str:
    """The newest locked release of protocol ``major`` (``Lock.newest``).

    Remote-transport tests run on it, so they move to a new release once it is locked and generated.
    """
    found = read_lock().newest(major)
    if found is None:
        raise LookupError(f"no locked release of protocol v{major}")
    return found


def newest_package(major: int, unstable: bool = False) -> ModuleType:
    """The generated package of :func:`newest_release` (its unstable schema with ``unstable=True``)."""
    return package_of(newest_release(major), unstable)
