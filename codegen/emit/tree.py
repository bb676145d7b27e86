"""Folders of generated files, written in one step: the whole old tree or the whole new one.

A tree is a mapping of relative paths to text.  :func:`write_tree` assembles
the new one in a temporary sibling folder and swaps it in (an atomic
exchange where the platform has one), so a failed or killed run leaves the
old tree exactly as it was; :func:`recover` finishes a swap a kill
interrupted.  ``generate`` writes ``generated/`` with it, ``vendor`` a user's
vendored package.
"""

from __future__ import annotations

import ctypes
import difflib
import os
import shutil
import sys
import tempfile
from pathlib import Path


def read_tree(out: Path) -> dict[str, str]:
    """The generated files under ``out``; caches (``__pycache__``, ``.mypy_cache``...) are not ours."""
    files: dict[str, str] = {}
    if not out.is_dir():
        return files
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out)
        if path.is_file() and not any(part == "__pycache__" or part.startswith(".") for part in rel.parts):
            files[rel.as_posix()] = path.read_bytes().decode("utf-8", errors="surrogateescape")
    return files


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux ``renameat2(RENAME_EXCHANGE)``)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    result: int = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return result == 0


def recover(out: Path) -> None:
    """Put back the old tree if a run was killed between the two renames of the fallback swap."""
    if out.exists():
        return
    retired = sorted(out.parent.glob(f".{out.name}.old-*"))
    if retired:
        os.replace(retired[-1], out)


def write_tree(out: Path, tree: dict[str, str]) -> bool:
    """Replace ``out`` with ``tree`` in one step; ``False`` if it already matched."""
    recover(out)
    if read_tree(out) == tree:
        return False
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in out.parent.glob(f".{out.name}.*"):
        shutil.rmtree(stale, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.new-"))
    try:
        for rel, text in tree.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        if not out.exists():
            os.replace(staging, out)
        elif _exchange(staging, out):
            shutil.rmtree(staging)
        else:
            retired = out.parent / f".{out.name}.old-{os.getpid()}"
            os.replace(out, retired)
            os.replace(staging, out)
            shutil.rmtree(retired)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return True


def diff_trees(old: dict[str, str], new: dict[str, str], context: int = 3, limit: int = 400) -> list[str]:
    """A readable unified diff between two trees (at most ``limit`` lines)."""
    lines: list[str] = []
    for rel in sorted(set(old) | set(new)):
        if old.get(rel) == new.get(rel):
            continue
        if rel not in new:
            lines.append(f"only in generated/ (the generator no longer writes it): {rel}")
            continue
        if rel not in old:
            lines.append(f"missing from generated/: {rel}")
            continue
        lines.extend(
            difflib.unified_diff(
                old[rel].splitlines(),
                new[rel].splitlines(),
                f"generated/{rel} (committed)",
                f"generated/{rel} (regenerated)",
                n=context,
                lineterm="",
            )
        )
    if len(lines) > limit:
        lines = [*lines[:limit], f"... {len(lines) - limit} more lines of differences"]
    return lines
