"""Fresh venvs for the tests that run what a user installs, built cheaply and offline after the first run.

A wheelhouse holds the wheels of some requirements at the versions the checkout's own venv has
(so that a fresh venv tests what ``make test`` tests); ``pip download`` fills it once, into
pytest's cache (``.pytest_cache/d/<name>``), and later runs find it there. A venv is made without
pip and filled from the wheelhouse alone (``--no-index``) by the checkout's pip.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

NOT_PINNED = frozenset({"acp-codegen", "pip", "setuptools", "wheel"})
"""What the checkout's venv holds that a wheelhouse takes at the requirement's version instead."""


def installed_versions() -> list[str]:
    """``name==version`` of every distribution of the checkout's venv (its tools aside)."""
    pins = {
        dist.metadata["Name"].lower(): f"{dist.metadata['Name']}=={dist.version}"
        for dist in metadata.distributions()
        if dist.metadata["Name"] and dist.metadata["Name"].lower() not in NOT_PINNED
    }
    return [pins[name] for name in sorted(pins)]


def wheelhouse(config: pytest.Config, name: str, requirements: list[str], pinned: bool = True) -> Path:
    """A folder with the wheels of ``requirements`` and what they need, at the checkout's versions
    (``pinned``), or else at the versions the requirements name."""
    assert config.cache is not None
    folder = config.cache.mkdir(name)
    constraints = installed_versions() if pinned else []
    key = hashlib.sha256("\n".join([*requirements, "--", *constraints]).encode()).hexdigest()
    stamp = folder / "requirements.sha256"
    if not stamp.is_file() or stamp.read_text().strip() != key:
        (folder / "constraints.txt").write_text("\n".join(constraints) + "\n")
        download = ["download", "--quiet", "--only-binary", ":all:", "--dest", str(folder)]
        download += ["--constraint", str(folder / "constraints.txt"), *requirements]
        subprocess.run([sys.executable, "-m", "pip", *download], check=True, timeout=900)
        stamp.write_text(key + "\n")
    return folder


def fresh_venv(folder: Path, wheels: Path, *packages: str | Path) -> Path:
    """A venv holding ``packages`` (and what they depend on) and nothing else; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    install = ["install", "--quiet", "--no-index", "--find-links", str(wheels), *map(str, packages)]
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), *install], check=True, timeout=600)
    return python
