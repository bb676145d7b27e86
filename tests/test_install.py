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

import contextlib
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from codegen import cli, resources
from codegen.schema.load import protocol_major, read_lock
from tests.support.releases import ROOT
from tests.support.terminal import as_from_a_shell

CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
DEFAULT_LOCK_TEXT = (ROOT / "schemas" / "lock.json").read_text()


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


# --- issue 23, as a user of the installed tool meets it -----------------------------------------


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build cache for the installed copy's generate runs: each package is rendered once."""
    return tmp_path_factory.mktemp("installed-cache")


def one_line(result: subprocess.CompletedProcess[str], *parts: str | Path) -> str:
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("acp-codegen: error: "), line
    for part in parts:
        assert str(part) in line, line
    return line


INSTALLED = pytest.mark.xdist_group("test_install-installed")


@INSTALLED
def test_installed_generate_into_the_users_repository_keeps_everything_of_theirs(
    installed: Path, tmp_path: Path, shared_cache: Path
) -> None:
    """The issue's session: a git repository as --out, with and without a release named."""
    repo = tmp_path / "dotout"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "main.py").write_text("important\n")
    (repo / "acp_2_0_0_alpha_1_unstable").mkdir()  # a same-named folder of the user's
    (repo / "acp_2_0_0_alpha_1_unstable" / "notes.txt").write_text("mine\n")
    git = sorted(p.relative_to(repo) for p in (repo / ".git").rglob("*"))
    generate = ("generate", "2.0.0-alpha.1", "--out", repo, "-q", "--cache", shared_cache)
    one_line(run_installed(installed, tmp_path, *generate), repo / "acp_2_0_0_alpha_1_unstable", "--force")
    assert sorted(p.name for p in repo.iterdir()) == [".git", "acp_2_0_0_alpha_1_unstable", "main.py"]
    assert run_installed(installed, tmp_path, *generate, "--force").returncode == 0
    (repo / "acp_2_0_0_alpha_1" / "mine.py").write_text("MINE = 1\n")  # put into a package the tool wrote
    small = tmp_path / "lock.json"
    small.write_text(
        json.dumps(
            {"releases": {"2.0.0-alpha.1": json.loads(DEFAULT_LOCK_TEXT)["releases"]["2.0.0-alpha.1"]}}
        )
    )
    every = run_installed(
        installed, tmp_path, "generate", "--out", repo, "-q", "--lock", small, "--cache", shared_cache
    )
    assert every.returncode == 0, every.stderr
    assert (repo / "main.py").read_text() == "important\n"
    assert (repo / "acp_2_0_0_alpha_1_unstable" / "notes.txt").read_text() == "mine\n"
    assert (repo / "acp_2_0_0_alpha_1" / "mine.py").read_text() == "MINE = 1\n"
    assert sorted(p.relative_to(repo) for p in (repo / ".git").rglob("*")) == git
    assert sorted(p.name for p in repo.iterdir()) == sorted(
        [
            ".git",
            "ACP-CODEGEN.json",
            "README.md",
            "acp_2_0_0_alpha_1",
            "acp_2_0_0_alpha_1_unstable",
            "main.py",
        ]
    )


@INSTALLED
def test_installed_generate_into_a_project_root_refuses_its_readme(
    installed: Path, tmp_path: Path, shared_cache: Path
) -> None:
    (tmp_path / "README.md").write_text("# my project\n")
    result = run_installed(
        installed, tmp_path, "generate", "2.0.0-alpha.1", "--out", ".", "-q", "--cache", shared_cache
    )
    one_line(result, "README.md: a file acp-codegen did not write", "--force")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]


@INSTALLED
def test_installed_check_names_the_folder_and_acp_codegen(
    installed: Path, tmp_path: Path, shared_cache: Path
) -> None:
    out = tmp_path / "gen"
    done = run_installed(
        installed, tmp_path, "generate", "2.0.0-alpha.1", "--out", out, "-q", "--cache", shared_cache
    )
    assert done.returncode == 0, done.stderr
    header = (out / "acp_2_0_0_alpha_1" / "bindings.py").read_text().splitlines()[2]
    assert "`acp-codegen generate 2.0.0-alpha.1 --out DIR`" in header and "make" not in header
    (out / "README.md").write_text("edited\n")
    check = run_installed(installed, tmp_path, "generate", "--check", "2.0.0-alpha.1", "--out", out, "-q")
    assert check.returncode == 1
    assert "generated/" not in check.stdout and f"{out}/README.md (as it is)" in check.stdout
    assert check.stderr.strip() == f"{out} is stale: run `acp-codegen generate 2.0.0-alpha.1 --out {out}`."


