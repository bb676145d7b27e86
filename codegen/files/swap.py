"""Folders written in one step: the whole old folder or the whole new one, and nothing of the user's lost.

:func:`replace_folder` assembles the new folder in a temporary sibling and
swaps it in (an atomic exchange where the platform has one), so a failed,
interrupted or killed run leaves the old folder exactly as it was;
:func:`recover` finishes a swap a kill interrupted. Whatever the old folder
holds that the tool did not write (a path outside ``owned``) is carried into
the new one as it is: a file or a symbolic link by a hard link to the same
inode (a copy where the file system has none), a folder made again with its
mode. So the user's files keep their bytes, mode and link target.

The only folders ever removed are the tool's own marked temporary ones;
modes follow the user's umask, and a folder or file that was there keeps
its own.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

from .atomic import TEMPORARY_INFIX

MARKER = ".acp-codegen-temporary"
"""The file that marks a temporary folder as this tool's (JSON naming the tool and the target)."""
NEW, OLD = "new", "old"
"""Inside a temporary folder: the tree being written, and the old one while the fallback swap runs."""


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


def _marker(target: Path) -> str:
    return json.dumps({"tool": "acp-codegen", "target": target.name}) + "\n"


def temporary_folders(target: Path) -> list[Path]:
    """This tool's temporary folders for ``target``, oldest first, and nothing of the user's.

    A folder is one of them only if it is named ``.<target>.acp-codegen-<random>``
    and holds the marker file naming ``target`` (or is empty: a run killed before
    it wrote the marker, or after it removed it).
    """
    pattern = re.compile(re.escape(f".{target.name}{TEMPORARY_INFIX}") + r"[a-z0-9_]{8}")
    found = []
    try:
        candidates = list(target.parent.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    for path in candidates:
        if not pattern.fullmatch(path.name) or path.is_symlink() or not path.is_dir():
            continue
        try:
            marked = (path / MARKER).read_text() == _marker(target)
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
                _open_up(child)
                shutil.rmtree(child)
            else:
                child.unlink()
    (work / MARKER).unlink(missing_ok=True)
    work.rmdir()


def _open_up(folder: Path) -> None:
    """Inside a temporary folder only: make every folder of an old tree writable, so it can be emptied.

    Only folders are changed: a file's inode may be the user's, carried into the new tree.
    """
    os.chmod(folder, stat.S_IMODE(os.lstat(folder).st_mode) | stat.S_IRWXU)
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            _open_up(Path(entry.path))


def recover(target: Path) -> None:
    """Put back the old folder if a run was killed between the two renames of the fallback swap."""
    if target.exists() or target.is_symlink():
        return
    for work in reversed(temporary_folders(target)):
        if (work / OLD).exists() or (work / OLD).is_symlink():
            os.replace(work / OLD, target)
            return


def clean(target: Path) -> None:
    """What a killed run left for ``target``: the old folder put back, the temporary folders removed."""
    recover(target)
    for stale in temporary_folders(target):
        _remove(stale)


def walk(folder: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every path under ``folder`` (relative, POSIX) with its ``lstat``; symbolic links are not followed."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        info = entry.stat(follow_symlinks=False)
        yield entry.name, info
        if stat.S_ISDIR(info.st_mode):
            for rel, found in walk(Path(entry.path)):
                yield f"{entry.name}/{rel}", found


def foreign(folder: Path, owned: Collection[str], files: Collection[str]) -> dict[str, os.stat_result]:
    """What ``folder`` holds that the tool did not write: paths outside ``owned`` to keep as they are.

    A folder is listed only when it is empty (the tool never makes one
    without a file in it); a path the new ``files`` replace is not listed.
    """
    if folder.is_symlink() or not folder.is_dir():
        return {}
    listing = dict(walk(folder))
    filled = {rel.rsplit("/", 1)[0] for rel in listing if "/" in rel}
    needed = {rel.rsplit("/", 1)[0] for rel in files if "/" in rel}
    needed = {"/".join(sub.split("/")[: i + 1]) for sub in needed for i in range(sub.count("/") + 1)}
    kept: dict[str, os.stat_result] = {}
    for rel, info in listing.items():
        if rel in files or (rel in owned and stat.S_ISREG(info.st_mode)):
            continue  # what the tool writes now, and what it wrote (a link put there since is the user's)
        is_dir = stat.S_ISDIR(info.st_mode)
        if (is_dir and rel in filled) or (not is_dir and rel in needed):
            continue  # a folder whose entries are listed; a file where the new files need a folder
        kept[rel] = info
    return kept


def _carry(source: Path, target: Path, info: os.stat_result) -> None:
    """``source`` (one of the user's entries) made again at ``target``: the same inode where possible."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if stat.S_ISDIR(info.st_mode):
        target.mkdir()
        os.chmod(target, stat.S_IMODE(info.st_mode))
        return
    try:
        os.link(source, target, follow_symlinks=False)
        return
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EACCES):
            raise
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(source), target)
    elif stat.S_ISREG(info.st_mode):
        shutil.copy2(source, target)
    else:
        raise OSError(errno.ENOTSUP, "cannot carry a special file into the new folder", str(source))


def _keep_modes(old: Path, staging: Path, files: Collection[str]) -> None:
    """The new folder gets the modes of the old one where a folder or file is in both (else: the umask)."""
    folders = {""} | {rel.rsplit("/", 1)[0] for rel in files if "/" in rel}
    for sub in sorted(folders):
        parts = sub.split("/") if sub else []
        for i in range(len(parts) + 1):
            _copy_mode(old / "/".join(parts[:i]), staging / "/".join(parts[:i]))
    for rel in files:
        _copy_mode(old / rel, staging / rel)


def _copy_mode(old: Path, new: Path) -> None:
    try:
        mode = old.stat(follow_symlinks=False).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if stat.S_ISLNK(mode):
        return  # a link has no mode of its own, and chmod would follow it
    if stat.S_IFMT(mode) == stat.S_IFMT(new.stat(follow_symlinks=False).st_mode):
        os.chmod(new, stat.S_IMODE(mode))


def unchanged(folder: Path, files: Mapping[str, bytes], owned: Collection[str]) -> bool:
    """Whether ``folder`` already holds ``files`` byte for byte and none of the ``owned`` ones besides."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    for rel, data in files.items():
        path = folder / rel
        try:
            if path.is_symlink() or path.read_bytes() != data:
                return False
        except OSError:
            return False
    gone = [rel for rel in owned if rel not in files]
    return not any((folder / rel).is_file() and not (folder / rel).is_symlink() for rel in gone)


def replace_folder(folder: Path, files: Mapping[str, bytes], owned: Collection[str] = ()) -> bool:
    """Make ``folder`` hold ``files`` in one step, keeping what the tool did not write; ``False`` if it did.

    ``owned`` are the paths (relative) the tool wrote there before: those
    that ``files`` lacks are removed (if they are still files: a link put
    there since is the user's); every other path already in the folder is
    carried over unchanged. Whatever is at ``folder`` and is not a folder
    (a file or a link the caller was told to replace) is replaced as a
    whole. A folder left with nothing is removed. Raises :class:`OSError`
    as the system reports it, with ``folder`` as it was.
    """
    clean(folder)
    if unchanged(folder, files, owned):
        return False
    keep = foreign(folder, owned, files)
    present = folder.exists() or folder.is_symlink()
    if not present and not files:
        return False
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}{TEMPORARY_INFIX}"))
    try:
        (work / MARKER).write_text(_marker(folder))
        staging = work / NEW
        if files or keep:
            staging.mkdir()
            for rel, data in files.items():
                path = staging / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            for rel, info in keep.items():
                _carry(folder / rel, staging / rel, info)
            if folder.is_dir() and not folder.is_symlink():
                _keep_modes(folder, staging, [*files, *keep])
        if not present:
            os.replace(staging, folder)
        elif not staging.exists():  # nothing left: the old folder goes into the temporary one
            os.replace(folder, work / OLD)
        elif not _exchange(staging, folder):  # after an exchange, staging holds the old folder
            os.replace(folder, work / OLD)
            os.replace(staging, folder)
    except BaseException:
        with contextlib.suppress(OSError):  # a marked folder left behind is removed by the next run
            recover(folder)
            _remove(work)
        raise
    # the old folder, now that the new one is in place; if that fails, the write is still done and
    # the next run removes the marked folder left behind
    with contextlib.suppress(OSError):
        _remove(work)
    return True


def user_path(exc: OSError, folder: Path) -> Path:
    """The path an error is about, as the user knows it (a staged file is named as its target)."""
    if exc.filename is None:
        return folder
    path = Path(os.fsdecode(exc.filename))
    prefix = f".{folder.name}{TEMPORARY_INFIX}"
    for parent in (path, *path.parents):
        if parent.name.startswith(prefix) and parent.parent == folder.parent:
            inner = path.relative_to(parent)
            if inner.parts[:1] == (NEW,):
                return folder.joinpath(*inner.parts[1:])
            return folder
    return path
