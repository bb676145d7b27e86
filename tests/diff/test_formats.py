"""What CI and reviewers read: GitHub annotations and SARIF at paths from the repository's root, a SARIF log
valid under the SARIF 2.1.0 schema, a markdown report that fits a pull-request comment, an HTML page that
is one self-contained file.

``sarif-2.1.0.json`` beside this file is the OASIS SARIF 2.1.0 JSON schema (errata 01), kept as data
(see ``sarif-2.1.0.NOTICE``).
"""

from __future__ import annotations

import dataclasses
import datetime
import html
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from codegen.diff import DiffResult, Evidence, NoEvidence, Waiver
from codegen.diff.locate import Repository, schema_anchors
from codegen.diff.report import (
    MARKDOWN_LIMIT,
    markdown_cell,
    render,
    render_html,
    render_markdown,
    render_sarif,
)
from codegen.diff.summary import proof_line
from tests.diff.pairs import diff_pair
from tests.support.diffkit import A3, A5, folder_of, run
from tests.support.releases import ROOT

SARIF_SCHEMA = Path(__file__).with_name("sarif-2.1.0.json")
A7, A8 = "2.0.0-alpha.7", "2.0.0-alpha.8"
LARGEST = ("1.21.0", "v1-sdk-2.3.0")  # the pair with the most changes in reports/


def _annotated_files(out: str) -> set[str]:
    return set(re.findall(r"file=([^,:]+)", out))


def _sarif_uris(log: dict[str, Any]) -> set[str]:
    return {
        location["physicalLocation"]["artifactLocation"]["uri"]
        for result in log["runs"][0]["results"]
        for location in result["locations"]
        if "physicalLocation" in location
    }


# --- github and sarif: paths -------------------------------------------------------------------------


def test_annotations_name_schema_files_from_the_repository_root_wherever_the_command_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub resolves ``file=`` from the repository's root: run from a subfolder, the paths are the same."""
    monkeypatch.chdir(ROOT / "docs")
    _, out, _ = run(capsys, "diff", "--no-evidence", A3, A5, "--format", "github")
    heading, *annotations = out.splitlines()
    assert "file=" not in heading and annotations and all("file=" in line for line in annotations)
    assert _annotated_files(out) == {f"schemas/v2/{A5}/schema.json", f"schemas/v2/{A5}/schema.unstable.json"}
    log = json.loads(run(capsys, "diff", "--no-evidence", A3, A5, "--format", "sarif")[1])
    assert _sarif_uris(log) == {f"schemas/v2/{A5}/schema.json", f"schemas/v2/{A5}/schema.unstable.json"}


