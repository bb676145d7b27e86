"""The newcomer path of issue 33, end to end, as a user walks it with the installed tool.

The wheel is built from the files git knows and installed into a fresh venv; the app of
``tests/fixtures/newcomer`` (an echo agent and a client that starts it over stdio, about a hundred
lines) vendors v2-sdk-2.0.0 with ``--transports stdio`` and passes ``mypy --strict`` against a venv
holding pydantic alone. The stand-in npm registry of the bump tests then ships the newest v2 as
a new SDK version, and ``bump --write`` moves one copy of the app from its root and another from
the folder above it, where a sibling project keeps a copy of its own. Then mypy again, and the
app's own run, on both. Nothing is written but the two copies: not the sibling, not the folder
above, no ``.hypothesis/``.

It builds a wheel and two venvs (offline once the wheelhouse of ``tests/support/venvs.py`` is in
pytest's cache): a sweep. ``tests/vendoring/test_lean_package.py`` runs the type checks in
``make test``, and ``tests/test_record.py`` the bump from a parent folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.schema.test_npm import PACKAGE, Registry, store_file
from tests.support.releases import ROOT
from tests.support.venvs import fresh_venv, wheelhouse
from tests.test_record import Entry, snapshot
from tests.vendoring.test_lean_package import FIXTURE, mypy

OLD, NEWEST = "v2-sdk-2.0.0", "v2-sdk-2.3.0"
BUILD = "setuptools>=77,<81"
"""What ``pyproject.toml``'s build-system requires (the wheel is built offline from the wheelhouse)."""


def build_wheel(into: Path, wheels: Path) -> Path:
    """The wheel of the files git knows (tracked, and new ones not ignored), as ``.ci/wheel-smoke``."""
    source = into / "source"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        cwd=ROOT,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (entry.decode() for entry in listed)):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    build = ["wheel", "--quiet", "--no-deps", "--no-index", "--find-links", str(wheels)]
    subprocess.run(
        [sys.executable, "-m", "pip", *build, "--wheel-dir", str(into / "dist"), str(source)],
        check=True,
        timeout=600,
    )
    (wheel,) = (into / "dist").glob("acp_codegen-*.whl")
    return wheel


def newcomer_project(folder: Path, tool: Path) -> Path:
    """A project of the newcomer's: its pyproject.toml, the app, and OLD vendored with the installed tool."""
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text(f'[project]\nname = "{folder.name}"\nversion = "0.1.0"\n')
    shutil.copytree(FIXTURE / "app", folder / "app")
    done = tool_run(tool, folder, "vendor", OLD, ".", "--transports", "stdio")
    assert done.returncode == 0, done.stderr
    return folder


def tool_run(tool: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed ``acp-codegen`` (its venv's, nothing of the checkout on the path), its cache
    beside its venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ACP_SCHEMAS")}
    env["ACP_CODEGEN_CACHE"] = str(tool.parent.parent.parent / "cache")
    return subprocess.run([tool, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=900)


def changed(before: dict[str, Entry], after: dict[str, Entry]) -> set[str]:
    return {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}


def app_run(python: Path, project: Path) -> str:
    done = subprocess.run(
        [python, "-m", "app.client", "hello", "newcomer"],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.sweep
def test_the_newcomer_path_runs_clean_end_to_end(
    registry: Registry, tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    wheels = wheelhouse(pytestconfig, "newcomer-wheels", [*dependencies, BUILD])
    wheel = build_wheel(tmp_path / "build", wheels)
    tool = fresh_venv(tmp_path / "tool-venv", wheels, wheel).parent / "acp-codegen"
    app_python = fresh_venv(tmp_path / "app-venv", wheels, "pydantic")
    workspace = tmp_path / "workspace" / "code"
    first = newcomer_project(workspace / "first", tool)
    second = newcomer_project(workspace / "second", tool)
    newcomer_project(workspace / "sibling", tool)  # another project, with a copy of its own and its app
    for project in (first, second):
        assert mypy(project, app_python, ".mypy") == []
        assert app_run(app_python, project) == "hello newcomer\n"
    registry.publish(  # the newest v2, shipped as a new SDK version
        "9.7.0",
        {f"schema/v2/{name}": store_file(NEWEST, name) for name in ("schema.json", "schema.unstable.json")},
    )
    bump = ("--from", f"npm:{PACKAGE}", "--no-evidence", "--write")
    for project, cwd, copy in ((first, first, "acp"), (second, workspace, "second/acp")):
        before = snapshot(workspace)
        done = tool_run(tool, cwd, "bump", copy, *bump)
        assert done.returncode == 0, done.stderr
        assert done.stderr.splitlines()[-1].startswith(f"OK: rewrote 0 file(s) and vendored ACP {NEWEST}")
        written = changed(before, snapshot(workspace))  # the copy alone: not the sibling, no .hypothesis/
        inside = f"{project.relative_to(workspace).as_posix()}/acp/"
        assert f"{inside}schema.py" in written and {p for p in written if not p.startswith(inside)} == set()
    for project in (first, second):
        manifest = (project / "acp" / "VENDORED.json").read_text()
        assert f'"release": "{NEWEST}"' in manifest and '"transports": [\n    "stdio"\n  ]' in manifest
        assert tool_run(tool, project, "vendor", "--check", "acp").returncode == 0
        assert mypy(project, app_python, ".mypy") == []
        assert app_run(app_python, project) == "hello newcomer\n"
