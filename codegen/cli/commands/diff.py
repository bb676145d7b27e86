"""``acp-codegen diff``: classify every API change between two releases by who it breaks."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from ...diff.locate import Locate, Repository, schema_anchors, unattached
from ...diff.model import DiffResult
from ...diff.report import FORMATS
from ...errors import CodegenError
from ...schema.ir import Stability
from ..common import Command, source_of
from ..options import evidence_options, min_severity_option, path_prefix_option, rules_url_option
from ..progress import with_evidence


def arguments(p: argparse.ArgumentParser) -> None:
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
    min_severity_option(p)
    path_prefix_option(p)
    p.add_argument(
        "--waivers",
        type=Path,
        default=None,
        metavar="FILE",
        help="TOML file of [[waiver]] tables with fingerprint, reason and expires (a date)",
    )
    evidence_options(p)
    rules_url_option(p)


def run(args: argparse.Namespace, console: Console) -> int:
    import datetime

    from ... import diff
    from ...diff import report
    from ...schema.releases import open_side, surfaces_of

    if args.evidence_examples < 1:
        raise CodegenError(f"--evidence-examples must be at least 1, not {args.evidence_examples}")
    source = source_of(args)
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
        result = with_evidence(result, old, new, args, console, built)
    url = report.rules_url(args.rules_url)
    locate = schema_anchors(Repository.around(prefix=args.path_prefix))
    sys.stdout.write(
        report.render(result, args.format, args.fail_on, url, min_severity=args.min_severity, locate=locate)
    )
    if args.format in ("github", "sarif"):
        _say_unattached(report.at_least(result, args.min_severity), locate, console)
    return result.exit_code(args.fail_on)


def _say_unattached(result: DiffResult, locate: Locate, console: Console) -> None:
    """A notice when annotations attach to no file, saying why and how to make them attach."""
    changes = [c for c in result.changes if c.waiver is None]
    files = unattached(changes, locate)
    if not files:
        return
    count = sum(1 for c in changes if c.file in files)
    store = Path(files[0]).parent.parent.parent
    console.print(
        f"notice: {count} of {len(changes)} annotations attach to no file: their schema files "
        f"({', '.join(files)}) are outside the repository, {Repository.around().root}; to attach them, "
        "copy the releases into a store inside it "
        f"(`acp-codegen fetch RELEASE --schemas DIR --from {store}`) and diff with --schemas DIR",
        highlight=False,
    )


COMMAND = Command(
    "diff",
    help="classify every API change between two releases by who it breaks",
    description="Compare two releases (or schema folders) on the wire and in the generated Python names. "
    "Each change gets a rule, a severity and the role it breaks: an old agent, an old client or "
    "python callers.",
    epilog="Exit status: 0 nothing fails, 1 a change at or above --fail-on or an expired waiver, "
    "2 bad input. `acp-codegen rules` lists every rule.",
    arguments=arguments,
    run=run,
)
