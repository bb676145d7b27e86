"""The GitHub annotations and the SARIF log of an upgrade, each attached to a file of the repository.

A finding in the user's code attaches to its file, line and column.  ``upgrade``
and ``bump`` annotate the pull request that moves a vendored copy, so a change
of the differ (``--report``) attaches to the package in the repository,
not to a schema file that lies in an installed tool or a cache: a type at its
class (or type alias), a field at its attribute, a handler's method at its
``def``, a JSON-RPC method at its wire name in the bindings.  The package
indexed is the one the repository holds when the command ends: the new one
after ``--write``, the copy as it is after a dry run.  What the package does
not define (a class the new release removed, after ``--write``) attaches to
the first line of its models module.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diff import report
from ..diff.locate import Anchor, Locate, Repository, github_data, github_property
from .codemod import Finding
from .migration import (
    ArgumentPart,
    AttributePart,
    Change,
    DiffResult,
    EnvelopePart,
    FieldPart,
    HandlerPart,
    MethodPart,
    TypePart,
)
from .source import field_name
from .upgrade import OtherCopy, Plan

MODELS = "schema.py"
"""The module of a generated package that holds its models (where a name it lacks attaches)."""


@dataclass
class PackageIndex:
    """Where each name of a generated package is defined, by module (a path relative to the package)."""

    names: dict[str, tuple[str, int]] = field(default_factory=dict)
    """A module-level class or type alias -> (module, line)."""
    members: dict[tuple[str, str], int] = field(default_factory=dict)
    """(class, attribute or method) -> line, in the module of the class."""
    arguments: dict[tuple[str, str], int] = field(default_factory=dict)
    """(method, argument) -> line, the first method of that name in any class."""
    strings: dict[str, tuple[str, int]] = field(default_factory=dict)
    """A string constant (a JSON-RPC method's wire name) -> (module, line) of its first use."""
    methods: dict[str, tuple[str, str]] = field(default_factory=dict)
    """A method name -> (module, class) of the first class that defines it."""

    @classmethod
    def of(cls, files: Mapping[str, bytes]) -> PackageIndex:
        """The index of a package's Python files (their names relative to the package)."""
        index = cls()
        for name in sorted(files):
            if name.endswith(".py"):
                try:
                    tree = ast.parse(files[name])
                except (SyntaxError, ValueError):
                    continue  # a file edited out of shape: its names attach to the fallback
                index._read(name, tree)
        return index

    def _read(self, module: str, tree: ast.Module) -> None:
        for node in tree.body:
            target = _defined(node)
            if target is not None:
                self.names.setdefault(target, (module, node.lineno))
            if isinstance(node, ast.ClassDef):
                self._read_class(module, node)
        for found in ast.walk(tree):
            if isinstance(found, ast.Constant) and isinstance(found.value, str) and "/" in found.value:
                self.strings.setdefault(found.value, (module, found.lineno))

    def _read_class(self, module: str, node: ast.ClassDef) -> None:
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                self.members.setdefault((node.name, item.target.id), item.lineno)
            elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.members.setdefault((node.name, item.name), item.lineno)
                self.methods.setdefault(item.name, (module, node.name))
                for argument in (*item.args.args, *item.args.kwonlyargs):
                    self.arguments.setdefault((item.name, argument.arg), argument.lineno)

    def place(self, change: Change, renamed: Mapping[str, str]) -> tuple[str, int] | None:
        """``(module, line)`` of what ``change`` is about; ``renamed`` maps a class name the differ uses to
        the one the package has."""
        match change.path:
            case (TypePart(name=name), *rest) | (EnvelopePart(name=name), *rest):
                cls = name if name in self.names else renamed.get(name, name)
                if cls not in self.names:
                    return None
                module, line = self.names[cls]
                member = _member(rest)
                return module, self.members.get((cls, member), line) if member is not None else line
            case (HandlerPart(name=method), *rest):
                if method not in self.methods:
                    return None
                module, cls = self.methods[method]
                line = self.members[(cls, method)]
                if rest and isinstance(rest[0], ArgumentPart):
                    line = self.arguments.get((method, rest[0].name), line)
                return module, line
            case (MethodPart(name=wire), *_):
                return self.strings.get(wire)
        return None


def _defined(node: ast.stmt) -> str | None:
    """The name a module-level statement defines as a class or a type alias, if it does."""
    if isinstance(node, ast.ClassDef):
        return node.name
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _member(rest: Sequence[object]) -> str | None:
    """The attribute of a class that the rest of a change's path starts at, if it starts at one."""
    if rest and isinstance(rest[0], FieldPart):
        return field_name(rest[0].name)
    if rest and isinstance(rest[0], AttributePart):
        return rest[0].name
    return None


def package_anchors(
    folder: Path, files: Mapping[str, bytes], repository: Repository, renamed: Mapping[str, str]
) -> Locate:
    """Changes at their place in the package ``files`` that the repository holds at ``folder``."""
    index = PackageIndex.of(files)
    fallback = MODELS if MODELS in files else "__init__.py"

    def locate(change: Change) -> Anchor | None:
        module, line = index.place(change, renamed) or (fallback, 1)
        file = repository.path(folder / module)
        return None if file is None else Anchor(file, line)

    return locate


def plan_anchors(plan: Plan, written: bool, repository: Repository) -> Locate:
    """The API changes of ``plan`` at the vendored package the repository holds when the command ends:
    the new package after ``--write`` (``written``), the copy as it is after a dry run."""
    renames = plan.migration.class_renames
    if written:
        tree = {name: data for name, data in plan.tree.items() if name.endswith(".py")}
        return package_anchors(plan.target, tree, repository, {r.old: r.new for r in renames})
    files = {p.relative_to(plan.folder).as_posix(): p.read_bytes() for p in sorted(plan.folder.rglob("*.py"))}
    return package_anchors(plan.folder, files, repository, {r.new: r.old for r in renames})


def finding_anchor(finding: Finding, repository: Repository) -> Anchor | None:
    """A finding in the user's code at its file, line and column, named from the repository's root."""
    file = repository.path(finding.path)
    return None if file is None else Anchor(file, finding.line, finding.column)


def github_finding(finding: Finding, repository: Repository, rules_url: str | None = None) -> str:
    """A finding as a GitHub Actions workflow command (``::error file=...::...``), its rule explained."""
    anchor = finding_anchor(finding, repository)
    where = "" if anchor is None else f"{anchor.github()},"
    link = finding.link(rules_url)
    text = f"{finding.message}. {finding.explanation}" + (f" ({link})" if link else "")
    return f"::error {where}title={github_property(finding.rule)}::{github_data(text)}"


def github_other(other: OtherCopy, repository: Repository) -> str:
    """A file left alone as a GitHub Actions notice on it (it imports another copy of the package)."""
    file = repository.path(other.path)
    where = "" if file is None else f" {Anchor(file, 1).github()}"
    return f"::notice{where}::{github_data(other.line_text())}"


def github_lines(plan: Plan, repository: Repository, rules_url: str | None = None) -> list[str]:
    """What ``--format github`` prints of an upgrade's code: its findings and the files left alone as
    annotations, then the rewrites (a unified diff, as plain lines)."""
    lines = [github_finding(f, repository, rules_url) for f in plan.findings]
    lines += [github_other(other, repository) for other in plan.others]
    return lines + [line for result in plan.rewritten for line in result.diff(plan.migration.new_release)]


def github_api(
    plan: Plan, api: DiffResult, repository: Repository, rules_url: str | None, written: bool
) -> str:
    """The API changes ``api`` (of ``plan.diff``) as annotations on the vendored package."""
    return report.render_github(api, "never", rules_url, plan_anchors(plan, written, repository), plan.diff)


def sarif_run(
    plan: Plan,
    repository: Repository,
    rules_url: str | None,
    api: DiffResult | None,
    written: bool,
) -> dict[str, Any]:
    """What ``--format sarif`` gives of an upgrade, as one SARIF run: a result per finding at its place in
    the user's code, then (``--report``) one per API change at the vendored package; the files left
    alone are notifications of the run."""
    shown = api if api is not None else dataclasses.replace(plan.diff, surfaces=())
    (run,) = report.sarif_log(shown, rules_url, plan_anchors(plan, written, repository), plan.diff)["runs"]
    index = {rule["id"]: i for i, rule in enumerate(run["tool"]["driver"]["rules"])}
    findings = [_sarif_finding(f, repository, index) for f in plan.findings]
    run["results"] = findings + run["results"]
    if plan.others:
        notes = [_sarif_other(other, repository) for other in plan.others]
        run["invocations"] = [{"executionSuccessful": True, "toolExecutionNotifications": notes}]
    return dict(run)


def _sarif_finding(finding: Finding, repository: Repository, index: Mapping[str, int]) -> dict[str, Any]:
    anchor = finding_anchor(finding, repository)
    location: dict[str, Any] = {"physicalLocation": anchor.sarif()} if anchor is not None else {}
    return {
        "ruleId": str(finding.rule),
        "ruleIndex": index[str(finding.rule)],
        "level": "error",
        "message": {"text": f"{finding.message}. {finding.explanation}"},
        "locations": [location],
    }


def _sarif_other(other: OtherCopy, repository: Repository) -> dict[str, Any]:
    file = repository.path(other.path)
    note: dict[str, Any] = {"level": "note", "message": {"text": other.line_text()}}
    if file is not None:
        note["locations"] = [{"physicalLocation": Anchor(file, 1).sarif()}]
    return note


def sarif_log(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A SARIF 2.1.0 log of the runs of :func:`sarif_run` (one per release moved)."""
    return {"$schema": report.SARIF_SCHEMA_URL, "version": "2.1.0", "runs": runs}
