"""A user project in a temporary folder: the fixture's code, a vendored package, and what the tests expect.

The fixture's comments say what the codemod must do (see
``tests/fixtures/vendor_project/README.md``): :func:`expected_findings` and
:func:`expected_rewrite` read them, so the expectations are written by hand
next to the code they are about, never taken from the tool's output.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from codegen import cli
from codegen.schema.load import RELEASE_FILES, lock_entry
from tests.support.releases import ROOT, release_files

FIXTURES = ROOT / "tests" / "fixtures" / "vendor_project"
_MARKER = re.compile(r"\s*# (?P<kind>expect|rewrite): (?P<items>.+)$")
_FINDING = re.compile(r"(?P<path>\S+):(?P<line>\d+):(?P<column>\d+) (?P<rule>[a-z-]+) ")

Expected = tuple[str, int, int, str]
"""``(path relative to the project, line, column, rule)`` of one finding."""


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> Run:
    """``acp-codegen ARGV`` in this process (so generated packages are rendered once per test session)."""
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return Run(code, out, err)


def copy_app(fixture: str, project: Path) -> Path:
    """The fixture's ``app/`` copied into ``project``."""
    project.mkdir(parents=True, exist_ok=True)
    shutil.copytree(FIXTURES / fixture / "app", project / "app")
    return project / "app"


def _marked(path: Path) -> list[tuple[int, str, dict[str, list[str]]]]:
    """``(line number, line, {kind: items})`` for every code line, with the markers just above it."""
    pending: dict[str, list[str]] = {}
    out = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        marker = _MARKER.fullmatch(line)
        if marker is not None:
            items = [item.strip() for item in marker["items"].split(",")]
            pending.setdefault(marker["kind"], []).extend(items)
            continue
        out.append((number, line, pending))
        pending = {}
    return out


def _code(line: str) -> tuple[str, str]:
    """A line split into its code and its trailing comment (the fixtures put two spaces before it)."""
    head, sep, tail = line.partition("  # ")
    return head, sep + tail


def expected_findings(app: Path) -> list[Expected]:
    found = []
    for path in sorted(app.rglob("*.py")):
        rel = path.relative_to(app.parent).as_posix()
        for number, line, markers in _marked(path):
            for item in markers.get("expect", []):
                rule, _, token = item.partition("@")
                match = re.search(rf"\b{re.escape(token)}\b", _code(line)[0])
                assert match is not None, f"{rel}:{number}: no {token!r} in {line!r}"
                found.append((rel, number, match.start() + 1, rule))
    return sorted(found)


def expected_rewrite(path: Path) -> str:
    """The file as the codemod must leave it: each marked line with its words replaced, the rest as is."""
    lines = path.read_text().splitlines(keepends=True)
    for number, line, markers in _marked(path):
        code, comment = _code(line)
        for item in markers.get("rewrite", []):
            old, _, new = item.partition("->")
            code, count = re.subn(rf"\b{re.escape(old)}\b", new, code)
            assert count, f"{path}:{number}: no {old!r} to rewrite in {line!r}"
        lines[number - 1] = code + comment + "\n"
    return "".join(lines)


def has_rewrites(app: Path) -> bool:
    return any("rewrite" in m for path in app.rglob("*.py") for _, _, m in _marked(path))


def reported(out: str, project: Path) -> list[Expected]:
    """The findings an ``upgrade`` printed, with paths relative to ``project``."""
    found = []
    for line in out.splitlines():
        match = _FINDING.match(line)
        if match is not None:
            path = Path(match["path"])
            rel = (path.relative_to(project) if path.is_absolute() else path).as_posix()
            found.append((rel, int(match["line"]), int(match["column"]), match["rule"]))
    return sorted(found)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (caches aside): to show that a command changed nothing."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and ".mypy_cache" not in p.parts
    }


def mypy(project: Path, files: list[str]) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` on ``files`` of ``project``, which holds the vendored package as ``acp``."""
    config = project / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\n")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", ".mypy_cache", *files],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )


def lock_folder(folder: Path, sides: dict[str, Path]) -> Path:
    """A schema folder and a lock for releases that are not upstream's: ``folder/lock.json``.

    ``sides`` maps each release name to a folder of its files; a file
    missing from it (a synthetic release may change only the stable schema)
    is copied from the base release of :mod:`tests.vendoring.synthetic`.
    """
    from tests.vendoring.synthetic import BASE

    releases = {}
    for release, source in sides.items():
        target = folder / "schemas" / "v2" / release
        target.mkdir(parents=True)
        for name in RELEASE_FILES:
            shutil.copy(
                source / name if (source / name).exists() else release_files(BASE).folder / name, target
            )
        releases[release] = lock_entry(release, target)
    lock = folder / "lock.json"
    lock.write_text(json.dumps({"format": 1, "releases": releases}, indent=2))
    return lock
