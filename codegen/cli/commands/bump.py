"""``acp-codegen bump``: move a vendored package to the newest release on npm, and describe it for a PR."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from ... import resources
from ...errors import CodegenError
from ...schema.load import DEFAULT_LOCK, SchemaSource, default_source, layered_lock, read_lock
from ..common import (
    EXIT_CHECK_FAILED,
    Command,
    output_file,
    searched,
    source_of,
    store_options,
    writable_store,
)
from ..options import (
    codemod_operands,
    evidence_options,
    min_severity_option,
    path_prefix_option,
    report_option,
    rules_url_option,
    write_option,
)
from ..progress import with_evidence
from ..upgrading import plan_sarif, plan_text, store_text


def arguments(p: argparse.ArgumentParser) -> None:
    codemod_operands(p, "VENDORED_DIR", optional=True)
    p.add_argument(
        "--from",
        dest="origin",
        required=True,
        metavar="npm:PACKAGE[@VERSION]",
        help="the npm package to bump to, like npm:@agentclientprotocol/sdk (its newest version) or "
        "npm:@agentclientprotocol/sdk@2.2.0",
    )
    write_option(p)
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
    p.add_argument(
        "--format",
        choices=("text", "github", "sarif"),
        default="text",
        help="format of the output (github: the findings as workflow annotations at their file, line and "
        "column, and with --report each API change at its class in the vendored package; sarif: the same "
        "as a SARIF 2.1.0 log) (default: %(default)s)",
    )
    report_option(p)
    min_severity_option(p)
    path_prefix_option(p, "the vendored package")
    evidence_options(p)
    rules_url_option(p)


def run(args: argparse.Namespace, console: Console) -> int:
    from ...diff import report as diff_report
    from ...files import write_atomic
    from ...vendoring import bump, vendoring

    if args.evidence_examples < 1:
        raise CodegenError(f"--evidence-examples must be at least 1, not {args.evidence_examples}")
    body = output_file(args.pr_body, "--pr-body") if args.pr_body is not None else None
    source = _bump_source(args)

    def attach(result: Any, old: Any, new: Any) -> Any:
        return with_evidence(result, old, new, args, console)

    evidence = attach if args.evidence else None
    if args.path is None:
        if args.sources or args.write or args.force:
            raise CodegenError("SOURCES, --write and --force need VENDORED_DIR, the vendored copy to move")
        done, notices = bump.bump_store(args.origin, source, attach=evidence)
    else:
        sources = args.sources
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
    if args.write:  # first: what cannot be written (a folder in the way) is bad input, said in one line
        bump.apply(done)
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
        if move.plan is not None:
            searched(move.plan, console)
    if args.format == "sarif":
        sys.stdout.write(plan_sarif([(move.plan, move.diff) for move in done.moves], args, rules_url))
    for move in done.moves if args.format != "sarif" else ():
        if move.plan is not None:
            sys.stdout.write(plan_text(move.plan, args, rules_url, hint=False, diff=move.diff))
        else:
            sys.stdout.write(store_text(move, args, rules_url))
    if body is not None and done.moves:  # a release of a new protocol major has nothing to compare with
        write_atomic(body, bump.pr_body(done, rules_url, options=store_options(args)).encode())
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
    return writable_store(source_of(args, creating=True), "bump")


COMMAND = Command(
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
    arguments=arguments,
    run=run,
)
