"""The ``acp-codegen`` command line.

Exit status: 0 success, 1 a check failed (stale output, breaking changes),
2 bad input or usage (one error line on stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from . import diagnostics, resources
from . import generate as gen
from .diff.report import FORMATS
from .emit.tree import diff_trees
from .errors import EXIT_INPUT_ERROR, CodegenError
from .files import RECORD_NAME, Output, check_folder, os_error
from .files.record import Difference
from .schema.ir import Stability
from .schema.load import (
    BUNDLED_SCHEMAS,
    DEFAULT_LOCK,
    UPSTREAM_REPOSITORY,
    SchemaSource,
    add_to_lock,
    default_cache_dir,
    default_source,
    fetch_release,
    layered_lock,
    protocol_major,
    read_lock,
)

DEFAULT_OUT = resources.DEFAULT_OUT
DEFAULT_REPORTS = resources.DEFAULT_REPORTS
EXIT_CHECK_FAILED = 1
EXIT_INTERRUPTED = 130

Command = Callable[[argparse.Namespace, Console], int]
_COMMANDS: dict[str, Command] = {}


def command(name: str) -> Callable[[Command], Command]:
    def register(func: Command) -> Command:
        _COMMANDS[name] = func
        return func

    return register


def _source(args: argparse.Namespace, *, creating: bool = False) -> SchemaSource:
    """The lock and the stores the command reads (``creating``: the ``--schemas`` folder may be new)."""
    front = args.schemas if args.schemas is not None else default_source()
    if front is not None and not creating and not front.is_dir():
        where = "--schemas" if args.schemas is not None else "$ACP_SCHEMAS"
        raise CodegenError(f"{where}: no such folder", file=front)
    if args.lock is not None:
        lock = read_lock(args.lock)
    elif front is not None:
        lock = layered_lock(front / "lock.json", read_lock(DEFAULT_LOCK))
    else:
        lock = read_lock(DEFAULT_LOCK)
    return SchemaSource(lock, front, args.cache)


def _writable_store(source: SchemaSource, command: str) -> SchemaSource:
    """``source``, unless what ``command`` would write is an installed copy's bundled store."""
    if resources.installed() and source.target.resolve() == BUNDLED_SCHEMAS.resolve():
        raise CodegenError(
            f"{command} writes into a schema store, and the bundled one is part of the installed "
            "acp-codegen; pass --schemas DIR to use a store of your own (it is searched first)",
            file=BUNDLED_SCHEMAS,
        )
    return source


def _out(args: argparse.Namespace, default: Path | None) -> Path:
    """The ``--out`` folder of a command: given, or the checkout's own; never a file."""
    if args.out is None:
        if default is None:
            raise CodegenError(
                f"{args.command} needs --out DIR: an installed acp-codegen has no checkout to write into"
            )
        return check_folder(default)
    out: Path = args.out
    return check_folder(out)


def _checkout_default(args: argparse.Namespace, default: Path | None) -> bool:
    """Whether the command writes the checkout's own folder (``generated/``, ``reports/``)."""
    out = args.out if args.out is not None else default
    return default is not None and out is not None and out.resolve() == default.resolve()


def _label(args: argparse.Namespace, default: Path | None) -> str:
    """The output folder as the user named it (the checkout's as its name in the checkout)."""
    if args.out is not None:
        return str(args.out)
    return default.name if default is not None else "."


def _again(args: argparse.Namespace, command: str, *operands: str) -> str:
    """The ``acp-codegen`` command that writes the same output again, with the options that choose it."""
    parts = ["acp-codegen", command, *operands]
    for option in ("schemas", "lock"):
        value = getattr(args, option, None)
        if value is not None:
            parts += [f"--{option}", str(value)]
    if args.out is not None:
        parts += ["--out", str(args.out)]
    return " ".join(parts)


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="surrogateescape")


def _differences(found: list[Difference]) -> tuple[dict[str, str], dict[str, str]]:
    """The old and the new text of every path a run would change (for :func:`diff_trees`)."""
    old = {d.path: text for d in found if (text := _text(d.old)) is not None}
    new = {d.path: text for d in found if (text := _text(d.new)) is not None}
    return old, new


