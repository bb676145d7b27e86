"""GitHub annotations and SARIF of ``upgrade`` and ``diff`` attach to files of the repository.

The project lives in a subfolder of a git repository the test builds, and the
commands run from a folder deeper still: every ``file=`` and every SARIF
``uri`` must name a file that exists from the repository's root, at a line the
file has, and the SARIF must be valid under its 2.1.0 schema.  An API change
attaches to the vendored package: a type at the line of its class, a field at
its attribute.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from codegen.naming import field_name
from tests.vendoring.project import copy_app, run

A7, A8 = "2.0.0-alpha.7", "2.0.0-alpha.8"
SARIF_SCHEMA = Path(__file__).parent.parent / "diff" / "sarif-2.1.0.json"
_FILE = re.compile(r"^::\w+ file=([^,]+),line=(\d+)")


@pytest.fixture
def repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A git repository with the alpha7 fixture's app and alpha.7's stable package under ``service/``."""
    root = tmp_path / "repository"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    copy_app("alpha7", root / "service")
    assert run(capsys, "vendor", A7, root / "service").code == 0
    return root


def _lines(root: Path, file: str) -> list[str]:
    path = root / file
    assert path.is_file(), f"{file} is no file of the repository"
    return path.read_text().splitlines()


def _attached(root: Path, file: str, line: int) -> str:
    """The text of ``file:line`` in the repository, which must have it."""
    lines = _lines(root, file)
    assert 1 <= line <= len(lines), f"{file} has no line {line}"
    return lines[line - 1]


def _names(subject: str) -> set[str]:
    """The Python names an API change's subject may be found under: its type, its field as an attribute;
    a method's, the words of its wire name (its route in the bindings)."""
    method = re.match(r"(?:request|notification) (\S+) \(handled by", subject)
    if method:
        return set(re.findall(r"\w+", method[1]))
    head, _, rest = subject.partition(".")
    field = re.split(r"[\[ .]", rest)[0] if rest else ""
    return {re.split(r"[\[ ]", head)[0]} | ({field_name(field), field} if field else set())


def test_upgrade_annotations_attach_to_the_code_and_to_the_vendored_classes(
    repository: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repository / "service" / "app")
    done = run(capsys, "upgrade", "../acp", "--to", A8, "--format", "github", "--report")
    assert done.code == 1, done.err
    annotations = [line for line in done.out.splitlines() if line.startswith("::")]
    located = [_FILE.match(line) for line in annotations]
    unattached = [line for line, found in zip(annotations, located, strict=True) if found is None]
    assert [line.split("::")[1] for line in unattached] == ["notice title=acp-codegen diff"]
    files = {found[1] for found in located if found is not None}
    assert any(f.startswith("service/app/") for f in files), "no finding in the user's code"
    assert "service/acp/schema.py" in files
    for found in located:
        if found is not None:
            _attached(repository, found[1], int(found[2]))


def test_upgrade_sarif_is_valid_and_every_result_is_at_a_line_of_the_repository(
    repository: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repository / "service")
    done = run(capsys, "upgrade", "acp", "--to", A8, "--format", "sarif", "--report", "--write")
    assert done.code == 1, done.err
    log: dict[str, Any] = json.loads(done.out)
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(log)
    (sarif_run,) = log["runs"]
    code, api = [], []
    for result in sarif_run["results"]:
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        text = _attached(repository, physical["artifactLocation"]["uri"], physical["region"]["startLine"])
        (api if "logicalLocations" in location else code).append((result, text))
    assert code and all(r["locations"][0]["physicalLocation"]["region"]["startColumn"] for r, _ in code)
    # written: the package is the new one, and each API change is at its class or attribute there
    by_line = [
        (r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"], text)
        for r, text in api
        if r["locations"][0]["physicalLocation"]["region"]["startLine"] > 1
    ]
    assert len(by_line) > len(api) // 2
    misplaced = [(s, text) for s, text in by_line if not _names(s) & set(re.findall(r"\w+", text))]
    assert misplaced == []


def test_diff_attaches_to_a_store_inside_the_repository(
    repository: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the releases copied into a store of the repository (as the notice of a detached run says),
    every annotation of ``diff`` attaches there, at the line of its ``$defs`` entry."""
    from codegen.schema.load import BUNDLED_SCHEMAS

    store = repository / "acp-schemas"
    for release in (A7, A8):
        shutil.copytree(BUNDLED_SCHEMAS / "v2" / release, store / "v2" / release)
    monkeypatch.chdir(repository / "service")
    common = ("--schemas", store, "diff", "--no-evidence", A7, A8, "--stability", "stable")
    done = run(capsys, *common, "--format", "github", "--path-prefix", "mono")
    _, *annotations = done.out.splitlines()
    assert annotations and done.err == ""
    for line in annotations:
        found = _FILE.match(line)
        assert found is not None, line
        assert found[1] == f"mono/acp-schemas/v2/{A8}/schema.json" or f"/{A7}/" in found[1]
        text = _attached(repository, found[1].removeprefix("mono/"), int(found[2]))
        assert text.lstrip()[:1] in ('"', "{"), text  # where a member of the JSON (or an item) starts
