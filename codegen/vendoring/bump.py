"""``acp-codegen bump``: from "upstream shipped" to a change a person can review, in one command.

:func:`resolve` turns ``--from npm:PACKAGE[@VERSION]`` into a locked release
of one protocol major: the newest version when none is given (asked of the
registry through the machine's ``npm``), recognised without a download when
the lock already names that version (``v2-sdk-2.3.0`` is also SDK 2.4.0), and
otherwise fetched and locked into the user's store by
:func:`codegen.schema.npm.fetch_npm`.  :func:`bump` then moves a vendored
copy there through :mod:`.upgrade` (a dry run unless ``write``; the same
refusals and the same one-step writes; a dry run fetches a new release into
a temporary folder in front of the store, and locks nothing), and
:func:`pr_body` renders the result as a pull request's description.

Without a vendored copy (the maintainers' ``make bump`` for ``generated/``),
:func:`resolve_all` takes every protocol major the version ships, and each new
release is compared with the newest release of its major locked before it.

Two parts of the body come from the differ: its markdown report
(:func:`codegen.diff.report.render_markdown`, given what is left of a pull
request's 65,536 characters) and the version step of each contract
(:func:`codegen.diff.semver.step`, the one place that rule lives).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..diff import DiffResult, diff_releases, semver
from ..diff.locate import Repository
from ..diff.report import MARKDOWN_LIMIT, render_markdown
from ..diff.report import markdown_cell as _cell
from ..diff.rules import SEVERITIES
from ..errors import CodegenError
from ..schema import npm
from ..schema.load import ReleaseFiles, SchemaSource, protocol_major, sort_releases
from . import upgrade
from .manifest import read_manifest
from .vendoring import Regenerate

Status = Literal["known", "locked", "staged", "identical", "verified", "tag"]
Attach = Callable[[DiffResult, ReleaseFiles, ReleaseFiles], DiffResult]
"""What adds evidence to a diff (the command line's; the evidence stage comes after this one)."""


@dataclass(frozen=True)
class Resolved:
    """The locked release one version of the npm package ships for one protocol major."""

    package: str
    version: str
    release: str
    status: Status
    """``known``: the lock already named the version, nothing was fetched; ``staged``: new content a
    dry run fetched into a folder of its own and did not lock; else
    :attr:`codegen.schema.npm.Fetched.status` (``locked``: new content, locked now)."""
    newest: bool
    """Whether the version is the registry's newest (no ``@VERSION`` was given)."""

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"

    @property
    def major(self) -> int:
        return protocol_major(self.release)

    def describe(self, lock: Path) -> str:
        """How the release came to be in the store, in words."""
        which = f"{self.spec} (the newest)" if self.newest else self.spec
        if (
            self.status == "known"
            and npm.release_name(self.package, self.version, self.major) != self.release
        ):
            return f"{which} ships the same content as {self.release}, as the lock records; nothing fetched"
        return {
            "known": f"{which} ships {self.release}, already locked; nothing fetched",
            "locked": f"{which} ships {self.release}: new, locked in {lock}",
            "staged": f"{which} ships {self.release}: new; `--write` locks it in {lock}",
            "identical": f"{which} ships the same content as the locked release {self.release}",
            "verified": f"{which} ships {self.release}, already locked; its files match the lock",
            "tag": f"{which} ships the same schema files as the tag release {self.release}",
        }[self.status]


def resolve(
    origin: str, major: int, source: SchemaSource, *, force: bool = False
) -> tuple[Resolved, list[str]]:
    """The release of protocol ``major`` that ``--from`` names, fetched and locked if it is new.

    Returns it and npm's notices.  A version the lock already names is not
    downloaded; content equal to a locked release is recognised by its sha256
    and not locked again.
    """
    package, version, newest = _version(origin)
    known = npm.locked_version(source.lock, package, version, major)
    if known is not None:
        return Resolved(package, version, known, "known", newest), []
    name = npm.release_name(package, version, major)
    fetched, notices = npm.fetch_npm(
        f"{npm.NPM_PREFIX}{package}@{version}", source.lock, source.target, only=name, force=force
    )
    (item,) = fetched
    return Resolved(package, version, item.release, item.status, newest), notices


def resolve_all(
    origin: str, source: SchemaSource, *, force: bool = False
) -> tuple[list[Resolved], list[str]]:
    """Every release the version ships, one per protocol major, fetched and locked where new."""
    package, version, newest = _version(origin)
    known = npm.locked_releases(source.lock, package, version)
    if known:
        return [Resolved(package, version, name, "known", newest) for name in known], []
    fetched, notices = npm.fetch_npm(f"{npm.NPM_PREFIX}{package}@{version}", source.lock, source.target)
    return [Resolved(package, version, f.release, f.status, newest) for f in fetched], notices


def _version(origin: str) -> tuple[str, str, bool]:
    package, version = npm.parse_package(origin)
    if version is not None:
        return package, version, False
    return package, npm.newest_version(package), True


@dataclass(frozen=True)
class Move:
    """One release moved to another: the API diff and, for a vendored copy, the upgrade."""

    old: str
    new: str
    diff: DiffResult
    plan: upgrade.Plan | None = None
    """``None``: no vendored copy (``generated/``), so no code was looked at."""

    def summary(self) -> str:
        """The API diff in one line (the upgrade's, for a vendored copy)."""
        if self.plan is not None:
            return self.plan.summary()
        counts = {s: sum(1 for c in self.diff.changes if c.severity == s) for s in SEVERITIES}
        shown = ", ".join(f"{n} {s}" + ("s" if s == "warning" and n != 1 else "") for s, n in counts.items())
        return f"API {self.old} -> {self.new} ({' and '.join(self.diff.stabilities)}): {shown}"


@dataclass(frozen=True)
class Bump:
    """What a bump found and did."""

    resolved: tuple[Resolved, ...]
    moves: tuple[Move, ...]
    """Empty when already on the newest release."""
    lock: Path
    """The lock file new releases are recorded in."""
    written: bool = False
    copy: str | None = None
    """The release the vendored copy was on (``None``: no copy)."""

    @property
    def failed(self) -> bool:
        """Whether findings are left to fix by hand (exit status 1)."""
        return any(move.plan is not None and move.plan.failed for move in self.moves)


def older(release: str, than: str) -> bool:
    """Whether ``release`` comes before ``than`` in the lock's order of releases."""
    return release != than and sort_releases([release, than])[0] == release


def bump(
    path: Path,
    sources: Sequence[Path],
    origin: str,
    source: SchemaSource,
    *,
    write: bool = False,
    force: bool = False,
    regenerate: Regenerate | None = None,
    attach: Attach | None = None,
) -> tuple[Bump, list[str]]:
    """Move the vendored copy at ``path`` and ``sources`` (none: its project) to the release ``origin`` names.

    Nothing of the user's is written: :func:`apply` does that (with ``write``,
    the bump says it will).  With ``write`` a new release is fetched and locked
    into the store; a dry run fetches it into a folder of its own, deleted on
    return, and locks nothing.  Returns the bump and npm's notices.
    """
    folder, manifest = read_manifest(path)
    major = protocol_major(manifest.release)
    lock = source.lock.path
    with tempfile.TemporaryDirectory(prefix="acp-codegen-bump-") as staging:
        into = source if write else source.staged(Path(staging))
        resolved, notices = resolve(origin, major, into, force=force)
        if resolved.release == manifest.release or older(resolved.release, manifest.release):
            return Bump((resolved,), (), lock, copy=manifest.release), notices
        if resolved.status == "locked":  # the lock the source read has no entry for it yet
            into = into.reread()
            if not write:
                resolved = dataclasses.replace(resolved, status="staged")
        old, new = into.load(manifest.release), into.load(resolved.release)
        plan = upgrade.plan(folder, old, new, sources, force=force, regenerate=regenerate)
        diff = attach(plan.diff, old, new) if attach is not None else plan.diff
    move = Move(manifest.release, resolved.release, diff, plan)
    return Bump((resolved,), (move,), lock, write, manifest.release), notices


def bump_store(
    origin: str, source: SchemaSource, *, force: bool = False, attach: Attach | None = None
) -> tuple[Bump, list[str]]:
    """Fetch and lock what the package version ships; diff each new release with the one locked before it."""
    before = source.lock
    resolved, notices = resolve_all(origin, source, force=force)
    new = [r for r in resolved if r.status == "locked"]
    if new:
        source = source.reread()
    moves = []
    for item in new:
        previous = before.newest(protocol_major(item.release))
        if previous is None:
            continue
        old, files = source.load(previous), source.load(item.release)
        diff = diff_releases(old, files, ("stable", "unstable"))
        moves.append(Move(previous, item.release, attach(diff, old, files) if attach is not None else diff))
    return Bump(tuple(resolved), tuple(moves), source.lock.path), notices


def apply(done: Bump) -> None:
    """Write what the bump planned: the copy swapped, the rewrites applied (:func:`upgrade.apply`)."""
    for move in done.moves:
        if move.plan is not None:
            upgrade.apply(move.plan)


# --- the pull request's description ---------------------------------------------------------


def diff_markdown(
    result: DiffResult, rules_url: str | None = None, limit: int = MARKDOWN_LIMIT, everything: str = ""
) -> str:
    """The API report in markdown, as the PR body embeds it (under the move's own heading), in at most
    ``limit`` characters; ``everything`` says where the rows left out to fit are listed."""
    return render_markdown(result, rules_url, limit=limit, heading="###", everything=everything)


def full_report(move: Move, options: Sequence[str] = ()) -> str:
    """Where every change of ``move`` is listed: the ``diff`` command that writes its HTML page, with the
    global ``options`` (``--schemas DIR``) that find the releases."""
    stability = [] if move.plan is None else ["--stability", move.plan.manifest.stability]
    words = ["acp-codegen", *options, "diff", move.old, move.new, *stability, "--format", "html"]
    return f"`{' '.join(words)}` lists"


CONTRACTS: dict[semver.Contract, str] = {
    "wire": "wire (what a deployed peer sees)",
    "python": "Python API (what your code calls)",
}


def semver_steps(result: DiffResult) -> dict[semver.Contract, semver.Step]:
    """The version step each contract needs (:func:`codegen.diff.semver.step`)."""
    return {found.contract: found.step for found in semver.step(result).contracts}


def pr_body(
    done: Bump,
    rules_url: str | None = None,
    repository: Repository | None = None,
    options: Sequence[str] = (),
) -> str:
    """The pull request's description: releases, semver steps, breaking changes, rewrites and findings.

    Each move's API report gets an even share of what the rest of the body leaves
    of a pull request's 65,536 characters (the report drops its least severe rows
    to fit, and says how many).
    """
    if not done.moves:
        raise CodegenError("nothing to describe: already on the newest release")
    within = repository or Repository.around(next((m.plan.folder for m in done.moves if m.plan), None))

    def _shown(path: str | Path) -> str:
        """A path as the pull request shows files: from the repository's root (as given, outside it)."""
        return within.path(path) or str(path)

    title = ", ".join(f"{m.old} → {m.new}" for m in done.moves)
    parts: list[str | DiffResult] = [f"# ACP {title}", ""]
    parts += [f"- {_cell(r.describe(Path(_shown(done.lock))))}" for r in done.resolved]
    for move in done.moves:
        parts += ["", f"## {move.old} → {move.new}", ""]
        plan = move.plan
        if plan is not None:
            where = _shown(plan.target)
            state = "moved" if done.written else "to move (dry run: `--write` applies it)"
            parts += [
                f"Vendored copy `{where}` ({plan.manifest.stability}): {state} from {move.old}.",
                "",
            ]
        parts += ["| contract | semver step |", "| --- | --- |"]
        parts += [f"| {CONTRACTS[layer]} | **{step}** |" for layer, step in semver_steps(move.diff).items()]
        breaking = [c for c in move.diff.changes if c.severity == "breaking" and c.waiver is None]
        parts += [
            "",
            f"{len(breaking)} breaking change(s) in {len(move.diff.changes)}; the API report is below.",
        ]
        if plan is not None:
            parts += ["", *_code_section(plan, done.written, _shown)]
        parts += ["", move.diff]
    text = [part for part in parts if isinstance(part, str)]
    reports = len(parts) - len(text)
    budget = (MARKDOWN_LIMIT - sum(len(line) + 1 for line in text) - 256 * reports) // max(reports, 1)
    moves = iter(done.moves)
    lines = [
        (
            part
            if isinstance(part, str)
            else diff_markdown(part, rules_url, budget, full_report(next(moves), options)).rstrip()
        )
        for part in parts
    ]
    return "\n".join(lines) + "\n"


def _code_section(plan: upgrade.Plan, written: bool, _shown: Callable[[str | Path], str]) -> list[str]:
    """The codemod's rewrites (file list, diff folded) and its findings to fix by hand, with file:line."""
    verb = "Rewritten" if written else "To rewrite (dry run)"
    lines = ["### Your code", ""]
    rewritten = plan.rewritten
    if rewritten:
        lines += [f"{verb}: {len(rewritten)} file(s), only the renamed names.", ""]
        lines += [f"- `{_shown(r.path)}`" for r in rewritten]
        lines += ["", "<details><summary>The rewrites</summary>", "", "```diff"]
        for result in rewritten:
            lines += result.diff(plan.migration.new_release)
        lines += ["```", "", "</details>"]
    else:
        lines.append("Nothing to rewrite.")
    findings = plan.findings
    lines += upgrade.left_alone_markdown(plan)
    lines.append("")
    if not findings:
        lines.append("Nothing left to fix by hand.")
        return lines
    lines += [
        f"**{len(findings)} finding(s) to fix by hand:**",
        "",
        "| where | rule | what |",
        "| --- | --- | --- |",
    ]
    for found in findings:
        where = f"{_shown(found.path)}:{found.line}:{found.column}"
        lines.append(f"| `{_cell(where)}` | `{found.rule}` | {_cell(found.message)} |")
    return lines
