"""The evolution corpus: every operator's release generates, type-checks, conforms and diffs as expected.

Each operator (``tests/evolution/operators.py``) changes 2.0.0-alpha.8 the way
upstream changes releases.  The mutated release goes through the same
pipeline a user runs on a schema bump, without ``--strict``:

* ``generate``: the package is written, imports, passes ``mypy --strict``,
  and a conformance slice over the types the mutation touched agrees with the
  JSON Schema; the gaps warned about are the ones expected;
* ``diff``: the mutation is reported under the right rule, at the right subject.
"""

from __future__ import annotations

import copy
import functools
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import TypeAdapter

from codegen.diagnostics import Gap, collecting
from codegen.diff import DiffResult, diff_releases
from codegen.emit.package import build_package
from codegen.schema.builder import build_release
from codegen.schema.ir import ApiSurface
from codegen.schema.load import RELEASE_FILES, load_schema_folder
from tests.conformance.harness import Target, check_surface, load_exceptions, unexplained
from tests.evolution.operators import OPERATORS, Expected
from tests.support.releases import release_files

BASE = "2.0.0-alpha.8"


@dataclass
class Outcome:
    """One operator's mutated release, generated and diffed."""

    name: str
    expected: Expected
    root: dict[str, Any]
    surface: ApiSurface
    files: dict[str, str]
    gaps: list[Gap]
    diff: DiffResult
    folder: Path
    package: str


@functools.cache
def base_package(unstable: bool) -> dict[str, str]:
    stable, unstable_surface = build_release(release_files(BASE))
    return build_package(unstable_surface if unstable else stable).files()


def mutate(name: str, work: Path) -> Outcome:
    base = release_files(BASE)
    docs = {file: copy.deepcopy(base.documents[file].data) for file in RELEASE_FILES}
    expected = OPERATORS[name](docs)
    folder = work / "schemas" / name / BASE  # named like the release it changes, so headers match
    folder.mkdir(parents=True)
    for file, data in docs.items():
        (folder / file).write_text(json.dumps(data, indent=2))
    mutated = load_schema_folder(folder)
    with collecting(strict=False) as found:
        stable, unstable = build_release(mutated)
        surface = unstable if expected.unstable else stable
        files = build_package(surface).files()
    with collecting(strict=False):
        diff = diff_releases(base, mutated, ("stable", "unstable"))
    package = f"evo_{name}"
    for rel, text in files.items():
        path = work / "packages" / package / rel.split("/", 1)[1]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    schema_file = "schema.unstable.json" if expected.unstable else "schema.json"
    return Outcome(name, expected, docs[schema_file], surface, files, found.gaps, diff, folder, package)


# every mutated release is generated once, by the one pytest-xdist worker that runs this module
pytestmark = pytest.mark.xdist_group("test_corpus-outcomes")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    work = tmp_path_factory.mktemp("evolution")
    return {name: mutate(name, work) for name in OPERATORS}


@pytest.fixture(scope="module")
def packages(outcomes: dict[str, Outcome]) -> Path:
    first = next(iter(outcomes.values()))
    return first.folder.parents[2] / "packages"


def imported(outcome: Outcome, packages: Path) -> ModuleType:
    if str(packages) not in sys.path:
        sys.path.insert(0, str(packages))
    return __import__(outcome.package)


NAMES = sorted(OPERATORS)


def test_every_operator_says_which_upstream_change_it_models() -> None:
    assert len(OPERATORS) >= 8
    for name, func in OPERATORS.items():
        assert func.__doc__ and len(func.__doc__.split()) > 8, name


@pytest.mark.parametrize("name", NAMES)
def test_the_mutated_release_generates_with_the_expected_gaps(
    outcomes: dict[str, Outcome], name: str
) -> None:
    outcome = outcomes[name]
    # one warning per gap and schema file: the stable and the unstable file may both have it
    assert {g.section for g in outcome.gaps} == set(outcome.expected.gaps)
    assert any(rel.endswith("/schema.py") for rel in outcome.files)
    assert any(rel.endswith("/bindings.py") for rel in outcome.files)


