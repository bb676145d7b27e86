"""The two sides of a comparison: a locked release or a folder of schema files, and its surfaces.

Reading and building releases is the schema stage's work; the differ
(:mod:`codegen.diff`) only compares the surfaces it is given.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import CodegenError
from .builder import build_surface
from .ir import ApiSurface, Stability
from .load import ReleaseFiles, SchemaSource, load_schema_folder


def open_side(spec: str, source: SchemaSource) -> ReleaseFiles:
    """A side of the diff: a schema folder if ``spec`` is a path, else a locked release."""
    path = Path(spec)
    if path.is_dir() or "/" in spec or spec.startswith("."):
        return load_schema_folder(path)
    return source.load(spec)


def surfaces_of(files: ReleaseFiles, stabilities: Iterable[Stability]) -> dict[Stability, ApiSurface]:
    """The surfaces of one side; the unstable one is built on the stable one when both are there."""
    wanted = set(stabilities)
    out: dict[Stability, ApiSurface] = {}
    for stability in ("stable", "unstable"):
        unstable = stability == "unstable"
        schema_name = "schema.unstable.json" if unstable else "schema.json"
        if schema_name not in files.documents:
            if stability in wanted:
                raise CodegenError(
                    f"{schema_name} is missing, and --stability {stability} needs it",
                    file=files.folder / schema_name,
                )
            continue
        if stability not in wanted and not (stability == "stable" and "unstable" in wanted):
            continue
        out[stability] = build_surface(
            files.schema(unstable), files.meta(unstable), stability, out.get("stable")
        )
    return {s: out[s] for s in ("stable", "unstable") if s in wanted}
