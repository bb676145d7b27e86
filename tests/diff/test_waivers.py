"""Waivers (``codegen.diff.waivers``): the file, matching changes, expiry, and their effect on a run."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from codegen.diff import DiffResult, Waiver, apply_waivers, diff_surfaces, read_waivers
from codegen.errors import CodegenError
from tests.support.diffkit import A3, A5, MESSAGE_ID, one_error_line, only, run, waiver_file
from tests.support.releases import surface_of

# --- on the command line -----------------------------------------------------------------------


def python_id() -> str:
    """The fingerprint of alpha.3 -> alpha.5's other breaking change: PromptResponse needs message_id."""
    found = diff_surfaces(surface_of(A3, False), surface_of(A5, False)).changes
    return only(found, "python-class-argument-required").fingerprint


def both_waived(tmp_path: Path, expires: str) -> Path:
    """A waiver file accepting both breaking changes of alpha.3 -> alpha.5 until ``expires``."""
    text = "".join(
        f'[[waiver]]\nfingerprint = "{fingerprint}"\nreason = "shipped together"\nexpires = {expires}\n'
        for fingerprint in (MESSAGE_ID, python_id())
    )
    return waiver_file(tmp_path, text)


def test_a_waiver_silences_its_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = both_waived(tmp_path, "2999-01-01")
    code, out, _ = run(capsys, "diff", "--no-evidence", A3, A5, "--waivers", path, "--format", "json")
    assert code == 0
    [waived] = [c for c in json.loads(out)["changes"] if c["fingerprint"] == MESSAGE_ID]
    assert waived["stabilities"] == ["stable", "unstable"]  # the same change in both schemas, once
    assert waived["waiver"]["reason"] == "shipped together"


def test_an_expired_waiver_fails_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = waiver_file(
        tmp_path, f'[[waiver]]\nfingerprint = "{MESSAGE_ID}"\nreason = "old"\nexpires = 2000-01-01\n'
    )
    code, out, _ = run(capsys, "diff", "--no-evidence", A3, A5, "--waivers", path, "--fail-on", "never")
    assert code == 1
    assert f"expired waiver {MESSAGE_ID} (expired 2000-01-01): old" in out


def test_an_unmatched_waiver_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = waiver_file(
        tmp_path, '[[waiver]]\nfingerprint = "0000000000000000"\nreason = "stale"\nexpires = 2999-01-01\n'
    )
    code, out, _ = run(capsys, "diff", "--no-evidence", "2.0.0-alpha.1", "2.0.0-alpha.2", "--waivers", path)
    assert code == 0
    assert "unused waiver 0000000000000000: it matches no change (stale)" in out
    _, gh, _ = run(
        capsys,
        "diff",
        "--no-evidence",
        "2.0.0-alpha.1",
        "2.0.0-alpha.2",
        "--waivers",
        path,
        "--format",
        "github",
    )
    assert "::warning title=unused waiver::waiver 0000000000000000 matches no change" in gh


def test_a_malformed_waiver_file_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = waiver_file(tmp_path, '[[waiver]]\nfingerprint = "abc"\nreason = unquoted text\n')
    code, _, err = run(capsys, "diff", "--no-evidence", A3, A5, "--waivers", path)
    assert code == 2
    line = one_error_line(err)
    assert str(path) in line and "not valid TOML" in line and "line 3" in line


def test_a_waiver_file_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "waivers.toml"
    path.write_bytes(b'[[waiver]]\nreason = "caf\xe9"\n')
    code, _, err = run(capsys, "diff", "--no-evidence", A3, A5, "--waivers", path)
    assert code == 2
    line = one_error_line(err)
    assert str(path) in line and "not UTF-8 text (byte 24)" in line


def test_a_missing_waiver_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nope.toml"
    code, _, err = run(capsys, "diff", "--no-evidence", A3, A5, "--waivers", path)
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
    waivers = read_waivers(both_waived(tmp_path, "2030-06-01"))
    on_the_day = apply_waivers(DiffResult(A3, A5, (found,)), waivers, datetime.date(2030, 6, 1))
    day_after = apply_waivers(DiffResult(A3, A5, (found,)), waivers, datetime.date(2030, 6, 2))
    assert on_the_day.exit_code("breaking") == 0 and not on_the_day.expired
    assert day_after.exit_code("breaking") == 1 and day_after.expired == waivers


# --- apply_waivers and read_waivers on their own ---------------------------------------------------

TODAY = datetime.date(2030, 6, 1)


def hand_made_result() -> DiffResult:
    """alpha.3 -> alpha.5, stable: a breaking field-added-required, the breaking Python argument it
    makes required in ``PromptResponse``, and an info field-added-optional."""
    return DiffResult(A3, A5, (diff_surfaces(surface_of(A3, False), surface_of(A5, False)),))


def test_a_waiver_marks_the_change_of_its_fingerprint_and_no_other() -> None:
    waiver = Waiver(MESSAGE_ID, "shipped together", TODAY)
    result = apply_waivers(hand_made_result(), [waiver], TODAY)
    assert [(c.fingerprint == MESSAGE_ID, c.waiver) for c in result.changes] == [
        (True, waiver),
        (False, None),
        (False, None),
    ]
    assert result.expired == () and result.unmatched == ()
    assert [c.rule.id for c in result.changes] == [c.rule.id for c in hand_made_result().changes]


def test_an_expired_waiver_waives_nothing_and_is_listed() -> None:
    waiver = Waiver(MESSAGE_ID, "too late", TODAY - datetime.timedelta(days=1))
    result = apply_waivers(hand_made_result(), [waiver], TODAY)
    assert all(c.waiver is None for c in result.changes)
    assert result.expired == (waiver,) and result.unmatched == ()
    assert result.exit_code("never") == 1


def test_a_waiver_that_matches_nothing_is_unmatched() -> None:
    waiver = Waiver("0000000000000000", "stale", TODAY)
    result = apply_waivers(hand_made_result(), [waiver], TODAY)
    assert result.unmatched == (waiver,) and result.expired == ()
    assert result.changes == hand_made_result().changes


def test_a_waiver_file_is_read_with_its_text_trimmed(tmp_path: Path) -> None:
    path = waiver_file(
        tmp_path, '[[waiver]]\nfingerprint = " abc "\nreason = " because "\nexpires = 2030-01-01\n'
    )
    assert read_waivers(path) == (Waiver("abc", "because", datetime.date(2030, 1, 1)),)


def test_an_empty_waiver_file_holds_no_waivers(tmp_path: Path) -> None:
    assert read_waivers(waiver_file(tmp_path, "")) == ()


# --- rewording keeps waivers -----------------------------------------------------------------------


def test_a_reworded_message_keeps_its_waiver(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fingerprint hashes the rule and the path: new words for every message change no waiver."""
    from codegen.diff import model

    before = {c.rule.id: (c.fingerprint, c.message) for c in hand_made_result().changes}
    monkeypatch.setattr(model, "path_words", lambda path: "reworded " + "/".join(p.kind for p in path))
    monkeypatch.setattr(model, "detail", lambda rule_id, path, old, new: f"now said otherwise ({rule_id})")
    waiver = Waiver(MESSAGE_ID, "shipped together", TODAY)
    result = apply_waivers(hand_made_result(), [waiver], TODAY)
    waived = only(result.changes, "field-added-required")
    assert waived.message == "reworded type/field: now said otherwise (field-added-required)"
    assert waived.message != before["field-added-required"][1]
    assert waived.waiver == waiver and result.unmatched == ()
    assert {c.rule.id: c.fingerprint for c in result.changes} == {r: f for r, (f, _) in before.items()}
