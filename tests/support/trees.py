"""Folders as ``{relative path: bytes}``, for tests that compare output trees byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path


def is_cache(relative: Path) -> bool:
    """``__pycache__``, ``.mypy_cache`` and other dot folders: written by tools, not by the generator."""
    return any(part == "__pycache__" or part.startswith(".") for part in relative.parts)


def tree_bytes(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        return {}
    found: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_file() and not is_cache(relative):
            found[relative.as_posix()] = path.read_bytes()
    return found


def copy_tree(source: Path, target: Path) -> Path:
    """``source`` copied to ``target`` without caches."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    return target