@command("generate")
def _generate(args: argparse.Namespace, console: Console) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise CodegenError(f"--jobs must be at least 1, not {args.jobs}")
    output = Output(_out(args, DEFAULT_OUT), "generate", force=args.force)
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
    label = _label(args, DEFAULT_OUT)
    if args.check:
        differences = plan.differences()
        if differences:
            for line in diff_trees(*_differences(differences), label=label):
                print(line)
            if _checkout_default(args, DEFAULT_OUT) and not args.releases:
                again = "run `make generate` (or `acp-codegen generate`) and commit the result"
            else:
                again = f"run `{_again(args, 'generate', *args.releases)}`"
            console.print(f"[bold red]{label} is stale[/]: {again}.", highlight=False)
            return EXIT_CHECK_FAILED
        if not args.quiet:
            console.print(
                f"{label} is up to date ({len(units)} packages checked in {elapsed:.1f}s).", highlight=False
            )
        return 0
    changed = plan.apply()
    if not args.quiet:
        verb = "wrote" if changed else "kept"
        console.print(f"{verb} {label} ({len(units)} packages, {elapsed:.1f}s).", highlight=False)
    return 0


@command("fetch")
def _fetch(args: argparse.Namespace, console: Console) -> int:
    from .schema import npm

    source = _writable_store(_source(args, creating=True), "fetch")
    if npm.is_npm(args.origin):
        locked = None  # RELEASE may name one release the package ships, locked or not
    elif args.release is None:
        raise CodegenError(
            "fetch needs RELEASE, or --from npm:PACKAGE@VERSION to import a package's releases"
        )
    else:
        locked = source.check_locked(args.release)
    origin = args.origin if locked is None or locked.npm is None or args.origin else locked.npm.spec
    if npm.is_npm(origin):
        fetched, notices = npm.fetch_npm(
            origin, source.lock, source.target, only=args.release, force=args.force
        )
        for notice in notices:
            console.print(f"notice: {notice}", highlight=False)
        for item in fetched:
            what = {
                "locked": f"new, locked in {source.lock.path}",
                "identical": f"{item.version} ships the same content as the locked release {item.release}",
                "verified": "every sha256 matches the lock",
                "tag": f"{item.version} ships the same schema files as the tag release {item.release}, "
                "whose meta tables are upstream's; nothing written",
            }[item.status]
            where = f"; files in {item.folder}" if item.folder is not None else ""
            console.print(f"{item.release}: {what}{where}", highlight=False)
            if item.folder is not None:
                print(item.release)
        return 0
    assert locked is not None
    target = fetch_release(locked, args.origin, source.target, force=args.force)
    console.print(
        f"fetched {locked.name} into {target} (all {len(locked.files)} sha256 sums match the lock)",
        highlight=False,
    )
    print(locked.name)
    return 0


@command("lock")
def _lock(args: argparse.Namespace, console: Console) -> int:
    source = _writable_store(_source(args), "lock")
    protocol_major(args.release)  # a name that says no protocol major is refused first, with the pattern
    folder = source.find_folder(args.release)
    if folder is None:
        looked = ", ".join(f"{folder}/" for folder in source.folders(args.release))
        raise CodegenError(
            f"release {args.release!r} is in no schema store: none of {looked} holds schema.json; "
            "a store keeps a release's four files in v<major>/<release>/ (schemas/README.md), "
            "or fetch them first"
        )
    add_to_lock(args.release, folder, source.lock.path, force=args.force)
    console.print(f"recorded {args.release} from {folder} in {source.lock.path}", highlight=False)
    return 0


@command("ir")
def _ir(args: argparse.Namespace, console: Console) -> int:
    from .schema.builder import build_release
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
    from .schema.releases import open_side, surfaces_of

    if args.evidence_examples < 1:
        raise CodegenError(f"--evidence-examples must be at least 1, not {args.evidence_examples}")
    source = _source(args)
    stabilities: tuple[Stability, ...] = ("stable", "unstable")
    if args.stability != "both":
        stabilities = (args.stability,)
    old, new = open_side(args.old, source), open_side(args.new, source)
    built = (
        surfaces_of(old, stabilities),
        surfaces_of(new, stabilities),
    )  # read by the diff and its evidence
    result = diff.diff_releases(old, new, stabilities, built)
    if args.waivers is not None:
        waivers = diff.read_waivers(args.waivers)
        result = diff.apply_waivers(result, waivers, datetime.date.today())
    if args.evidence:
        result = _with_evidence(result, old, new, args, console, built)
    url = report.rules_url(args.rules_url)
    shown = report.render(
        result, args.format, args.fail_on, url, min_severity=args.min_severity, path_prefix=args.path_prefix
    )
    sys.stdout.write(shown)
    return result.exit_code(args.fail_on)


