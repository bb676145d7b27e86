"""Every verdict carries its proof (issue 32): a witness, a set proof, or it is unproven, listed apart and
counted in every format, and the version step says when it rests on unproven rows."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import pytest

from codegen.diff import Change, DiffResult, Evidence, NoEvidence
from codegen.diff.proof import Relation, SetProof
from codegen.diff.reading import LenientRead, Reading
from codegen.diff.report import (
    render_github,
    render_html,
    render_json,
    render_markdown,
    render_sarif,
    render_text,
    step_words,
)
from codegen.diff.semver import step
from codegen.diff.standing import Standing, standing
from codegen.diff.summary import proof_summary
from codegen.schema.ir import Scalar
from tests.diff.pairs import diff_pair
from tests.support.diffkit import A3, A5

WITNESS = Evidence(
    {"messageId": 7, "stopReason": "end_turn"},
    "PromptResponse",
    f"{A5} agent",
    f"{A3} client",
    "messageId: Input should be a valid string",
    True,
    carrier="result of request session/prompt",
)
PROOF = SetProof(Relation.WIDER, Scalar("integer"), Scalar("number"), only_new=1.5)
SEARCHED = NoEvidence(25, "nothing refused")


def _with(evidence: Evidence | NoEvidence | None, proof: SetProof | None = None) -> DiffResult:
    """A3 → A5 (stable) with its one breaking wire row given this evidence and set proof."""
    result = diff_pair(A3, A5)
    surfaces = []
    for surface in result.surfaces:
        changes = tuple(
            dataclasses.replace(c, evidence=evidence, proof=proof) if _wire_breaking(c) else c
            for c in surface.changes
        )
        surfaces.append(dataclasses.replace(surface, changes=changes))
    return dataclasses.replace(result, surfaces=tuple(surfaces))


def _wire_breaking(change: Change) -> bool:
    return change.layer == "wire" and change.severity == "breaking"


def _row(result: DiffResult) -> Change:
    (found,) = [c for c in result.changes if _wire_breaking(c)]
    return found


FORMATS: dict[str, Callable[[DiffResult], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
    "html": render_html,
}


def test_the_pair_has_one_breaking_wire_row() -> None:
    """The rows these tests give a proof: if A3 → A5 changed, the tests below would test nothing."""
    assert _row(diff_pair(A3, A5)).rule.id == "field-added-required"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_row_with_a_witness_shows_the_whole_message_and_its_carrier(fmt: str) -> None:
    result = _with(WITNESS)
    assert standing(_row(result)) is Standing.WITNESS
    out = FORMATS[fmt](result).replace("&#34;", '"').replace("%2C", ",")
    assert "result of request session/prompt" in out
    assert '"messageId": 7' in out or '\\"messageId\\": 7' in out
    assert "unproven verdict" not in out


READ = dataclasses.replace(
    WITNESS,
    message={"commands": [{"name": "plan"}]},
    error="commands.0.kind: Field required",
    read=LenientRead(Reading.DROPPED, ("commands", 0)),
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_witness_read_leniently_says_what_the_receiver_loses(fmt: str) -> None:
    """Accepted by both sides, the item dropped by the receiver's lenient list: a witness, which every
    format shows as what the receiver accepts and loses, never as a refusal."""
    result = _with(READ)
    assert standing(_row(result)) is Standing.WITNESS
    out = FORMATS[fmt](result).replace("&#34;", '"').replace("%2C", ",")
    if fmt in ("json", "sarif"):
        shown = json.loads(out)
        found = [e for e in _evidence_in(shown) if e.get("read") == {"how": "dropped", "at": ["commands", 0]}]
        assert found and found[0]["error"] == "commands.0.kind: Field required"
    else:
        assert f"a {A3} client accepts what a {A5} agent sends but drops commands.0" in out
    assert "refuses what" not in out


def _evidence_in(data: object) -> list[dict[str, object]]:
    """Every ``evidence`` object anywhere in a JSON report."""
    found: list[dict[str, object]] = []
    if isinstance(data, dict):
        if isinstance(data.get("evidence"), dict):
            found.append(data["evidence"])
        for value in data.values():
            found += _evidence_in(value)
    elif isinstance(data, list):
        for value in data:
            found += _evidence_in(value)
    return found


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_row_with_a_set_proof_shows_the_proof_line(fmt: str) -> None:
    result = _with(SEARCHED, PROOF)
    assert standing(_row(result)) is Standing.SET_PROOF
    out = FORMATS[fmt](result)
    assert "proof: integer → number: every old value is still accepted; 1.5 is new" in out


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unproven_row_is_listed_apart_and_counted(fmt: str) -> None:
    result = _with(SEARCHED)
    row = _row(result)
    assert standing(row) is Standing.UNPROVEN
    out = FORMATS[fmt](result)
    assert "1 unproven verdict: check by hand" in out
    # listed apart: its fingerprint appears once more than the rows list it
    proven = FORMATS[fmt](_with(WITNESS))
    assert out.count(row.fingerprint) > proven.count(row.fingerprint)


def test_json_lists_unproven_rows_and_each_rows_standing() -> None:
    data = json.loads(render_json(_with(SEARCHED)))
    # the pair's one warning row (union-tag-claimed, unstable) carries the differ's own set proof
    assert data["proofs"] == {"witness": 0, "set proof": 1, "unproven": 1, "not searched": 0}
    assert [u["rule"] for u in data["unproven"]] == ["field-added-required"]
    assert data["unproven"][0]["why"]["examples"] == 25
    (row,) = [c for c in data["changes"] if c["fingerprint"] == data["unproven"][0]["fingerprint"]]
    assert row["standing"] == "unproven"
    proven = json.loads(render_json(_with(SEARCHED, PROOF)))
    (row,) = [c for c in proven["changes"] if c["fingerprint"] == _row(_with(SEARCHED, PROOF)).fingerprint]
    assert row["proof"]["relation"] == "wider" and row["proof"]["only_new"] == 1.5
    assert proven["unproven"] == []


def test_the_version_step_says_it_rests_on_unproven_rows() -> None:
    unproven = step(_with(SEARCHED))
    assert unproven.wire.rests_on_unproven and unproven.wire.unproven == (_row(_with(SEARCHED)).fingerprint,)
    assert step_words(unproven).startswith(
        "wire: major (1 breaking change, none proven: the step rests on unproven rows)"
    )
    assert json.loads(render_json(_with(SEARCHED)))["semver"]["wire"]["rests_on_unproven"] is True
    for proven in (_with(WITNESS), _with(SEARCHED, PROOF)):
        assert not step(proven).wire.rests_on_unproven
        assert step_words(step(proven)).startswith("wire: major (1 breaking change);")


def test_without_a_search_nothing_is_called_unproven() -> None:
    """--no-evidence: no witness was searched for, so the rows are not checked, never unproven."""
    result = _with(None)  # the breaking row without the set proof the differ gives it
    assert standing(_row(result)) is Standing.NOT_SEARCHED
    assert proof_summary(result) == (
        "1 proven (0 by witness, 1 by set proof); 1 not checked (no witness searched for: --no-evidence)"
    )
    assert not step(result).wire.rests_on_unproven
    assert "unproven" not in render_markdown(result)


def test_python_and_info_rows_need_no_proof() -> None:
    result = diff_pair(A3, A5)
    others = [c for c in result.changes if c.layer == "python" or c.severity == "info"]
    assert others and all(standing(c) is None for c in others)
    assert any(c.proof for c in others)  # an info row's set proof gives it no standing either
