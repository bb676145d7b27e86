"""Writing into the user's folders: whole files in one step, and OS errors as one line.

Every file the tool writes outside its own temporary folders goes through
here or through :mod:`codegen.emit.tree` (whole folders). The rules: a file
is written beside its target and renamed over it, so a failed or killed run
leaves the old one; a new file gets the user's umask and a replaced one
keeps its mode; and an operating-system error (permission, read-only file
system, busy, no space) becomes a :class:`CodegenError` naming the path, so
the command line prints one line and exits 2.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from .errors import CodegenError

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


def _stage(path: Path, data: bytes) -> Path:
    """Write ``data`` to a temporary file beside ``path``, with the mode ``path`` has or would get."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}{TEMPORARY_INFIX}")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = default_file_mode()
        os.chmod(tmp, mode)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step, keeping an existing file's mode.

    Raises :class:`OSError` as the system reports it; :func:`write_files` is the
    command-line-facing variant.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _stage(path, data)
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


def write_files(
    folder: Path, files: Mapping[str, str], remove: Iterable[str] = (), option: str = "--out"
) -> int:
    """Write ``files`` (name -> text) into ``folder``, delete the ``remove`` ones; how many changed.

    Every new content is staged beside its file first; only when all are
    staged are they renamed into place and the removed files deleted, so an
    error while writing (no space, read-only, permission) leaves the folder
    as it was. Files whose content is unchanged are not touched, nor is any
    other file in the folder. Errors are one-line :class:`CodegenError`.
    """
    folder = check_folder(folder, option)
    staged: list[tuple[Path, Path]] = []
    current = folder  # what the error names: the user's file, never a temporary one
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            current = folder / name
            data = text.encode("utf-8")
            try:
                if current.read_bytes() == data:
                    continue
            except FileNotFoundError:
                pass
            staged.append((_stage(current, data), current))
        for tmp, current in staged:
            os.replace(tmp, current)
        gone = [folder / name for name in remove if (folder / name).exists()]
        for current in gone:
            current.unlink()
    except OSError as exc:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise os_error(exc, current) from None
    return len(staged) + len(gone)