def _with_evidence(
    result: Any, old: Any, new: Any, args: argparse.Namespace, console: Console, built: Any = None
) -> Any:
    """The diff with evidence searched for (without the optional generator: as it is, and a warning),
    its stages shown as progress bars on stderr when it is a terminal; ``built``: the surfaces the diff
    read, if the caller has them."""
    from . import evidence

    try:
        evidence.require_generator()
    except evidence.MissingGeneratorError as missing:
        diagnostics.gap(missing.message, default="the report has no evidence (--no-evidence silences this)")
        return result
    with _progress(console) as progress:
        return evidence.attach_evidence(result, old, new, args.cache, args.evidence_examples, progress, built)


class _Stages:
    """The stages of a long run as rich progress bars (:class:`codegen.evidence.parallel.Progress`)."""

    def __init__(self, bars: Any) -> None:
        self.bars = bars

    def stage(self, description: str, total: int) -> Callable[[], None]:
        task = self.bars.add_task(description, total=total)
        return lambda: self.bars.advance(task)


@contextlib.contextmanager
def _progress(console: Console) -> Iterator[_Stages | None]:
    """Progress bars on the console when it writes to a terminal; nothing (``None``) otherwise."""
    isatty = getattr(console.file, "isatty", None)
    if not (callable(isatty) and isatty()):
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bars:
        yield _Stages(bars)


@command("rules")
def _rules(args: argparse.Namespace, console: Console) -> int:
    from .diff import report

    sys.stdout.write(report.render_rules(args.format))
    return 0


@command("reports")
def _reports(args: argparse.Namespace, console: Console) -> int:
    from .diff import report

    output = Output(_out(args, DEFAULT_REPORTS), "reports", force=args.force)
    source = _source(args)
    written = report.report_files(source, list(source.lock.releases), min_severity=args.min_severity)
    plan = output.plan({name: text.encode() for name, text in written.items()})
    label = _label(args, DEFAULT_REPORTS)
    if args.check:
        stale = plan.differences()
        for found in stale:
            state = "missing" if found.old is None else "left over" if found.new is None else "differs"
            print(f"{state}: {output.folder / found.path}")
        if stale:
            if _checkout_default(args, DEFAULT_REPORTS):
                again = "run `make reports` and commit the result"
            else:
                again = f"run `{_again(args, 'reports')}`"
            console.print(f"[bold red]{label} is stale[/]: {again}.", highlight=False)
            return EXIT_CHECK_FAILED
        console.print(f"{label} is up to date ({len(written)} files checked).", highlight=False)
        return 0
    changed = plan.apply()
    console.print(f"wrote {len(written)} files to {label} ({changed} changed)", highlight=False)
    return 0


@command("vendor")
def _vendor(args: argparse.Namespace, console: Console) -> int:
    from .emit import transports
    from .vendoring import manifest, vendoring

    def regenerate(found: manifest.Manifest) -> dict[str, str]:
        # the lock is read only when an edit is to be shown: a check needs no schemas otherwise
        return dict(vendoring.regenerate_from(_source(args))(found))

    if args.check is not None:
        if args.release is not None or args.transports is not None:
            raise CodegenError(
                "--check takes the vendored package's path alone, not RELEASE, DIR or --transports"
            )
        report = vendoring.check(args.check, regenerate)
        for line in report.lines:
            print(line)
        found = report.manifest
        if report.clean:
            console.print(
                f"{report.folder} matches its manifest ({found.release}, {found.stability}, "
                f"{transports.option(found.transports)}, {len(found.files)} files).",
                highlight=False,
            )
            return 0
        console.print(
            f"[bold red]{report.folder} differs from its manifest[/] ({report.summary()}): "
            f"revert the edits, or drop them with `{_vendor_again(report.folder, found)}`.",
            highlight=False,
        )
        return EXIT_CHECK_FAILED
    if args.release is None or args.dir is None:
        raise CodegenError("vendor needs RELEASE and DIR (or --check PATH)")
    manifest.check_package_name(args.name)
    carried = None if args.transports is None else transports.parse(args.transports)
    files = _source(args).load(args.release)
    try:
        done = vendoring.vendor(
            files,
            args.unstable,
            args.dir,
            args.name,
            force=args.force,
            regenerate=regenerate,
            carried=carried,
        )
    except vendoring.LocalEditsError as error:
        for line in error.report.lines:
            print(line)
        raise
    verb = "vendored" if done.written else "kept (already up to date)"
    console.print(
        f"{verb} ACP {done.manifest.release} ({done.manifest.stability}) as {done.folder} with "
        f"--transports {transports.option(done.manifest.transports)}: {len(done.manifest.files)} files; "
        f"`acp-codegen vendor --check {done.folder}` verifies it.",
        highlight=False,
    )
    return 0


