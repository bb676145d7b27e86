"""``acp-codegen upgrade``: move a vendored package and the code that uses it to another release.

:func:`plan` does everything that can fail and writes nothing: it reads the
manifest, refuses a vendored copy with local edits (unless forced), diffs the
two releases, turns the diff into a :class:`~.migration.Migration`, runs the
codemod over the sources in memory (a file that does not parse stops it) and
renders the new package.  :func:`apply` then writes: the vendored package is
swapped in one step, and each rewritten file is replaced atomically.

A package vendored under the versioned name of its release
(``acp_2_0_0_alpha_7``) moves to the new release's name, and the imports
follow; one vendored under any other name (``acp``) keeps it.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diff import report, semver
from ..errors import CodegenError
from .codemod import Codemod, FileResult, Finding
from .codemod import _parse as parse_source
from .manifest import MANIFEST_NAME, Manifest, manifest_for, read_manifest
from .migration import DiffResult, Migration, diff_for_migration, migration_from_diff
from .source import ReleaseFiles, package_files, write_folder
from .vendoring import LocalEditsError, Regenerate, check, owned_files, vendored_tree

SOURCE_SUFFIXES = (".py", ".pyi")
_SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages"})
PROJECT_MARKERS = (".git", "pyproject.toml")
"""What makes a folder a project's root: its git repository, or its Python project file."""


@dataclass(frozen=True)
class Plan:
    """An upgrade worked out in memory."""

    folder: Path
    """The vendored package as it is."""
    manifest: Manifest
    target: Path
    """Where the new package goes: ``folder``, or its sibling with the new versioned name."""
    diff: DiffResult
    migration: Migration
    files: tuple[FileResult, ...]
    tree: dict[str, bytes]
    """The new vendored package, its manifest included."""
    force: bool = False
    """Whether ``--force`` was given: local edits are dropped, paths in the way replaced."""
    others: tuple[OtherCopy, ...] = ()
    """Files among the sources that import another copy of the package: left alone."""
    project: Path | None = None
    """The project searched when no SOURCES were given (``None``: they were)."""

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for result in self.files for f in result.findings)

    @property
    def rewritten(self) -> tuple[FileResult, ...]:
        return tuple(result for result in self.files if result.changed)

    def report_lines(self, rules_url: str | None = None) -> list[str]:
        """The findings (what is left to fix by hand) first, then the unified diff of every rewrite."""
        lines = [finding.line_text(rules_url) for finding in self.findings]
        lines += [other.line_text() for other in self.others]
        for result in self.rewritten:
            lines.extend(result.diff(self.migration.new_release))
        return lines

    def summary(self) -> str:
        """The API diff in one line: what changed between the two releases, by severity."""
        counts = dict.fromkeys(("breaking", "warning", "info"), 0)
        for change in self.diff.changes:
            counts[change.severity] += 1
        shown = ", ".join(f"{n} {s}" + ("s" if s == "warning" and n != 1 else "") for s, n in counts.items())
        stability = self.manifest.stability
        return f"API {self.diff.old} -> {self.diff.new} ({stability}): {shown}"

    @property
    def failed(self) -> bool:
        """Whether anything is left to fix by hand (the exit status is 1 then)."""
        return bool(self.findings)

    def closing(self, written: bool) -> str:
        """The last line: what was done or would be, and a verdict that agrees with the exit status."""
        rewritten = len(self.rewritten)
        findings = len(self.findings)
        left = f"{findings} finding(s) to fix by hand" if findings else "nothing left to fix by hand"
        verdict = "FAILED" if self.failed else "OK"
        release = self.migration.new_release
        if written:
            vendored = f"vendored ACP {release} ({self.manifest.stability}) as {self.target}"
            return f"{verdict}: rewrote {rewritten} file(s) and {vendored}; {left}."
        return (
            f"{verdict}: dry run, {rewritten} file(s) to rewrite, {left}; "
            f"--write applies the rewrites and vendors ACP {release} as {self.target}."
        )

    def report_json(self, rules_url: str | None = None) -> dict[str, Any]:
        return {
            "package": {"from": str(self.folder), "to": str(self.target)},
            "rewritten": [
                {"path": str(r.path), "diff": "\n".join(r.diff(self.migration.new_release))}
                for r in self.rewritten
            ],
            "findings": [
                {
                    "path": f.path,
                    "line": f.line,
                    "column": f.column,
                    "rule": f.rule,
                    "message": f.message,
                    "explanation": f.explanation,
                    "link": f.link(rules_url),
                }
                for f in self.findings
            ],
            "failed": self.failed,
            "left_alone": [{"path": str(o.path), "imports": str(o.copy)} for o in self.others],
        }


@dataclass(frozen=True)
class OtherCopy:
    """A source file whose imports of the package find another copy of it than the one upgraded."""

    path: Path
    copy: Path
    """The package (or module) its imports find."""

    def line_text(self) -> str:
        return f"{self.path}: left alone: it imports {self.copy}, another copy than the one upgraded"


