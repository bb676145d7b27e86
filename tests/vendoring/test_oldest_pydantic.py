"""The generated models on the oldest pydantic they declare, and a clear refusal of an older one.

``_base.OLDEST_PYDANTIC`` is what ``pyproject.toml`` and the package's README promise.  A lenient
field's fallback omits the field, so a dropped value is out of ``model_fields_set``: pydantic 2.12
does that, 2.11 counts the field as given (``exclude_unset`` would then write a ``null`` nobody
sent).  So the committed package runs here in fresh venvs: at the oldest minor it promises it
must be exact, and one minor older it must refuse to import, in one line that says what to install.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from codegen.runtime._base import OLDEST_PYDANTIC
from tests.support.releases import ROOT
from tests.support.venvs import fresh_venv, wheelhouse

pytestmark = pytest.mark.xdist_group("test_oldest_pydantic")

OLDEST = f"{OLDEST_PYDANTIC[0]}.{OLDEST_PYDANTIC[1]}"
OLDER = f"{OLDEST_PYDANTIC[0]}.{OLDEST_PYDANTIC[1] - 1}"

CHECK = """
import json
from acp_v2_sdk_2_3_0.schema import ToolCallUpdate, UpdateSessionNotification

dropped = ToolCallUpdate.model_validate_json('{"toolCallId": "t", "kind": 123, "title": "T"}')
print(json.dumps([dropped.kind, sorted(dropped.model_fields_set), dropped.model_dump(exclude_unset=True)]))
update = UpdateSessionNotification.model_validate(
    {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "t", "kind": 5}}
)
print(json.dumps(update.model_dump(mode="json", by_alias=True, exclude_unset=True)))
"""


def python_with(version: str, pytestconfig: pytest.Config, tmp_path: Path) -> Path:
    wanted = [f"pydantic=={version}.*"]
    wheels = wheelhouse(pytestconfig, f"pydantic-{version}-wheels", wanted, pinned=False)
    return fresh_venv(tmp_path / f"venv-{version}", wheels, f"pydantic=={version}.*")


def run(python: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generated")}
    return subprocess.run([str(python), "-c", CHECK], capture_output=True, text=True, env=env, timeout=120)


def test_the_declared_minimum_is_pyprojects() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"pydantic>={OLDEST},<3" in dependencies
    assert f"pydantic ({OLDEST} or later)" in (ROOT / "generated" / "README.md").read_text()


def test_the_oldest_pydantic_reads_a_dropped_lenient_value_as_absent(
    pytestconfig: pytest.Config, tmp_path: Path
) -> None:
    done = run(python_with(OLDEST, pytestconfig, tmp_path))
    assert done.returncode == 0, done.stderr
    dropped, update = map(json.loads, done.stdout.splitlines())
    assert dropped == [None, ["title", "tool_call_id"], {"tool_call_id": "t", "title": "T"}]
    assert update == {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "t"}}


def test_an_older_pydantic_is_refused_in_one_line(pytestconfig: pytest.Config, tmp_path: Path) -> None:
    done = run(python_with(OLDER, pytestconfig, tmp_path))
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ImportError: the ACP models need pydantic {OLDEST} or later, not {OLDER}.")
    assert last.endswith(f"pip install 'pydantic>={OLDEST},<3'")
