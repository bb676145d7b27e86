"""The differ's entry points: every change between two surfaces, or two releases, in report order.

It compares two :class:`~codegen.schema.ir.ApiSurface` values (the IR, never the raw
JSON) in two layers:

* **wire**: fields, types, enums, unions, constraints, defaults, lenient
  annotations and methods, as peers on the network see them;
* **python**: class, attribute and method names and method signatures, as
  code written against the generated bindings sees them.

Types are matched by name; a type that disappears while another with the same
shape appears is a rename (:mod:`.renames`).  Union variants are matched by
their tag value, never by position.  Who a change breaks comes from who sends
and receives the data in each release (:func:`.senders.flows_by_type`) and the
rule, resolved in one place, :func:`codegen.diff.rules.impact`.  Each surface
is diffed on its own; :attr:`.model.DiffResult.changes` lists a change of both
stability levels once.  The comparisons themselves
(:mod:`.compare`, one module per construct) yield their changes;
this module collects and orders them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import CodegenError
from ..schema.ir import ApiSurface, Stability
from ..schema.load import ReleaseFiles
from ..schema.releases import surfaces_of
from .compare import compare_methods, compare_types
from .context import Context
from .model import DiffResult, SurfaceDiff, report_order
from .normative import pair_moved


def diff_surfaces(
    old: ApiSurface, new: ApiSurface, old_file: str | None = None, new_file: str | None = None
) -> SurfaceDiff:
    """Every change from ``old`` to ``new`` (the same stability level of two releases).

    ``old_file`` and ``new_file`` are how changes name the two schema files
    (default: the file names the surfaces record).
    """
    ctx = Context.between(old, new, old_file, new_file)
    found = pair_moved([*compare_types(ctx), *compare_methods(ctx)])
    return SurfaceDiff(new.stability, old.release, new.release, tuple(sorted(found, key=report_order)))


Built = tuple[Mapping[Stability, ApiSurface], Mapping[Stability, ApiSurface]]
"""The surfaces of two releases at some stability levels (:func:`~codegen.schema.releases.surfaces_of`)."""


def diff_releases(
    old: ReleaseFiles, new: ReleaseFiles, stabilities: Iterable[Stability], built: Built | None = None
) -> DiffResult:
    """Every change between two releases at the given stability levels.

    ``built`` are the two releases' surfaces at those levels, when the caller has them (the diff and
    its evidence read the same surfaces, built once).
    """
    wanted = [s for s in ("stable", "unstable") if s in set(stabilities)]
    before, after = built if built is not None else (surfaces_of(old, wanted), surfaces_of(new, wanted))
    for stability in wanted:
        a, b = before[stability], after[stability]
        if a.protocol_version != b.protocol_version:
            raise CodegenError(
                f"cannot compare protocol version {a.protocol_version} ({old.release}) "
                f"with protocol version {b.protocol_version} ({new.release})",
                file=new.folder / b.meta_file,
                pointer="/version",
            )
    surfaces = tuple(
        diff_surfaces(
            before[s],
            after[s],
            display_path(old.schema(s == "unstable").path),
            display_path(new.schema(s == "unstable").path),
        )
        for s in wanted
    )
    return DiffResult(old.release, new.release, surfaces)


def display_path(path: Path, root: Path | None = None) -> str:
    """A schema file as a report names it: relative to ``root`` (default: the current folder) when inside."""
    base = (root or Path.cwd()).resolve()
    try:
        return path.resolve().relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()
