"""mypy --strict on a snippet that imports the generated packages: what a user's type checker says."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

from tests.support.releases import GENERATED


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache per test module, so the generated packages are analysed once per module."""
    return tmp_path_factory.mktemp("mypy-cache")


def mypy_errors(tmp_path: Path, cache_dir: Path, source: str) -> list[str]:
    """The ``error:`` lines of ``mypy --strict`` on ``source``, with ``generated/`` importable."""
    module = tmp_path / "typed_use.py"
    module.write_text(source)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MYPYPATH", str(GENERATED))
        out, err, _ = api.run(["--strict", "--cache-dir", str(cache_dir), str(module)])
    assert not err, err
    return [line for line in out.splitlines() if ": error:" in line]
