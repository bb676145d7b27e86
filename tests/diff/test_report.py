"""Rendering (``codegen.diff.report``): the formats of ``diff``, the rule catalog, the committed reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen.diff import DiffResult, diff_surfaces
from codegen.diff.report import (
    release_pairs,
    render_json,
    render_markdown,
    render_rules,
    render_text,
    report_files,
    stale_reports,
)
from codegen.diff.rules import CATALOG, RuleId
from codegen.diff.rules import rule as rule_of
from codegen.schema.load import DEFAULT_LOCK, SchemaSource, read_lock
from tests.diff.pairs import diff_pair
from tests.support.diffkit import A3, A5, MESSAGE_ID, run
from tests.support.releases import ROOT, surface_of

# --- formats --------------------------------------------------------------------------------


def test_json_lists_every_change_with_its_fingerprint(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "diff", "--no-evidence", A3, A5, "--stability", "stable", "--format", "json")
    data = json.loads(out)
    assert data["old"] == A3 and data["new"] == A5 and data["failed"] is True
    # the wire change, and the Python one it makes: PromptResponse(...) needs message_id
    assert data["summary"] == {"stable": {"breaking": 2, "warning": 0, "info": 1}}
    first = data["changes"][0]
    assert first["rule"] == "field-added-required" and first["fingerprint"] == MESSAGE_ID
    assert (
        first["breaks"] == ["old agent"]
        and first["layer"] == "wire"
        and first["pointer"] == "/$defs/PromptResponse"
    )
    # the typed fields the words come from, and the rule explained inline
    assert first["path"] == [
        {"kind": "type", "name": "PromptResponse"},
        {"kind": "field", "name": "messageId"},
    ]
    assert first["new"] == "MessageId" and "old" not in first
    # who sends and receives the data, in the old release and in the new one
    assert first["flow"] == {
        "old": {"senders": ["agent"], "receivers": ["client"]},
        "new": {"senders": ["agent"], "receivers": ["client"]},
    }
    assert first["stabilities"] == ["stable"]
    assert first["explanation"] == rule_of(RuleId.FIELD_ADDED_REQUIRED).summary
    assert "rule_url" not in first and first["file"] == f"schemas/v2/{A5}/schema.json"


def test_markdown_has_a_summary_table_and_explains_every_rule_it_uses_once_folded(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Read outside this repository, the report explains its rules itself: no link into the repository."""
    _, out, _ = run(capsys, "diff", "--no-evidence", A3, A5, "--stability", "stable", "--format", "markdown")
    assert "| stable | 2 | 0 | 1 | **major** | **major** |" in out
    assert "| stable and unstable, distinct |" not in out  # one level: nothing to count twice
    assert "| wire | `field-added-required` |" in out
    summary = rule_of(RuleId.FIELD_ADDED_REQUIRED).summary
    explained = f"- `field-added-required` (wire, breaking by default): {summary}"
    assert out.count(explained) == 1
    assert out.index("<details><summary>How to read this report</summary>") < out.index(explained)
    assert "`field-added-optional` (wire" in out and "`type-changed`" not in out
    assert "docs/rules.md" not in out and "### " not in out  # no catalogue appended
    assert "string \\| null" in out  # a union in a table cell is escaped


