"""What acp-codegen wrote in an output folder: the one door every writing command goes through.

Every folder a command writes into (``generate --out``, ``reports --out``, a
schema store for ``fetch`` and ``lock``; a new command goes through
:class:`Output` too) holds a record, ``ACP-CODEGEN.json``:
per command, the sha256 of every file it wrote there and the folders it
writes whole (a generated package), with what the command says about each.
A vendored package's record is its own ``VENDORED.json`` (see
:func:`write_folder`). The rules, for every command:

* The tool changes only the paths in its record and the paths it is about
  to write. Every other path (dotfiles, ``.git``, symbolic links, a file put
  inside a generated package) is left as it is: bytes, mode, link target.
* A path it wants that holds something it did not write is refused, in one
  line naming the path and ``--force``, before anything is written: a file
  with other bytes, a symbolic link, a file where it needs a folder, or a
  folder it did not write where it writes a whole one. ``--force`` replaces
  exactly those paths and never deletes another: the files of a folder it
  writes into stay. A folder of the user's where the tool wants a *file* is
  refused even with ``--force``.
* A file that already holds the bytes the tool would write is taken into
  the record as it is: that is how a folder written before records existed
  is adopted (nothing in it changes).
* What the record lists and the run no longer writes is removed, and only
  that: of a whole folder, the files the tool wrote in it (the folder goes
  when nothing else is left in it).
* Whole folders are swapped in one step (:mod:`.swap`), loose files staged
  and renamed together (:func:`.atomic.write_together`), so an error, Ctrl-C or
  a kill leaves each folder and file old or new, never half. The record is
  written first with every path the run may touch and last with what it
  wrote, so a killed run never leaves a file of the tool's outside it.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import CodegenError, pointer_join
from . import swap
from .atomic import check_folder, os_error, write_together

RECORD_NAME = "ACP-CODEGEN.json"
FORMAT = 1
NOTE = (
    "Written by acp-codegen: per command, the sha256 of every file it wrote in this folder and the "
    "folders it writes whole. It changes only these paths; everything else here is yours and stays "
    "as it is."
)
About = Mapping[str, str | int]
"""What a command says about a folder it writes whole (``generate``: the package's release...)."""


def sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Written:
    """One command's part of a record."""

    files: Mapping[str, str] = field(default_factory=dict)
    """Path (relative, POSIX) -> sha256 of the bytes written."""
    folders: Mapping[str, About] = field(default_factory=dict)
    """Top-level folders written whole -> what the command says about each."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.folders:
            data["folders"] = {name: dict(about) for name, about in sorted(self.folders.items())}
        data["files"] = dict(sorted(self.files.items()))
        return data


@dataclass(frozen=True)
class Record:
    """Everything acp-codegen wrote in one folder, by command."""

    commands: Mapping[str, Written] = field(default_factory=dict)

    def part(self, command: str) -> Written:
        return self.commands.get(command, Written())

    def owned(self) -> frozenset[str]:
        """Every file the tool wrote here, whichever command wrote it."""
        return frozenset(rel for part in self.commands.values() for rel in part.files)

    def to_json(self) -> str:
        written = {name: part.to_json() for name, part in sorted(self.commands.items()) if part.files}
        return json.dumps({"format": FORMAT, "note": NOTE, "written": written}, indent=1) + "\n"


def read_record(folder: Path, force: bool = False) -> Record:
    """The record of ``folder`` (empty if it has none); one line if it is not one (``force``: empty)."""
    path = folder / RECORD_NAME
    try:
        if path.is_symlink() or path.is_dir():
            raise ValueError("it is not a file")
        raw = path.read_bytes()
    except FileNotFoundError:
        return Record()
    except (OSError, ValueError) as exc:
        return _unreadable(path, str(exc), force)
    try:
        return _parse(json.loads(raw.decode("utf-8")), path)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return _unreadable(path, f"not JSON ({exc})", force)
    except CodegenError as error:
        if force:
            return Record()
        raise error from None


def _unreadable(path: Path, why: str, force: bool) -> Record:
    if force:
        return Record()
    raise CodegenError(
        f"is not a record acp-codegen can read ({why}); move it away, or pass --force to write a new one",
        file=path,
    )


def _parse(data: Any, path: Path) -> Record:
    def fail(message: str, pointer: str) -> CodegenError:
        return CodegenError(
            f"{message}; fix or move away the record, or pass --force to write a new one",
            file=path,
            pointer=pointer,
        )

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise fail(f"not an acp-codegen record of format {FORMAT}", "/format")
    written = data.get("written")
    if not isinstance(written, dict):
        raise fail("'written' must be an object", "/written")
    commands: dict[str, Written] = {}
    for command, part in written.items():
        where = pointer_join("/written", command)
        if not isinstance(part, dict):
            raise fail("must be an object", where)
        files, folders = part.get("files", {}), part.get("folders", {})
        if not isinstance(files, dict) or not all(
            isinstance(digest, str) and _inside(rel) for rel, digest in files.items()
        ):
            raise fail("'files' must map paths inside the folder to sha256 sums", f"{where}/files")
        if not isinstance(folders, dict) or not all(
            _inside(name)
            and "/" not in name
            and isinstance(about, dict)
            and all(isinstance(v, str | int) for v in about.values())
            for name, about in folders.items()
        ):
            raise fail("'folders' must map folder names to objects of strings", f"{where}/folders")
        commands[command] = Written(dict(files), {name: dict(about) for name, about in folders.items()})
    return Record(commands)


def _inside(rel: str) -> bool:
    path = PurePosixPath(rel)
    return bool(rel) and not path.is_absolute() and ".." not in path.parts and "\\" not in rel


def _under(rel: str, folder: str) -> bool:
    return rel.startswith(folder + "/")


def _prefixes(rel: str) -> list[str]:
    """``a/b/c.py`` -> ``["a", "a/b"]``: the folders a path needs."""
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _regular(path: Path) -> bool:
    """Whether ``path`` is a file of its own (not a link, which would be the user's)."""
    mode = _lstat(path)
    return mode is not None and stat.S_ISREG(mode)


def _lstat(path: Path) -> int | None:
    """The file type and mode of ``path`` without following a link (``None``: nothing there)."""
    try:
        return path.lstat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None


@dataclass(frozen=True)
class Conflict:
    """A path the run wants that holds something the tool did not write."""

    path: str
    what: str
    forceable: bool = True


@dataclass(frozen=True)
class Difference:
    """A path whose bytes a run would change (``None``: absent before, or removed)."""

    path: str
    old: bytes | None
    new: bytes | None


class Output:
    """One output folder of one command: what the tool wrote there, and the way to change it."""

    def __init__(self, folder: Path, command: str, *, option: str = "--out", force: bool = False) -> None:
        self.folder = check_folder(folder, option)
        self.command = command
        self.force = force
        self.record = read_record(self.folder, force)

    def kept(self, scope: Collection[str]) -> dict[str, About]:
        """The folders this command wrote whole outside ``scope`` that are still there, with their data."""
        part = self.record.part(self.command)
        return {
            name: about
            for name, about in part.folders.items()
            if name not in scope
            and any(_under(rel, name) and _regular(self.folder / rel) for rel in part.files)
        }

    def plan(
        self,
        files: Mapping[str, bytes],
        *,
        whole: Mapping[str, About] | None = None,
        scope: Collection[str] | None = None,
        adopt: Collection[str] = (),
    ) -> Plan:
        """What writing ``files`` would do: the new record, the removals, the conflicts; nothing written.

        ``whole``: the top-level folders among ``files`` written in one step
        each, with what the command says about them. ``scope``: the paths
        (files or folders) this run answers for; what the command's record
        lists inside them and ``files`` lacks is removed (``None``: the whole
        folder). ``adopt``: paths whose content the command has read and
        knows as its own format (a lock file), written over without asking.
        """
        whole = dict(whole or {})
        for rel in files:
            if not _inside(rel) or rel == RECORD_NAME:
                raise ValueError(f"not a path the tool may write: {rel!r}")
        part = self.record.part(self.command)

        def in_scope(rel: str) -> bool:
            return scope is None or any(rel == s or _under(rel, s) for s in scope)

        removed = sorted(
            rel for rel in part.files if in_scope(rel) and rel not in files and _regular(self.folder / rel)
        )
        kept_files = {
            rel: digest
            for rel, digest in part.files.items()
            if not in_scope(rel) and rel not in files and _regular(self.folder / rel)
        }
        kept_folders = {
            name: about
            for name, about in part.folders.items()
            if name not in whole and any(_under(rel, name) for rel in kept_files)
        }
        mine = Written(
            {**kept_files, **{rel: sha256(data) for rel, data in files.items()}}, {**kept_folders, **whole}
        )
        others = {
            name: Written(
                {rel: d for rel, d in other.files.items() if rel not in files},
                {n: a for n, a in other.folders.items() if n not in whole},
            )
            for name, other in self.record.commands.items()
            if name != self.command
        }
        new = Record({**others, self.command: mine})
        conflicts = find_conflicts(self.folder, files, self.record.owned(), whole=whole, adopt=adopt)
        return Plan(self, dict(files), tuple(whole), tuple(removed), new, tuple(conflicts))


def find_conflicts(
    folder: Path,
    files: Mapping[str, bytes],
    owned: Collection[str],
    *,
    whole: Collection[str] = (),
    adopt: Collection[str] = (),
) -> list[Conflict]:
    """The paths ``files`` would change in ``folder`` that hold something outside ``owned``.

    A file that already holds the bytes wanted is no conflict (nothing
    changes), nor is a path in ``adopt``. Each folder in ``whole`` that has no
    owned path and holds anything else than such files is one.
    """
    owned = set(owned)
    found: dict[str, Conflict] = {}
    blocked: set[str] = set()  # a file or a link where a folder goes: nothing below it can be there
    for name in whole:
        if not any(_under(rel, name) for rel in owned) and _foreign_folder(folder, name, files):
            found[name] = Conflict(name, f"a folder acp-codegen did not write (not in {RECORD_NAME})")
    for rel, data in files.items():
        for prefix in _prefixes(rel):
            mode = _lstat(folder / prefix)
            if mode is None:
                break
            if stat.S_ISDIR(mode):
                continue
            blocked.add(prefix)
            if prefix not in owned and prefix not in found:
                kind = "a symbolic link" if stat.S_ISLNK(mode) else "a file"
                found[prefix] = Conflict(
                    prefix, f"{kind} acp-codegen did not write, where it writes a folder"
                )
            break
        mode = _lstat(folder / rel)
        if mode is None or blocked.intersection(_prefixes(rel)):
            continue
        if stat.S_ISDIR(mode):  # even an empty one, even at a path it wrote: never a folder of yours
            found[rel] = Conflict(rel, "a folder, where acp-codegen writes a file", forceable=False)
        elif rel in owned or rel in adopt:
            continue
        elif stat.S_ISLNK(mode):
            found[rel] = Conflict(rel, "a symbolic link acp-codegen did not write")
        elif not stat.S_ISREG(mode) or (folder / rel).read_bytes() != data:
            found[rel] = Conflict(rel, "a file acp-codegen did not write")
    return sorted(found.values(), key=lambda c: (c.forceable, c.path))


def _foreign_folder(folder: Path, name: str, files: Mapping[str, bytes]) -> bool:
    """Whether the folder ``name`` is there and holds anything but files with the bytes the run writes."""
    path = folder / name if name else folder
    mode = _lstat(path)
    if mode is None or not stat.S_ISDIR(mode):
        return False  # nothing there; a file or a link is a conflict of its own path
    listing = dict(swap.walk(path))
    filled = {sub.rsplit("/", 1)[0] for sub in listing if "/" in sub}
    for sub, info in listing.items():
        rel = f"{name}/{sub}" if name else sub
        if stat.S_ISDIR(info.st_mode):
            if sub not in filled:
                return True  # an empty folder: the tool never makes one
            continue
        if not stat.S_ISREG(info.st_mode) or rel not in files or (folder / rel).read_bytes() != files[rel]:
            return True
    return False


def refusal(conflicts: Collection[Conflict], folder: Path, command: str, force: bool) -> CodegenError | None:
    """The one line that stops a run (``force`` lifts all but a folder of the user's where a file goes)."""
    for conflict in sorted(conflicts, key=lambda c: (c.forceable, c.path)):
        path = folder / conflict.path if conflict.path else folder
        if not conflict.forceable:
            return CodegenError(
                f"{conflict.what}; move it away first (--force replaces files, never a folder of yours)",
                file=path,
            )
        if not force:
            more = len(conflicts) - 1
            also = f" (and {more} more path{'s' if more > 1 else ''})" if more else ""
            return CodegenError(
                f"{conflict.what}{also}; `{command}` writes here: pass --force to replace only the "
                "paths it writes (nothing else is touched)",
                file=path,
            )
    return None


@dataclass(frozen=True)
class Plan:
    """A run of one command on one output folder, worked out and not yet written."""

    output: Output
    files: dict[str, bytes]
    whole: tuple[str, ...]
    removed: tuple[str, ...]
    """Files the command's record lists that the run deletes."""
    record: Record
    """The record after the run."""
    conflicts: tuple[Conflict, ...]

    @property
    def folder(self) -> Path:
        return self.output.folder

    def refusal(self) -> CodegenError | None:
        """The one line that stops the run, if anything does."""
        return refusal(self.conflicts, self.folder, self.output.command, self.output.force)

    def differences(self) -> list[Difference]:
        """Every path whose bytes the run would change, the record's included (what ``--check`` shows)."""
        found = []
        record = self.record.to_json().encode()
        for rel, new in sorted({**self.files, RECORD_NAME: record}.items()):
            old = self._bytes(rel)
            if old != new:
                found.append(Difference(rel, old, new))
        found.extend(Difference(rel, self._bytes(rel), None) for rel in self.removed)
        return sorted(found, key=lambda d: d.path)

    def _bytes(self, rel: str) -> bytes | None:
        path = self.folder / rel
        try:
            return None if path.is_symlink() else path.read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def apply(self) -> int:
        """Write the plan; how many files changed (0: the folder already held it all). One line on error."""
        refused = self.refusal()
        if refused is not None:
            raise refused
        changes = self.differences()
        if not changes:
            return 0
        folder = self.folder
        old = self.output.record
        owned = old.owned() | {c.path for c in self.conflicts}  # what --force was given to replace
        intent = _union(old, self.record)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if intent.to_json() != old.to_json():
                write_together(folder, {RECORD_NAME: intent.to_json().encode()})
        except OSError as exc:
            raise os_error(exc) from None
        for name in self.whole:
            inside = {rel.split("/", 1)[1]: data for rel, data in self.files.items() if _under(rel, name)}
            _replace(folder / name, inside, {rel.split("/", 1)[1] for rel in owned if _under(rel, name)})
        loose = {rel: data for rel, data in self.files.items() if not any(_under(rel, w) for w in self.whole)}
        removed = {rel.split("/", 1)[0] for rel in self.removed if "/" in rel}
        gone = sorted((removed & set(old.part(self.output.command).folders)) - set(self.whole))
        try:
            for rel in loose:  # a file or a link in the way of a folder, that --force replaces
                for prefix in _prefixes(rel):
                    mode = _lstat(folder / prefix)
                    if mode is not None and not stat.S_ISDIR(mode):
                        (folder / prefix).unlink()
            write_together(folder, loose)
        except OSError as exc:
            raise os_error(exc) from None
        for name in gone:
            _replace(folder / name, {}, {rel.split("/", 1)[1] for rel in self.removed if _under(rel, name)})
        try:
            for rel in self.removed:
                if _regular(folder / rel):
                    (folder / rel).unlink()
            write_together(folder, {RECORD_NAME: self.record.to_json().encode()})
        except OSError as exc:
            raise os_error(exc) from None
        return len(changes)


def _replace(folder: Path, files: Mapping[str, bytes], owned: Collection[str]) -> bool:
    """:func:`swap.replace_folder`, its errors one line naming the user's path."""
    try:
        return swap.replace_folder(folder, files, owned)
    except OSError as exc:
        raise os_error(exc, swap.user_path(exc, folder)) from None


def _union(old: Record, new: Record) -> Record:
    """Both records at once: what a run may have touched while it writes."""
    commands = dict(old.commands)
    for name, part in new.commands.items():
        before = commands.get(name, Written())
        commands[name] = Written({**before.files, **part.files}, {**before.folders, **part.folders})
    return Record(commands)


def write_folder(
    folder: Path, files: Mapping[str, bytes], owned: Collection[str], *, command: str, force: bool
) -> bool:
    """Write a folder whole that carries its own record (a vendored package and its ``VENDORED.json``).

    ``owned`` are the paths the folder's record says the tool wrote (empty
    when it has none). The same rules as :class:`Output`: a folder with no
    record that holds anything else, or a path wanted that holds a file the
    tool did not write, is refused unless ``force``; then the tool's files
    are written and the rest is kept. A symbolic link at ``folder`` is never
    written through (its target is outside what the tool may change): it is
    refused, and ``force`` replaces the link. ``False`` if the folder already
    held exactly ``files``.
    """
    mode = _lstat(folder)
    if mode is not None and stat.S_ISLNK(mode):  # never written through: --force replaces the link itself
        conflicts = [Conflict("", "a symbolic link acp-codegen did not write, where it writes a folder")]
    elif mode is not None and not stat.S_ISDIR(mode):
        raise CodegenError("exists and is not a folder (a file is never replaced)", file=folder)
    else:
        conflicts = find_conflicts(folder, files, owned)
        if not owned and _foreign_folder(folder, "", files):
            what = "a folder acp-codegen did not write (it has no record of its files)"
            conflicts.append(Conflict("", what))
    refused = refusal(conflicts, folder, command, force)
    if refused is not None:
        raise refused
    return _replace(folder, files, {*owned, *(c.path for c in conflicts)})
