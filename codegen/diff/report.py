"""Render a :class:`~codegen.diff.DiffResult` or the rule catalog for people and for CI.

Formats: ``text`` (a terminal), ``markdown`` (the committed ``reports/`` and
pull-request comments), ``json`` (scripts), ``github`` (workflow-command
annotations), ``sarif`` (SARIF 2.1.0 for code-scanning tools) and ``html`` (one
self-contained page to open and filter, :mod:`.html`).  Every renderer is
deterministic: the same changes give the same bytes, and every one names the
version step the changes need (:mod:`.semver`).  ``min_severity`` leaves the
changes below it out of a report (the version step still weighs them all).

Reports are read outside this repository (a pull request, a CI log), so a
rule is explained where it is used: its one-line summary travels with every
change, and a markdown report explains the rules it uses once, in a folded
block.  A link to the
rule catalog is added only when a public address is configured
(``--rules-url``, else ``$ACP_CODEGEN_RULES_URL``, else
:data:`DEFAULT_RULES_URL`); it is never a path into this repository.
GitHub annotations and SARIF results attach where ``locate`` says
(:mod:`.locate`): by default at the line of the change's JSON pointer in its
schema file, named from the root of the repository (under ``--path-prefix``)
when the file lies in it; a schema in an installed tool's bundled store
attaches to no file.  ``upgrade`` and ``bump`` attach them to the vendored
package's classes instead.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import write_files
from ..schema.load import SchemaSource, protocol_major
from . import semver
from .differ import diff_releases, display_path
from .html import render_page
from .locate import Locate, Repository, github_data, github_property, schema_anchors
from .model import ABSENT, Change, DiffResult, Waiver, part_json
from .rules import BREAKS_TEXT, CATALOG, SEVERITIES, Rule, Severity, Traffic
from .standing import standing
from .summary import (
    breaks_text,
    counts_by_level,
    evidence_json,
    proof_counts,
    proof_json,
    proof_line,
    proof_summary,
    rule_link,
    severity_counts,
    steps_by_level,
    unproven_rows,
    value_json,
    whom,
)

FORMATS = ("text", "markdown", "json", "github", "sarif", "html")
SARIF_LEVEL: dict[Severity, str] = {"breaking": "error", "warning": "warning", "info": "note"}
SARIF_SCHEMA_URL = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "acp-codegen diff"
RULES_URL_ENV = "ACP_CODEGEN_RULES_URL"
DEFAULT_RULES_URL: str | None = None
"""The public page of the rule catalog (``docs/rules.md`` as published), if the project has one."""


def rules_url(configured: str | None = None) -> str | None:
    """Where rule links point: ``configured``, else ``$ACP_CODEGEN_RULES_URL``, else the default (or none)."""
    found = configured or os.environ.get(RULES_URL_ENV) or DEFAULT_RULES_URL
    return found.strip() or None if found else None


@dataclass(frozen=True)
class Options:
    """How a report is rendered.

    ``fail_on`` is the threshold it judges by, ``rules_url`` where rule links
    point, ``min_severity`` the least severe change it shows, ``locate`` where
    GitHub annotations and SARIF results attach (default: the schema files, named
    from the repository's root), and ``judged`` the result before ``min_severity``
    left changes out (:func:`render` sets it): the version step and the verdict
    are of every change.
    """

    fail_on: str = "breaking"
    rules_url: str | None = None
    min_severity: Severity = "info"
    locate: Locate | None = None
    judged: DiffResult | None = None


def at_least(result: DiffResult, min_severity: Severity) -> DiffResult:
    """``result`` with the changes at or above ``min_severity`` only (weighed as its ``changes``)."""
    if min_severity == "info":
        return result
    import dataclasses

    levels = SEVERITIES[: SEVERITIES.index(min_severity) + 1]
    kept = {c.key for c in result.changes if c.severity in levels}
    surfaces = tuple(
        dataclasses.replace(s, changes=tuple(c for c in s.changes if c.key in kept)) for s in result.surfaces
    )
    return dataclasses.replace(result, surfaces=surfaces)


def step_words(steps: semver.SemverSteps) -> str:
    """``wire: major (3 breaking changes); Python API: minor (5 additions)``."""
    return "; ".join(f"{c.name}: {c.step}{_step_reason(c)}" for c in steps.contracts)


def _step_reason(found: semver.ContractStep) -> str:
    if found.breaking:
        counted = _count(len(found.breaking), "breaking change")
        if found.rests_on_unproven:
            return f" ({counted}, none proven: the step rests on unproven rows)"
        return f" ({counted}, {len(found.unproven)} unproven)" if found.unproven else f" ({counted})"
    if found.added:
        return f" ({_count(len(found.added), 'addition')})"
    return ""


def _count(count: int, words: str) -> str:
    return f"{count} {words}" + ("" if count == 1 else "s")


def _where(change: Change, result: DiffResult) -> str:
    """The levels a change appears in, when the result has more than one and it is not in all of them."""
    levels = change.appears_in
    return "" if len(levels) == len(result.surfaces) else " and ".join(levels) + " only"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}s" if word == "warning" and count != 1 else f"{count} {word}"


def _summary_line(counts: dict[Severity, int]) -> str:
    return ", ".join(_plural(counts[s], s) for s in SEVERITIES)


def _waiver_lines(result: DiffResult) -> list[str]:
    expired = [f"expired waiver {w.fingerprint} (expired {w.expires}): {w.reason}" for w in result.expired]
    unused = [f"unused waiver {w.fingerprint}: it matches no change ({w.reason})" for w in result.unmatched]
    return expired + unused


# --- text ---------------------------------------------------------------------


def render_text(
    result: DiffResult,
    fail_on: str = "breaking",
    verdict: bool = True,
    judged: DiffResult | None = None,
) -> str:
    """The report for a terminal; without ``verdict``, no closing ``OK``/``FAILED`` line.

    ``judged`` is the result before ``--min-severity`` left changes out: the
    version step and the verdict are of it (default: ``result``).
    """
    judged = judged or result
    lines = [f"ACP {result.old} -> {result.new}", ""]
    lines.append(f"version step: {step_words(semver.step(judged))}")
    for level, counts in counts_by_level(result).items():
        label = f"{len(result.changes)} distinct changes" if level == "distinct" else level
        lines.append(f"{label}: {_summary_line(counts)}")
    proofs = proof_summary(result)
    if proofs:
        lines.append(f"proofs: {proofs}")
    width = max((len(c.rule.id) for c in result.changes), default=0)
    for change in result.changes:
        state = f"waived until {change.waiver.expires}" if change.waiver else change.severity
        lines.append(f"  {state:9} {change.layer:6} {change.rule.id:{width}}  {change.message}")
        where = _where(change, result)
        note = (f"{where}; " if where else "") + f"breaks {breaks_text(change)}"
        lines.append(f"  {'':9} {'':6} {'':{width}}  {note}; fingerprint {change.fingerprint}")
        shown = proof_line(change)
        if shown:
            lines.append(f"  {'':9} {'':6} {'':{width}}  {shown}")
    apart = unproven_rows(result)
    if apart:
        lines += ["", f"unproven verdicts, check by hand ({len(apart)}):"]
        lines += [f"  {c.severity:9} {c.rule.id}  {c.subject} (fingerprint {c.fingerprint})" for c in apart]
    extra = _waiver_lines(result)
    if extra:
        lines.append("")
        lines.extend(extra)
    if not verdict:
        return "\n".join(lines) + "\n"
    failing = judged.failing(fail_on)
    lines.append("")
    if failing or result.expired:
        reasons = []
        if failing:
            reasons.append(f"{len(failing)} unwaived change(s) at or above '{fail_on}'")
        if result.expired:
            reasons.append(f"{len(result.expired)} expired waiver(s)")
        lines.append("FAILED: " + " and ".join(reasons))
    else:
        lines.append(f"OK: nothing at or above '{fail_on}'" if fail_on != "never" else "OK (--fail-on never)")
    return "\n".join(lines) + "\n"


# --- markdown -------------------------------------------------------------------


def markdown_cell(text: str) -> str:
    """Text for a markdown table cell: pipes and backslashes escaped, on one line."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{markdown_cell(text)}`" if text else ""


def _rule_cell(rule: Rule, base: str | None) -> str:
    """A rule's ID, linked to its section of the published catalog when there is one."""
    link = rule_link(rule.id, base)
    return f"[`{rule.id}`]({link})" if link else f"`{rule.id}`"


SEVERITY_HEADINGS: dict[Severity, str] = {"breaking": "Breaking", "warning": "Warnings", "info": "Info"}
MARKDOWN_LIMIT = 65_536
"""The most characters a GitHub pull-request comment holds."""


def _step_cell(found: semver.ContractStep) -> str:
    return f"**{found.step}**" if found.step == "major" else found.step


def render_markdown(
    result: DiffResult,
    rules_url: str | None = None,
    command: str = "",
    judged: DiffResult | None = None,
    limit: int = MARKDOWN_LIMIT,
    *,
    heading: str = "#",
    everything: str = "",
) -> str:
    """A report to read in a pull request (a comment, a PR body, the committed ``reports/``).

    First the version step and the counts (per stability level), whom the
    changes break, then the breaking changes and the warnings, each in a
    folded ``<details>`` block left open, then the info ones folded shut;
    the rules the rows use are explained once at the end, folded (or linked
    to ``rules_url``).  ``judged`` is the result before ``--min-severity``
    left changes out (default: ``result``): the version step is of it.

    The report stays under ``limit`` characters (a GitHub comment's): when it
    would not, rows are left out from the end, the least severe first, and
    each section says how many and where ``everything`` is listed (default:
    the ``diff`` command that writes the HTML page).  ``heading`` is the
    markdown of its one heading (``###`` inside a document that has its own).
    """
    shown = {severity: [c for c in result.changes if c.severity == severity] for severity in SEVERITIES}
    words = Words(heading, everything or f"`acp-codegen diff {result.old} {result.new} --format html` lists")
    text = _markdown(result, rules_url, command, judged or result, shown, words)
    while len(text) >= limit:
        severity = next((s for s in reversed(SEVERITIES) if shown[s]), None)
        if severity is None:
            break
        rows = shown[severity]
        del rows[len(rows) - max(1, len(rows) // 8) :]
        text = _markdown(result, rules_url, command, judged or result, shown, words)
    return text


@dataclass(frozen=True)
class Words:
    """What a markdown report says of its place: the markdown of its heading, and where every row is
    listed when some are left out (``... lists`` or ``... list``: "every change" follows)."""

    heading: str = "#"
    everything: str = "the JSON and HTML reports list"


def _markdown(
    result: DiffResult,
    rules_url: str | None,
    command: str,
    judged: DiffResult,
    shown: dict[Severity, list[Change]],
    words: Words = Words(),
) -> str:
    """The markdown report with the rows of ``shown`` (the others are counted as left out)."""
    lines = [f"{words.heading} ACP API changes: {result.old} → {result.new}", ""]
    if command:
        lines += [f"Written by `{command}`. Do not edit; run `make reports` instead.", ""]
    lines += [f"**Version step:** {step_words(semver.step(judged))}.", ""]
    levels = " and ".join(s.stability for s in result.surfaces)
    lines += [
        "| schema | breaking | warning | info | wire step | Python API step |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    steps = steps_by_level(judged)
    for level, counts in counts_by_level(result).items():
        label = f"{levels}, distinct" if level == "distinct" else level
        wire, python = steps[level].contracts
        lines.append(
            f"| {label} | {counts['breaking']} | {counts['warning']} | {counts['info']} "
            f"| {_step_cell(wire)} | {_step_cell(python)} |"
        )
    hurt = whom(result)
    if hurt:
        lines += ["", "**Breaks:** " + ", ".join(f"{role} ({count})" for role, count in hurt.items()) + "."]
    proofs = proof_summary(result)
    if proofs:
        lines += ["", f"**Proofs:** {markdown_cell(proofs)}."]
    apart = unproven_rows(result)
    if apart:
        lines += ["", f"<details open><summary><b>Unproven ({len(apart)}): check by hand</b></summary>", ""]
        lines += ["| severity | rule | where | change | why no proof | fingerprint |"]
        lines += ["| --- | --- | --- | --- | --- | --- |"]
        for c in apart:
            why = markdown_cell(proof_line(c).removeprefix("unproven, check by hand: "))
            rule, where = _rule_cell(c.rule, rules_url), _code(c.subject)
            cells = [c.severity, rule, where, markdown_cell(c.detail), why]
            lines.append("| " + " | ".join(cells) + f" | `{c.fingerprint}` |")
        lines += ["", "</details>"]
    evidence = any(proof_line(c) for c in result.changes)
    several = len(result.surfaces) > 1
    if not result.changes:
        lines += ["", "No changes."]
    for severity in SEVERITIES:
        total = sum(1 for c in result.changes if c.severity == severity)
        if not total:
            continue
        header = "| layer | rule | where | change | breaks | fingerprint |"
        rule_row = "| --- | --- | --- | --- | --- | --- |"
        if several:
            header, rule_row = "| schema " + header, "| --- " + rule_row
        if evidence:
            header, rule_row = header + " proof |", rule_row + " --- |"
        opened = "" if severity == "info" else " open"
        summary = f"{SEVERITY_HEADINGS[severity]} ({total})"
        lines += ["", f"<details{opened}><summary><b>{summary}</b></summary>", ""]
        rows = shown[severity]
        if rows:
            lines += [header, rule_row]
        for c in rows:
            breaks = breaks_text(c) + (f" (waived until {c.waiver.expires})" if c.waiver else "")
            cells = [
                c.layer,
                _rule_cell(c.rule, rules_url),
                _code(c.subject),
                markdown_cell(c.detail),
                breaks,
                f"`{c.fingerprint}`",
            ]
            if several:
                cells.insert(0, ", ".join(c.appears_in))
            if evidence:
                cells.append(markdown_cell(proof_line(c)))
            lines.append("| " + " | ".join(cells) + " |")
        if len(rows) < total:
            left = total - len(rows)
            lines += [
                "",
                f"{_count(left, 'more row')} left out to fit a pull-request comment: "
                f"{words.everything} every change.",
            ]
        lines += ["", "</details>"]
    extra = _waiver_lines(result)
    if extra:
        lines += ["", "**Waivers**", ""] + [f"- {markdown_cell(line)}" for line in extra]
    used = [r for r in CATALOG if r.id in {c.rule.id for severity in SEVERITIES for c in shown[severity]}]
    if used:
        lines += ["", "<details><summary>How to read this report</summary>", ""]
        lines += [
            "Each row is one change, listed once with the schemas it appears in. **layer** `wire` is "
            "what peers see on the network, `python` what code using the generated bindings sees. "
            "**breaks** names the peer that is hurt when it still runs the old release (or the Python "
            "callers). The version step is major when a change breaks someone, minor when something "
            "is added, patch otherwise.",
        ]
        if not rules_url:
            lines += ["", "The rules of these changes:", ""]
            lines += [f"- `{r.id}` ({r.layer}, {r.severity} by default): {r.summary}" for r in used]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


# --- json -----------------------------------------------------------------------


def _waiver_json(waiver: Waiver) -> dict[str, Any]:
    return {"fingerprint": waiver.fingerprint, "reason": waiver.reason, "expires": waiver.expires.isoformat()}


def traffic_json(traffic: Traffic) -> dict[str, Any]:
    return {
        release: {"senders": sorted(flow.senders), "receivers": sorted(flow.receivers)}
        for release, flow in (("old", traffic.old), ("new", traffic.new))
    }


def change_json(change: Change, rules_url: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "stabilities": list(change.appears_in),
        "layer": change.layer,
        "rule": change.rule.id,
        "category": change.rule.category,
        "explanation": change.rule.summary,
        "severity": change.severity,
        "breaks": list(change.roles),
        "subject": change.subject,
        "detail": change.detail,
        "path": [part_json(p) for p in change.path],
    }
    if change.old is not ABSENT:
        data["old"] = value_json(change.old)
    if change.new is not ABSENT:
        data["new"] = value_json(change.new)
    if change.levels:
        data["levels"] = [
            {"stability": level.stability, "severity": level.severity, "breaks": list(level.roles)}
            for level in change.levels
        ]
    if change.also:
        data["also"] = [[part_json(p) for p in path] for path in change.also]
    data["flow"] = traffic_json(change.flow)
    link = rule_link(change.rule.id, rules_url)
    if link:
        data["rule_url"] = link
    data |= {
        "fingerprint": change.fingerprint,
        "file": change.file,
        "pointer": change.pointer,
        "waiver": _waiver_json(change.waiver) if change.waiver else None,
    }
    kind = standing(change)
    if kind is not None:
        data["standing"] = str(kind)
    shown = proof_line(change)
    if shown:
        data["proof_line"] = shown
    if change.proof is not None:
        data["proof"] = proof_json(change.proof)
    if change.evidence is not None:
        data["evidence"] = evidence_json(change.evidence)
    return data


def steps_json(steps: semver.SemverSteps) -> dict[str, Any]:
    """Each contract's step and the fingerprints that decide it."""
    return {
        c.contract: {
            "step": c.step,
            "breaking": list(c.breaking),
            "added": list(c.added),
            "unproven": list(c.unproven),
            "unchecked": list(c.unchecked),
            "rests_on_unproven": c.rests_on_unproven,
        }
        for c in steps.contracts
    }


def unproven_json(result: DiffResult) -> list[dict[str, Any]]:
    """The rows listed apart, each with why it has no proof."""
    return [
        {
            "fingerprint": c.fingerprint,
            "rule": c.rule.id,
            "severity": c.severity,
            "subject": c.subject,
            "why": evidence_json(c.evidence),
        }
        for c in unproven_rows(result)
    ]


def result_json(
    result: DiffResult,
    fail_on: str = "breaking",
    rules_url: str | None = None,
    judged: DiffResult | None = None,
    min_severity: Severity = "info",
) -> dict[str, Any]:
    judged = judged or result
    return {
        "old": result.old,
        "new": result.new,
        "semver": steps_json(semver.step(judged)),
        "semver_by_stability": {
            level: {c.contract: c.step for c in steps.contracts}
            for level, steps in steps_by_level(judged).items()
        },
        "min_severity": min_severity,
        "summary": counts_by_level(result),
        "proofs": proof_counts(result),
        "proofs_summary": proof_summary(result),
        "unproven": unproven_json(result),
        "changes": [change_json(c, rules_url) for c in result.changes],
        "waivers": {
            "expired": [_waiver_json(w) for w in result.expired],
            "unmatched": [_waiver_json(w) for w in result.unmatched],
        },
        "failed": judged.exit_code(fail_on) != 0,
    }


def render_json(
    result: DiffResult,
    fail_on: str = "breaking",
    rules_url: str | None = None,
    judged: DiffResult | None = None,
    min_severity: Severity = "info",
) -> str:
    data = result_json(result, fail_on, rules_url, judged, min_severity)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# --- GitHub annotations ------------------------------------------------------------

_GITHUB_LEVEL: dict[Severity, str] = {"breaking": "error", "warning": "warning", "info": "notice"}


_gh_data = github_data
_gh_property = github_property


def _located(locate: Locate | None) -> Locate:
    return locate if locate is not None else schema_anchors(Repository.around())


def render_github(
    result: DiffResult,
    fail_on: str = "breaking",
    rules_url: str | None = None,
    locate: Locate | None = None,
    judged: DiffResult | None = None,
) -> str:
    """A notice with the version step and the counts, one workflow command per unwaived change, and one
    per expired or unused waiver."""
    counts = _summary_line(severity_counts(result.changes))
    steps = step_words(semver.step(judged or result))
    heading = f"ACP {result.old} -> {result.new}: {counts}. Version step: {steps}"
    proofs = proof_summary(result)
    if proofs:
        heading += f". Proofs: {proofs}"
    lines = [f"::notice title={_gh_property('acp-codegen diff')}::{_gh_data(heading)}"]
    apart = [c for c in unproven_rows(result) if c.waiver is None]
    if apart:
        listed = "\n".join(f"{c.rule.id} {c.subject} (fingerprint {c.fingerprint})" for c in apart)
        title = f"{len(apart)} unproven verdict{'' if len(apart) == 1 else 's'}: check by hand"
        lines.append(f"::warning title={_gh_property(title)}::{_gh_data(listed)}")
    locate = _located(locate)
    for c in result.changes:
        if c.waiver is not None:
            continue
        levels = ", ".join(c.appears_in)
        props = f"title={_gh_property(f'{c.rule.id} ({levels}, {c.layer})')}"
        anchor = locate(c)
        if anchor is not None:
            props = f"{anchor.github()}," + props
        link = rule_link(c.rule.id, rules_url)
        text = f"{c.message} — breaks {breaks_text(c)}. {c.rule.summary}" + (f" ({link})" if link else "")
        shown = proof_line(c)
        if shown:
            text += f"\n{shown}"
        text += f"\n(fingerprint {c.fingerprint})"
        lines.append(f"::{_GITHUB_LEVEL[c.severity]} {props}::{_gh_data(text)}")
    for waiver in result.expired:
        text = f"waiver {waiver.fingerprint} expired on {waiver.expires}: {waiver.reason}"
        lines.append(f"::error title=expired waiver::{_gh_data(text)}")
    lines.extend(
        f"::warning title=unused waiver::{_gh_data(f'waiver {w.fingerprint} matches no change')}"
        for w in result.unmatched
    )
    return "\n".join(lines) + ("\n" if lines else "")


# --- SARIF -------------------------------------------------------------------------


def _sarif_rule(rule: Rule, rules_url: str | None) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": rule.id,
        "name": "".join(w.capitalize() for w in rule.id.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": f"{rule.summary} Breaks {BREAKS_TEXT[rule.breaks]}."},
        "help": {"text": rule.summary, "markdown": rule.explain("markdown")},
        "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
        "properties": {"layer": rule.layer, "category": rule.category, "breaks": BREAKS_TEXT[rule.breaks]},
    }
    link = rule_link(rule.id, rules_url)
    if link:
        found["helpUri"] = link
    return found


def render_sarif(
    result: DiffResult,
    fail_on: str = "breaking",
    rules_url: str | None = None,
    locate: Locate | None = None,
    judged: DiffResult | None = None,
) -> str:
    """A SARIF 2.1.0 log (:func:`sarif_log`) as JSON text."""
    return json.dumps(sarif_log(result, rules_url, locate, judged), indent=2, ensure_ascii=False) + "\n"


def sarif_log(
    result: DiffResult,
    rules_url: str | None = None,
    locate: Locate | None = None,
    judged: DiffResult | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log: one result per change, where ``locate`` attaches it (a ``uri`` relative to the
    repository's root; never an absolute one), always at its logical location (the schema's names)."""
    index = {rule.id: i for i, rule in enumerate(CATALOG)}
    results = []
    locate = _located(locate)
    for c in result.changes:
        location: dict[str, Any] = {}
        anchor = locate(c)
        if anchor is not None:
            location["physicalLocation"] = anchor.sarif()
        location["logicalLocations"] = [{"fullyQualifiedName": c.subject, "kind": "member"}]
        text = f"{c.message} (breaks {breaks_text(c)})"
        shown = proof_line(c)
        if shown:
            text += f"; {shown}"
        item: dict[str, Any] = {
            "ruleId": c.rule.id,
            "ruleIndex": index[c.rule.id],
            "level": SARIF_LEVEL[c.severity],
            "message": {"text": text},
            "locations": [location],
            "partialFingerprints": {"acpChange/v2": c.fingerprint},
            "properties": {
                "stabilities": list(c.appears_in),
                "layer": c.layer,
                "breaks": list(c.roles),
                "pointer": c.pointer,
                "path": [part_json(p) for p in c.path],
            },
        }
        kind = standing(c)
        if kind is not None:
            item["properties"]["standing"] = str(kind)
        if c.proof is not None:
            item["properties"]["proof"] = proof_json(c.proof)
        if c.evidence is not None:
            item["properties"]["evidence"] = evidence_json(c.evidence)
        if c.waiver is not None:
            item["suppressions"] = [{"kind": "external", "justification": c.waiver.reason}]
        results.append(item)
    return {
        "$schema": SARIF_SCHEMA_URL,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {"name": TOOL_NAME, "rules": [_sarif_rule(r, rules_url) for r in CATALOG]}
                },
                "automationDetails": {"id": f"acp-diff/{result.old}..{result.new}"},
                "results": results,
                "properties": {
                    "semver": steps_json(semver.step(judged or result)),
                    "proofs": proof_counts(result),
                    "proofs_summary": proof_summary(result),
                    "unproven": unproven_json(result),
                },
            }
        ],
    }


# --- HTML ------------------------------------------------------------------------------------


def render_html(
    result: DiffResult, rules_url: str | None = None, judged: DiffResult | None = None, link_base: str = ""
) -> str:
    """One self-contained page to open and filter (:mod:`.html`); ``link_base`` goes before relative
    schema files in the links to each change's JSON pointer."""
    return render_page(result, rules_url, judged, link_base)


RENDERERS: dict[str, Callable[[DiffResult, Options], str]] = {
    "text": lambda result, o: render_text(result, o.fail_on, judged=o.judged),
    "markdown": lambda result, o: render_markdown(result, o.rules_url, judged=o.judged),
    "json": lambda result, o: render_json(result, o.fail_on, o.rules_url, o.judged, o.min_severity),
    "github": lambda result, o: render_github(result, o.fail_on, o.rules_url, o.locate, o.judged),
    "sarif": lambda result, o: render_sarif(result, o.fail_on, o.rules_url, o.locate, o.judged),
    "html": lambda result, o: render_html(result, o.rules_url, judged=o.judged),
}


def render(
    result: DiffResult,
    fmt: str,
    fail_on: str = "breaking",
    rules_url: str | None = None,
    *,
    min_severity: Severity = "info",
    locate: Locate | None = None,
) -> str:
    """``result`` in format ``fmt`` (:data:`FORMATS`), showing the changes at or above ``min_severity``;
    GitHub annotations and SARIF results attach where ``locate`` says (default: the schema files)."""
    options = Options(fail_on, rules_url, min_severity, locate, judged=result)
    return RENDERERS[fmt](at_least(result, min_severity), options)


# --- the rule catalog ------------------------------------------------------------------


def _by_category(rules: Iterable[Rule]) -> dict[str, list[Rule]]:
    out: dict[str, list[Rule]] = {}
    for rule in rules:
        out.setdefault(rule.category, []).append(rule)
    return out


def render_rules(fmt: str) -> str:
    """The catalog as ``text``, ``markdown`` (``docs/rules.md``) or ``json``, each rule explaining itself."""
    if fmt == "json":
        return json.dumps([r.facts() for r in CATALOG], indent=2) + "\n"
    if fmt == "text":
        width = max(len(r.id) for r in CATALOG)
        lines = [f"{'rule':{width}}  layer   severity  breaks"]
        lines += [r.explain("text", width) for r in CATALOG]
        return "\n".join(lines) + "\n"
    lines = [
        "# Rules of `acp-codegen diff`",
        "",
        "Written by `acp-codegen rules --format markdown`; do not edit (`make reports` rewrites it).",
        "",
        "Every change the differ reports follows one of these rules. A **wire** rule is about what peers",
        "see on the network, a **python** rule about code written against the generated bindings.",
        "",
        "A wire rule names the end of the data flow it hurts, never a peer. The differ works out the peer",
        "from who sends the data the change is in: params are sent by the caller of a method, results by",
        "its handler, both ways for protocol methods, and every type inside them by the same peers. So",
        "*old senders* of a type that only clients send means **old client**; *old receivers* of it means",
        "**old agent**. A change in data no message carries breaks nobody and is reported as `info`.",
        "",
        "Every `breaking` or `warning` wire row of a report shows its proof: a **witness** (a whole",
        "message a peer receives, a method's params or result or an envelope, that one release's schema",
        "and models accept and the other's models refuse at the change, or accept but read otherwise there",
        "(a lenient list's item dropped, a lenient field's value read as its default), or the call or batch",
        "a removed method's or batch's rule predicts), or a **set proof** (the inclusion argument the rule",
        "decided by, in one line, for what no message can show), or it is **unproven**: listed apart,",
        'counted ("2 unproven verdicts: check by hand"), and the version step says when it rests on such',
        "rows. A rule below says which peers it breaks; the proof shows that it does, pair by pair.",
        "",
        "| severity | meaning |",
        "| --- | --- |",
        "| `breaking` | a peer (or Python code) that did nothing wrong fails |",
        "| `warning` | a peer keeps working but may lose data or behave differently |",
        "| `info` | compatible; worth knowing |",
    ]
    for category, rules in _by_category(CATALOG).items():
        lines += ["", f"## {category}", ""]
        lines.append("\n\n".join(r.explain("markdown") for r in rules))
    return "\n".join(lines) + "\n"


# --- the committed reports ---------------------------------------------------------------


def release_pairs(releases: list[str]) -> list[tuple[str, str]]:
    """Consecutive releases of the same protocol major version: a v1 release is never diffed with a v2 one."""
    return [
        (old, new) for old, new in itertools.pairwise(releases) if protocol_major(old) == protocol_major(new)
    ]


REPORTS_LINK_BASE = "../"
"""How a committed page reaches the schema files it names: ``reports/`` sits beside ``schemas/``."""


def report_files(
    source: SchemaSource, releases: list[str], root: Path | None = None, min_severity: Severity = "info"
) -> dict[str, str]:
    """``<old>..<new>.md``, ``.json`` and ``.html`` for every pair of :func:`release_pairs`, both levels,
    each showing the changes at or above ``min_severity`` (the version step weighs them all).

    Schema files are named relative to ``root`` (default: the project), so the
    reports read the same wherever they are written from; they carry no
    evidence (``acp-codegen diff`` searches for it) and link rules to the
    published catalog only if one is configured.
    """
    from ..schema.load import BUNDLED_SCHEMAS

    base = root or BUNDLED_SCHEMAS.parent
    files: dict[str, str] = {}
    for old, new in release_pairs(releases):
        result = _relative(diff_releases(source.load(old), source.load(new), ("stable", "unstable")), base)
        shown = at_least(result, min_severity)
        command = f"acp-codegen diff {old} {new} --no-evidence --format markdown"
        if min_severity != "info":
            command += f" --min-severity {min_severity}"
        beside = f"`{old}..{new}.json` and `{old}..{new}.html` beside this report list"
        files[f"{old}..{new}.md"] = render_markdown(
            shown, rules_url(), command=command, judged=result, everything=beside
        )
        files[f"{old}..{new}.json"] = render_json(
            shown, rules_url=rules_url(), judged=result, min_severity=min_severity
        )
        files[f"{old}..{new}.html"] = render_html(
            shown, rules_url(), judged=result, link_base=REPORTS_LINK_BASE
        )
    return files


def _relative(result: DiffResult, root: Path) -> DiffResult:
    import dataclasses

    def named(change: Change) -> Change:
        return (
            dataclasses.replace(change, file=display_path(Path(change.file), root)) if change.file else change
        )

    surfaces = tuple(
        dataclasses.replace(s, changes=tuple(named(c) for c in s.changes)) for s in result.surfaces
    )
    return dataclasses.replace(result, surfaces=surfaces)


def _is_report(path: Path) -> bool:
    """A file ``reports`` writes: ``<old>..<new>.md``, ``.json`` or ``.html``."""
    return path.suffix in (".md", ".json", ".html") and ".." in path.name


def stale_reports(folder: Path, files: dict[str, str]) -> list[str]:
    """One line per report that is missing, different or left over."""
    lines = []
    for name, content in files.items():
        path = folder / name
        if not path.is_file():
            lines.append(f"missing: {path}")
        elif path.read_text(encoding="utf-8") != content:
            lines.append(f"differs: {path}")
    if folder.is_dir():
        lines.extend(
            f"left over: {path}"
            for path in sorted(folder.iterdir())
            if _is_report(path) and path.name not in files
        )
    return lines


def write_reports(folder: Path, files: dict[str, str]) -> None:
    """Write the reports and remove ones no longer produced: all or nothing (see ``write_files``)."""
    listed = folder.iterdir() if folder.is_dir() else ()
    write_files(folder, files, remove=[p.name for p in listed if _is_report(p) and p.name not in files])
