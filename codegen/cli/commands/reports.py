"""``acp-codegen reports``: the markdown, JSON and HTML reports of consecutive locked releases."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from ...files import Output
from ..common import (
    DEFAULT_REPORTS,
    EXIT_CHECK_FAILED,
    Command,
    again,
    checkout_default,
    label,
    out_folder,
    source_of,
)
from ..options import force_option, min_severity_option, out_help


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help=out_help(DEFAULT_REPORTS))
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 listing stale reports")
    min_severity_option(p)
    force_option(p, "reports")


def run(args: argparse.Namespace, console: Console) -> int:
    from ...diff import report

    output = Output(out_folder(args, DEFAULT_REPORTS), "reports", force=args.force)
    source = source_of(args)
    written = report.report_files(source, list(source.lock.releases), min_severity=args.min_severity)
    plan = output.plan({name: text.encode() for name, text in written.items()})
    shown = label(args, DEFAULT_REPORTS)
    if args.check:
        stale = plan.differences()
        for found in stale:
            state = "missing" if found.old is None else "left over" if found.new is None else "differs"
            print(f"{state}: {output.folder / found.path}")
        if stale:
            if checkout_default(args, DEFAULT_REPORTS):
                hint = "run `make reports` and commit the result"
            else:
                hint = f"run `{again(args, 'reports')}`"
            console.print(f"[bold red]{shown} is stale[/]: {hint}.", highlight=False)
            return EXIT_CHECK_FAILED
        console.print(f"{shown} is up to date ({len(written)} files checked).", highlight=False)
        return 0
    changed = plan.apply()
    console.print(f"wrote {len(written)} files to {shown} ({changed} changed)", highlight=False)
    return 0


COMMAND = Command(
    "reports",
    help="write reports/<old>..<new>.md, .json and .html for consecutive locked releases",
    description="Diff every consecutive pair of locked releases, stable and unstable, into markdown, "
    "JSON and HTML reports.",
    arguments=arguments,
    run=run,
)
