"""What vendoring needs from the rest of acp-codegen: releases, surfaces, package files and folder writes.

Every import of another acp-codegen module (but the differ's, which
:mod:`.migration` makes) is here, so that moving those modules means
editing this file alone.
"""

from __future__ import annotations

from ..emit import transports
from ..emit.tree import read_tree
from ..files import check_folder, write_folder
from ..naming import field_name, package_name
from ..schema.builder import build_release, build_surface
from ..schema.ir import ApiSurface, Stability
from ..schema.load import ReleaseFiles, SchemaSource, load_schema_folder, protocol_major, sha256_bytes

__all__ = [
    "ApiSurface",
    "ReleaseFiles",
    "SchemaSource",
    "Stability",
    "check_folder",
    "field_name",
    "load_schema_folder",
    "package_files",
    "package_name",
    "protocol_major",
    "read_tree",
    "sha256_bytes",
    "surface_of",
    "transports",
    "vendor_command",
    "write_folder",
]

_PackageKey = tuple[str, bool, str, tuple[str, ...], tuple[tuple[str, str], ...]]
_PACKAGES: dict[_PackageKey, dict[str, str]] = {}


def surface_of(files: ReleaseFiles, unstable: bool) -> ApiSurface:
    """The stable or the unstable surface of one release (a schema folder may hold the stable files alone)."""
    if not unstable:
        return build_surface(files.schema(False), files.meta(False), "stable")
    return build_release(files)[1]


def vendor_command(
    release: str,
    unstable: bool,
    package: str,
    folder: str = "DIR",
    force: bool = False,
    carried: tuple[str, ...] = transports.DEFAULT,
) -> str:
    """The ``acp-codegen vendor`` command that writes this package (``DIR``: the folder that holds it)."""
    parts = ["acp-codegen vendor", release, folder]
    parts += ["--unstable"] if unstable else []
    parts += [f"--name {package}"] if package != "acp" else []
    parts += [f"--transports {transports.option(carried)}"] if carried != transports.DEFAULT else []
    parts += ["--force"] if force else []
    return " ".join(parts)


def package_files(
    files: ReleaseFiles, unstable: bool, package: str = "acp", carried: tuple[str, ...] = transports.DEFAULT
) -> tuple[ApiSurface, dict[str, str]]:
    """The surface and the package of a release vendored as ``package`` with the transports ``carried``:
    path inside the package -> text.

    Each file's header names the ``acp-codegen vendor`` command that writes
    it again. Rendering a package takes seconds (every module goes through
    black), so the files are kept for the life of the process, keyed by the
    release name, the package name, the transports and the sha256 of its
    schema files: the same inputs give the same files.
    """
    from ..emit.output import Packaging
    from ..emit.package import build_package

    surface = surface_of(files, unstable)
    digests = tuple(sorted((n, d.sha256) for n, d in files.documents.items()))
    carried = transports.normalised(carried)
    key = (files.release, unstable, package, carried, digests)
    if key not in _PACKAGES:

        def command(chosen: tuple[str, ...]) -> str:
            return vendor_command(files.release, unstable, package, carried=chosen)

        rendered = build_package(surface, Packaging(carried, command)).files()
        _PACKAGES[key] = {path.split("/", 1)[1]: text for path, text in rendered.items()}
    return surface, dict(_PACKAGES[key])
