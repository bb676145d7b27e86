"""Folders of generated files as ``{relative path: text}``: read one, and diff two.

Writing them is :mod:`codegen.files`' work (the record of what the tool
wrote, and whole folders swapped in one step).
"""

from __future__ import annotations

import difflib
from pathlib import Path


def read_tree(out: Path) -> dict[str, str]:
    """The files under ``out``; caches (``__pycache__``, ``.mypy_cache``...) and dotfiles are not read."""
    files: dict[str, str] = {}
    if not out.is_dir():
        return files
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out)
        if path.is_file() and not any(part == "__pycache__" or part.startswith(".") for part in rel.parts):
            files[rel.as_posix()] = path.read_bytes().decode("utf-8", errors="surrogateescape")
    return files


def diff_trees(
    old: dict[str, str], new: dict[str, str], context: int = 3, limit: int = 400, label: str = "generated"
) -> list[str]:
    """A readable unified diff between two trees (at most ``limit`` lines), paths shown under ``label``/."""
    lines: list[str] = []
    for rel in sorted(set(old) | set(new)):
        if old.get(rel) == new.get(rel):
            continue
        if rel not in new:
            lines.append(f"only in {label}/ (the generator no longer writes it): {rel}")
            continue
        if rel not in old:
            lines.append(f"missing from {label}/: {rel}")
            continue
        lines.extend(
            difflib.unified_diff(
                old[rel].splitlines(),
                new[rel].splitlines(),
                f"{label}/{rel} (as it is)",
                f"{label}/{rel} (regenerated)",
                n=context,
                lineterm="",
            )
        )
    if len(lines) > limit:
        lines = [*lines[:limit], f"... {len(lines) - limit} more lines of differences"]
    return lines
