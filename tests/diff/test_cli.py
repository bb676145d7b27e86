"""``acp-codegen diff``, ``rules`` and ``reports``: options, formats, waivers, exit codes and bad input."""

from __future__ import annotations

import datetime
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen import cli
from codegen.diff import DiffResult, apply_waivers, diff_surfaces, read_waivers
from codegen.diff_report import render_rules, report_files, stale_reports
from codegen.diff_rules import CATALOG
from codegen.errors import CodegenError
from codegen.schema.load import RELEASE_FILES, SchemaSource, read_lock
from tests.support.diffkit import base_data
from tests.support.releases import ROOT, release_files, surface_of

A3, A5, A7 = "2.0.0-alpha.3", "2.0.0-alpha.5", "2.0.0-alpha.7"
MESSAGE_ID = "ef11d1653702bc7a"  # field-added-required PromptResponse.messageId (alpha.3 -> alpha.5)


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def folder_of(tmp_path: Path, release: str, name: str = "side") -> Path:
    """A copy of a release's four files in a folder of its own."""
    target = tmp_path / name
    target.mkdir()
    for file_name in RELEASE_FILES:
        shutil.copy(release_files(release).folder / file_name, target / file_name)
    return target


def waiver_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "waivers.toml"
    path.write_text(text, encoding="utf-8")
    return path


# --- exit codes and thresholds ---------------------------------------------------------


def test_breaking_changes_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", A3, A5)
    assert code == 1
    assert "field-added-required" in out and "PromptResponse.messageId" in out and "breaks old agent" in out


def test_info_only_changes_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", A5, A7, "--stability", "stable")
    assert code == 0
    assert out.count("field-added-optional") == 2


def test_fail_on_never_always_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "diff", A3, A5, "--fail-on", "never")[0] == 0


def test_fail_on_warning_counts_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    """alpha.2 -> alpha.3 unstable: one warning (env_var auth removed) besides python breaks."""
    assert run(capsys, "diff", "2.0.0-alpha.2", A3, "--stability", "stable", "--fail-on", "warning")[0] == 0
    assert run(capsys, "diff", "2.0.0-alpha.1", "2.0.0-alpha.2", "--fail-on", "warning")[0] == 0
    found = diff_surfaces(surface_of("2.0.0-alpha.2", True), surface_of(A3, True))
    result = DiffResult("a", "b", (found,))
    warnings_only = [c for c in result.failing("warning") if c.severity == "warning"]
    assert [c.subject for c in warnings_only] == ["AuthMethod['env_var']"]


