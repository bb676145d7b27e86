"""The test suite's own machinery: what `make test` relies on to finish in its budget.

Several modules build a costly fixture once and share it through ``pytest.mark.xdist_group``
(`make test` runs ``--dist loadgroup``). A pytest that pytest-xdist cannot tag leaves every
group ungrouped without a word: each worker then builds the fixture again (pytest 9.2 with
pytest-xdist 3.8 did, costing about two minutes of CPU).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GROUPED = '''
import os
import pytest

pytestmark = pytest.mark.xdist_group("one")


@pytest.mark.parametrize("n", range(8))
def test_worker(n):
    with open("workers", "a") as out:
        out.write(os.environ["PYTEST_XDIST_WORKER"] + " ")
'''


@pytest.mark.parametrize("grouped", [True, False])
def test_an_xdist_group_runs_on_one_worker(tmp_path: Path, grouped: bool) -> None:
    module = GROUPED if grouped else GROUPED.replace('pytestmark = pytest.mark.xdist_group("one")', "")
    (tmp_path / "test_grouped.py").write_text(module)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "2", "--dist", "loadgroup"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    workers = (tmp_path / "workers").read_text().split()
    assert len(workers) == 8
    # without the group, eight tests spread over both workers: the check can tell the two apart
    assert len(set(workers)) == (1 if grouped else 2), workers