def project_of(package: Path) -> Path:
    """The project a vendored package belongs to, as the default SOURCES of ``upgrade`` and ``bump``.

    The nearest folder above the package holding a ``.git`` or a
    ``pyproject.toml`` (its git root, or its Python project), else the folder
    holding the package; never a folder beside it.  Shown relative to the
    current folder, as the files found in it are.
    """
    start = package.resolve().parent
    root = next((f for f in (start, *start.parents) if any((f / m).exists() for m in PROJECT_MARKERS)), start)
    return Path(os.path.relpath(root))


def imported_copy(path: Path, package: str) -> Path | None:
    """What ``import <package>`` in the file ``path`` finds beside it: the package (a folder with an
    ``__init__.py`` or a manifest) or the module in the nearest folder from the file's own up to its
    project's root, as Python finds a package beside the script it runs or the project root it
    is started from; ``None`` when none of those folders holds one (it comes from elsewhere)."""
    for folder in path.resolve().parents:
        found = folder / package
        if found.is_dir() and ((found / "__init__.py").is_file() or (found / MANIFEST_NAME).is_file()):
            return found
        if found.with_suffix(".py").is_file():
            return found.with_suffix(".py")
        if any((folder / m).exists() for m in PROJECT_MARKERS):
            return None
    return None


def _imports(source: bytes, package: str) -> bool:
    """Whether the text imports ``package`` (a cheap test on the bytes, before any parse)."""
    name = re.escape(package.encode())
    return (
        re.search(
            rb"^\s*(?:from\s+" + name + rb"\b|import\s+(?:[\w.]+\s*,\s*)*" + name + rb"\b)", source, re.M
        )
        is not None
    )


def split_copies(files: Sequence[Path], folder: Path) -> tuple[list[Path], list[OtherCopy]]:
    """``files`` whose imports of the package may find ``folder``, and those that import another copy.

    A file that finds another package of the same name beside it (another
    vendored copy, a backup of this one) is not this copy's code: it is left
    alone, and named when it imports the package.
    """
    mine = folder.resolve()
    kept: list[Path] = []
    others: list[OtherCopy] = []
    for path in files:
        copy = imported_copy(path, folder.name)
        if copy is None or copy == mine:
            kept.append(path)
        elif path.is_file() and _imports(path.read_bytes(), folder.name):
            others.append(OtherCopy(path, Path(os.path.relpath(copy))))
    return kept, others


def source_files(sources: Sequence[Path], skip: Path) -> list[Path]:
    """The Python files under ``sources``, sorted, without the vendored package ``skip``.

    Folders are searched recursively, leaving out hidden folders, caches,
    ``node_modules``, virtual environments, vendored copies (a folder with a
    manifest) and folders that are a git repository of their own (another
    project: name it to search it); a file named explicitly is taken whatever
    its suffix.
    """
    skipped = skip.resolve()
    found: dict[Path, Path] = {}
    for source in sources:
        if source.is_file():
            found.setdefault(source.resolve(), source)
        elif source.is_dir():
            for path in _walk(source, skipped):
                found.setdefault(path.resolve(), path)
        else:
            raise CodegenError("no such file or folder", file=source)
    return sorted(found.values())


def _walk(folder: Path, skipped: Path) -> Iterator[Path]:
    if folder.resolve() == skipped or (folder / "pyvenv.cfg").exists() or (folder / MANIFEST_NAME).exists():
        return  # the copy upgraded, a virtual environment, another vendored copy: nobody's hand-written code
    for path in sorted(folder.iterdir()):
        if path.is_dir():
            if not path.name.startswith(".") and path.name not in _SKIPPED_FOLDERS and not _repository(path):
                yield from _walk(path, skipped)
        elif path.suffix in SOURCE_SUFFIXES and path.is_file():
            yield path


def _repository(folder: Path) -> bool:
    """Whether ``folder`` is a git repository of its own (a submodule, a clone): another project."""
    return (folder / ".git").exists()