def test_markdown_puts_the_step_first_then_breaking_then_warnings_open_and_info_folded() -> None:
    out = render_markdown(diff_pair("2.0.0-alpha.7", "2.0.0-alpha.8"))
    step = out.index("**Version step:** wire: minor (12 additions); Python API: major (4 breaking changes).")
    breaking = out.index("<details open><summary><b>Breaking (4)</b></summary>")
    warnings = out.index("<details open><summary><b>Warnings (15)</b></summary>")
    info = out.index("<details><summary><b>Info (48)</b></summary>")
    assert step < out.index("| schema | breaking |") < breaking < warnings < info
    assert out.count("<details") == out.count("</details>") == 4
    assert "**Breaks:** old client (9), old agent (5), python callers (5)." in out


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "github", "sarif", "html"])
def test_min_severity_leaves_the_lesser_changes_out_of_every_format(
    fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ("diff", "--no-evidence", "2.0.0-alpha.7", "2.0.0-alpha.8", "--format", fmt)
    _, every, _ = run(capsys, *common)
    code, breaking, _ = run(capsys, *common, "--min-severity", "breaking")
    assert code == 1  # the exit status weighs every change
    data = json.loads(run(capsys, *common[:-1], "json", "--min-severity", "warning")[1])
    assert {c["severity"] for c in data["changes"]} == {"breaking", "warning"}
    assert data["semver"]["wire"]["step"] == "minor"  # the additions are info: left out, still counted
    warning_only = next(c["fingerprint"] for c in data["changes"] if c["severity"] == "warning")
    breaking_one = next(c["fingerprint"] for c in data["changes"] if c["severity"] == "breaking")
    assert warning_only in every and warning_only not in breaking
    assert breaking_one in breaking


def test_rule_links_go_to_the_configured_public_catalog(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "https://example.org/acp-codegen/rules"
    common = ("diff", A3, A5, "--stability", "stable", "--no-evidence", "--rules-url", url)
    _, out, _ = run(capsys, *common, "--format", "markdown")
    assert f"[`field-added-required`]({url}#field-added-required)" in out and "\n## Rules\n" not in out
    change = json.loads(run(capsys, *common, "--format", "json")[1])["changes"][0]
    assert change["rule_url"] == f"{url}#field-added-required"
    sarif = json.loads(run(capsys, *common, "--format", "sarif")[1])
    assert sarif["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] == f"{url}#field-added-required"
    assert f"({url}#field-added-required)" in run(capsys, *common, "--format", "github")[1]
    monkeypatch.setenv("ACP_CODEGEN_RULES_URL", url)
    assert f"({url}#field-added-required)" in run(capsys, *common[:-2], "--format", "markdown")[1]


def test_github_annotations_are_one_workflow_command_per_change(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "diff", "--no-evidence", A3, A5, "--stability", "stable", "--format", "github")
    heading, *lines = out.splitlines()
    assert heading == (
        f"::notice title=acp-codegen diff::ACP {A3} -> {A5}: 2 breaking, 0 warnings, 1 info. "
        "Version step: wire: major (1 breaking change); Python API: major (1 breaking change). "
        "Proofs: 1 proven (0 by witness, 1 by set proof)"  # the required field's: an old message lacks it
    )
    assert len(lines) == 3
    schema = ROOT / "schemas" / "v2" / A5 / "schema.json"
    line = _line_of_key(schema, '"messageId": {')  # the field, read from the file itself
    assert lines[0].startswith(
        f"::error file=schemas/v2/{A5}/schema.json,line={line},title=field-added-required (stable%2C wire)::"
    )
    assert rule_of(RuleId.FIELD_ADDED_REQUIRED).summary in lines[0]
    assert lines[1].startswith("::error ") and "python-class-argument-required (stable%2C python)" in lines[1]
    assert lines[2].startswith("::notice ")


def _line_of_key(path: Path, needle: str) -> int:
    """The first line of ``path`` holding ``needle`` (the test reads the file independently)."""
    return next(n for n, text in enumerate(path.read_text().splitlines(), 1) if needle in text)


def test_sarif_is_a_2_1_0_log_with_the_catalog_as_rules(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "diff", "--no-evidence", A3, A5, "--stability", "stable", "--format", "sarif")
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in CATALOG]
    result = run_["results"][0]
    assert result["ruleId"] == "field-added-required" and result["level"] == "error"
    assert rules[result["ruleIndex"]]["id"] == "field-added-required"
    assert result["partialFingerprints"] == {"acpChange/v2": MESSAGE_ID}
    location = result["locations"][0]
    assert location["logicalLocations"][0]["fullyQualifiedName"] == "PromptResponse.messageId"
    schema = ROOT / "schemas" / "v2" / A5 / "schema.json"
    assert location["physicalLocation"] == {
        "artifactLocation": {"uri": f"schemas/v2/{A5}/schema.json"},
        "region": {"startLine": _line_of_key(schema, '"messageId": {')},
    }
    assert all("helpUri" not in r for r in rules)  # no public catalog configured: explained inline
    assert rules[result["ruleIndex"]]["help"]["text"] == rule_of(RuleId.FIELD_ADDED_REQUIRED).summary


def test_output_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    first = run(
        capsys, "diff", "--no-evidence", "2.0.0-alpha.2", A3, "--format", "json", "--fail-on", "never"
    )[1]
    second = run(
        capsys, "diff", "--no-evidence", "2.0.0-alpha.2", A3, "--format", "json", "--fail-on", "never"
    )[1]
    assert first == second


# --- rules and the committed files -------------------------------------------------------------------


def test_rules_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules")
    assert code == 0
    for rule in CATALOG:
        assert rule.id in out and rule.summary in out
    _, as_json, _ = run(capsys, "rules", "--format", "json")
    assert [r["id"] for r in json.loads(as_json)] == [r.id for r in CATALOG]


def test_docs_rules_md_is_generated_from_the_catalog() -> None:
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == render_rules("markdown"), "docs/rules.md is stale: run `make reports`"
    for rule in CATALOG:
        assert f"\n### {rule.id}\n" in committed


def test_committed_reports_match_make_reports() -> None:
    source = SchemaSource(read_lock())
    files = report_files(source, list(source.lock.releases))
    assert len(files) == 3 * len(release_pairs(list(source.lock.releases)))  # .md, .json, .html
    assert stale_reports(ROOT / "reports", files) == [], "reports/ is stale: run `make reports` and commit it"


def test_reports_check_finds_a_stale_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On one pair (reports/ as a whole: test_committed_reports_match_make_reports)."""
    out = tmp_path / "reports"
    locked = json.loads(DEFAULT_LOCK.read_text())["releases"]
    lock = tmp_path / "lock.json"
    lock.write_text(json.dumps({"releases": {name: locked[name] for name in (A3, A5)}}))
    reports = ("--lock", lock, "reports", "--out", out)
    assert run(capsys, *reports)[0] == 0
    assert (out / f"{A3}..{A5}.md").read_text() == (ROOT / "reports" / f"{A3}..{A5}.md").read_text()
    assert run(capsys, *reports, "--check")[0] == 0
    (out / f"{A3}..{A5}.md").write_text("edited by hand\n")
    (out / "1..2.json").write_text("{}")  # named like a report, but not in the record: the user's (issue 23)
    code, printed, _ = run(capsys, *reports, "--check")
    assert code == 1
    assert printed.splitlines() == [f"differs: {out / f'{A3}..{A5}.md'}"]
    assert run(capsys, *reports)[0] == 0
    assert (out / "1..2.json").read_text() == "{}"
    assert run(capsys, *reports, "--check")[0] == 0


def test_reports_min_severity_leaves_lower_changes_out_of_every_file_but_not_of_the_step() -> None:
    source = SchemaSource(read_lock())
    pair = f"{A3}..{A5}"
    full, kept = (report_files(source, [A3, A5], min_severity=m) for m in ("info", "breaking"))
    every, breaking = json.loads(full[f"{pair}.json"]), json.loads(kept[f"{pair}.json"])
    assert {c["severity"] for c in every["changes"]} > {"breaking"}
    assert [c for c in every["changes"] if c["severity"] == "breaking"] == breaking["changes"]
    assert breaking["semver"] == every["semver"] and breaking["min_severity"] == "breaking"
    assert "--min-severity breaking" in kept[f"{pair}.md"]
    for change in every["changes"]:
        shown = change["severity"] == "breaking"
        assert (change["fingerprint"] in kept[f"{pair}.html"]) == shown, change["subject"]
        assert change["fingerprint"] in full[f"{pair}.html"]


def test_reports_passes_min_severity_to_what_it_writes_and_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from codegen.diff import report

    asked: list[str] = []

    def files(source: SchemaSource, releases: list[str], min_severity: str = "info") -> dict[str, str]:
        asked.append(min_severity)
        return {"a..b.md": f"{min_severity}\n"}

    monkeypatch.setattr(report, "report_files", files)
    out = tmp_path / "reports"
    assert run(capsys, "reports", "--out", out, "--min-severity", "warning")[0] == 0
    assert run(capsys, "reports", "--out", out, "--min-severity", "warning", "--check")[0] == 0
    assert run(capsys, "reports", "--out", out, "--check")[0] == 1  # the default shows every change
    assert asked == ["warning", "warning", "info"]


# --- a change in both schemas, listed once ------------------------------------------------------------


def both_schemas() -> DiffResult:
    """alpha.3 -> alpha.5 in both schemas, each change once with the schemas it appears in."""
    return DiffResult(
        A3, A5, tuple(diff_surfaces(surface_of(A3, u), surface_of(A5, u)) for u in (False, True))
    )


def test_text_lists_a_change_of_both_schemas_once_and_says_which_are_in_one_only() -> None:
    result = both_schemas()
    text = render_text(result)
    assert text.count("PromptResponse.messageId: type MessageId") == 1
    assert "stable: 2 breaking, 0 warnings, 1 info" in text
    # the warning: union-tag-claimed SessionUpdate[other]['notice']
    assert "unstable: 2 breaking, 1 warning, 4 info" in text
    assert "8 distinct changes: 2 breaking, 1 warning, 5 info" in text
    assert "unstable only; breaks nobody" in text
    assert text.rstrip().endswith("FAILED: 2 unwaived change(s) at or above 'breaking'")


def test_markdown_and_json_carry_the_schemas_of_each_change() -> None:
    result = both_schemas()
    markdown = render_markdown(result)
    assert "| stable and unstable, distinct | 2 | 1 | 5 |" in markdown
    assert "| schema | layer | rule | where |" in markdown
    assert "| stable, unstable | wire | `field-added-required` |" in markdown
    data = json.loads(render_json(result))
    assert data["summary"]["distinct"] == {"breaking": 2, "warning": 1, "info": 5}
    # ToolCallUpdate.name was unstable already: in alpha.5 it is new to the stable schema only
    levels = {c["subject"]: tuple(c["stabilities"]) for c in data["changes"]}
    assert levels["ToolCallUpdate.name"] == ("stable",)
    assert levels["PromptResponse.messageId"] == ("stable", "unstable")
    assert set(levels.values()) == {("stable",), ("unstable",), ("stable", "unstable")}
    assert len({c["fingerprint"] for c in data["changes"]}) == len(data["changes"])
