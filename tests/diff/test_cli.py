"""``acp-codegen diff``: options, thresholds, exit codes, schema folders and bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen import cli
from codegen.diff import DiffResult, diff_surfaces
from tests.support.diffkit import A3, A5, A7, MESSAGE_ID, base_data, folder_of, one_error_line, run
from tests.support.releases import release_files, surface_of

# --- exit codes and thresholds ---------------------------------------------------------


def test_breaking_changes_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", "--no-evidence", A3, A5)
    assert code == 1
    assert "field-added-required" in out and "PromptResponse.messageId" in out and "breaks old agent" in out


def test_info_only_changes_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", "--no-evidence", A5, A7, "--stability", "stable")
    assert code == 0
    assert out.count("field-added-optional") == 2


def test_fail_on_never_always_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "diff", "--no-evidence", A3, A5, "--fail-on", "never")[0] == 0


def test_fail_on_warning_counts_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    """alpha.2 -> alpha.3 unstable: one warning (env_var auth removed) besides python breaks."""
    assert (
        run(
            capsys,
            "diff",
            "--no-evidence",
            "2.0.0-alpha.2",
            A3,
            "--stability",
            "stable",
            "--fail-on",
            "warning",
        )[0]
        == 0
    )
    assert (
        run(capsys, "diff", "--no-evidence", "2.0.0-alpha.1", "2.0.0-alpha.2", "--fail-on", "warning")[0] == 0
    )
    found = diff_surfaces(surface_of("2.0.0-alpha.2", True), surface_of(A3, True))
    result = DiffResult("a", "b", (found,))
    warnings_only = [c for c in result.failing("warning") if c.severity == "warning"]
    assert [c.subject for c in warnings_only] == [
        "AuthMethod['env_var']",
        "SessionUpdate[other]['compaction_summary_chunk']",
        "SessionUpdate[other]['compaction_update']",
    ]


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
        capsys,
        "diff",
        "--no-evidence",
        A7,
        draft,
        "--stability",
        "stable",
        "--format",
        "json",
        "--fail-on",
        "never",
    )
    assert list(json.loads(out)["summary"]["stable"].values()) == summary  # breaking, warning, info
    for fail_on, expected in exits.items():
        code, _, _ = run(
            capsys, "diff", "--no-evidence", A7, draft, "--stability", "stable", "--fail-on", fail_on
        )
        assert code == expected, fail_on


def test_stability_selects_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    _, both, _ = run(capsys, "diff", "--no-evidence", A5, A7, "--format", "json", "--fail-on", "never")
    _, stable, _ = run(capsys, "diff", "--no-evidence", A5, A7, "--format", "json", "--stability", "stable")
    _, unstable, _ = run(
        capsys,
        "diff",
        "--no-evidence",
        A5,
        A7,
        "--format",
        "json",
        "--stability",
        "unstable",
        "--fail-on",
        "never",
    )
    assert set(json.loads(both)["summary"]) == {"stable", "unstable", "distinct"}
    assert set(json.loads(stable)["summary"]) == {"stable"}
    assert set(json.loads(unstable)["summary"]) == {"unstable"}
    assert {tuple(c["stabilities"]) for c in json.loads(unstable)["changes"]} == {("unstable",)}
    levels = {tuple(c["stabilities"]) for c in json.loads(both)["changes"]}
    assert levels == {("stable", "unstable"), ("unstable",)}  # alpha.5 -> alpha.7: most is unstable only


# --- folders ------------------------------------------------------------------------------------


def test_a_folder_side_is_read_without_the_lock(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = folder_of(tmp_path, A5, "draft")
    code, out, _ = run(capsys, "diff", "--no-evidence", A3, draft, "--format", "json")
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
    code, out, _ = run(
        capsys, "diff", "--no-evidence", A7, draft, "--stability", "stable", "--format", "json"
    )
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
    assert run(capsys, "diff", "--no-evidence", A5, draft, "--stability", "stable")[0] == 0
    code, _, err = run(capsys, "diff", "--no-evidence", A5, draft)
    assert code == 2
    assert "schema.unstable.json is missing, and --stability unstable needs it" in err


# --- bad input: one line, exit 2 -------------------------------------------------------------------


def test_a_folder_without_a_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run(capsys, "diff", "--no-evidence", A5, empty)
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert str(empty) in line and "no schema here" in line


def test_a_schema_without_its_meta(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = folder_of(tmp_path, A7)
    (draft / "meta.json").unlink()
    code, _, err = run(capsys, "diff", "--no-evidence", A5, draft)
    assert code == 2
    assert "meta.json is missing next to schema.json" in one_error_line(err)


def test_two_protocol_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = folder_of(tmp_path, A7)
    for name in ("meta.json", "meta.unstable.json"):
        meta = json.loads((draft / name).read_text())
        meta["version"] = 3
        (draft / name).write_text(json.dumps(meta))
    code, _, err = run(capsys, "diff", "--no-evidence", A7, draft)
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
    code, out, err = run(capsys, "diff", "--no-evidence", old, new, "--stability", stability)
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
    code, _, err = run(capsys, "diff", "--no-evidence", A5, draft, "--stability", "stable")
    assert code == 2
    line = one_error_line(err)
    assert "schema.json#/$defs/A/$ref" in line and "points to nowhere" in line


def test_a_schema_that_is_not_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = folder_of(tmp_path, A7)
    (draft / "schema.json").write_text("{not json")
    code, _, err = run(capsys, "diff", "--no-evidence", A5, draft)
    assert code == 2
    assert "not valid JSON" in one_error_line(err)


def test_an_unknown_release(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "diff", "--no-evidence", A5, "9.9.9")
    assert code == 2
    assert "unknown release '9.9.9'" in one_error_line(err)


def test_a_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "diff", "--no-evidence", A5, tmp_path / "nope")
    assert code == 2
    assert "not a folder" in one_error_line(err)


def test_a_bad_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["diff", A3, A5, "--format", "yaml"])
    assert exc.value.code == 2


def test_evidence_examples_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "diff", A3, A5, "--evidence-examples", "0")
    assert (code, out) == (2, "")
    assert one_error_line(err) == "acp-codegen: error: --evidence-examples must be at least 1, not 0"