def test_installed_vendor_wording_and_refusals(installed: Path, tmp_path: Path) -> None:
    assert run_installed(installed, tmp_path, "vendor", "2.0.0-alpha.5", "src").returncode == 0
    header = (tmp_path / "src" / "acp" / "schema.py").read_text().splitlines()[2]
    assert header.endswith("regenerate with `acp-codegen vendor 2.0.0-alpha.5 DIR`.")
    one_line(
        run_installed(installed, tmp_path, "vendor", "1.21.0", "src"), "protocol major (v2 -> v1)", "--force"
    )
    one_line(run_installed(installed, tmp_path, "vendor", "2.0.0-alpha.5", "src", "--unstable"), "stability")
    (tmp_path / "src" / "acp" / "py.typed").write_text("edited\n")
    check = run_installed(installed, tmp_path, "vendor", "--check", "src/acp")
    assert check.returncode == 1
    hint = check.stderr.split("`")[1]
    assert hint == "acp-codegen vendor 2.0.0-alpha.5 src --force"
    assert run_installed(installed, tmp_path, *hint.split()[1:]).returncode == 0
    assert run_installed(installed, tmp_path, "vendor", "--check", "src/acp").returncode == 0
    one_line(
        run_installed(installed, tmp_path, "vendor", "2.0.0-alpha.5", "out", "--name", "json"),
        "standard library",
    )


def test_installed_upgrade_refuses_a_file_that_does_not_parse(installed: Path, tmp_path: Path) -> None:
    assert run_installed(installed, tmp_path, "vendor", "2.0.0-alpha.5", "src").returncode == 0
    app = tmp_path / "app"
    app.mkdir()
    (app / "broken.py").write_text("def broken(:\n")
    before = (tmp_path / "src" / "acp" / "VENDORED.json").read_text()
    one_line(
        run_installed(installed, tmp_path, "upgrade", "src/acp", "--to", "2.0.0-alpha.7", "app", "--write"),
        "app/broken.py",
    )
    assert (tmp_path / "src" / "acp" / "VENDORED.json").read_text() == before


def test_installed_options_anywhere_and_bad_numbers(installed: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    fetched = run_installed(
        installed, tmp_path, "fetch", "2.0.0-alpha.1", "--from", ROOT / "schemas", "--schemas", store
    )
    assert fetched.returncode == 0, fetched.stderr
    assert (store / "v2" / "2.0.0-alpha.1" / "schema.json").is_file()
    one_line(
        run_installed(installed, tmp_path, "generate", "2.0.0-alpha.1", "--out", "x", "-j", "0"),
        "--jobs must be at least 1",
    )
    assert not (tmp_path / "x").exists()


def test_installed_lock_refuses_what_is_not_a_schema(installed: Path, tmp_path: Path) -> None:
    folder = tmp_path / "store" / "v2" / "2.0.0-alpha.90"
    shutil.copytree(ROOT / "schemas" / "v2" / "2.0.0-alpha.1", folder)
    (folder / "schema.json").write_text("[1, 2, 3]")
    one_line(
        run_installed(installed, tmp_path, "lock", "2.0.0-alpha.90", "--schemas", tmp_path / "store"),
        "'$defs'",
    )
    assert not (tmp_path / "store" / "lock.json").exists()
    one_line(
        run_installed(installed, tmp_path, "lock", "2.0.0-alpha.91", "--schemas", tmp_path / "store"),
        "2.0.0-alpha.91/, ",
    )


def test_installed_releases(installed: Path, tmp_path: Path) -> None:
    result = run_installed(installed, tmp_path, "releases", "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [row["release"] for row in rows] == list(read_lock().releases)
    assert all(row["bundled"] and row["files"].startswith(str(installed)) for row in rows)


def test_installed_ctrl_c_stops_generate_in_one_line(installed: Path, tmp_path: Path) -> None:
    from tests.test_atomic import children  # the processes whose parent is a pid

    env = {**os.environ, "PYTHONPATH": str(installed), "ACP_CODEGEN_CACHE": str(tmp_path / "cache")}
    args = ["generate", "2.0.0-alpha.8", "--out", "out", "--no-cache", "-j", "2", "-q"]
    process = subprocess.Popen(
        [sys.executable, "-m", "codegen.cli", *args],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=as_from_a_shell,
    )
    try:
        while len(children(process.pid)) < 2:  # both workers render
            assert process.poll() is None
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=60)
        with pytest.raises(ProcessLookupError):
            os.killpg(process.pid, 0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130
    assert err.splitlines() == ["acp-codegen: interrupted: nothing is left half written"]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