@pytest.mark.parametrize("name", NAMES)
def test_the_mutation_is_reported_under_its_rule(outcomes: dict[str, Outcome], name: str) -> None:
    outcome = outcomes[name]
    found = {(str(c.rule.id), c.subject, c.stability) for c in outcome.diff.changes}
    missing = [c for c in outcome.expected.changes if c not in found]
    assert not missing, f"not reported: {missing}\nreported: {sorted(found)[:60]}"
    if not outcome.expected.changes:
        assert outcome.diff.changes == ()


@pytest.mark.parametrize("name", NAMES)
def test_a_conformance_slice_agrees(outcomes: dict[str, Outcome], packages: Path, name: str) -> None:
    outcome = outcomes[name]
    package = imported(outcome, packages)
    target = Target(
        BASE, outcome.expected.unstable, surface=outcome.surface, package=package, root=outcome.root
    )
    result = check_surface(
        BASE, outcome.expected.unstable, 3, names=list(outcome.expected.types), target=target
    )
    assert result.examples >= len(outcome.expected.types)
    left = unexplained(result.disagreements, load_exceptions())
    assert not left, "\n".join(d.describe()[:600] for d in left[:5])


def test_all_mutated_packages_pass_mypy_strict(outcomes: dict[str, Outcome], packages: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            *sorted(o.package for o in outcomes.values()),
        ],
        capture_output=True,
        text=True,
        cwd=packages,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:]


def test_unknown_keywords_leave_the_output_byte_identical(outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes["add_unknown_keywords"]
    assert outcome.expected.same_output

    def body(files: dict[str, str], sha256: str) -> dict[str, str]:
        # the header and SCHEMA_SHA256 name the schema file's sha256, which the added keywords change
        return {rel: text.replace(sha256, "<sha256>") for rel, text in files.items()}

    base = release_files(BASE).schema(outcome.expected.unstable).sha256
    assert body(outcome.files, outcome.surface.schema_sha256) == body(
        base_package(outcome.expected.unstable), base
    )


def test_a_four_level_union_dispatches_in_one_step_per_level(
    outcomes: dict[str, Outcome], packages: Path
) -> None:
    schema = imported(outcomes["nest_union_deeper"], packages).schema
    data = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error", "errorKind": "tool"}
    found = TypeAdapter(schema.SessionUpdate).validate_python(data)
    assert type(found).__name__ == "ToolErrorIdleStateSessionUpdate"
    assert found.model_dump(by_alias=True, exclude_unset=True) == data
    custom = {**data, "errorKind": "_vendor/oom", "bytes": 1}
    other = TypeAdapter(schema.SessionUpdate).validate_python(custom)
    assert type(other).__name__ == "OtherErrorIdleStateSessionUpdate"
    assert other.model_dump(by_alias=True, exclude_unset=True) == custom


def test_an_unclassified_update_is_returned_and_never_stored(
    outcomes: dict[str, Outcome], packages: Path
) -> None:
    acp = imported(outcomes["add_session_update_tag"], packages)
    state = acp.SessionState("s")
    change = state.apply({"sessionId": "s", "update": {"sessionUpdate": "progress_update", "percent": 40}})
    assert type(change.update).__name__ == "ProgressSessionUpdate" and change.role == "other"
    assert state.dump() == acp.SessionState("s").dump()


def test_a_null_tag_member_takes_a_missing_outcome(outcomes: dict[str, Outcome], packages: Path) -> None:
    schema = imported(outcomes["add_null_tag_variant"], packages).schema
    found = TypeAdapter(schema.RequestPermissionOutcome).validate_python({})
    assert type(found).__name__ == "NoneRequestPermissionOutcome"


def test_a_new_side_gets_models_and_a_warning_naming_its_methods(
    outcomes: dict[str, Outcome], packages: Path
) -> None:
    outcome = outcomes["add_side"]
    (gap,) = [g for g in outcome.gaps if str(g.file).endswith("/schema.json")]
    assert "'observer'" in gap.message and "observer/announce" in gap.message
    schema = imported(outcome, packages).schema
    assert schema.AnnounceObserverNotification.model_validate({"observerName": "o"}).observer_name == "o"
    assert "observer/announce" not in {m.wire_name for m in outcome.surface.methods}
