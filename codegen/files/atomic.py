"""Whole files in one step, and operating-system errors as one line.

A file is written beside its target and renamed over it, so a failed or
killed run leaves the old one; a new file gets the user's umask and a
replaced one keeps its mode; and an operating-system error (permission,
read-only file system, busy, no space) becomes a :class:`CodegenError`
naming the path, so the command line prints one line and exits 2.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import CodegenError

TEMPORARY_INFIX = ".acp-codegen-"
"""Every temporary file or folder the tool makes is named ``.<target name>.acp-codegen-<random>``."""


def os_error(exc: OSError, path: str | Path | None = None, what: str = "cannot write") -> CodegenError:
    """``exc`` as a one-line error naming ``path`` (default: the file the error names)."""
    name = errno.errorcode.get(exc.errno or 0)
    reason = exc.strerror or str(exc)
    where = path if path is not None else exc.filename
    return CodegenError(f"{what}: {reason}" + (f" ({name})" if name else ""), file=where)


def default_file_mode() -> int:
    """The mode a new file gets under the current umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def stage(path: Path, data: bytes) -> Path:
    """Write ``data`` to a temporary file beside ``path``, with the mode ``path`` has or would get."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}{TEMPORARY_INFIX}")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        try:
            found = path.lstat()
            mode = found.st_mode & 0o7777 if not stat.S_ISLNK(found.st_mode) else default_file_mode()
        except (FileNotFoundError, NotADirectoryError):
            mode = default_file_mode()
        os.chmod(tmp, mode)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step, keeping an existing file's mode.

    For the tool's own files (its caches); what a command writes into a
    user's folder goes through :mod:`codegen.files.record`. Raises
    :class:`OSError` as the system reports it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = stage(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def check_folder(folder: Path, option: str = "--out") -> Path:
    """``folder`` if it is a folder or can become one; else one line saying what is in the way.

    A symbolic link to a folder is followed (the link stays the user's); a
    file, a dangling link or anything else that is not a folder is never
    replaced.
    """
    if folder.is_symlink() and folder.is_dir():
        return folder.resolve()
    if folder.exists() or folder.is_symlink():
        if not folder.is_dir():
            raise CodegenError(
                f"exists and is not a folder; {option} must name a folder (a file is never replaced)",
                file=folder,
            )
        return folder
    for parent in folder.parents:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise CodegenError(f"is not a folder, so {folder} cannot be made in it", file=parent)
            break
    return folder


def write_together(folder: Path, files: Mapping[str, bytes]) -> int:
    """Write ``files`` (relative path -> bytes) into ``folder``; how many changed.

    Every new content is staged beside its file first; only when all are
    staged are they renamed into place, so an error while writing (no space,
    read-only, permission) or an interrupt leaves every file as it was.
    Files whose content is unchanged are not touched, nor is any other file;
    a symbolic link in the way is replaced as a link (its target is not written).
    Raises :class:`OSError` as the system reports it, naming the user's path.
    """
    staged: list[tuple[Path, Path]] = []
    current = folder
    try:
        for name, data in files.items():
            current = folder / name
            try:
                if not current.is_symlink() and current.read_bytes() == data:
                    continue
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                pass
            current.parent.mkdir(parents=True, exist_ok=True)
            staged.append((stage(current, data), current))
        for tmp, current in staged:
            os.replace(tmp, current)
    except OSError as exc:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(current)) from None
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    return len(staged)


def write_files(
    folder: Path, files: Mapping[str, str], remove: Iterable[str] = (), option: str = "--out"
) -> int:
    """Write ``files`` (name -> text) into ``folder`` and delete the ``remove`` ones, with no record.

    The writer of a folder the tool has no record of: a command goes through
    :mod:`codegen.files.record` instead, which deletes only what it wrote.
    Errors are one-line :class:`CodegenError`.
    """
    folder = check_folder(folder, option)
    try:
        changed = write_together(folder, {name: text.encode() for name, text in files.items()})
        gone = [folder / name for name in remove if (folder / name).is_file()]
        for path in gone:
            path.unlink()
    except OSError as exc:
        raise os_error(exc) from None
    return changed + len(gone)
