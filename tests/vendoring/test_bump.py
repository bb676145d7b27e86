"""``acp-codegen bump``: the newest release from npm, locked, and a vendored copy moved to it.

The commands run as a user runs them (``python -m codegen.cli`` in a project
folder) with the machine's own ``npm`` pointed at the stand-in registry of
``tests/schema/test_npm.py``; one sweep asks the real registry.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.schema.load import read_lock
from tests.schema.test_npm import PACKAGE, Registry, new_content, store_file

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


def project(tmp_path: Path, release: str = OLD, app: str = APP) -> Path:
    """A project with the stable package of ``release`` vendored as src/acp and code using it in src/app."""
    root = tmp_path / "project"
    (root / "src" / "app").mkdir(parents=True)
    (root / "src" / "app" / "main.py").write_text(app)
    done = run(root, "vendor", release, "src")
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


def test_a_dry_run_locks_the_newest_release_and_describes_the_move_without_writing_the_project(
    registry: Registry, tmp_path: Path
) -> None:
    publish_new(registry, "9.5.0")
    root = project(tmp_path)
    before = (root / "src" / "acp" / "schema.py").read_bytes()
    done = run(root, "--schemas", "store", "bump", "src/acp", "src/app", *BUMP, "--pr-body", "body.md")
    assert done.returncode == 1, done.stderr  # a finding to fix by hand
    assert f"{PACKAGE}@9.5.0 (the newest) ships v2-sdk-9.5.0: new, locked in store/lock.json" in done.stderr
    assert done.stdout.splitlines() == [
        f"src/app/main.py:1:24 python-class-removed {REMOVED_IN_NEW} is gone in v2-sdk-9.5.0",
        f"src/app/main.py:8:17 python-class-removed {REMOVED_IN_NEW} is gone in v2-sdk-9.5.0",
        "API v2-sdk-2.1.0 -> v2-sdk-9.5.0 (stable): 16 breaking, 2 warnings, 23 info",
    ]
    assert done.stderr.splitlines()[-1] == (
        "FAILED: dry run, 0 file(s) to rewrite, 2 finding(s) to fix by hand; "
        "--write applies the rewrites and vendors ACP v2-sdk-9.5.0 as src/acp."
    )
    # the store took the release; the project did not change
    assert list(json.loads((root / "store" / "lock.json").read_text())["releases"]) == ["v2-sdk-9.5.0"]
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
    assert "16 breaking change(s) in 41" in body


def test_write_moves_the_copy_which_then_passes_vendor_check_and_the_next_bump_is_one_line(
    registry: Registry, tmp_path: Path
) -> None:
    publish_new(registry, "9.5.0")
    root = project(tmp_path, app=CLEAN_APP)
    done = run(root, "--schemas", "store", "bump", "src/acp", "src", *BUMP, "--write", "--pr-body", "body.md")
    assert done.returncode == 0, done.stderr
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
        f"src/acp is on v2-sdk-9.5.0, the newest release: {PACKAGE}@9.5.0 (the newest) ships v2-sdk-9.5.0, "
        "already locked; nothing fetched"
    ]
    assert not (root / "body.md").exists()


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
        f"src/acp is on v2-sdk-2.3.0, the newest release: {PACKAGE}@2.4.0 ships the same content as "
        "v2-sdk-2.3.0, as the lock records; nothing fetched"
    ]
    assert not (root / "store").exists()


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
        "API v2-sdk-2.3.0 -> v2-sdk-9.5.0 (stable and unstable): 77 breaking, 2 warnings, 23 info"
    ]
    body = (tmp_path / "body.md").read_text()
    assert body.startswith("# ACP v2-sdk-2.3.0 → v2-sdk-9.5.0\n")
    assert "### Your code" not in body
    assert list(json.loads((tmp_path / "store" / "lock.json").read_text())["releases"]) == ["v2-sdk-9.5.0"]


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
