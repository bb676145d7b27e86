"""The ``acp-codegen`` command line.

Exit status: 0 success, 1 a check failed (stale output, breaking changes),
2 bad input or usage (one error line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console

from . import diagnostics
from . import generate as gen
from .diff.report import FORMATS
from .errors import EXIT_INPUT_ERROR, CodegenError
from .schema.ir import Stability
from .schema.load import (
    DEFAULT_LOCK,
    PROJECT_ROOT,
    SchemaSource,
    add_to_lock,
    default_cache_dir,
    fetch_release,
    read_lock,
)

DEFAULT_OUT = PROJECT_ROOT / "generated"
DEFAULT_REPORTS = PROJECT_ROOT / "reports"
EXIT_CHECK_FAILED = 1

Command = Callable[[argparse.Namespace, Console], int]
_COMMANDS: dict[str, Command] = {}


def command(name: str) -> Callable[[Command], Command]:
    def register(func: Command) -> Command:
        _COMMANDS[name] = func
        return func

    return register


def _source(args: argparse.Namespace) -> SchemaSource:
    return SchemaSource(read_lock(args.lock), args.schemas, args.cache)


@command("generate")
def _generate(args: argparse.Namespace, console: Console) -> int:
    source = _source(args)
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
        out=args.out,
        use_cache=not (args.no_cache or args.check),
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
    tree = gen.assemble(args.out, results, replace_all=not args.releases)
    elapsed = time.perf_counter() - started
    if args.check:
        lines = gen.diff_trees(gen.read_tree(args.out), tree)
        if lines:
            for line in lines:
                print(line)
            console.print(
                f"[bold red]{args.out} is stale[/]: run `make generate` "
                "(or `acp-codegen generate`) and commit the result.",
                highlight=False,
            )
            return EXIT_CHECK_FAILED
        if not args.quiet:
            console.print(
                f"{args.out} is up to date ({len(units)} packages checked in {elapsed:.1f}s).",
                highlight=False,
            )
        return 0
    changed = gen.write_tree(args.out, tree)
    if not args.quiet:
        verb = "wrote" if changed else "kept"
        console.print(f"{verb} {args.out} ({len(units)} packages, {elapsed:.1f}s).", highlight=False)
    return 0


@command("fetch")
def _fetch(args: argparse.Namespace, console: Console) -> int:
    lock = read_lock(args.lock)
    locked = lock.release(args.release)
    target = fetch_release(locked, args.origin, args.cache)
    console.print(
        f"fetched {args.release} into {target} (all {len(locked.files)} sha256 sums match the lock)",
        highlight=False,
    )
    return 0


@command("lock")
def _lock(args: argparse.Namespace, console: Console) -> int:
    source = _source(args)
    folder = source.find_folder(args.release)
    if folder is None:
        raise CodegenError(f"release {args.release!r} is not in {source.source} or the fetch cache")
    add_to_lock(args.release, folder, args.lock)
    console.print(f"recorded {args.release} from {folder} in {args.lock}", highlight=False)
    return 0


@command("ir")
def _ir(args: argparse.Namespace, console: Console) -> int:
    from .schema.build import build_release
    from .schema.ir import ObjectType, UnionType, to_json

    stable, unstable = build_release(_source(args).load(args.release))
    surface = unstable if args.unstable else stable
    if args.json:
        json.dump(to_json(surface), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    console.print(
        f"ACP {surface.release} ({surface.stability}), protocol version {surface.protocol_version}: "
        f"{len(surface.types)} types, {len(surface.methods)} methods",
        highlight=False,
    )
    for method in surface.methods:
        result = f" -> {method.result}" if method.result else ""
        flag = " [unstable]" if method.unstable else ""
        console.print(
            f"  {method.side:8} {method.kind:12} {method.wire_name}({method.params}){result}{flag}",
            highlight=False,
        )
    for type_ in surface.types.values():
        if isinstance(type_, UnionType) and type_.tagged:
            state = "open" if type_.open else "closed"
            console.print(
                f"  union {type_.name} on {type_.tag_wire_name!r} ({state}, {len(type_.variants)} variants)",
                highlight=False,
            )
        elif isinstance(type_, ObjectType) and args.verbose:
            console.print(f"  object {type_.name} ({len(type_.fields)} fields)", highlight=False)
    return 0


@command("diff")
def _diff(args: argparse.Namespace, console: Console) -> int:
    import datetime

    from . import diff
    from .diff import report
    from .schema.releases import open_side

    source = _source(args)
    stabilities: tuple[Stability, ...] = ("stable", "unstable")
    if args.stability != "both":
        stabilities = (args.stability,)
    old, new = open_side(args.old, source), open_side(args.new, source)
    result = diff.diff_releases(old, new, stabilities)
    if args.waivers is not None:
        waivers = diff.read_waivers(args.waivers)
        result = diff.apply_waivers(result, waivers, datetime.date.today())
    sys.stdout.write(report.render(result, args.format, args.fail_on))
    return result.exit_code(args.fail_on)


@command("rules")
def _rules(args: argparse.Namespace, console: Console) -> int:
    from .diff import report

    sys.stdout.write(report.render_rules(args.format))
    return 0


@command("reports")
def _reports(args: argparse.Namespace, console: Console) -> int:
    from .diff import report

    source = _source(args)
    written = report.report_files(source, list(source.lock.releases))
    if args.check:
        stale = report.stale_reports(args.out, written)
        for line in stale:
            print(line)
        if stale:
            message = f"[bold red]{args.out} is stale[/]: run `make reports` and commit the result."
            console.print(message, highlight=False)
            return EXIT_CHECK_FAILED
        console.print(f"{args.out} is up to date ({len(written)} files checked).", highlight=False)
        return 0
    report.write_reports(args.out, written)
    console.print(f"wrote {len(written)} files to {args.out}", highlight=False)
    return 0


def _strict_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strict",
        action="store_true",
        help="fail (exit 2) on anything the release uses that codegen/knowledge.toml does not cover, "
        "instead of warning and applying the documented default",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-codegen",
        description="Generate typed Python bindings from the upstream ACP v2 JSON Schema releases.",
        epilog="Exit status: 0 success, 1 a check failed, 2 bad input or usage.",
    )
    parser.add_argument("--lock", type=Path, default=DEFAULT_LOCK, help="release lock (default: %(default)s)")
    parser.add_argument(
        "--schemas",
        type=Path,
        default=None,
        help="folder holding v2/<release>/ schema files (default: $ACP_SCHEMAS, else ../shared/schemas)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=default_cache_dir(),
        help="where fetched releases and the build cache live (default: %(default)s)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "generate",
        help="generate the packages under generated/",
        description="Generate one package per release and stability.",
    )
    p.add_argument(
        "releases", nargs="*", metavar="RELEASE", help="releases to generate (default: all in the lock)"
    )
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: %(default)s)")
    p.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: one per core)")
    p.add_argument(
        "--no-cache", action="store_true", help="render every package even if its inputs did not change"
    )
    p.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 with a diff if the output is stale"
    )
    p.add_argument(
        "--quiet", "-q", action="store_true", help="print only errors, warnings and the check diff"
    )
    _strict_option(p)

    p = sub.add_parser(
        "fetch",
        help="copy or download a locked release into the cache",
        description="Copy or download the four files of a release, "
        "refusing any whose sha256 differs from the lock.",
    )
    p.add_argument("release", metavar="RELEASE")
    p.add_argument(
        "--from",
        dest="origin",
        default=None,
        metavar="DIR_OR_URL",
        help="a folder or base URL laid out as v2/<release>/<file> "
        "(default: the upstream addresses in the lock)",
    )

    p = sub.add_parser(
        "lock",
        help="record a new release's sha256 sums in the lock",
        description="Add a release found in the schema folder (or the cache) to the lock.",
    )
    p.add_argument("release", metavar="RELEASE")

    p = sub.add_parser(
        "ir",
        help="print the intermediate representation of a release",
        description="Print the IR that every emitter reads.",
    )
    p.add_argument("release", metavar="RELEASE")
    p.add_argument("--unstable", action="store_true", help="the unstable schema instead of the stable one")
    p.add_argument("--json", action="store_true", help="the whole IR as JSON")
    p.add_argument("--verbose", "-v", action="store_true", help="list every object type too")
    _strict_option(p)

    p = sub.add_parser(
        "diff",
        help="classify every API change between two releases by who it breaks",
        description="Compare two releases (or schema folders) on the wire and in the generated Python names. "
        "Each change gets a rule, a severity and the role it breaks: an old agent, an old client or "
        "python callers.",
        epilog="Exit status: 0 nothing fails, 1 a change at or above --fail-on or an expired waiver, "
        "2 bad input. `acp-codegen rules` lists every rule.",
    )
    p.add_argument("old", metavar="OLD", help="a locked release (2.0.0-alpha.5) or a folder of schema files")
    p.add_argument("new", metavar="NEW", help="the newer release or folder")
    p.add_argument(
        "--stability",
        choices=("stable", "unstable", "both"),
        default="both",
        help="which schema to compare (default: %(default)s)",
    )
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default: %(default)s)")
    p.add_argument(
        "--fail-on",
        choices=("breaking", "warning", "never"),
        default="breaking",
        help="exit 1 when an unwaived change is at least this severe (default: %(default)s)",
    )
    p.add_argument(
        "--waivers",
        type=Path,
        default=None,
        metavar="FILE",
        help="TOML file of [[waiver]] tables with fingerprint, reason and expires (a date)",
    )

    p = sub.add_parser("rules", help="list the rules of `diff`", description="Print every rule of `diff`.")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text", help="(%(default)s)")

    p = sub.add_parser(
        "reports",
        help="write reports/<old>..<new>.md and .json for consecutive locked releases",
        description="Diff every consecutive pair of locked releases, stable and unstable, into markdown and "
        "JSON reports.",
    )
    p.add_argument("--out", type=Path, default=DEFAULT_REPORTS, help="output folder (default: %(default)s)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 listing stale reports")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console(stderr=True, soft_wrap=True)
    try:
        with diagnostics.collecting(getattr(args, "strict", False)) as found:
            status = _COMMANDS[args.command](args, console)
        for item in found.gaps:
            print(f"acp-codegen: warning: {item.one_line()}", file=sys.stderr)
        return status
    except CodegenError as error:
        print(f"acp-codegen: error: {error.one_line()}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
