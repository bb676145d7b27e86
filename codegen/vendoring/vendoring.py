"""``acp-codegen vendor``: write one generated package into a user's tree, and check it later.

* :func:`vendor` writes ``DIR/PKG`` (the package plus its ``VENDORED.json``)
  in one step: the files are staged in a temporary sibling folder and
  swapped in whole (:func:`codegen.files.write_folder`), so a failed or
  killed run leaves the old copy exactly as it was. ``VENDORED.json`` is the
  record of what the tool wrote there: a file of the user's in the folder is
  kept, a folder without it is refused unless ``--force``, and so is moving
  the copy to another protocol major or stability.
* :func:`check` compares a vendored copy with its manifest and lists every
  local edit: a unified diff against the original where the original can be
  regenerated from the manifest's release (and its sha256 matches the
  manifest), else ``modified (sha256 differs)``; plus missing and extra files.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import CodegenError
from .manifest import MANIFEST_NAME, Manifest, manifest_for, read_manifest
from .source import (
    ReleaseFiles,
    SchemaSource,
    check_folder,
    package_files,
    protocol_major,
    read_tree,
    sha256_bytes,
    transports,
    write_folder,
)

Regenerate = Callable[[Manifest], Mapping[str, str]]
"""The files a manifest describes, as the generator writes them (:class:`CodegenError` if it cannot)."""


@dataclass(frozen=True)
class CheckReport:
    """How a vendored copy differs from its manifest."""

    folder: Path
    manifest: Manifest
    modified: tuple[str, ...]
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    renamed: bool
    lines: tuple[str, ...]
    """The report: a unified diff per modified file, then one line per other difference."""

    @property
    def edited(self) -> bool:
        """Whether a file was changed, removed or added (what overwriting the copy would lose)."""
        return bool(self.modified or self.missing or self.extra)

    @property
    def clean(self) -> bool:
        return not (self.edited or self.renamed)

    def summary(self) -> str:
        parts = [
            f"{len(items)} {word}"
            for items, word in ((self.modified, "modified"), (self.missing, "missing"), (self.extra, "extra"))
            if items
        ]
        if self.renamed:
            parts.append(f"renamed from {self.manifest.package}")
        return ", ".join(parts) if parts else "clean"


class LocalEditsError(CodegenError):
    """A vendored copy that an operation would overwrite has local edits."""

    def __init__(self, report: CheckReport, what: str) -> None:
        super().__init__(
            f"the vendored copy has local edits ({report.summary()}); {what} would lose them: "
            "revert them or pass --force",
            file=report.folder,
        )
        self.report = report


def regenerate_from(source: SchemaSource) -> Regenerate:
    """Regenerate a manifest's package from a locked release (refusing another schema than the manifest's)."""

    def regenerate(manifest: Manifest) -> Mapping[str, str]:
        files = source.load(manifest.release)
        for name, digest in manifest.source.items():
            document = files.documents.get(name)
            if document is None or document.sha256 != digest:
                raise CodegenError(
                    f"{manifest.release} has another {name} than the one the package was vendored from",
                    file=files.folder / name,
                )
        return package_files(files, manifest.unstable, manifest.package, manifest.transports)[1]

    return regenerate


def check(path: Path, regenerate: Regenerate | None = None) -> CheckReport:
    """Compare the vendored copy at ``path`` with its manifest (bad input raises :class:`CodegenError`)."""
    folder, manifest = read_manifest(path)
    local = {rel: text for rel, text in read_tree(folder).items() if rel != MANIFEST_NAME}
    local_digests = {rel: sha256_bytes(_bytes(text)) for rel, text in local.items()}
    modified = tuple(
        rel for rel, digest in manifest.files.items() if rel in local and local_digests[rel] != digest
    )
    missing = tuple(rel for rel in manifest.files if rel not in local)
    extra = tuple(rel for rel in local if rel not in manifest.files)
    renamed = manifest.package != folder.name
    lines: list[str] = []
    if modified:
        originals, reason = _originals(manifest, regenerate)
        for rel in sorted(modified):
            original = originals.get(rel)
            if original is None or sha256_bytes(original.encode()) != manifest.files[rel]:
                lines.append(f"modified (sha256 differs; {reason}): {folder / rel}")
                continue
            diff = list(
                difflib.unified_diff(
                    original.splitlines(),
                    local[rel].splitlines(),
                    f"{folder / rel} (vendored {manifest.release} {manifest.stability})",
                    f"{folder / rel} (local)",
                    lineterm="",
                )
            )
            shown = [_printable(line) for line in diff]  # bytes that are not UTF-8 as \x escapes
            lines.extend(shown or [f"modified (line endings or the final newline only): {folder / rel}"])
    lines.extend(f"missing: {folder / rel}" for rel in sorted(missing))
    lines.extend(f"extra: {folder / rel}" for rel in sorted(extra))
    if renamed:
        lines.append(
            f"renamed: the manifest names the package {manifest.package!r}, the folder is {folder.name!r}"
        )
    return CheckReport(folder, manifest, modified, missing, extra, renamed, tuple(lines))


def _originals(manifest: Manifest, regenerate: Regenerate | None) -> tuple[Mapping[str, str], str]:
    """The files as vendored, and why a file whose original is missing cannot be shown."""
    if regenerate is None:
        return {}, "the original is not available"
    try:
        return regenerate(manifest), "this acp-codegen generates it differently"
    except CodegenError as error:
        return {}, f"cannot regenerate {manifest.release} to show the edit: {error.one_line()}"


def _printable(line: str) -> str:
    """A line of a file read with ``surrogateescape``, its undecodable bytes shown as ``\\x..``."""
    return line.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="backslashreplace")


def _bytes(text: str) -> bytes:
    """The bytes :func:`read_tree` decoded (it keeps undecodable bytes as surrogates)."""
    return text.encode("utf-8", errors="surrogateescape")


def vendored_tree(files: Mapping[str, str], manifest: Manifest) -> dict[str, bytes]:
    """The files to write: the package and its manifest."""
    return {rel: text.encode() for rel, text in {**files, MANIFEST_NAME: manifest.to_json()}.items()}


def owned_files(manifest: Manifest) -> set[str]:
    """What the tool wrote in a vendored package: the files its manifest lists, and the manifest."""
    return {*manifest.files, MANIFEST_NAME}


def _major(release: str) -> int | None:
    try:
        return protocol_major(release)
    except CodegenError:
        return None


def refuse_to_move(folder: Path, old: Manifest, release: str, stability: str) -> None:
    """Raise unless vendoring ``release`` over the copy ``old`` keeps its protocol major and stability."""
    before, after = _major(old.release), _major(release)
    changes = []
    if before != after:
        changes.append(f"the protocol major (v{before} -> v{after})")
    if old.stability != stability:
        changes.append(f"the stability ({old.stability} -> {stability})")
    if changes:
        raise CodegenError(
            f"holds ACP {old.release} ({old.stability}); vendoring {release} ({stability}) would change "
            f"{' and '.join(changes)} under the same imports: pass --force to do it",
            file=folder,
        )


@dataclass(frozen=True)
class Vendored:
    folder: Path
    manifest: Manifest
    written: bool
    """``False`` when the folder already held exactly these files."""


def vendor(
    files: ReleaseFiles,
    unstable: bool,
    directory: Path,
    package: str = "acp",
    *,
    force: bool = False,
    regenerate: Regenerate | None = None,
    carried: tuple[str, ...] | None = None,
) -> Vendored:
    """Write the package of ``files`` (a release or schema folder) as ``directory/package``, atomically.

    A copy already there is replaced in one step, keeping any file of the
    user's in it, unless (without ``force``) it has local edits
    (:class:`LocalEditsError`), it is another protocol major or stability, or
    the folder holds files and no ``VENDORED.json`` (or is a link to such a
    folder: ``force`` then replaces the link, never what it points to).
    ``carried`` are the transports to write (``None``: the copy's own when one
    is there, else :data:`~codegen.emit.transports.DEFAULT`).
    """
    folder = check_folder(directory, "DIR") / package
    if folder.is_symlink() and (folder / MANIFEST_NAME).is_file():
        folder = folder.resolve()  # a vendored copy kept elsewhere, linked here: the link stays the user's
    owned: set[str] = set()
    kept = transports.DEFAULT
    stability = "unstable" if unstable else "stable"
    if (folder / MANIFEST_NAME).is_file():
        try:
            _, old = read_manifest(folder)
        except CodegenError:
            if not force:
                raise
        else:
            owned = owned_files(old)
            kept = old.transports
            if not force:
                refuse_to_move(folder, old, files.release, stability)
                report = check(folder, regenerate)
                if report.modified:
                    raise LocalEditsError(report, "vendoring over it")
    chosen = kept if carried is None else carried
    surface, package_tree = package_files(files, unstable, package, chosen)
    manifest = manifest_for(surface, package, package_tree, chosen)
    written = write_folder(
        folder, vendored_tree(package_tree, manifest), owned, command="vendor", force=force
    )
    return Vendored(folder, manifest, written)
