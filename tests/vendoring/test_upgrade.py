"""``acp-codegen upgrade`` on real release pairs, end to end through the command line.

Each :class:`Case` is a fixture project (``tests/fixtures/vendor_project/``)
written against an old release, and the release to move it to.  The project
is vendored, type-checked against the old package, upgraded as a dry run and
then with ``--write``, and type-checked again against the new package.  The
expected findings and rewrites are the fixture's own comments.

Adding a release pair is one more :data:`CASES` entry and one more fixture
folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from codegen import cli
from codegen.vendoring.manifest import MANIFEST_NAME, read_manifest
from codegen.vendoring.source import ReleaseFiles
from tests.vendoring import synthetic
from tests.vendoring.project import (
    FIXTURES,
    Expected,
    Run,
    copy_app,
    expected_findings,
    expected_rewrite,
    has_rewrites,
    lock_folder,
    mypy,
    reported,
    run,
    snapshot,
)

A5, A7, A8 = "2.0.0-alpha.5", "2.0.0-alpha.7", "2.0.0-alpha.8"


@dataclass(frozen=True)
class Case:
    id: str
    fixture: str
    old: str
    new: str
    unstable: bool
    pair: Callable[[Path], tuple[ReleaseFiles, ReleaseFiles]] = synthetic.pair
    """The synthetic pair's schema folders (``synthetic.pair``, or ``synthetic.proxy_pair``)."""
    synthetic: bool = False
    """The releases are :mod:`tests.vendoring.synthetic`'s, locked in a temporary lock."""


CASES = [
    Case("alpha5-to-alpha7-unstable", "alpha5", A5, A7, unstable=True),
    Case("alpha7-to-alpha8-stable", "alpha7", A7, A8, unstable=False),
    Case("synthetic-renames", "renames", synthetic.OLD, synthetic.NEW, unstable=False, synthetic=True),
    Case(
        "synthetic-proxy",
        "proxy",
        synthetic.PROXY_OLD,
        synthetic.PROXY_NEW,
        unstable=True,
        synthetic=True,
        pair=synthetic.proxy_pair,
    ),
]


