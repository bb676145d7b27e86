"""What ``upgrade`` and ``bump`` print of a vendored copy's move, in the text, github and sarif formats."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import TYPE_CHECKING

from ..diff.locate import Repository

if TYPE_CHECKING:
    from ..diff import DiffResult
    from ..vendoring.bump import Move
    from ..vendoring.upgrade import Plan


def repository_of(plan: Plan, args: argparse.Namespace) -> Repository:
    """The repository annotations name files from: the git repository holding the vendored package."""
    return Repository.around(plan.folder, args.path_prefix)


def plan_text(
    plan: Plan, args: argparse.Namespace, rules_url: str | None, hint: bool, diff: DiffResult | None = None
) -> str:
    """``--format text`` or ``github``: the findings (what touches the user's code first), the rewrites,
    the API diff in one line (``hint``: with a word on ``--report``), then with ``--report`` the whole
    API diff (``diff``, default the plan's; as annotations on the vendored package, in github)."""
    from ..diff import report as diff_report
    from ..vendoring import annotate

    repository = repository_of(plan, args)
    if args.format == "github":
        lines = annotate.github_lines(plan, repository, rules_url)
    else:
        lines = plan.report_lines(rules_url)
    more = "; --report prints the whole API report" if hint and not args.report else ""
    lines.append(plan.summary() + more)
    shown = "\n".join(lines) + "\n"
    if not args.report:
        return shown
    api = diff_report.at_least(diff or plan.diff, args.min_severity)
    if args.format == "github":
        return shown + "\n" + annotate.github_api(plan, api, repository, rules_url, args.write)
    return shown + "\n" + diff_report.render_text(api, "never", verdict=False, judged=plan.diff)


def plan_sarif(
    moves: list[tuple[Plan | None, DiffResult]],
    args: argparse.Namespace,
    rules_url: str | None,
) -> str:
    """``--format sarif``: one SARIF 2.1.0 log of ``(plan, diff)`` moves, a run each: the findings, and
    with ``--report`` the API changes (at the vendored package; without a plan, at the schema files)."""
    from ..diff import report as diff_report
    from ..diff.locate import schema_anchors
    from ..vendoring import annotate

    runs = []
    for plan, diff in moves:
        api = diff_report.at_least(diff, args.min_severity) if args.report else None
        if plan is not None:
            runs.append(annotate.sarif_run(plan, repository_of(plan, args), rules_url, api, args.write))
        else:
            locate = schema_anchors(Repository.around(prefix=args.path_prefix))
            shown = api if api is not None else dataclasses.replace(diff, surfaces=())
            runs += diff_report.sarif_log(shown, rules_url, locate, diff)["runs"]
    return json.dumps(annotate.sarif_log(runs), indent=2, ensure_ascii=False) + "\n"


def store_text(move: Move, args: argparse.Namespace, rules_url: str | None) -> str:
    """``--format text`` or ``github`` of a release moved without a vendored copy (``generated/``): the
    API diff in one line, then with ``--report`` the whole of it (at the schema files, in github)."""
    from ..diff import report as diff_report
    from ..diff.locate import schema_anchors

    shown = move.summary() + "\n"
    if not args.report:
        return shown
    api = diff_report.at_least(move.diff, args.min_severity)
    if args.format == "github":
        locate = schema_anchors(Repository.around(prefix=args.path_prefix))
        return shown + "\n" + diff_report.render_github(api, "never", rules_url, locate, move.diff)
    return shown + "\n" + diff_report.render_text(api, "never", verdict=False, judged=move.diff)
