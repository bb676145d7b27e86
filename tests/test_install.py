"""The tool as installed: what the wheel carries, and how an installed copy behaves.

The wheel itself is built, installed into a fresh venv and used from an empty
folder by ``.ci/wheel-smoke`` (CI runs it before the tests; it needs the
package registry for the wheel's dependencies and for pre-commit). These tests
check, offline and fast, what that relies on:

* ``pyproject.toml`` ships every package of ``codegen/`` and, as package data,
  every file of ``schemas/`` and ``templates/`` and ``knowledge.toml``;
* a copy of the package laid out as a wheel installs it (``codegen/data/``
  beside the modules, no checkout around) finds its files there, writes
  nothing into itself, and says in one line what to pass instead;
* ``--version`` names the newest bundled release of each protocol major.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from codegen import cli, resources
from codegen.schema.load import protocol_major, read_lock
from tests.support.releases import ROOT

CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def tracked(folder: str) -> set[str]:
    """The files git records under ``folder`` (relative to it)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", folder],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout.split()
    return {str(Path(path).relative_to(folder)) for path in listed if (ROOT / path).is_file()}


def package_data(package: str) -> set[str]:
    """The files setuptools ships for ``package``, by the globs of ``pyproject.toml`` (relative)."""
    source = ROOT / CONFIG.get("package-dir", {}).get(package, package.replace(".", "/"))
    found: set[str] = set()
    for pattern in CONFIG["package-data"].get(package, []):
        found.update(
            str(Path(path).relative_to(source))
            for path in glob.glob(str(source / pattern), recursive=True)
            if Path(path).is_file()
        )
    return found


def test_every_package_of_codegen_is_shipped() -> None:
    on_disk = {
        ".".join(path.parent.relative_to(ROOT).parts) for path in (ROOT / "codegen").rglob("__init__.py")
    }
    listed = set(CONFIG["packages"])
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    mapped = set(CONFIG["package-dir"])
    assert listed - on_disk == mapped == {"codegen.data.schemas", "codegen.data.templates"}


@pytest.mark.parametrize(
    "package, folder", [("codegen.data.schemas", "schemas"), ("codegen.data.templates", "templates")]
)
def test_the_wheel_carries_every_file_of_the_folder(package: str, folder: str) -> None:
    assert CONFIG["package-dir"][package] == folder
    assert package_data(package) == tracked(folder)


def test_the_wheel_carries_the_knowledge_and_the_runtime() -> None:
    assert "knowledge.toml" in package_data("codegen")
    assert "codegen.runtime" in CONFIG["packages"]  # its modules are copied into every package


def test_resources_in_a_checkout() -> None:
    assert resources.CHECKOUT == ROOT
    assert not resources.installed()
    assert resources.SCHEMAS == ROOT / "schemas"
    assert resources.TEMPLATES == ROOT / "templates"
    assert resources.DEFAULT_OUT == ROOT / "generated"


def test_version_names_the_newest_release_of_each_major(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--version"]) == 0
    line = capsys.readouterr().out.strip()
    lock = read_lock()
    for major in sorted({protocol_major(name) for name in lock.releases}):
        assert f"v{major} {lock.newest(major)}" in line
    assert line.startswith(f"acp-codegen {resources.version()} ")
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+.*", resources.version())


def test_no_command_is_a_usage_error() -> None:
    result = subprocess.run([sys.executable, "-m", "codegen.cli"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2
    assert "a COMMAND is required" in result.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``codegen`` laid out as the wheel installs it, in a folder with no checkout around it."""
    site = tmp_path_factory.mktemp("site-packages")
    shutil.copytree(ROOT / "codegen", site / "codegen", ignore=shutil.ignore_patterns("__pycache__"))
    for package, folder in CONFIG["package-dir"].items():
        target = site / Path(*package.split("."))
        for rel in package_data(package):
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / folder / rel, target / rel)
    return site


def run_installed(site: Path, cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site), "ACP_CODEGEN_CACHE": str(cwd / "cache")}
    env.pop("ACP_SCHEMAS", None)
    return subprocess.run(
        [sys.executable, "-m", "codegen.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts)


def test_an_installed_copy_finds_its_files_in_itself(installed: Path, tmp_path: Path) -> None:
    probe = "from codegen import resources as r; print(r.installed(), r.SCHEMAS, r.TEMPLATES, r.DEFAULT_OUT)"
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(installed)},
    )
    data = installed / "codegen" / "data"
    assert result.stdout.split() == ["True", str(data / "schemas"), str(data / "templates"), "None"]


def test_installed_version_and_help_name_the_bundled_store(installed: Path, tmp_path: Path) -> None:
    version = run_installed(installed, tmp_path, "--version")
    assert version.returncode == 0, version.stderr
    assert str(installed / "codegen" / "data" / "schemas") in version.stdout
    helped = run_installed(installed, tmp_path, "--help")
    assert "inside the installed package, read-only" in " ".join(helped.stdout.split())


@pytest.mark.parametrize(
    "args, expected",
    [
        (("fetch", "2.0.0-alpha.1", "--from", "."), "pass --schemas DIR"),
        (("fetch", "--from", "npm:@agentclientprotocol/sdk@2.2.0"), "pass --schemas DIR"),
        (("lock", "2.0.0-alpha.1"), "pass --schemas DIR"),
        (("generate", "2.0.0-alpha.1"), "generate needs --out DIR"),
        (("reports",), "reports needs --out DIR"),
    ],
    ids=["fetch", "fetch-npm", "lock", "generate", "reports"],
)
def test_an_installed_copy_writes_nothing_into_itself(
    installed: Path, tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    before = listing(installed)
    result = run_installed(installed, tmp_path, *args)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("acp-codegen: error: ") and expected in lines[0], lines
    assert listing(installed) == before
    assert listing(tmp_path) == []


def test_an_installed_copy_fetches_into_a_store_of_the_users(installed: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    result = run_installed(
        installed, tmp_path, "--schemas", store, "fetch", "2.0.0-alpha.1", "--from", ROOT / "schemas"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2.0.0-alpha.1"]
    assert sorted(p.name for p in (store / "v2" / "2.0.0-alpha.1").iterdir()) == sorted(
        read_lock().release("2.0.0-alpha.1").files
    )