def _vendor_again(folder: Path, found: Any) -> str:
    """The ``acp-codegen vendor`` command that writes the copy at ``folder`` again, over its edits."""
    from .vendoring.source import vendor_command

    absolute = Path(os.path.abspath(folder))
    parent = str(absolute.parent) if folder.is_absolute() else os.path.relpath(absolute.parent)
    return vendor_command(found.release, found.unstable, absolute.name, parent, True, found.transports)


@command("releases")
def _releases(args: argparse.Namespace, console: Console) -> int:
    from .schema.releases import release_table

    table = release_table(_source(args))
    if args.format == "json":
        json.dump([row.to_json() for row in table], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    rows = [
        ("release", "protocol", "origin", "lock", "files", "same content as"),
        *(r.cells() for r in table),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[-1]]))
    print(f"git tags are of {UPSTREAM_REPOSITORY}; bundled: the lock and store acp-codegen carries.")
    return 0


@command("upgrade")
def _upgrade(args: argparse.Namespace, console: Console) -> int:
    from .diff import report as diff_report
    from .vendoring import manifest, upgrade, vendoring

    release, *more = args.to  # `upgrade PATH --to RELEASE SOURCES...` reads SOURCES into --to
    sources = [*args.sources, *map(Path, more)] or [Path(".")]
    source = _source(args)
    folder, found = manifest.read_manifest(args.path)
    source.check_locked(release)
    old, new = source.load(found.release), source.load(release)
    try:
        plan = upgrade.plan(
            folder, old, new, sources, force=args.force, regenerate=vendoring.regenerate_from(source)
        )
    except vendoring.LocalEditsError as error:
        for line in error.report.lines:
            print(line)
        raise
    rules_url = diff_report.rules_url(args.rules_url)
    if args.format == "json":
        report = diff_report.render(plan.diff, "json", "never", rules_url, min_severity=args.min_severity)
        sys.stdout.write(upgrade.json_report(report, plan, rules_url))
    elif args.format == "markdown":
        sys.stdout.write(upgrade.render_markdown(plan, rules_url))
        if args.report:
            full = diff_report.render(
                plan.diff, "markdown", "never", rules_url, min_severity=args.min_severity
            )
            sys.stdout.write("\n" + full)
    else:
        # what touches the user's code first: the findings, then the rewrites; the API diff in one line
        if args.format == "github":
            lines = [upgrade.github_annotation(f, rules_url) for f in plan.findings]
            lines += [diff for result in plan.rewritten for diff in result.diff(release)]
        else:
            lines = plan.report_lines(rules_url)
        lines.append(plan.summary() + ("" if args.report else "; --report prints the whole API report"))
        sys.stdout.write("\n".join(lines) + "\n")
        if args.report:
            shown = diff_report.at_least(plan.diff, args.min_severity)
            if args.format == "text":
                full = diff_report.render_text(shown, "never", verdict=False, judged=plan.diff)
            else:
                full = diff_report.render(
                    plan.diff, args.format, "never", rules_url, min_severity=args.min_severity
                )
            sys.stdout.write("\n" + full)
    if args.write:
        upgrade.apply(plan)
    console.print(plan.closing(args.write), highlight=False)
    return EXIT_CHECK_FAILED if plan.failed else 0


@command("bump")
def _bump(args: argparse.Namespace, console: Console) -> int:
    from .diff import report as diff_report
    from .files import write_atomic
    from .vendoring import bump, vendoring

    if args.evidence_examples < 1:
        raise CodegenError(f"--evidence-examples must be at least 1, not {args.evidence_examples}")
    body = _output_file(args.pr_body, "--pr-body") if args.pr_body is not None else None
    source = _bump_source(args)

    def attach(result: Any, old: Any, new: Any) -> Any:
        return _with_evidence(result, old, new, args, console)

    evidence = attach if args.evidence else None
    if args.path is None:
        if args.sources or args.write or args.force:
            raise CodegenError("SOURCES, --write and --force need VENDORED_DIR, the vendored copy to move")
        done, notices = bump.bump_store(args.origin, source, attach=evidence)
    else:
        sources = args.sources or [Path(".")]
        regenerate = vendoring.regenerate_from(source)
        try:
            done, notices = bump.bump(
                args.path,
                sources,
                args.origin,
                source,
                write=args.write,
                force=args.force,
                regenerate=regenerate,
                attach=evidence,
            )
        except vendoring.LocalEditsError as error:
            for line in error.report.lines:
                print(line)
            raise
    for notice in notices:
        console.print(f"notice: {notice}", highlight=False)
    locked = any(r.status == "locked" for r in done.resolved)
    if not done.moves and not locked:
        first = done.resolved[0]
        if args.path is None:
            which = f"{first.spec} (the newest)" if first.newest else first.spec
            names = ", ".join(r.release for r in done.resolved)
            console.print(f"nothing to bump: the lock has what {which} ships ({names})", highlight=False)
        else:
            newer = f", newer than {first.release}" if done.copy != first.release else ""
            console.print(
                f"{args.path} is already on {done.copy}{newer}: {first.describe(done.lock)}", highlight=False
            )
        return 0
    for resolved in done.resolved:
        console.print(resolved.describe(done.lock), highlight=False)
    if locked and args.schemas is None and default_source() is None and source.source is not None:
        console.print(
            f"notice: the store is your cache, {source.source}: other commands read the new release "
            f"with --schemas {source.source}",
            highlight=False,
        )
    rules_url = diff_report.rules_url(args.rules_url)
    for move in done.moves:
        lines = [] if move.plan is None else move.plan.report_lines(rules_url)
        sys.stdout.write("\n".join([*lines, move.summary()]) + "\n")
    if args.write:
        bump.apply(done)
    if body is not None and done.moves:  # a release of a new protocol major has nothing to compare with
        write_atomic(body, bump.pr_body(done, rules_url).encode())
        console.print(f"wrote the pull request's description to {body}", highlight=False)
    for move in done.moves:
        if move.plan is not None:
            console.print(move.plan.closing(args.write), highlight=False)
    return EXIT_CHECK_FAILED if done.failed else 0


