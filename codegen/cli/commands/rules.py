"""``acp-codegen rules``: list the rules of ``diff``."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console

from ..common import Command


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text", help="(%(default)s)")


def run(args: argparse.Namespace, console: Console) -> int:
    from ...diff import report

    sys.stdout.write(report.render_rules(args.format))
    return 0


COMMAND = Command(
    "rules",
    help="list the rules of `diff`",
    description="Print every rule of `diff`.",
    arguments=arguments,
    run=run,
)
