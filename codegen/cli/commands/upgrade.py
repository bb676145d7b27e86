"""``acp-codegen upgrade``: move a vendored package and the code using it to another release."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from ..common import EXIT_CHECK_FAILED, Command, searched, source_of
from ..options import (
    codemod_operands,
    min_severity_option,
    path_prefix_option,
    report_option,
    rules_url_option,
    write_option,
)
from ..upgrading import plan_sarif, plan_text


def arguments(p: argparse.ArgumentParser) -> None:
    codemod_operands(p, "PATH")
    p.add_argument(
        "--to",
        required=True,
        nargs="+",
        metavar=("RELEASE", "SOURCES"),
        help="the locked release to move to; SOURCES may follow it as well as PATH",
    )
    write_option(p)
    p.add_argument(
        "--force",
        action="store_true",
        help="upgrade a vendored copy even if it has local edits, or write the package into a folder "
        "in the way of its new name",
    )
    p.add_argument(
        "--format",
        choices=("text", "markdown", "json", "github", "sarif"),
        default="text",
        help="format of the output (json: one document with the API diff, the rewrites and the findings; "
        "github: the findings as workflow annotations at their file, line and column, and with --report "
        "each API change at its class in the vendored package; sarif: the same as a SARIF 2.1.0 log) "
        "(default: %(default)s)",
    )
    report_option(p)
    min_severity_option(p)
    path_prefix_option(p, "the vendored package")
    rules_url_option(p)


def run(args: argparse.Namespace, console: Console) -> int:
    from ...diff import report as diff_report
    from ...vendoring import manifest, upgrade, vendoring

    release, *more = args.to  # `upgrade PATH --to RELEASE SOURCES...` reads SOURCES into --to
    sources = [*args.sources, *map(Path, more)]
    source = source_of(args)
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
    searched(plan, console)
    rules_url = diff_report.rules_url(args.rules_url)
    if args.format == "json":
        report = diff_report.render(plan.diff, "json", "never", rules_url, min_severity=args.min_severity)
        sys.stdout.write(upgrade.json_report(report, plan, rules_url))
    elif args.format == "markdown":
        sys.stdout.write(upgrade.render_markdown(plan, rules_url))
        if args.report:
            shown = diff_report.at_least(plan.diff, args.min_severity)
            full = diff_report.render_markdown(shown, rules_url, judged=plan.diff, heading="###")
            sys.stdout.write("\n" + full)
    elif args.format == "sarif":
        sys.stdout.write(plan_sarif([(plan, plan.diff)], args, rules_url))
    else:
        sys.stdout.write(plan_text(plan, args, rules_url, hint=True))
    if args.write:
        upgrade.apply(plan)
    console.print(plan.closing(args.write), highlight=False)
    return EXIT_CHECK_FAILED if plan.failed else 0


COMMAND = Command(
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
    arguments=arguments,
    run=run,
)
