"""``acp-codegen upgrade``: move a vendored package and the code using it to another release."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from ..common import EXIT_CHECK_FAILED, Command, searched, source_of
from ..options import codemod_operands, min_severity_option, rules_url_option


def arguments(p: argparse.ArgumentParser) -> None:
    codemod_operands(p, "PATH")
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
    min_severity_option(p)
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
            full = diff_report.render(
                plan.diff, "markdown", "never", rules_url, min_severity=args.min_severity
            )
            sys.stdout.write("\n" + full)
    else:
        # what touches the user's code first: the findings, then the rewrites; the API diff in one line
        if args.format == "github":
            lines = [upgrade.github_annotation(f, rules_url) for f in plan.findings]
            lines += [upgrade.github_notice(other) for other in plan.others]
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
