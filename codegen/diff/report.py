"""Render a :class:`~codegen.diff.DiffResult` or the rule catalog for people and for CI.

Formats: ``text`` (a terminal), ``markdown`` (the committed ``reports/`` and
pull-request comments), ``json`` (scripts), ``github`` (workflow-command
annotations) and ``sarif`` (SARIF 2.1.0 for code-scanning tools).  Every
renderer is deterministic: the same changes give the same bytes.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..files import write_files
from ..schema.load import SchemaSource, protocol_major
from .differ import diff_releases
from .model import Change, DiffResult, SurfaceDiff, Waiver
from .rules import BREAKS_TEXT, CATALOG, SEVERITIES, Rule, Severity

FORMATS = ("text", "markdown", "json", "github", "sarif")
RULES_DOC = "docs/rules.md"
SARIF_LEVEL: dict[Severity, str] = {"breaking": "error", "warning": "warning", "info": "note"}
TOOL_NAME = "acp-codegen diff"


def _breaks(change: Change) -> str:
    return ", ".join(change.roles) if change.roles else "nobody"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}s" if word == "warning" and count != 1 else f"{count} {word}"


def _summary(surface: SurfaceDiff) -> dict[Severity, int]:
    out: dict[Severity, int] = dict.fromkeys(SEVERITIES, 0)
    for change in surface.changes:
        if change.waiver is None:
            out[change.severity] += 1
    return out


def _summary_line(counts: dict[Severity, int]) -> str:
    return ", ".join(_plural(counts[s], s) for s in SEVERITIES)


def _waiver_lines(result: DiffResult) -> list[str]:
    expired = [f"expired waiver {w.fingerprint} (expired {w.expires}): {w.reason}" for w in result.expired]
    unused = [f"unused waiver {w.fingerprint}: it matches no change ({w.reason})" for w in result.unmatched]
    return expired + unused


# --- text ---------------------------------------------------------------------


def render_text(result: DiffResult, fail_on: str = "breaking") -> str:
    lines = [f"ACP {result.old} -> {result.new}"]
    for surface in result.surfaces:
        lines.append("")
        lines.append(f"{surface.stability}: {_summary_line(_summary(surface))}")
        width = max((len(c.rule.id) for c in surface.changes), default=0)
        for change in surface.changes:
            state = f"waived until {change.waiver.expires}" if change.waiver else change.severity
            lines.append(f"  {state:9} {change.layer:6} {change.rule.id:{width}}  {change.message}")
            note = f"breaks {_breaks(change)}"
            lines.append(f"  {'':9} {'':6} {'':{width}}  {note}; fingerprint {change.fingerprint}")
    extra = _waiver_lines(result)
    if extra:
        lines.append("")
        lines.extend(extra)
    failing = result.failing(fail_on)
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


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{_cell(text)}`" if text else ""


def render_markdown(result: DiffResult, rules_link: str = "../" + RULES_DOC, command: str = "") -> str:
    lines = [f"# ACP API changes: {result.old} → {result.new}", ""]
    if command:
        lines += [f"Written by `{command}`. Do not edit; run `make reports` instead.", ""]
    lines += [
        "Each row is one change. **layer** `wire` is what peers see on the network, `python` what code "
        "using the generated bindings sees. **breaks** names the peer that is hurt when it still runs "
        "the old release (or the Python callers). Every rule is explained in "
        f"[the rule catalog]({rules_link}).",
        "",
        "| schema | breaking | warning | info |",
        "| --- | ---: | ---: | ---: |",
    ]
    for surface in result.surfaces:
        counts = _summary(surface)
        lines.append(
            f"| {surface.stability} | {counts['breaking']} | {counts['warning']} | {counts['info']} |"
        )
    for surface in result.surfaces:
        lines += ["", f"## {surface.stability} schema"]
        if not surface.changes:
            lines += ["", "No changes."]
        for severity in SEVERITIES:
            rows = [c for c in surface.changes if c.severity == severity]
            if not rows:
                continue
            lines += [
                "",
                f"### {severity.capitalize()} ({len(rows)})",
                "",
                "| layer | rule | where | change | breaks | fingerprint |",
                "| --- | --- | --- | --- | --- | --- |",
            ]
            for c in rows:
                rule = f"[`{c.rule.id}`]({rules_link}#{c.rule.id})"
                breaks = _breaks(c) + (f" (waived until {c.waiver.expires})" if c.waiver else "")
                cells = (c.layer, rule, _code(c.subject), _cell(c.detail), breaks, f"`{c.fingerprint}`")
                lines.append("| " + " | ".join(cells) + " |")
    extra = _waiver_lines(result)
    if extra:
        lines += ["", "## Waivers", ""] + [f"- {_cell(line)}" for line in extra]
    return "\n".join(lines) + "\n"


# --- json -----------------------------------------------------------------------


def _waiver_json(waiver: Waiver) -> dict[str, Any]:
    return {"fingerprint": waiver.fingerprint, "reason": waiver.reason, "expires": waiver.expires.isoformat()}


def change_json(change: Change) -> dict[str, Any]:
    return {
        "stability": change.stability,
        "layer": change.layer,
        "rule": change.rule.id,
        "category": change.rule.category,
        "severity": change.severity,
        "breaks": list(change.roles),
        "subject": change.subject,
        "detail": change.detail,
        "fingerprint": change.fingerprint,
        "file": change.file,
        "pointer": change.pointer,
        "waiver": _waiver_json(change.waiver) if change.waiver else None,
    }


def result_json(result: DiffResult, fail_on: str = "breaking") -> dict[str, Any]:
    return {
        "old": result.old,
        "new": result.new,
        "summary": {s.stability: _summary(s) for s in result.surfaces},
        "changes": [change_json(c) for c in result.changes],
        "waivers": {
            "expired": [_waiver_json(w) for w in result.expired],
            "unmatched": [_waiver_json(w) for w in result.unmatched],
        },
        "failed": result.exit_code(fail_on) != 0,
    }


def render_json(result: DiffResult, fail_on: str = "breaking") -> str:
    return json.dumps(result_json(result, fail_on), indent=2, ensure_ascii=False) + "\n"


# --- GitHub annotations ------------------------------------------------------------

_GITHUB_LEVEL: dict[Severity, str] = {"breaking": "error", "warning": "warning", "info": "notice"}


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result: DiffResult, fail_on: str = "breaking") -> str:
    """One workflow command per unwaived change, plus one per expired or unused waiver."""
    lines = []
    for c in result.changes:
        if c.waiver is not None:
            continue
        props = f"title={_gh_property(f'{c.rule.id} ({c.stability}, {c.layer})')}"
        if c.file:
            props = f"file={_gh_property(c.file)}," + props
        text = f"{c.message} — breaks {_breaks(c)}. {c.rule.summary} (fingerprint {c.fingerprint})"
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


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": "".join(w.capitalize() for w in rule.id.split("-")),
        "shortDescription": {"text": rule.summary},
        "helpUri": f"{RULES_DOC}#{rule.id}",
        "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
        "properties": {"layer": rule.layer, "category": rule.category, "breaks": BREAKS_TEXT[rule.breaks]},
    }


def render_sarif(result: DiffResult, fail_on: str = "breaking") -> str:
    index = {rule.id: i for i, rule in enumerate(CATALOG)}
    results = []
    for c in result.changes:
        item: dict[str, Any] = {
            "ruleId": c.rule.id,
            "ruleIndex": index[c.rule.id],
            "level": SARIF_LEVEL[c.severity],
            "message": {"text": f"{c.message} (breaks {_breaks(c)})"},
            "locations": [
                {
                    "physicalLocation": {"artifactLocation": {"uri": c.file or "schema.json"}},
                    "logicalLocations": [{"fullyQualifiedName": c.subject, "kind": "member"}],
                }
            ],
            "partialFingerprints": {"acpChange/v1": c.fingerprint},
            "properties": {
                "stability": c.stability,
                "layer": c.layer,
                "breaks": list(c.roles),
                "pointer": c.pointer,
            },
        }
        if c.waiver is not None:
            item["suppressions"] = [{"kind": "external", "justification": c.waiver.reason}]
        results.append(item)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": TOOL_NAME, "rules": [_sarif_rule(r) for r in CATALOG]}},
                "automationDetails": {"id": f"acp-diff/{result.old}..{result.new}"},
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


RENDERERS: dict[str, Callable[[DiffResult, str], str]] = {
    "text": render_text,
    "markdown": lambda result, _fail_on: render_markdown(result),
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
}


def render(result: DiffResult, fmt: str, fail_on: str = "breaking") -> str:
    return RENDERERS[fmt](result, fail_on)


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


def report_files(source: SchemaSource, releases: list[str]) -> dict[str, str]:
    """``<old>..<new>.md`` and ``.json`` for every pair of :func:`release_pairs`, both stability levels."""
    files: dict[str, str] = {}
    for old, new in release_pairs(releases):
        result = diff_releases(source.load(old), source.load(new), ("stable", "unstable"))
        command = f"acp-codegen diff {old} {new} --format markdown"
        files[f"{old}..{new}.md"] = render_markdown(result, command=command)
        files[f"{old}..{new}.json"] = render_json(result)
    return files


def _is_report(path: Path) -> bool:
    """A file ``reports`` writes: ``<old>..<new>.md`` or ``.json``."""
    return path.suffix in (".md", ".json") and ".." in path.name


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