def cli_run(*argv: str | Path) -> Run:
    """Like :func:`tests.vendoring.project.run`, for fixtures wider than one test (no ``capsys`` there)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return Run(code, out.getvalue(), err.getvalue())


@dataclass
class Upgraded:
    """A fixture project taken through the whole upgrade, and what each step printed or left."""

    case: Case
    project: Path
    expected: list[Expected]
    old_mypy: int = 0
    old_mypy_output: str = ""
    before: dict[str, bytes] = field(default_factory=dict)
    dry: Run = field(default_factory=lambda: Run(0, "", ""))
    after_dry: dict[str, bytes] = field(default_factory=dict)
    wrote: Run = field(default_factory=lambda: Run(0, "", ""))


def lock_options(case: Case, folder: Path) -> list[str]:
    if not case.synthetic:
        return []
    old, new = case.pair(folder / "sides")
    lock = lock_folder(folder, {case.old: old.folder, case.new: new.folder})
    return ["--lock", str(lock), "--schemas", str(folder / "schemas")]


GROUP_BY_PARAM = "upgraded"
"""Each case is vendored, type-checked and upgraded once, by one pytest-xdist worker (tests/conftest.py)."""


@pytest.fixture(scope="module", params=CASES, ids=[c.id for c in CASES])
def upgraded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upgraded]:
    case: Case = request.param
    root = tmp_path_factory.mktemp(case.id)
    options = lock_options(case, root / "releases")
    project = root / "project"
    app = copy_app(case.fixture, project)
    state = Upgraded(case, project, expected_findings(app))
    stability = ["--unstable"] if case.unstable else []
    done = cli_run(*options, "vendor", case.old, project, *stability)
    assert done.code == 0, done.err
    checked = mypy(project, ["app"])
    state.old_mypy, state.old_mypy_output = checked.returncode, checked.stdout
    state.before = snapshot(project)
    state.dry = cli_run(*options, "upgrade", project / "acp", "--to", case.new, app)
    state.after_dry = snapshot(project)
    state.wrote = cli_run(*options, "upgrade", project / "acp", "--to", case.new, app, "--write")
    yield state


def test_the_fixture_type_checks_against_the_old_release(upgraded: Upgraded) -> None:
    assert upgraded.old_mypy == 0, upgraded.old_mypy_output


def test_the_dry_run_reports_exactly_the_marked_findings(upgraded: Upgraded) -> None:
    assert reported(upgraded.dry.out, upgraded.project) == upgraded.expected
    assert upgraded.dry.code == (1 if upgraded.expected else 0), upgraded.dry.err


def test_no_finding_links_into_this_repository(upgraded: Upgraded) -> None:
    lines = [line for line in upgraded.dry.out.splitlines() if line.startswith(str(upgraded.project))]
    assert lines
    assert not any("docs/rules.md" in line for line in lines)


def test_the_dry_run_prints_the_findings_first_and_the_api_diff_in_one_line(upgraded: Upgraded) -> None:
    """What touches the user's code comes first; the closing line's verdict agrees with the exit status."""
    case = upgraded.case
    lines = upgraded.dry.out.splitlines()
    findings = [i for i, line in enumerate(lines) if line.startswith(str(upgraded.project))]
    assert findings == list(range(len(findings)))  # the first lines
    summary = [line for line in lines if line.startswith("API ")]
    assert summary == [lines[-1]] and lines[-1].startswith(f"API {case.old} -> {case.new} (")
    assert lines[-1].endswith("; --report prints the whole API report")
    assert "fingerprint" not in upgraded.dry.out  # the full report is behind --report
    closing = upgraded.dry.err.strip().splitlines()[-1]
    assert closing.startswith("FAILED: dry run" if upgraded.dry.code else "OK: dry run"), closing
    assert (
        upgraded.wrote.err.strip()
        .splitlines()[-1]
        .startswith("FAILED: rewrote" if upgraded.wrote.code else "OK")
    )


def test_the_dry_run_changes_nothing(upgraded: Upgraded) -> None:
    assert upgraded.after_dry == upgraded.before


def test_the_dry_run_shows_each_rewrite_as_a_unified_diff(upgraded: Upgraded) -> None:
    app = upgraded.project / "app"
    for path in sorted(app.rglob("*.py")):
        original = upgraded.before[path.relative_to(upgraded.project).as_posix()].decode()
        changed = [
            new
            for old, new in zip(
                original.splitlines(), expected_rewrite_of(upgraded, path).splitlines(), strict=True
            )
            if old != new
        ]
        if not changed:
            assert f"+++ {path} " not in upgraded.dry.out
            continue
        assert f"--- {path}\n+++ {path} (for {upgraded.case.new})\n" in upgraded.dry.out
        for line in changed:
            assert f"\n+{line}\n" in upgraded.dry.out


def expected_rewrite_of(upgraded: Upgraded, path: Path) -> str:
    """The rewrite that the markers of the fixture's own copy of ``path`` ask for."""
    return expected_rewrite(FIXTURES / upgraded.case.fixture / path.relative_to(upgraded.project))


def test_write_rewrites_exactly_the_marked_lines(upgraded: Upgraded) -> None:
    """Every other line, comments and formatting included, stays byte for byte the same."""
    for path in sorted((upgraded.project / "app").rglob("*.py")):
        assert path.read_text() == expected_rewrite_of(upgraded, path), path


def test_write_reports_the_same_findings_and_swaps_the_package(
    upgraded: Upgraded, capsys: pytest.CaptureFixture[str]
) -> None:
    assert reported(upgraded.wrote.out, upgraded.project) == upgraded.expected
    assert upgraded.wrote.code == (1 if upgraded.expected else 0)
    folder, manifest = read_manifest(upgraded.project / "acp")
    assert (manifest.release, manifest.stability) == (
        upgraded.case.new,
        "unstable" if upgraded.case.unstable else "stable",
    )
    assert sorted(p.name for p in upgraded.project.iterdir() if p.name.startswith((".acp", "acp"))) == ["acp"]
    check = cli_run(*lock_options_for_check(upgraded), "vendor", "--check", folder)
    assert check.code == 0, check.out + check.err


def lock_options_for_check(upgraded: Upgraded) -> list[str]:
    # the check needs no schemas when nothing was edited: a missing lock proves it
    return ["--lock", str(upgraded.project / "no-lock.json")]


def test_the_rewritten_code_type_checks_wherever_nothing_was_reported(upgraded: Upgraded) -> None:
    reported_files = {path for path, *_ in upgraded.expected}
    clean = sorted(
        p.relative_to(upgraded.project).as_posix()
        for p in (upgraded.project / "app").rglob("*.py")
        if p.relative_to(upgraded.project).as_posix() not in reported_files
    )
    assert clean
    checked = mypy(upgraded.project, clean)
    assert checked.returncode == 0, checked.stdout