def test_path_prefix_rebases_them(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run in a subfolder of a repository, annotations must name files from the repository's root."""
    monkeypatch.chdir(ROOT)
    common = ("diff", "--no-evidence", A3, A5, "--stability", "stable", "--path-prefix", "tools/acp")
    _, out, _ = run(capsys, *common, "--format", "github")
    assert _annotated_files(out) == {f"tools/acp/schemas/v2/{A5}/schema.json"}
    log = json.loads(run(capsys, *common, "--format", "sarif")[1])
    assert _sarif_uris(log) == {f"tools/acp/schemas/v2/{A5}/schema.json"}


def test_a_schema_outside_the_repository_is_named_by_no_file_and_the_run_says_how_to_attach_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Run elsewhere, the bundled store is outside the repository (as site-packages is for an installed
    tool): no `file=`, no physical location in SARIF, the change is still there by name, and one notice
    says which files are outside and how to diff a store inside the repository instead."""
    monkeypatch.chdir(tmp_path)
    _, out, err = run(capsys, "diff", "--no-evidence", A3, A5, "--format", "github")
    assert "file=" not in out and "PromptResponse.messageId" in out
    assert str(ROOT) not in out
    (notice,) = err.splitlines()
    count = len(out.splitlines()) - 1  # every annotation but the heading
    assert notice.startswith(f"notice: {count} of {count} annotations attach to no file")
    assert f"--from {ROOT / 'schemas'}`) and diff with --schemas DIR" in notice
    _, out, _ = run(capsys, "diff", "--no-evidence", A3, A5, "--format", "sarif")
    log = json.loads(out)
    assert _sarif_uris(log) == set() and str(ROOT) not in out
    first = log["runs"][0]["results"][0]["locations"][0]
    assert first == {
        "logicalLocations": [{"fullyQualifiedName": "PromptResponse.messageId", "kind": "member"}]
    }


def test_a_schema_folder_under_the_current_folder_is_named_relative_to_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    old, new = folder_of(tmp_path, A3, "old"), folder_of(tmp_path, A5, "new")
    monkeypatch.chdir(tmp_path)
    _, out, _ = run(capsys, "diff", "--no-evidence", old, new, "--stability", "stable", "--format", "github")
    assert _annotated_files(out) == {"new/schema.json"}


# --- sarif: the schema ---------------------------------------------------------------------------------


def _with_everything(result: DiffResult) -> DiffResult:
    """``result`` with evidence found, evidence not found and a waiver on its first changes."""
    surface = result.surfaces[0]
    first, second, third, *rest = surface.changes
    found = Evidence({"messageId": 1}, "PromptResponse", f"{A5} agent", f"{A3} client", "error", True)
    changes = (
        dataclasses.replace(first, evidence=found),
        dataclasses.replace(second, evidence=NoEvidence(200, "nothing refused")),
        dataclasses.replace(third, waiver=Waiver("0" * 16, "accepted", datetime.date(2099, 1, 1))),
        *rest,
    )
    return dataclasses.replace(result, surfaces=(dataclasses.replace(surface, changes=changes),))


@pytest.mark.parametrize("pair", [(A7, A8), LARGEST], ids="..".join)
def test_sarif_validates_against_the_sarif_2_1_0_schema(pair: tuple[str, str]) -> None:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    located = schema_anchors(Repository(ROOT, "x"))
    log = json.loads(render_sarif(_with_everything(diff_pair(*pair)), locate=located))
    jsonschema.Draft4Validator(schema).validate(log)
    assert log["runs"][0]["results"][0]["properties"]["evidence"]["found"] is True
    assert any("suppressions" in r for r in log["runs"][0]["results"])
    for uri in _sarif_uris(log):
        assert not uri.startswith("/") and "://" not in uri, uri


def test_the_sarif_schema_refuses_what_it_should() -> None:
    """The check can fail: a log without its version is refused."""
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    log = json.loads(render_sarif(diff_pair(A3, A5)))
    del log["version"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(log)


def test_sarif_names_the_version_step() -> None:
    log = json.loads(render_sarif(diff_pair(A7, A8)))
    steps = log["runs"][0]["properties"]["semver"]
    assert (steps["wire"]["step"], steps["python"]["step"]) == ("minor", "major")


# --- markdown: a pull-request comment ---------------------------------------------------------------


def test_the_largest_report_fits_a_pull_request_comment() -> None:
    sizes = {path.name: len(path.read_text(encoding="utf-8")) for path in (ROOT / "reports").glob("*..*.md")}
    largest = max(sizes, key=sizes.__getitem__)
    assert largest == "..".join(LARGEST) + ".md"
    assert sizes[largest] < MARKDOWN_LIMIT
    assert "left out to fit" not in (ROOT / "reports" / largest).read_text(encoding="utf-8")


def test_a_report_too_long_for_a_comment_leaves_out_info_rows_first_and_says_so() -> None:
    """Evidence on every row of the largest pair makes it too long: info rows go, breaking ones stay."""
    result = diff_pair(*LARGEST)
    found = Evidence(
        {"sessionId": "s", "x": [1, 2, 3]}, "SomeRequest", "1.21.0 client", "v1 agent", "e", True
    )
    surfaces = tuple(
        dataclasses.replace(s, changes=tuple(dataclasses.replace(c, evidence=found) for c in s.changes))
        for s in result.surfaces
    )
    full = render_markdown(dataclasses.replace(result, surfaces=surfaces), limit=10**9)
    assert len(full) >= MARKDOWN_LIMIT  # the case is real
    fitted = render_markdown(dataclasses.replace(result, surfaces=surfaces))
    assert len(fitted) < MARKDOWN_LIMIT
    info = fitted[fitted.index("<summary><b>Info (") :]
    assert "more rows left out to fit a pull-request comment" in info
    assert f"comment: `acp-codegen diff {' '.join(LARGEST)} --format html` lists every change." in info
    before_info = fitted[: fitted.index("<summary><b>Info (")]
    assert "left out" not in before_info
    for change in result.changes:
        if change.severity == "breaking":
            assert change.fingerprint in fitted


# --- html: one self-contained page -------------------------------------------------------------------


def test_the_page_loads_nothing_from_elsewhere() -> None:
    page = render_html(diff_pair(A7, A8))
    assert "<style>" in page and "<script>" in page
    assert not re.search(r"<(script|link|img|iframe)[^>]*(src|href)=", page)
    assert "http://" not in page and "https://" not in page and "@import" not in page


def test_the_page_has_every_change_with_a_link_to_its_json_pointer() -> None:
    result = diff_pair(A7, A8)
    page = render_html(result, link_base="../")
    for change in result.changes:
        assert f'id="change-{change.fingerprint}"' in page
    assert f'href="../schemas/v2/{A8}/schema.json#/$defs/IdleStateUpdate"' in page
    assert page.count('<tbody class="change"') == len(result.changes)


def test_a_page_of_an_installed_tool_links_only_where_the_link_survives_sharing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Run outside the checkout, the schema files are absolute paths (site-packages, for an installed
    tool): no ``file:`` address; a release of an upstream git tag links to its file on GitHub at the
    pointer's line, a release of an npm package to nothing."""
    monkeypatch.chdir(tmp_path)
    _, page, _ = run(capsys, "diff", "--no-evidence", A7, A8, "--stability", "stable", "--format", "html")
    assert "file:" not in page and str(ROOT) not in page
    links = re.findall(r'<a class="pointer" href="([^"]+)"><code>([^<]+)</code>', page)
    assert links and len(links) == page.count('<tbody class="change"')
    github = "https://github.com/agentclientprotocol/agent-client-protocol/blob/"
    for link, pointer in links:
        found = re.fullmatch(re.escape(github) + r"schema-v([^/]+)/schema/v2/schema\.json#L(\d+)", link)
        assert found is not None and found[1] in (A7, A8), link
        schema = (ROOT / "schemas" / "v2" / found[1] / "schema.json").read_text().splitlines()
        key = pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
        starts = ("{", "[", '"') if key.isdigit() else (f'"{key}"',)  # an item, or a member by its key
        assert schema[int(found[2]) - 1].strip().startswith(starts), (link, pointer)
    _, npm, _ = run(capsys, "diff", "--no-evidence", "v2-sdk-2.2.0", "v2-sdk-2.3.0", "--format", "html")
    assert 'class="pointer"' not in npm and "file:" not in npm


def test_the_page_shows_each_proof_as_the_sentence_the_markdown_gives() -> None:
    result = _with_everything(diff_pair(A3, A5))
    page, markdown = render_html(result), render_markdown(result)
    shown = [proof_line(change) for change in result.changes if proof_line(change)]
    assert shown and shown[0].startswith("witness: ")
    for sentence in shown:
        assert html.escape(sentence, quote=False) in page.replace("&#34;", '"')
        assert markdown_cell(sentence) in markdown
    assert "<pre>" not in page


def test_the_page_escapes_what_it_shows() -> None:
    result = diff_pair(A3, A5)
    surface = result.surfaces[0]
    hostile = Evidence({"text": "</pre><script>alert(1)</script>"}, "T", "a", "b", "<b>bold</b>", True)
    first = dataclasses.replace(surface.changes[0], evidence=hostile)
    changed = dataclasses.replace(surface, changes=(first, *surface.changes[1:]))
    page = render_html(dataclasses.replace(result, surfaces=(changed, *result.surfaces[1:])))
    assert "<script>alert(1)" not in page and "&lt;/pre&gt;&lt;script&gt;alert(1)" in page
    assert "<b>bold</b>" not in page


def test_html_is_a_format_of_diff(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", "--no-evidence", A3, A5, "--format", "html")
    assert code == 1 and out.startswith("<!DOCTYPE html>") and out == render(diff_pair(A3, A5), "html")


def test_reports_writes_a_page_beside_each_markdown_report() -> None:
    folder = ROOT / "reports"
    pages = {p.stem for p in folder.glob("*..*.html")}
    assert pages == {p.stem for p in folder.glob("*..*.md")} and pages
