"""``acp-codegen generate``: one package per release and stability into an output folder."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console

from ... import diagnostics
from ... import generate as gen
from ...emit.tree import diff_trees
from ...errors import CodegenError
from ...files import RECORD_NAME, Output
from ...files.record import Difference
from ..common import (
    DEFAULT_OUT,
    EXIT_CHECK_FAILED,
    Command,
    again,
    checkout_default,
    label,
    out_folder,
    source_of,
)
from ..options import force_option, out_help, strict_option


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "releases", nargs="*", metavar="RELEASE", help="releases to generate (default: all in the lock)"
    )
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help=out_help(DEFAULT_OUT))
    p.add_argument(
        "--jobs", "-j", type=int, default=None, help="worker processes, at least 1 (default: one per core)"
    )
    p.add_argument(
        "--no-cache", action="store_true", help="render every package even if its inputs did not change"
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 with a diff if the output is stale (a package whose files match what the "
        "build cache recorded for the same inputs is not rendered again; --no-cache renders every one)",
    )
    p.add_argument(
        "--quiet", "-q", action="store_true", help="print only errors, warnings and the check diff"
    )
    force_option(p, "generate")
    strict_option(p)


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="surrogateescape")


def _differences(found: list[Difference]) -> tuple[dict[str, str], dict[str, str]]:
    """The old and the new text of every path a run would change (for :func:`diff_trees`)."""
    old = {d.path: text for d in found if (text := _text(d.old)) is not None}
    new = {d.path: text for d in found if (text := _text(d.new)) is not None}
    return old, new


def run(args: argparse.Namespace, console: Console) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise CodegenError(f"--jobs must be at least 1, not {args.jobs}")
    output = Output(out_folder(args, DEFAULT_OUT), "generate", force=args.force)
    source = source_of(args)
    releases = args.releases or gen.all_releases(source)
    if not args.releases:
        for release in gen.unlocked_releases(source):
            console.print(
                f"notice: release {release} is in {source.find_folder(release)} but not in the lock, "
                f"so it is skipped; review it, then run `acp-codegen lock {release}`",
                highlight=False,
            )
    units = gen.units_for(source, releases)
    started = time.perf_counter()

    def progress(result: gen.UnitResult) -> None:
        if not args.quiet:
            state = "unchanged" if result.cached else f"rendered in {result.seconds:.1f}s"
            console.print(f"  {result.unit.package}: {state}", highlight=False)

    results = gen.render(
        source,
        units,
        jobs=args.jobs,
        out=output.folder,
        use_cache=not args.no_cache,  # a check trusts the build cache too: its key covers every input
        strict=args.strict,
        progress=progress,
    )
    for result in results:
        for found in result.gaps:
            diagnostics.gap(
                found.message,
                default=found.default,
                section=found.section,
                file=found.file,
                pointer=found.pointer,
            )
    plan = gen.plan(output, results, every=not args.releases)
    elapsed = time.perf_counter() - started
    shown = label(args, DEFAULT_OUT)
    if args.check:
        differences = plan.differences()
        if differences:
            for line in diff_trees(*_differences(differences), label=shown):
                print(line)
            if checkout_default(args, DEFAULT_OUT) and not args.releases:
                hint = "run `make generate` (or `acp-codegen generate`) and commit the result"
            else:
                hint = f"run `{again(args, 'generate', *args.releases)}`"
            console.print(f"[bold red]{shown} is stale[/]: {hint}.", highlight=False)
            return EXIT_CHECK_FAILED
        if not args.quiet:
            console.print(
                f"{shown} is up to date ({len(units)} packages checked in {elapsed:.1f}s).", highlight=False
            )
        return 0
    changed = plan.apply()
    if not args.quiet:
        verb = "wrote" if changed else "kept"
        console.print(f"{verb} {shown} ({len(units)} packages, {elapsed:.1f}s).", highlight=False)
    return 0


COMMAND = Command(
    "generate",
    help="generate one package per release and stability into --out DIR",
    description="Generate one package per release and stability into DIR, each written in one step, "
    f"with an index (README.md) and {RECORD_NAME}, the record of every file acp-codegen wrote there. "
    "Only the paths in that record are ever changed or removed; a path it wants that holds something "
    "else is refused unless --force. Without RELEASE, every locked release is generated and the "
    "packages the record lists that are no longer locked are removed.",
    arguments=arguments,
    run=run,
)
