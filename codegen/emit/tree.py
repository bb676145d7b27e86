"""Folders of generated files, written in one step: the whole old tree or the whole new one.

A tree is a mapping of relative paths to text.  :func:`write_tree` assembles
the new one in a temporary sibling folder and swaps it in (an atomic
exchange where the platform has one), so a failed or killed run leaves the
old tree exactly as it was; :func:`recover` finishes a swap a kill
interrupted.  ``generate`` writes ``generated/`` with it, ``vendor`` a user's
vendored package.

The output folder is the user's: a file is never replaced by a folder, the
only folders removed are the tool's own marked temporary ones, modes follow
the user's umask (and an existing folder keeps its own), and an
operating-system error is one line naming the path.
"""

from __future__ import annotations

import contextlib
import ctypes
import difflib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ..files import TEMPORARY_INFIX, check_folder, os_error

MARKER = ".acp-codegen-temporary"
"""The file that marks a temporary folder as this tool's (JSON naming the tool and the target)."""
NEW, OLD = "new", "old"
"""Inside a temporary folder: the tree being written, and the old one while the fallback swap runs."""


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


def _marker(out: Path) -> str:
    return json.dumps({"tool": "acp-codegen", "target": out.name}) + "\n"


def _temporary_folders(out: Path) -> list[Path]:
    """This tool's temporary folders for ``out``, oldest first, and nothing of the user's.

    A folder is one of them only if it is named ``.<out>.acp-codegen-<random>``
    and holds the marker file naming ``out`` (or is empty: a run killed before
    it wrote the marker, or after it removed it).
    """
    pattern = re.compile(re.escape(f".{out.name}{TEMPORARY_INFIX}") + r"[a-z0-9_]{8}")
    found = []
    try:
        candidates = list(out.parent.iterdir())
    except FileNotFoundError:
        return []
    for path in candidates:
        if not pattern.fullmatch(path.name) or path.is_symlink() or not path.is_dir():
            continue
        try:
            marked = (path / MARKER).read_text() == _marker(out)
        except (OSError, UnicodeDecodeError):
            marked = False
        if marked or not any(path.iterdir()):
            found.append(path)
    return sorted(found, key=lambda p: p.stat().st_mtime_ns)


def _remove(work: Path) -> None:
    """Delete one of this tool's temporary folders, its marker last (so a kill leaves it recognisable)."""
    for child in work.iterdir():
        if child.name != MARKER:
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    (work / MARKER).unlink(missing_ok=True)
    work.rmdir()


def recover(out: Path) -> None:
    """Put back the old tree if a run was killed between the two renames of the fallback swap."""
    if out.exists() or out.is_symlink():
        return
    for work in reversed(_temporary_folders(out)):
        if (work / OLD).is_dir():
            os.replace(work / OLD, out)
            return


def _keep_modes(out: Path, staging: Path, tree: Mapping[str, str]) -> None:
    """Give the new tree the modes of the old one where a folder or file is in both (the rest: the umask)."""
    folders = {""} | {rel.rsplit("/", 1)[0] for rel in tree if "/" in rel}
    for sub in folders:
        for prefix in _prefixes(sub):
            _copy_mode(out / prefix, staging / prefix)
    for rel in tree:
        _copy_mode(out / rel, staging / rel)


def _prefixes(rel: str) -> list[str]:
    parts = rel.split("/") if rel else []
    return ["/".join(parts[:i]) for i in range(len(parts) + 1)]


def _copy_mode(old: Path, new: Path) -> None:
    try:
        mode = old.stat(follow_symlinks=False).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if stat.S_IFMT(mode) == stat.S_IFMT(new.stat(follow_symlinks=False).st_mode):
        os.chmod(new, stat.S_IMODE(mode))


def write_tree(out: Path, tree: Mapping[str, str], option: str = "--out") -> bool:
    """Replace the folder ``out`` with ``tree`` in one step; ``False`` if it already matched.

    The new tree is written into a temporary sibling folder (named for this
    tool and marked, see :func:`_temporary_folders`) and swapped in; only the
    tool's own temporary folders are ever removed. New folders and files get
    the user's umask; a folder or file that was there keeps its mode. ``out``
    must be a folder or absent (a file is never replaced), and every
    operating-system error is a one-line :class:`CodegenError` naming the
    path, with ``out`` left as it was.
    """
    out = check_folder(out, option)
    work: Path | None = None
    try:
        recover(out)
        for stale in _temporary_folders(out):  # what a killed run left
            _remove(stale)
        if read_tree(out) == tree:
            return False
        out.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}{TEMPORARY_INFIX}"))
        (work / MARKER).write_text(_marker(out))
        staging = work / NEW
        staging.mkdir()
        for rel, text in tree.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        _keep_modes(out, staging, tree)
        if not out.exists():
            os.replace(staging, out)
        elif not _exchange(staging, out):  # after an exchange, staging holds the old tree
            os.replace(out, work / OLD)
            os.replace(staging, out)
    except OSError as exc:
        if work is not None:
            _discard(work, out)
        raise os_error(exc, _user_path(exc, out, work)) from None
    except BaseException:
        if work is not None:
            _discard(work, out)
        raise
    # the old tree, now that the new one is in place; if that fails, the write is still done and
    # the next run removes the marked folder left behind
    with contextlib.suppress(OSError):
        _remove(work)
    return True


def _discard(work: Path, out: Path) -> None:
    """Undo a failed write: the old tree back in place if it was moved, the temporary folder gone."""
    try:
        recover(out)
        _remove(work)
    except OSError:
        pass  # a marked folder left behind is removed by the next run


def _user_path(exc: OSError, out: Path, work: Path | None) -> Path:
    """The path an error is about, as the user knows it (a staged file is named as its target)."""
    if exc.filename is None:
        return out
    path = Path(os.fsdecode(exc.filename))
    if work is not None:
        if path.is_relative_to(work / NEW):
            return out / path.relative_to(work / NEW)
        if path.is_relative_to(work):
            return out
    if path.name.startswith(f".{out.name}{TEMPORARY_INFIX}"):
        return out
    return path


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