def plan(
    path: Path,
    old: ReleaseFiles,
    new: ReleaseFiles,
    sources: Sequence[Path] = (),
    *,
    force: bool = False,
    regenerate: Regenerate | None = None,
) -> Plan:
    """Work out the upgrade of the vendored package at ``path`` from ``old`` to ``new``; write nothing.

    The codemod runs over ``sources``; none given, over the project holding
    the package (:func:`project_of`).  Files among them that import another
    copy of the package are left alone (:attr:`Plan.others`).

    Bad input raises :class:`CodegenError`: a missing or invalid manifest, a
    vendored copy with local edits (:class:`LocalEditsError`, unless
    ``force``), a source file that does not parse, a folder in the way of a
    versioned package's new name.
    """
    folder, manifest = read_manifest(path)
    if old.release != manifest.release:
        raise CodegenError(
            f"the package was vendored from {manifest.release}, not {old.release}",
            file=folder / MANIFEST_NAME,
        )
    report = check(folder, regenerate)
    if report.modified and not force:
        raise LocalEditsError(report, f"upgrading to {new.release}")
    result = diff_for_migration(old, new, manifest.stability)
    migration = migration_from_diff(result)
    package = folder.name
    versioned = package == migration.old_package and migration.new_package != package
    target = folder.parent / migration.new_package if versioned else folder
    if versioned and (target.exists() or target.is_symlink()) and not force:
        raise CodegenError(
            f"is in the way of the upgraded package {migration.new_package}: move it away, or pass --force "
            "to write the package into it (its other files are kept)",
            file=target,
        )
    codemod = Codemod(migration, package, migration.new_package if versioned else None)
    project = None if sources else project_of(folder)
    mine, others = split_copies(source_files(sources or [project or folder.parent], folder), folder)
    files = codemod.run(mine)
    for skipped in files:
        if not skipped.resolved:
            check_parses(skipped.path, skipped.before)
    carried = manifest.transports  # the copy keeps the transports it was vendored with
    surface, package_tree = package_files(new, manifest.unstable, target.name, carried)
    tree = vendored_tree(package_tree, manifest_for(surface, target.name, package_tree, carried))
    return Plan(
        folder, manifest, target, result, migration, tuple(files), tree, force, tuple(others), project
    )


def check_parses(path: Path, source: bytes) -> None:
    """One line naming ``path`` if it does not parse: what it uses cannot be known, so nothing is rewritten.

    The codemod skips a file that never mentions the package without
    parsing it; this catches such a file that is broken all the same.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # odd escapes in strings: the codemod is no linter
        try:
            parse_source(source, str(path))  # the codemod's own one-line error for a file that does not
        except RecursionError:
            raise CodegenError("cannot parse it: it nests expressions too deeply", file=path) from None


def apply(upgrade: Plan) -> None:
    """Write the plan: swap the vendored package in one step, then replace each rewritten file atomically.

    The old copy's files go only when the package moves to a new name, and
    only those its manifest lists: a file of the user's in it stays.
    """
    owned = owned_files(upgrade.manifest)
    moved = upgrade.target != upgrade.folder
    write_folder(
        upgrade.target, upgrade.tree, set() if moved else owned, command="upgrade", force=upgrade.force
    )
    if moved:
        write_folder(upgrade.folder, {}, owned, command="upgrade", force=upgrade.force)
    for result in upgrade.rewritten:
        write_file(result.path, result.after)


def write_file(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step, keeping its permissions."""
    mode = path.stat().st_mode & 0o7777
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def render_markdown(upgrade: Plan, rules_url: str | None = None) -> str:
    """The upgrade as markdown, for a pull request: the releases and the version step, the findings to
    fix by hand as a table with ``file:line:column``, the rewrites folded as a unified diff, and the
    API diff in one line (``--report`` appends the differ's markdown report)."""
    new_release = upgrade.migration.new_release
    steps = report.step_words(semver.step(upgrade.diff))
    lines = [
        f"## Upgrade of `{upgrade.folder.name}`: ACP {upgrade.diff.old} → {new_release} "
        f"({upgrade.manifest.stability})",
        "",
        f"**Version step:** {steps}.",
        "",
        f"**{upgrade.summary()}**",
        "",
    ]
    findings = upgrade.findings
    if findings:
        lines += [
            f"### To fix by hand ({len(findings)})",
            "",
            "| where | rule | what | why |",
            "| --- | --- | --- | --- |",
        ]
        for found in findings:
            link = found.link(rules_url)
            rule_cell = f"[`{found.rule}`]({link})" if link else f"`{found.rule}`"
            cells = [
                f"`{report.markdown_cell(f'{found.path}:{found.line}:{found.column}')}`",
                rule_cell,
                report.markdown_cell(found.message),
                report.markdown_cell(found.explanation),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    else:
        lines.append("Nothing to fix by hand.")
    lines += left_alone_markdown(upgrade)
    rewritten = upgrade.rewritten
    if rewritten:
        count = f"{len(rewritten)} file" + ("" if len(rewritten) == 1 else "s")
        lines += ["", f"<details><summary>Rewrites ({count})</summary>", "", "```diff"]
        lines += [line for result in rewritten for line in result.diff(new_release)]
        lines += ["```", "", "</details>"]
    else:
        lines += ["", "No file to rewrite."]
    return "\n".join(lines) + "\n"


def left_alone_markdown(upgrade: Plan) -> list[str]:
    """The files left alone because they import another copy of the package, as markdown lines."""
    if not upgrade.others:
        return []
    lines = ["", f"Left alone ({len(upgrade.others)}): they import another copy than the one upgraded.", ""]
    return lines + [
        f"- `{report.markdown_cell(str(o.path))}` imports `{report.markdown_cell(str(o.copy))}`"
        for o in upgrade.others
    ]


def json_report(diff_report: str, upgrade: Plan, rules_url: str | None = None) -> str:
    """``--format json``: the differ's JSON report and the codemod's, as one document."""
    document = {"diff": json.loads(diff_report), "upgrade": upgrade.report_json(rules_url)}
    return json.dumps(document, indent=2) + "\n"
