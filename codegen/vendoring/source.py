"""What vendoring needs from the rest of acp-codegen: releases, surfaces, package files and tree writes.

Every import of another acp-codegen module (but the differ's, which
:mod:`.migration` makes) is here, so that moving those modules means
editing this file alone.
"""

from __future__ import annotations

from ..emit.tree import read_tree, write_tree
from ..naming import field_name, package_name
from ..schema.builder import build_release, build_surface
from ..schema.ir import ApiSurface, Stability
from ..schema.load import ReleaseFiles, SchemaSource, load_schema_folder, sha256_bytes

__all__ = [
    "ApiSurface",
    "ReleaseFiles",
    "SchemaSource",
    "Stability",
    "field_name",
    "load_schema_folder",
    "package_files",
    "package_name",
    "read_tree",
    "sha256_bytes",
    "surface_of",
    "write_tree",
]

_PackageKey = tuple[str, bool, tuple[tuple[str, str], ...]]
_PACKAGES: dict[_PackageKey, dict[str, str]] = {}


def surface_of(files: ReleaseFiles, unstable: bool) -> ApiSurface:
    """The stable or the unstable surface of one release (a schema folder may hold the stable files alone)."""
    if not unstable:
        return build_surface(files.schema(False), files.meta(False), "stable")
    return build_release(files)[1]


def package_files(files: ReleaseFiles, unstable: bool) -> tuple[ApiSurface, dict[str, str]]:
    """The surface and the generated package of a release: path inside the package -> text.

    Rendering a package takes seconds (every module goes through black), so
    the files are kept for the life of the process, keyed by the release name
    and the sha256 of its schema files: the same inputs give the same files.
    """
    from ..emit.package import build_package

    surface = surface_of(files, unstable)
    key = (files.release, unstable, tuple(sorted((n, d.sha256) for n, d in files.documents.items())))
    if key not in _PACKAGES:
        rendered = build_package(surface).files()
        _PACKAGES[key] = {path.split("/", 1)[1]: text for path, text in rendered.items()}
    return surface, dict(_PACKAGES[key])