def _bump_source(args: argparse.Namespace) -> SchemaSource:
    """The store ``bump`` fetches into: ``--schemas``/``$ACP_SCHEMAS``; installed, else the user's cache."""
    if args.schemas is None and default_source() is None and args.lock is None and resources.installed():
        front = Path(args.cache) / "schemas"
        return SchemaSource(layered_lock(front / "lock.json", read_lock(DEFAULT_LOCK)), front, args.cache)
    return _writable_store(_source(args, creating=True), "bump")


def _output_file(path: Path, option: str) -> Path:
    """A file the user names for the command to write: its folder exists, and it is no folder itself."""
    if path.is_dir():
        raise CodegenError(f"{option}: is a folder, not a file", file=path)
    if not path.parent.is_dir():
        raise CodegenError(f"{option}: no such folder to write it in", file=path.parent)
    return path


def _codemod_operands(parser: argparse.ArgumentParser, name: str, optional: bool = False) -> None:
    """The vendored package and the code to rewrite, of ``upgrade`` and ``bump``."""
    parser.add_argument(
        "path",
        nargs="?" if optional else None,
        type=Path,
        metavar=name,
        help="the vendored package (the folder with VENDORED.json)",
    )
    parser.add_argument(
        "sources",
        nargs="*",
        type=Path,
        metavar="SOURCES",
        help="files and folders of code to rewrite (default: the current folder; "
        "the vendored package itself is skipped)",
    )


def _evidence_options(parser: argparse.ArgumentParser) -> None:
    """``--no-evidence`` and ``--evidence-examples``, of ``diff`` and ``bump``."""
    parser.add_argument(
        "--no-evidence",
        dest="evidence",
        action="store_false",
        help="skip the search for evidence: by default, for every breaking or warning change on the wire, "
        "messages generated from one schema are tried on the other release's generated models, and the "
        "smallest refused one is shown (needs the 'evidence' extra: hypothesis-jsonschema)",
    )
    parser.add_argument(
        "--evidence-examples",
        type=int,
        default=25,  # codegen.evidence.DEFAULT_EXAMPLES (not imported: the evidence stage loads lazily)
        metavar="N",
        help="messages generated per schema type and direction in the search for evidence "
        "(default: %(default)s)",
    )


def _rules_url_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rules-url",
        default=None,
        metavar="URL",
        help="the public page of the rule catalog that rule links point to (default: $ACP_CODEGEN_RULES_URL; "
        "without one, each report explains its rules inline)",
    )


def _min_severity_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--min-severity",
        choices=("breaking", "warning", "info"),
        default="info",
        help="leave the changes below this severity out of the API report, in every format (the version "
        "step and the exit status still weigh them all) (default: %(default)s, every change)",
    )


def _strict_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strict",
        action="store_true",
        help="fail (exit 2) on anything the release uses that codegen/knowledge.toml does not cover, "
        "instead of warning and applying the documented default",
    )


def _out_help(default: Path | None) -> str:
    where = (
        f"default: {default}" if default is not None else "required: an installed acp-codegen has no default"
    )
    return f"the output folder, created if absent; never a file ({where})"