def test_without_the_rewrites_the_same_code_would_not_type_check(upgraded: Upgraded) -> None:
    """The other half of the proof: the rewrites are what makes the code fit the new release."""
    pristine = FIXTURES / upgraded.case.fixture
    if not has_rewrites(pristine / "app"):
        pytest.skip("this release pair renames nothing")
    unrewritten = upgraded.project.parent / "unrewritten"
    shutil.rmtree(unrewritten, ignore_errors=True)
    shutil.copytree(pristine / "app", unrewritten / "app")
    shutil.copytree(upgraded.project / "acp", unrewritten / "acp")
    reported_files = {path for path, *_ in upgraded.expected}
    files = sorted(
        p.relative_to(unrewritten).as_posix()
        for p in (unrewritten / "app").rglob("*.py")
        if p.relative_to(unrewritten).as_posix() not in reported_files
    )
    assert mypy(unrewritten, files).returncode == 1


def vendored_again(case: Case, tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """A fresh copy of the case's project with the old release vendored: the project, its app, options."""
    project = tmp_path / "project"
    app = copy_app(case.fixture, project)
    options = lock_options(case, tmp_path / "releases")
    stability = ["--unstable"] if case.unstable else []
    assert cli_run(*options, "vendor", case.old, project, *stability).code == 0
    return project, app, options


def test_report_prints_the_whole_api_diff_after_the_findings(upgraded: Upgraded, tmp_path: Path) -> None:
    case = upgraded.case
    project, app, options = vendored_again(case, tmp_path)
    done = cli_run(*options, "upgrade", project / "acp", "--to", case.new, app, "--report")
    assert done.code == upgraded.dry.code
    head, _, full = done.out.partition(f"\nACP {case.old} -> {case.new}\n")
    assert reported(head, project) == upgraded.expected and "fingerprint" in full
    assert "OK: nothing" not in full and "FAILED:" not in full  # one verdict: the closing line's


def test_json_format_is_one_document(upgraded: Upgraded, tmp_path: Path) -> None:
    case = upgraded.case
    project = tmp_path / "project"
    app = copy_app(case.fixture, project)
    options = lock_options(case, tmp_path / "releases")
    assert (
        cli_run(*options, "vendor", case.old, project, *(["--unstable"] if case.unstable else [])).code == 0
    )
    done = cli_run(*options, "upgrade", project / "acp", "--to", case.new, app, "--format", "json")
    document = json.loads(done.out)
    assert document["diff"]["old"] == case.old and document["diff"]["new"] == case.new
    findings = sorted(
        (Path(f["path"]).relative_to(project).as_posix(), f["line"], f["column"], f["rule"])
        for f in document["upgrade"]["findings"]
    )
    assert findings == upgraded.expected
    assert document["upgrade"]["failed"] is bool(upgraded.expected)
    assert all(f["explanation"] and f["link"] is None for f in document["upgrade"]["findings"])
    assert len(document["upgrade"]["rewritten"]) == len(
        [p for p in app.rglob("*.py") if expected_rewrite(p) != p.read_text()]
    )


def test_markdown_format_is_a_findings_table_and_the_rewrites_folded(
    upgraded: Upgraded, tmp_path: Path
) -> None:
    """For a pull request: a row per finding with file:line:column, the rewrites as a folded diff."""
    case = upgraded.case
    project, app, options = vendored_again(case, tmp_path)
    done = cli_run(*options, "upgrade", project / "acp", "--to", case.new, app, "--format", "markdown")
    assert done.code == upgraded.dry.code
    assert done.out.startswith(f"## Upgrade of `acp`: ACP {case.old} → {case.new} (")
    assert "**Version step:** wire: " in done.out
    rows = [line for line in done.out.splitlines() if line.startswith(f"| `{project}")]
    found = []
    for row in rows:
        where, rule = (cell.strip().strip("`") for cell in row.strip("|").split(" | ")[:2])
        path, line, column = where.rsplit(":", 2)
        found.append((Path(path).relative_to(project).as_posix(), int(line), int(column), rule))
    assert sorted(found) == upgraded.expected
    rewrites = len([p for p in app.rglob("*.py") if expected_rewrite(p) != p.read_text()])
    if rewrites:
        assert "<details><summary>Rewrites (" in done.out and "```diff\n--- " in done.out
    assert "# ACP API changes" not in done.out  # the full report is behind --report
    report = ("--format", "markdown", "--report", "--min-severity", "warning")
    full = cli_run(*options, "upgrade", project / "acp", "--to", case.new, app, *report)
    assert full.out.startswith(done.out) and f"\n### ACP API changes: {case.old} → {case.new}\n" in full.out
    assert "<summary><b>Info (" not in full.out  # --min-severity leaves the info rows out of the report


# --- a versioned package name --------------------------------------------------------------------


def test_a_package_vendored_under_its_versioned_name_moves_to_the_new_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = "acp_2_0_0_alpha_5_unstable", "acp_2_0_0_alpha_7_unstable"
    assert run(capsys, "vendor", A5, tmp_path, "--unstable", "--name", old).code == 0
    user = tmp_path / "user.py"
    source = (
        f"import {old}\n"
        f"from {old} import schema  # the models\n"
        f"from {old}.bindings import Agent as Base\n\n"
        f"print({old}.RELEASE, schema.PromptResponse, Base)\n"
    )
    user.write_text(source)
    done = run(capsys, "upgrade", tmp_path / old, "--to", A7, user, "--write")
    assert done.code == 0, done.err
    assert user.read_text() == source.replace(old, new)
    assert not (tmp_path / old).exists()
    assert read_manifest(tmp_path / new)[1].package == new
    assert run(capsys, "vendor", "--check", tmp_path / new).code == 0


# --- bad input: one line, exit 2, nothing changed ---------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The alpha.5 fixture project with its package vendored."""
    copy_app("alpha5", tmp_path)
    assert run(capsys, "vendor", A5, tmp_path, "--unstable").code == 0
    return tmp_path


def bad_input(capsys: pytest.CaptureFixture[str], project: Path, *argv: str | Path) -> tuple[str, str]:
    """Run an upgrade that must be refused: exit 2, one stderr line, nothing changed. Its line and stdout."""
    before = snapshot(project)
    done = run(capsys, "upgrade", *argv)
    assert done.code == 2, done.out + done.err
    lines = done.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("acp-codegen: error: "), done.err
    assert snapshot(project) == before
    return lines[0].removeprefix("acp-codegen: error: "), done.out


def test_a_path_without_a_manifest(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line, _ = bad_input(capsys, project, project / "app", "--to", A7, project / "app", "--write")
    assert (
        line == f"{project / 'app'}: no {MANIFEST_NAME} here: not a package written by `acp-codegen vendor`"
    )


@pytest.mark.parametrize("given", ["app/agent.py", "acp/schema.py"])
def test_a_file_given_as_the_vendored_package_says_so_and_what_to_name(
    project: Path, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    """A source file, or a file of the package, is no vendored package: the line says to name the folder
    (and which one, when the file is inside a package), not what a JSON parser makes of Python."""
    line, _ = bad_input(capsys, project, project / given, "--to", A7, "--write")
    expected = (
        f"{project / given}: is a file, not a vendored package: name the folder holding {MANIFEST_NAME} "
        "(the package `acp-codegen vendor` wrote)"
    )
    assert line == expected + (
        f"; did you mean {project / 'acp'}, the package holding it?" if "acp/" in given else ""
    )
    check = run(capsys, "vendor", "--check", project / given)
    assert (check.code, check.err) == (2, f"acp-codegen: error: {line}\n")


def test_an_invalid_manifest(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "acp" / MANIFEST_NAME).write_text('{"format": 1}')
    line, _ = bad_input(capsys, project, project / "acp", "--to", A7, project / "app", "--write")
    assert line == f"{project / 'acp' / MANIFEST_NAME}: the manifest has no 'release'"


def test_a_target_release_not_in_the_lock(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line, _ = bad_input(
        capsys, project, project / "acp", "--to", "2.0.0-alpha.99", project / "app", "--write"
    )
    assert line.endswith("unknown release '2.0.0-alpha.99'; known releases: " + ", ".join(_locked()))


def _locked() -> list[str]:
    from codegen.schema.load import read_lock

    return list(read_lock().releases)


def test_a_source_file_that_does_not_parse(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = project / "app" / "broken.py"
    broken.write_text("from acp import schema\n\nx: schema.McpConnectionId = (\n")
    line, _ = bad_input(capsys, project, project / "acp", "--to", A7, project / "app", "--write")
    assert line.startswith(f"{broken}: cannot parse it with Python {sys.version_info.major}.")
    assert "(line 3, column 29): '(' was never closed" in line  # where the ( is, as editors count


@pytest.mark.parametrize("source", ["def broken(:\n", "x = (\n", "print 'python 2'\n"])
def test_a_source_file_that_does_not_parse_and_never_names_the_package(
    project: Path, capsys: pytest.CaptureFixture[str], source: str
) -> None:
    """What a broken file uses cannot be known: it is refused all the same, named, with --write or not."""
    broken = project / "app" / "unrelated.py"
    broken.write_text(source)
    for write in ((), ("--write",)):
        line, _ = bad_input(capsys, project, project / "acp", "--to", A7, project / "app", *write)
        assert line.startswith(f"{broken}: cannot parse it")


def test_a_file_of_the_users_in_the_vendored_package_is_kept(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """VENDORED.json is the record: what it does not list is the user's, and survives the swap."""
    (project / "acp" / "local_helpers.py").write_text("HELPER = 1\n")
    (project / "acp" / ".keep").write_text("")
    done = run(capsys, "upgrade", project / "acp", "--to", A7, project / "app", "--write")
    assert done.code == 1, done.err  # the fixture's findings remain; extra files are no local edits
    assert (project / "acp" / "local_helpers.py").read_text() == "HELPER = 1\n"
    assert (project / "acp" / ".keep").exists()
    assert read_manifest(project / "acp")[1].release == A7


def test_a_versioned_package_moves_and_the_users_file_stays_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = "acp_2_0_0_alpha_5_unstable", "acp_2_0_0_alpha_7_unstable"
    assert run(capsys, "vendor", A5, tmp_path, "--unstable", "--name", old).code == 0
    (tmp_path / old / "notes.txt").write_text("mine\n")
    done = run(capsys, "upgrade", tmp_path / old, "--to", A7, tmp_path / old / "notes.txt", "--write")
    assert done.code == 0, done.err
    assert sorted(p.name for p in (tmp_path / old).iterdir()) == ["notes.txt"]  # only what vendor wrote went
    assert run(capsys, "vendor", "--check", tmp_path / new).code == 0


def test_a_folder_in_the_way_of_the_new_name_is_refused_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = "acp_2_0_0_alpha_5_unstable", "acp_2_0_0_alpha_7_unstable"
    assert run(capsys, "vendor", A5, tmp_path, "--unstable", "--name", old).code == 0
    (tmp_path / new).mkdir()
    (tmp_path / new / "mine.py").write_text("MINE = 1\n")
    done = run(capsys, "upgrade", tmp_path / old, "--to", A7, tmp_path / new / "mine.py", "--write")
    assert done.code == 2 and "--force" in done.err and str(tmp_path / new) in done.err
    done = run(
        capsys, "upgrade", tmp_path / old, "--to", A7, tmp_path / new / "mine.py", "--write", "--force"
    )
    assert done.code == 0, done.err
    assert (tmp_path / new / "mine.py").read_text() == "MINE = 1\n"
    assert read_manifest(tmp_path / new)[1].release == A7


def test_local_edits_are_shown_and_refused(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = project / "acp" / "schema.py"
    schema.write_text(schema.read_text().replace("class PromptResponse(", "class PromptReply("))
    line, out = bad_input(capsys, project, project / "acp", "--to", A7, project / "app", "--write")
    assert line.startswith(f"{project / 'acp'}: the vendored copy has local edits (1 modified);")
    assert line.endswith("revert them or pass --force")
    assert "-class PromptResponse(WithMeta):" in out.splitlines()  # it declares _meta like most types
    assert "+class PromptReply(WithMeta):" in out.splitlines()
    done = run(capsys, "upgrade", project / "acp", "--to", A7, project / "app", "--write", "--force")
    assert done.code == 1  # the fixture's findings remain
    assert read_manifest(project / "acp")[1].release == A7


# --- sources ----------------------------------------------------------------------------------------


def test_sources_default_to_the_current_folder_without_the_vendored_copy(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vendored package mentions the changed names too, but it is never read as user code."""
    monkeypatch.chdir(project)
    done = run(capsys, "upgrade", "acp", "--to", A7)
    assert done.code == 1
    assert reported(done.out, project) == expected_findings(project / "app")
    assert "acp/" not in "".join(line.split(":")[0] for line in done.out.splitlines() if ".py:" in line)


def test_upgrading_to_the_same_release_changes_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(project)
    done = run(capsys, "upgrade", project / "acp", "--to", A5, project / "app", "--write")
    assert done.code == 0, done.out + done.err
    assert "OK: rewrote 0 file(s)" in done.err
    assert snapshot(project) == before