def draft_of(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A folder holding alpha.7 with ``edit`` applied to the ``$defs`` of its stable schema."""
    draft = folder_of(tmp_path, A7, "draft")
    data = base_data()
    edit(data["$defs"])
    (draft / "schema.json").write_text(json.dumps(data), encoding="utf-8")
    return draft


def drop_cancelled_tool_status(defs: dict[str, Any]) -> None:
    """ToolCallStatus is open and agents send it: a value gone is a warning (old agents may send it)."""
    defs["ToolCallStatus"]["anyOf"] = [
        m for m in defs["ToolCallStatus"]["anyOf"] if m.get("const") != "cancelled"
    ]


def require_meta(defs: dict[str, Any]) -> None:
    defs["PromptRequest"]["required"].append("_meta")


@pytest.mark.parametrize(
    ("edit", "summary", "exits"),
    [
        (drop_cancelled_tool_status, [0, 1, 0], {"breaking": 0, "warning": 1, "never": 0}),
        (require_meta, [1, 0, 0], {"breaking": 1, "warning": 1, "never": 0}),
    ],
    ids=["warning only", "breaking"],
)
def test_fail_on_thresholds_on_an_edited_draft(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: Callable[[dict[str, Any]], None],
    summary: list[int],
    exits: dict[str, int],
) -> None:
    draft = draft_of(tmp_path, edit)
    _, out, _ = run(
        capsys, "diff", A7, draft, "--stability", "stable", "--format", "json", "--fail-on", "never"
    )
    assert list(json.loads(out)["summary"]["stable"].values()) == summary  # breaking, warning, info
    for fail_on, expected in exits.items():
        code, _, _ = run(capsys, "diff", A7, draft, "--stability", "stable", "--fail-on", fail_on)
        assert code == expected, fail_on


def test_stability_selects_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    _, both, _ = run(capsys, "diff", A5, A7, "--format", "json", "--fail-on", "never")
    _, stable, _ = run(capsys, "diff", A5, A7, "--format", "json", "--stability", "stable")
    _, unstable, _ = run(
        capsys, "diff", A5, A7, "--format", "json", "--stability", "unstable", "--fail-on", "never"
    )
    assert set(json.loads(both)["summary"]) == {"stable", "unstable"}
    assert set(json.loads(stable)["summary"]) == {"stable"}
    assert set(json.loads(unstable)["summary"]) == {"unstable"}
    assert {c["stability"] for c in json.loads(unstable)["changes"]} == {"unstable"}


# --- formats --------------------------------------------------------------------------------


def test_json_lists_every_change_with_its_fingerprint(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "diff", A3, A5, "--stability", "stable", "--format", "json")
    data = json.loads(out)
    assert data["old"] == A3 and data["new"] == A5 and data["failed"] is True
    assert data["summary"] == {"stable": {"breaking": 1, "warning": 0, "info": 1}}
    first = data["changes"][0]
    assert first["rule"] == "field-added-required" and first["fingerprint"] == MESSAGE_ID
    assert (
        first["breaks"] == ["old agent"]
        and first["layer"] == "wire"
        and first["pointer"] == "/$defs/PromptResponse"
    )


def test_markdown_has_a_summary_table_and_links_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "diff", A3, A5, "--stability", "stable", "--format", "markdown")
    assert "| stable | 1 | 0 | 1 |" in out
    assert "[`field-added-required`](../docs/rules.md#field-added-required)" in out
    assert "string \\| null" in out  # a union in a table cell is escaped


def test_github_annotations_are_one_workflow_command_per_change(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "diff", A3, A5, "--stability", "stable", "--format", "github")
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("::error file=schema.json,title=field-added-required (stable%2C wire)::")
    assert lines[1].startswith("::notice ")


def test_sarif_is_a_2_1_0_log_with_the_catalog_as_rules(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "diff", A3, A5, "--stability", "stable", "--format", "sarif")
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in CATALOG]
    result = run_["results"][0]
    assert result["ruleId"] == "field-added-required" and result["level"] == "error"
    assert rules[result["ruleIndex"]]["id"] == "field-added-required"
    assert result["partialFingerprints"] == {"acpChange/v1": MESSAGE_ID}
    assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "PromptResponse.messageId"


def test_output_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    first = run(capsys, "diff", "2.0.0-alpha.2", A3, "--format", "json", "--fail-on", "never")[1]
    second = run(capsys, "diff", "2.0.0-alpha.2", A3, "--format", "json", "--fail-on", "never")[1]
    assert first == second


# --- folders ------------------------------------------------------------------------------------


def test_a_folder_side_is_read_without_the_lock(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = folder_of(tmp_path, A5, "draft")
    code, out, _ = run(capsys, "diff", A3, draft, "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert data["new"] == "draft"
    assert MESSAGE_ID in {c["fingerprint"] for c in data["changes"]}


def test_an_edited_draft_is_diffed_against_its_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    draft = folder_of(tmp_path, A7, "draft")
    data = base_data()
    data["$defs"]["PromptRequest"]["required"].append("_meta")
    (draft / "schema.json").write_text(json.dumps(data), encoding="utf-8")
    code, out, _ = run(capsys, "diff", A7, draft, "--stability", "stable", "--format", "json")
    assert code == 1
    [change] = [c for c in json.loads(out)["changes"] if c["layer"] == "wire"]
    assert (change["rule"], change["subject"], change["breaks"]) == (
        "field-became-required",
        "PromptRequest._meta",
        ["old client"],
    )


def test_a_stable_only_folder_can_be_diffed_at_the_stable_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    draft = folder_of(tmp_path, A7, "draft")
    (draft / "schema.unstable.json").unlink()
    (draft / "meta.unstable.json").unlink()
    assert run(capsys, "diff", A5, draft, "--stability", "stable")[0] == 0
    code, _, err = run(capsys, "diff", A5, draft)
    assert code == 2
    assert "schema.unstable.json is missing, and --stability unstable needs it" in err


# --- bad input: one line, exit 2 -------------------------------------------------------------------


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("acp-codegen: error: ")
    return lines[0]


def test_a_folder_without_a_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run(capsys, "diff", A5, empty)
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert str(empty) in line and "no schema here" in line


def test_a_schema_without_its_meta(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = folder_of(tmp_path, A7)
    (draft / "meta.json").unlink()
    code, _, err = run(capsys, "diff", A5, draft)
    assert code == 2
    assert "meta.json is missing next to schema.json" in one_error_line(err)


def test_two_protocol_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = folder_of(tmp_path, A7)
    for name in ("meta.json", "meta.unstable.json"):
        meta = json.loads((draft / name).read_text())
        meta["version"] = 3
        (draft / name).write_text(json.dumps(meta))
    code, _, err = run(capsys, "diff", A7, draft)
    assert code == 2
    line = one_error_line(err)
    assert "cannot compare protocol version 2" in line and "protocol version 3" in line
    assert f"{draft / 'meta.json'}#/version: " in line


@pytest.mark.parametrize(
    ("old", "new", "versions"),
    [
        ("1.21.0", "2.0.0-alpha.1", (1, 2)),
        (A7, "1.20.0", (2, 1)),
    ],
)
@pytest.mark.parametrize("stability", ["stable", "unstable", "both"])
def test_a_v1_release_and_a_v2_release_do_not_compare(
    capsys: pytest.CaptureFixture[str], old: str, new: str, versions: tuple[int, int], stability: str
) -> None:
    """Protocol v1 and v2 are different protocols: bad input, exit 2, one line naming both."""
    code, out, err = run(capsys, "diff", old, new, "--stability", stability)
    assert (code, out) == (2, "")
    line = one_error_line(err)
    meta = "meta.unstable.json" if stability == "unstable" else "meta.json"
    assert line.startswith(f"acp-codegen: error: {release_files(new).folder / meta}#/version: ")
    assert line.endswith(
        f"cannot compare protocol version {versions[0]} ({old}) with protocol version {versions[1]} ({new})"
    )


def test_a_schema_that_does_not_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = folder_of(tmp_path, A7)
    (draft / "schema.json").write_text('{"$defs": {"A": {"$ref": "#/$defs/Nowhere"}}, "anyOf": []}')
    code, _, err = run(capsys, "diff", A5, draft, "--stability", "stable")
    assert code == 2
    line = one_error_line(err)
    assert "schema.json#/$defs/A/$ref" in line and "points to nowhere" in line


def test_a_schema_that_is_not_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = folder_of(tmp_path, A7)
    (draft / "schema.json").write_text("{not json")
    code, _, err = run(capsys, "diff", A5, draft)
    assert code == 2
    assert "not valid JSON" in one_error_line(err)


def test_an_unknown_release(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "diff", A5, "9.9.9")
    assert code == 2
    assert "unknown release '9.9.9'" in one_error_line(err)


def test_a_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "diff", A5, tmp_path / "nope")
    assert code == 2
    assert "not a folder" in one_error_line(err)


def test_a_bad_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["diff", A3, A5, "--format", "yaml"])
    assert exc.value.code == 2


# --- waivers ----------------------------------------------------------------------------------------


def test_a_waiver_silences_its_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = waiver_file(
        tmp_path,
        f'[[waiver]]\nfingerprint = "{MESSAGE_ID}"\nreason = "shipped together"\nexpires = 2999-01-01\n',
    )
    code, out, _ = run(capsys, "diff", A3, A5, "--waivers", path, "--format", "json")
    assert code == 0
    waived = [c for c in json.loads(out)["changes"] if c["fingerprint"] == MESSAGE_ID]
    assert len(waived) == 2  # the same change in the stable and the unstable schema
    assert all(c["waiver"]["reason"] == "shipped together" for c in waived)


def test_an_expired_waiver_fails_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = waiver_file(
        tmp_path, f'[[waiver]]\nfingerprint = "{MESSAGE_ID}"\nreason = "old"\nexpires = 2000-01-01\n'
    )
    code, out, _ = run(capsys, "diff", A3, A5, "--waivers", path, "--fail-on", "never")
    assert code == 1
    assert f"expired waiver {MESSAGE_ID} (expired 2000-01-01): old" in out


def test_an_unmatched_waiver_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = waiver_file(
        tmp_path, '[[waiver]]\nfingerprint = "0000000000000000"\nreason = "stale"\nexpires = 2999-01-01\n'
    )
    code, out, _ = run(capsys, "diff", "2.0.0-alpha.1", "2.0.0-alpha.2", "--waivers", path)
    assert code == 0
    assert "unused waiver 0000000000000000: it matches no change (stale)" in out
    _, gh, _ = run(capsys, "diff", "2.0.0-alpha.1", "2.0.0-alpha.2", "--waivers", path, "--format", "github")
    assert "::warning title=unused waiver::waiver 0000000000000000 matches no change" in gh


def test_a_malformed_waiver_file_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = waiver_file(tmp_path, '[[waiver]]\nfingerprint = "abc"\nreason = unquoted text\n')
    code, _, err = run(capsys, "diff", A3, A5, "--waivers", path)
    assert code == 2
    line = one_error_line(err)
    assert str(path) in line and "not valid TOML" in line and "line 3" in line


def test_a_waiver_file_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "waivers.toml"
    path.write_bytes(b'[[waiver]]\nreason = "caf\xe9"\n')
    code, _, err = run(capsys, "diff", A3, A5, "--waivers", path)
    assert code == 2
    line = one_error_line(err)
    assert str(path) in line and "not UTF-8 text (byte 24)" in line


def test_a_missing_waiver_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nope.toml"
    code, _, err = run(capsys, "diff", A3, A5, "--waivers", path)
    assert code == 2
    line = one_error_line(err)
    assert str(path) in line and "file not found" in line


@pytest.mark.parametrize(
    ("text", "message", "pointer"),
    [
        (
            '[[waiver]]\nreason = "r"\nexpires = 2030-01-01\n',
            "'fingerprint' must be",
            "/waiver/0/fingerprint",
        ),
        (
            '[[waiver]]\nfingerprint = "f"\nexpires = 2030-01-01\n',
            "'reason' must say why",
            "/waiver/0/reason",
        ),
        (
            '[[waiver]]\nfingerprint = "f"\nreason = "r"\nexpires = "soon"\n',
            "'expires' must be a TOML date",
            "/waiver/0/expires",
        ),
        (
            '[[waiver]]\nfingerprint = "f"\nreason = "r"\nexpires = 2030-01-01\nowner = "me"\n',
            "unknown key 'owner'",
            "/waiver/0/owner",
        ),
        ('waiver = "f"\n', "must be an array of tables", "/waiver"),
    ],
)
def test_a_waiver_missing_a_part_is_refused(tmp_path: Path, text: str, message: str, pointer: str) -> None:
    with pytest.raises(CodegenError) as exc:
        read_waivers(waiver_file(tmp_path, text))
    assert message in exc.value.message
    assert exc.value.pointer == pointer


def test_a_waiver_expiring_today_still_holds(tmp_path: Path) -> None:
    found = diff_surfaces(surface_of(A3, False), surface_of(A5, False))
    path = waiver_file(
        tmp_path, f'[[waiver]]\nfingerprint = "{MESSAGE_ID}"\nreason = "r"\nexpires = 2030-06-01\n'
    )
    waivers = read_waivers(path)
    on_the_day = apply_waivers(DiffResult(A3, A5, (found,)), waivers, datetime.date(2030, 6, 1))
    day_after = apply_waivers(DiffResult(A3, A5, (found,)), waivers, datetime.date(2030, 6, 2))
    assert on_the_day.exit_code("breaking") == 0 and not on_the_day.expired
    assert day_after.exit_code("breaking") == 1 and day_after.expired == waivers


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
    releases = list(source.lock.releases)
    v1, v2 = ([r for r in releases if surface_of(r, False).protocol_version == v] for v in (1, 2))
    assert len(files) == 2 * (len(v1) - 1 + len(v2) - 1)  # consecutive releases of one protocol version
    assert {"1.20.0..1.21.0.md", "1.20.0..1.21.0.json", f"{A5}..{A7}.md"} <= set(files)
    assert not [name for name in files if name.startswith(f"{v1[-1]}..")]  # v1 and v2 do not compare
    assert stale_reports(ROOT / "reports", files) == [], "reports/ is stale: run `make reports` and commit it"


def test_reports_check_finds_a_stale_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "reports"
    shutil.copytree(ROOT / "reports", out)
    assert run(capsys, "reports", "--out", out, "--check")[0] == 0
    (out / f"{A3}..{A5}.md").write_text("edited by hand\n")
    (out / "1..2.json").write_text("{}")
    code, printed, _ = run(capsys, "reports", "--out", out, "--check")
    assert code == 1
    assert f"differs: {out / f'{A3}..{A5}.md'}" in printed and f"left over: {out / '1..2.json'}" in printed
    assert run(capsys, "reports", "--out", out)[0] == 0
    assert not (out / "1..2.json").exists()
    assert run(capsys, "reports", "--out", out, "--check")[0] == 0