def _version() -> str:
    """``--version``: the tool's and, per protocol major, the newest locked release it bundles."""
    lock = read_lock(DEFAULT_LOCK)
    majors = sorted({protocol_major(name) for name in lock.releases})
    newest = ", ".join(f"v{major} {lock.newest(major)}" for major in majors) or "none"
    return f"acp-codegen {resources.version()} (bundled schemas: newest {newest}; {BUNDLED_SCHEMAS})"


def _store_note() -> str:
    where = (
        "in this checkout" if resources.CHECKOUT is not None else "inside the installed package, read-only"
    )
    return f"The bundled schema store is {BUNDLED_SCHEMAS} ({where})."


def _global_options(parser: argparse.ArgumentParser, cache: object) -> None:
    """``--lock``, ``--schemas`` and ``--cache``, before the command or after it.

    A command's parser gets them with ``argparse.SUPPRESS`` as ``cache``: left
    unset unless given there, so they do not hide the ones given before it.
    """
    unset = argparse.SUPPRESS if cache is argparse.SUPPRESS else None
    parser.add_argument(
        "--lock",
        type=Path,
        default=unset,
        help="use this release lock alone (default: the bundled schemas/lock.json, "
        "with the --schemas folder's lock.json over it)",
    )
    parser.add_argument(
        "--schemas",
        type=Path,
        default=unset,
        metavar="DIR",
        help="a schema store searched before the bundled one: v<major>/<release>/ files and an optional "
        "lock.json that adds or overrides releases; fetch writes here "
        f"(default: $ACP_SCHEMAS; the bundled store is {DEFAULT_LOCK.parent})",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=cache,
        help=f"where the build cache lives (default: {default_cache_dir()})",
    )


def _force_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--force",
        action="store_true",
        help=f"replace what is in the way at a path {what} writes and that acp-codegen did not write "
        "(refused otherwise); nothing else is touched",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-codegen",
        description="Generate typed Python bindings from the upstream ACP JSON Schema releases "
        "(protocol v1 and v2), and report what changed between them.",
        epilog=f"{_store_note()} Exit status: 0 success, 1 a check failed, 2 bad input or usage.",
    )
    parser.add_argument(
        "--version",
        action="store_true",
        help="print the tool's version and the newest bundled release of each protocol major, and exit",
    )
    _global_options(parser, default_cache_dir())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, argparse.SUPPRESS)
    add_command = functools.partial(sub.add_parser, parents=[common])

    p = add_command(
        "generate",
        help="generate one package per release and stability into --out DIR",
        description="Generate one package per release and stability into DIR, each written in one step, "
        f"with an index (README.md) and {RECORD_NAME}, the record of every file acp-codegen wrote there. "
        "Only the paths in that record are ever changed or removed; a path it wants that holds something "
        "else is refused unless --force. Without RELEASE, every locked release is generated and the "
        "packages the record lists that are no longer locked are removed.",
    )
    p.add_argument(
        "releases", nargs="*", metavar="RELEASE", help="releases to generate (default: all in the lock)"
    )
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help=_out_help(DEFAULT_OUT))
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
    _force_option(p, "generate")
    _strict_option(p)

    p = add_command(
        "fetch",
        help="import releases into the schema store (the only command that uses the network)",
        description="Copy or download the four files of a locked release into the schema store "
        "(--schemas DIR, else the bundled schemas/), refusing any whose sha256 differs from the lock; "
        "or, with --from npm:PACKAGE@VERSION, import every protocol major version that version of the "
        "TypeScript SDK package ships (schema/v<major>/), through the machine's npm and its "
        "configuration. npm ships no meta tables: they are derived from the schema's x-method and "
        "x-side. New content is locked as v<major>-<package>-<version> (v2-sdk-2.3.0); content "
        "equal to a locked release is written under that release's name. Prints each release written.",
    )
    p.add_argument(
        "release",
        nargs="?",
        metavar="RELEASE",
        help="a locked release (optional with --from npm:...: then every release the package ships)",
    )
    p.add_argument(
        "--from",
        dest="origin",
        default=None,
        metavar="ORIGIN",
        help="a folder or base URL laid out as v<major>/<release>/<file>, or npm:PACKAGE@VERSION "
        "(default: where the lock says the release came from)",
    )
    _force_option(p, "fetch")

    p = add_command(
        "lock",
        help="record a new release's sha256 sums in the lock",
        description="Add a release found in a schema store (v<major>/<release>/ with all four files) to "
        "the lock: the --schemas folder's lock.json if --schemas is given, else the bundled lock. Each "
        "schema file must be a JSON Schema object with $defs, each meta file a JSON object. A release's "
        "name starts with its protocol major version (2.0.0-alpha.9, or v2-<package>-<version>).",
    )
    p.add_argument("release", metavar="RELEASE")
    _force_option(p, "lock")

    p = add_command(
        "ir",
        help="print the intermediate representation of a release",
        description="Print the IR that every emitter reads.",
    )
    p.add_argument("release", metavar="RELEASE")
    p.add_argument("--unstable", action="store_true", help="the unstable schema instead of the stable one")
    p.add_argument("--json", action="store_true", help="the whole IR as JSON")
    p.add_argument("--verbose", "-v", action="store_true", help="list every object type too")
    _strict_option(p)

    p = add_command(
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
    _min_severity_option(p)
    p.add_argument(
        "--path-prefix",
        default="",
        metavar="PREFIX",
        help="github and sarif: put PREFIX before each schema file's path, which is relative to the current "
        "folder (a file outside it, such as the bundled store of an installed tool, is named by no path)",
    )
    p.add_argument(
        "--waivers",
        type=Path,
        default=None,
        metavar="FILE",
        help="TOML file of [[waiver]] tables with fingerprint, reason and expires (a date)",
    )
    _evidence_options(p)
    _rules_url_option(p)

    p = add_command("rules", help="list the rules of `diff`", description="Print every rule of `diff`.")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text", help="(%(default)s)")

    p = add_command(
        "reports",
        help="write reports/<old>..<new>.md, .json and .html for consecutive locked releases",
        description="Diff every consecutive pair of locked releases, stable and unstable, into markdown, "
        "JSON and HTML reports.",
    )
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help=_out_help(DEFAULT_REPORTS))
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 listing stale reports")
    _min_severity_option(p)
    _force_option(p, "reports")

    p = add_command(
        "releases",
        help="list the locked releases, where each comes from, and which are identical in content",
        description="List every locked release (the bundled lock, and the lock of --schemas DIR or --lock "
        "FILE over it): its protocol major, its origin (a git tag, or an npm package version and the later "
        "versions that ship the same content), which lock records it, the store folder that holds its "
        "files, and the other locked releases with the same schema files.",
    )
    p.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: %(default)s)"
    )

    p = add_command(
        "vendor",
        usage="%(prog)s RELEASE DIR [--unstable] [--name PKG] [--transports stdio[,http,ws]] [--force]\n"
        "       %(prog)s --check PATH",
        help="write one generated package into your tree, or check a vendored copy",
        description="Write the package of RELEASE into DIR/PKG (default DIR/acp) with a VENDORED.json "
        "manifest: the release, the sha256 of the schema it came from and of every file. The old copy "
        "is replaced in one step, never left half written. With --check, compare a vendored copy with "
        "its manifest instead and print every local edit. The copy carries the transports --transports "
        "names and the runtime they need: stdio alone leaves out the ASGI server and the HTTP and "
        "WebSocket clients, and needs nothing but pydantic to install and to type-check. Vendoring over "
        "a copy, upgrade and bump keep its transports.",
        epilog="Exit status: 0 written or clean, 1 --check found local edits, missing or extra files, "
        "2 bad input (no or invalid manifest, unknown release, a copy with local edits without --force).",
    )
    p.add_argument("release", nargs="?", metavar="RELEASE", help="a locked release (2.0.0-alpha.7)")
    p.add_argument("dir", nargs="?", type=Path, metavar="DIR", help="the folder to write the package into")
    p.add_argument("--unstable", action="store_true", help="the unstable schema instead of the stable one")
    p.add_argument(
        "--name",
        default="acp",
        metavar="PKG",
        help="the package's folder and import name (default: %(default)s, so imports survive upgrades)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="vendor over a copy with local edits, of another protocol major or stability, or into a "
        "folder acp-codegen did not write (the files of the package are replaced; others are kept)",
    )
    p.add_argument(
        "--transports",
        default=None,
        metavar="stdio[,http,ws]",
        help="the transports the copy carries: stdio (always: the connections, run_agent, the v1/v2 "
        "router), http (connect_http, needs httpx; asgi_app, an ASGI server) and ws (connect_websocket, "
        "needs websockets; asgi_app). Default: stdio for a new copy; a copy already there keeps its own. "
        "A name of a transport left out raises an ImportError naming the command that adds it",
    )
    p.add_argument(
        "--check",
        type=Path,
        default=None,
        metavar="PATH",
        help="write nothing; compare the vendored package at PATH with its manifest (exit 1 on any edit)",
    )

    p = add_command(
        "upgrade",
        usage="%(prog)s PATH --to RELEASE [SOURCES ...] [--write] [--force] [--format FORMAT]",
        help="move a vendored package and the code using it to another release",
        description="Diff the vendored package's release with --to, rewrite SOURCES for the renames "
        "(classes, attributes, methods, keyword arguments, a versioned package name) with comments and "
        "formatting kept, and list what cannot be rewritten (removed classes and methods, new required "
        "arguments, changed types) as file:line:col rule message. A dry run by default: it prints the "
        "findings first, then a unified diff of the rewrites and the API diff in one line (--report: in "
        "full); the last line's OK or FAILED agrees with the exit status.",
        epilog="Exit status: 0 nothing left to fix by hand, 1 findings remain, 2 bad input (no or invalid "
        "manifest, a release not in the lock, a source file that does not parse, a vendored copy with "
        "local edits without --force); bad input changes nothing.",
    )
    _codemod_operands(p, "PATH")
    p.add_argument(
        "--to",
        required=True,
        nargs="+",
        metavar=("RELEASE", "SOURCES"),
        help="the locked release to move to; SOURCES may follow it as well as PATH",
    )
    p.add_argument(
        "--write",
        action="store_true",
        help="apply the rewrites (each file replaced atomically) and swap the vendored package",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="upgrade a vendored copy even if it has local edits, or write the package into a folder "
        "in the way of its new name",
    )
    p.add_argument(
        "--format",
        choices=("text", "markdown", "json", "github"),
        default="text",
        help="format of the output (json: one document with the API diff, the rewrites and the findings; "
        "github: findings as workflow annotations) (default: %(default)s)",
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="print the whole API diff after the findings, the rewrites and its one-line summary",
    )
    _min_severity_option(p)
    _rules_url_option(p)

    p = add_command(
        "bump",
        usage="%(prog)s [VENDORED_DIR] [SOURCES ...] --from npm:PACKAGE[@VERSION] [--write] [--force] "
        "[--pr-body FILE]",
        help="move a vendored package to the newest release on npm, and describe it for a pull request",
        description="Resolve --from to a release (without @VERSION, the newest version on the registry, "
        "asked through the machine's npm), fetch and lock it into the schema store if it is new (--schemas "
        "DIR or $ACP_SCHEMAS; an installed acp-codegen without either uses the cache), then do what "
        "`upgrade VENDORED_DIR --to RELEASE SOURCES` does: diff the copy's release with it (same protocol "
        "major and stability), run the codemod over SOURCES, a dry run unless --write. A version whose "
        "content the lock already has is recognised, not fetched or locked again. --pr-body writes the "
        "pull request's description in markdown: the releases, the semver step of the wire and of the "
        "Python API, the breaking changes with their evidence, the rewrites and the findings to fix by "
        "hand with file:line. Without VENDORED_DIR, every protocol major the version ships is fetched "
        "and locked, and each new release is described against the newest one locked before it "
        "(`make bump` for generated/).",
        epilog="Exit status: 0 already on the newest release (one line) or moved with nothing to fix by "
        "hand, 1 findings to fix by hand, 2 bad input (as upgrade; a registry that cannot be asked); bad "
        "input changes nothing of yours. The description is written only when there is a release to move to.",
    )
    _codemod_operands(p, "VENDORED_DIR", optional=True)
    p.add_argument(
        "--from",
        dest="origin",
        required=True,
        metavar="npm:PACKAGE[@VERSION]",
        help="the npm package to bump to, like npm:@agentclientprotocol/sdk (its newest version) or "
        "npm:@agentclientprotocol/sdk@2.2.0",
    )
    p.add_argument(
        "--write",
        action="store_true",
        help="apply the rewrites (each file replaced atomically) and swap the vendored package",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="bump a vendored copy even if it has local edits, or write into paths in the way",
    )
    p.add_argument(
        "--pr-body",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the pull request's description (markdown) to FILE when there is a release to move to",
    )
    _evidence_options(p)
    _rules_url_option(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console(stderr=True, soft_wrap=True)
    try:
        if args.version:
            print(_version())
            return 0
        if args.command is None:
            parser.error("a COMMAND is required (or --version)")
        with diagnostics.collecting(getattr(args, "strict", False)) as found:
            status = _COMMANDS[args.command](args, console)
        for item in found.gaps:
            print(f"acp-codegen: warning: {item.one_line()}", file=sys.stderr)
        return status
    except CodegenError as error:
        print(f"acp-codegen: error: {error.one_line()}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except OSError as exc:  # anything the commands did not name themselves: still one line
        print(f"acp-codegen: error: {os_error(exc, what='cannot read or write').one_line()}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except KeyboardInterrupt:
        print("acp-codegen: interrupted: nothing is left half written", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
