"""The codemod: rewrite code that uses a vendored package for a :class:`~.migration.Migration`.

It works on libcst's concrete syntax tree, so comments, blank lines and
formatting survive every rewrite, and it resolves names with libcst's
:class:`~libcst.metadata.ScopeProvider` and qualified names
(:meth:`~libcst.metadata.Scope.get_qualified_names_for`, what
:class:`~libcst.metadata.QualifiedNameProvider` serves), never by matching
text.

**What refers to the package.**  A name or attribute refers to the package
when all its qualified names come from imports and run through a module
called like the vendored folder: ``from acp.schema import X as Y``,
``import acp.schema as s`` then ``s.X``, ``from acp import schema`` then
``schema.X``, ``from myapp.vendor.acp import schema``, ``from .acp import
schema``.  A local variable, a parameter or a local class that happens to
share a class's name has a local qualified name and is never touched.  A use
that may mean the import or another binding of the same name (a function
reading a module-level name that a local class rebinds later) is ambiguous:
then no use is touched and the import becomes ``from acp.schema import New
as Old``, which keeps every use working.

**Which methods are handler methods.**  Method renames, removals and argument
changes apply to

* ``def`` methods of classes whose bases resolve to the package's ``Agent``
  or ``Client`` (or to such a class of the same module): the ``agent`` or the
  ``client`` side of the migration;
* ``self.<method>`` and ``super().<method>`` inside such a class;
* method references and calls on a receiver tied to a connection: a
  ``ClientSideConnection`` calls the agent's methods and an
  ``AgentSideConnection`` the client's.  A receiver is tied to one when it
  is a name assigned from ``connect_to_agent(...)`` / ``connect_to_client(...)``
  or from the class itself, a name or parameter annotated with the class
  (``X | None`` and ``Optional[X]`` too), ``self.<attr>`` where the class
  assigns such a value to ``self.<attr>`` in one of its methods or annotates
  ``<attr>`` in its body, or the first parameter of the ``__init__`` of an
  agent class passed to ``run_agent(...)`` / ``connect_to_client(...)`` in the
  same module.  A call whose receiver cannot be tied this way is left alone:
  the codemod never guesses from a method's name alone.

Model attributes are renamed, and reported, where the receiver is tied to a
model class the same way (a parameter annotated ``PromptResponse``, a name
assigned from ``schema.PromptResponse(...)``) and in the keyword arguments
of model constructor calls.

**What is reported instead of rewritten** (a :class:`Finding` each): a removed
class (at every reference), a removed method or attribute, a removed keyword
argument still passed or still taken by a handler, a new required argument
missing from a call or a handler, a new required model field missing from a
constructor call, a changed type (a class: at every reference; an attribute:
where it is read or passed on a receiver tied to the class, and at the
class's first reference in a file that reads the attribute on a receiver the
codemod cannot tie to any class),
and a rename that would clash with a name already in use.

**Cost.**  A file is parsed only when its text mentions the package and one
of the names the migration changes (a regular expression over the bytes);
scopes are resolved only for those files and positions only for files with
findings.  Most files of a project need none of it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
from libcst import CSTNodeT
from libcst.metadata import (
    Assignment,
    BaseAssignment,
    ClassScope,
    FunctionScope,
    ImportAssignment,
    MetadataWrapper,
    PositionProvider,
    QualifiedNameSource,
    Scope,
    ScopeProvider,
)

from ..errors import CodegenError
from .migration import Migration, RequiredField, Side, TypeChange

RULES_DOC = "docs/rules.md"
_PARSER_PREFIX = re.compile(r"^parser error: (error at \d+:\d+: )?")

PackagePath = tuple[str, ...]
"""Where a name leads inside the package: ``("schema", "PromptResponse")``, ``("bindings", "Agent")``."""

AGENT = ("bindings", "Agent")
CLIENT = ("bindings", "Client")
CLIENT_SIDE = ("bindings", "ClientSideConnection")
AGENT_SIDE = ("bindings", "AgentSideConnection")
CONNECT_TO_AGENT = ("bindings", "connect_to_agent")
CONNECT_TO_CLIENT = ("bindings", "connect_to_client")
RUN_AGENT = ("bindings", "run_agent")
HANDLER_SIDES: dict[PackagePath, Side] = {AGENT: "agent", CLIENT: "client"}
CALLED_SIDE: dict[PackagePath, Side] = {CLIENT_SIDE: "agent", AGENT_SIDE: "client"}
"""The side whose methods a connection calls: the client's end calls the agent and the other way round."""
_REEXPORTED = frozenset(
    {
        "Agent",
        "AgentSideConnection",
        "Client",
        "ClientSideConnection",
        "connect_to_agent",
        "connect_to_client",
        "run_agent",
    }
)
"""Names the package's ``__init__`` re-exports from ``bindings``."""

Edit = Callable[[cst.CSTNode], cst.CSTNode]


@dataclass(frozen=True, order=True)
class Finding:
    """Something the codemod cannot rewrite: ``path:line:column rule message``."""

    path: str
    line: int
    column: int
    """1-based, as editors and other linters count."""
    rule: str
    message: str

    @property
    def link(self) -> str:
        return f"{RULES_DOC}#{self.rule}"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column} {self.rule} {self.message} ({self.link})"


@dataclass(frozen=True)
class FileResult:
    """One source file: its bytes before and after the rewrites, and the findings in it."""

    path: Path
    before: bytes
    after: bytes
    findings: tuple[Finding, ...] = ()
    resolved: bool = False
    """Whether the file passed the text filter and its names were resolved."""

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self, new_release: str) -> list[str]:
        """A unified diff of the rewrites."""
        if not self.changed:
            return []
        return list(
            difflib.unified_diff(
                _text(self.before).splitlines(),
                _text(self.after).splitlines(),
                f"{self.path}",
                f"{self.path} (for {new_release})",
                lineterm="",
            )
        )


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


# --- the migration as lookup tables ----------------------------------------------------------


class _Index:
    """The migration by the names user code spells, and the text filter built from them."""

    def __init__(self, migration: Migration, package: str, new_package: str | None) -> None:
        self.migration = migration
        self.package = package
        self.new_package = new_package
        self.class_renames = {r.old: r.new for r in migration.class_renames}
        self.removed_classes = {r.name for r in migration.removed_classes}
        self.class_types: dict[str, list[TypeChange]] = {}
        self.attribute_types: dict[str, dict[str, list[TypeChange]]] = {}
        for change in migration.type_changes:
            if change.attribute is None:
                self.class_types.setdefault(change.class_name, []).append(change)
            else:
                by_attr = self.attribute_types.setdefault(change.class_name, {})
                by_attr.setdefault(change.attribute, []).append(change)
        self.attribute_renames: dict[str, dict[str, str]] = {}
        for a in migration.attribute_renames:
            self.attribute_renames.setdefault(a.class_name, {})[a.old] = a.new
        self.removed_attributes: dict[str, set[str]] = {}
        for r in migration.removed_attributes:
            self.removed_attributes.setdefault(r.class_name, set()).add(r.name)
        self.required_fields: dict[str, list[RequiredField]] = {}
        for f in migration.required_fields:
            self.required_fields.setdefault(f.class_name, []).append(f)
        self.method_renames = {(r.side, r.old): r.new for r in migration.method_renames}
        self.removed_methods = {(r.side, r.name): r.detail for r in migration.removed_methods}
        self.argument_renames: dict[tuple[Side, str], dict[str, str]] = {}
        for g in migration.argument_renames:
            self.argument_renames.setdefault((g.side, g.method), {})[g.old] = g.new
        self.removed_arguments: dict[tuple[Side, str], set[str]] = {}
        for d in migration.removed_arguments:
            self.removed_arguments.setdefault((d.side, d.method), set()).add(d.name)
        self.required_arguments: dict[tuple[Side, str], list[str]] = {}
        for q in migration.required_arguments:
            self.required_arguments.setdefault((q.side, q.method), []).append(q.name)

    @property
    def class_words(self) -> set[str]:
        return (
            set(self.class_renames)
            | self.removed_classes
            | set(self.class_types)
            | set(self.attribute_renames)
            | set(self.removed_attributes)
            | set(self.attribute_types)
            | set(self.required_fields)
        )

    @property
    def attribute_words(self) -> set[str]:
        words: set[str] = set()
        for table in (self.attribute_renames, self.removed_attributes, self.attribute_types):
            for names in table.values():
                words.update(names)
        return words

    @property
    def method_words(self) -> set[str]:
        keys: Iterable[tuple[Side, str]] = (
            *self.method_renames,
            *self.removed_methods,
            *self.argument_renames,
            *self.removed_arguments,
            *self.required_arguments,
        )
        return {name for _, name in keys}

    def text_filter(self) -> Callable[[bytes], bool]:
        """Whether a file's bytes can hold anything to rewrite or report (a cheap test before parsing)."""
        words = self.class_words | self.method_words
        if self.new_package is not None:
            words.add(self.package)
        package = re.compile(rb"\b" + re.escape(self.package.encode()) + rb"\b")
        if not words:
            return lambda source: False
        alternatives = b"|".join(re.escape(w.encode()) for w in sorted(words))
        changed = re.compile(rb"\b(?:" + alternatives + rb")\b")
        return lambda source: package.search(source) is not None and changed.search(source) is not None


# --- one file --------------------------------------------------------------------------------


class _Collector(cst.CSTVisitor):
    """One pass over a module: the nodes the analysis may need, found by their names alone.

    (libcst finds the ``visit_<Node>`` methods by the node class's name, hence their spelling.)
    """

    def __init__(self, index: _Index) -> None:
        self.package = index.package
        self.words = index.class_words | index.attribute_words | index.method_words | {index.package}
        self.imports: list[cst.Import | cst.ImportFrom] = []
        self.calls: list[cst.Call] = []
        self.attributes: list[cst.Attribute] = []
        self.package_names: list[cst.Name] = []
        self.functions: list[cst.FunctionDef] = []
        self.assigned: dict[cst.Name, cst.BaseExpression] = {}
        self.annotated: dict[cst.Name, cst.BaseExpression] = {}
        self.member_assigns: list[
            tuple[cst.Attribute, cst.BaseExpression | None, cst.BaseExpression | None]
        ] = []

    def visit_Import(self, node: cst.Import) -> bool:  # noqa: N802
        self.imports.append(node)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:  # noqa: N802
        self.imports.append(node)
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:  # noqa: N802
        self.functions.append(node)

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        self.calls.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if node.attr.value in self.words:
            self.attributes.append(node)

    def visit_Name(self, node: cst.Name) -> None:  # noqa: N802
        if node.value == self.package:
            self.package_names.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:  # noqa: N802
        if len(node.targets) == 1:
            self._target(node.targets[0].target, None, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:  # noqa: N802
        self._target(node.target, node.annotation.annotation, node.value)

    def _target(
        self,
        target: cst.BaseExpression,
        annotation: cst.BaseExpression | None,
        value: cst.BaseExpression | None,
    ) -> None:
        if isinstance(target, cst.Name):
            if annotation is not None:
                self.annotated[target] = annotation
            elif value is not None:
                self.assigned[target] = value
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            self.member_assigns.append((target, annotation, value))


class _Analysis:
    """Resolves the collected nodes of one module and records edits and findings."""

    def __init__(self, index: _Index, wrapper: MetadataWrapper, collector: _Collector) -> None:
        self.index = index
        self.found = collector
        self.scopes = wrapper.resolve(ScopeProvider)
        self.edits: dict[cst.CSTNode, Edit] = {}
        self.findings: list[tuple[cst.CSTNode, str, str]] = []
        self.factories: set[cst.ClassDef] = set()
        self.members: dict[
            tuple[cst.ClassDef, str], list[tuple[cst.BaseExpression | None, cst.BaseExpression | None]]
        ] = {}
        self.sides: dict[cst.ClassDef, Side | None] = {}
        self.class_seen: dict[str, cst.CSTNode] = {}
        """The first reference to each class in the file: where an attribute's type change falls back to."""
        self.attribute_sites: set[tuple[str, str]] = set()
        """(class, attribute) pairs read or passed somewhere in the file."""
        self.untyped_reads: set[str] = set()
        """Attribute names read on a receiver whose class is unknown."""
        self.new_release = index.migration.new_release
        self.bound: set[str] = set()
        """The names the module's imports bind."""

    # -- recording ----------------------------------------------------------------

    def rename(self, node: cst.Name, new: str) -> None:
        self.edits.setdefault(node, lambda updated: _renamed(updated, new))

    def report(self, node: cst.CSTNode, rule: str, message: str) -> None:
        self.findings.append((node, rule, message))

    # -- resolution -----------------------------------------------------------------

    def scope(self, node: cst.CSTNode) -> Scope | None:
        return self.scopes.get(node)

    def path_of_qualified(self, name: str) -> PackagePath | None:
        """The path inside the package of an imported qualified name (``acp.schema.X``), if it is one."""
        parts = name.lstrip(".").split(".")
        for i, part in enumerate(parts):
            if part == self.index.package:
                rest = tuple(parts[i + 1 :])
                return ("bindings", *rest) if rest and rest[0] in _REEXPORTED else rest
        return None

    def refers_to(self, node: cst.CSTNode) -> PackagePath | None:
        """Where a name or attribute leads in the package, when every binding it may have leads there."""
        scope = self.scope(node)
        if scope is None:
            return None
        paths: set[PackagePath | None] = set()
        for qualified in scope.get_qualified_names_for(node):
            if qualified.source is not QualifiedNameSource.IMPORT:
                return None
            paths.add(self.path_of_qualified(qualified.name))
        if len(paths) != 1:
            return None
        return paths.pop()

    def referents(self, node: cst.Name) -> set[BaseAssignment]:
        scope = self.scope(node)
        if scope is None:
            return set()
        return {r for access in scope.accesses[node] if access.node is node for r in access.referents}

    def type_of(
        self, expr: cst.BaseExpression, seen: frozenset[cst.CSTNode] = frozenset()
    ) -> PackagePath | None:
        """The package class of the value ``expr`` holds, if it can be tied to one (see the module doc)."""
        if expr in seen:
            return None
        seen |= {expr}
        if isinstance(expr, cst.Name):
            found = {self.assignment_type(a, seen) for a in self.referents(expr)}
            return found.pop() if len(found) == 1 else None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            owner = self.self_class(expr.value)
            if owner is not None:
                return self.member_type(owner, expr.attr.value, seen)
        return None

    def assignment_type(self, assignment: BaseAssignment, seen: frozenset[cst.CSTNode]) -> PackagePath | None:
        if not isinstance(assignment, Assignment) or isinstance(assignment, ImportAssignment):
            return None
        node = assignment.node
        if isinstance(node, cst.Param):
            if node.annotation is not None:
                return self.annotation_type(node.annotation.annotation)
            return AGENT_SIDE if self.is_factory_connection(node, assignment.scope) else None
        if isinstance(node, cst.Name):
            if node in self.found.annotated:
                return self.annotation_type(self.found.annotated[node])
            if node in self.found.assigned:
                return self.value_type(self.found.assigned[node], seen)
        return None

    def value_type(self, value: cst.BaseExpression, seen: frozenset[cst.CSTNode]) -> PackagePath | None:
        if isinstance(value, cst.Call):
            target = self.refers_to(value.func)
            if target == CONNECT_TO_AGENT:
                return CLIENT_SIDE
            if target == CONNECT_TO_CLIENT:
                return AGENT_SIDE
            return target if target is not None and _is_class(target) else None
        if isinstance(value, (cst.Name, cst.Attribute)):
            return self.type_of(value, seen)
        return None

    def annotation_type(self, annotation: cst.BaseExpression) -> PackagePath | None:
        if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
            sides = [s for s in (annotation.left, annotation.right) if not _is_none(s)]
            return self.annotation_type(sides[0]) if len(sides) == 1 else None
        if isinstance(annotation, cst.Subscript) and len(annotation.slice) == 1:
            scope = self.scope(annotation.value)
            names = {q.name for q in scope.get_qualified_names_for(annotation.value)} if scope else set()
            element = annotation.slice[0].slice
            if names == {"typing.Optional"} and isinstance(element, cst.Index):
                return self.annotation_type(element.value)
            return None
        target = self.refers_to(annotation)
        return target if target is not None and _is_class(target) else None

    def self_class(self, name: cst.Name) -> cst.ClassDef | None:
        """The class whose method ``name`` is the first parameter of (``self``), if it is one."""
        referents = self.referents(name)
        if len(referents) != 1:
            return None
        (assignment,) = referents
        if not isinstance(assignment, Assignment) or not isinstance(assignment.node, cst.Param):
            return None
        scope = assignment.scope
        if not isinstance(scope, FunctionScope) or not isinstance(scope.node, cst.FunctionDef):
            return None
        function = scope.node
        if not function.params.params or function.params.params[0] is not assignment.node:
            return None
        if any(_decorator_name(d) in ("staticmethod", "classmethod") for d in function.decorators):
            return None
        return self.method_owner(function)

    def method_owner(self, function: cst.FunctionDef) -> cst.ClassDef | None:
        scope = self.scope(function)
        if isinstance(scope, ClassScope) and isinstance(scope.node, cst.ClassDef):
            return scope.node
        return None

    def member_type(self, owner: cst.ClassDef, attr: str, seen: frozenset[cst.CSTNode]) -> PackagePath | None:
        found: set[PackagePath | None] = set()
        for annotation, value in self.members.get((owner, attr), []):
            if annotation is not None:
                found.add(self.annotation_type(annotation))
            elif value is not None:
                found.add(self.value_type(value, seen))
        return found.pop() if len(found) == 1 else None

    def is_factory_connection(self, param: cst.Param, scope: Scope) -> bool:
        """Whether ``param`` is the connection that ``run_agent(MyAgent)`` gives ``MyAgent.__init__``."""
        if not isinstance(scope, FunctionScope) or not isinstance(scope.node, cst.FunctionDef):
            return False
        function = scope.node
        params = function.params.params
        if function.name.value != "__init__" or len(params) < 2 or params[1] is not param:
            return False
        owner = self.method_owner(function)
        return owner is not None and owner in self.factories

    def handler_receiver(self, expr: cst.BaseExpression) -> Side | None:
        """The side of a handler class's own methods reached as ``self.m`` or ``super().m`` inside it."""
        if isinstance(expr, cst.Name):
            owner = self.self_class(expr)
        elif (
            isinstance(expr, cst.Call)
            and not expr.args
            and isinstance(expr.func, cst.Name)
            and expr.func.value == "super"
            and self.refers_to_builtin(expr.func)
        ):
            scope = self.scope(expr)
            function = scope.node if isinstance(scope, FunctionScope) else None
            owner = self.method_owner(function) if isinstance(function, cst.FunctionDef) else None
        else:
            return None
        return self.handler_side(owner) if owner is not None else None

    def refers_to_builtin(self, name: cst.Name) -> bool:
        scope = self.scope(name)
        qualified = scope.get_qualified_names_for(name) if scope is not None else set()
        return {q.name for q in qualified} == {f"builtins.{name.value}"}

    def handler_side(self, classdef: cst.ClassDef) -> Side | None:
        """``agent`` or ``client`` for a class whose bases lead to the package's ``Agent`` or ``Client``."""
        if classdef in self.sides:
            return self.sides[classdef]
        self.sides[classdef] = None  # a cycle resolves to nothing
        side: Side | None = None
        for base in classdef.bases:
            if base.keyword is not None:
                continue
            target = self.refers_to(base.value)
            if target in HANDLER_SIDES:
                side = HANDLER_SIDES[target]
            elif isinstance(base.value, cst.Name):
                for assignment in self.referents(base.value):
                    if isinstance(assignment, Assignment) and isinstance(assignment.node, cst.ClassDef):
                        side = side or self.handler_side(assignment.node)
            if side is not None:
                break
        self.sides[classdef] = side
        return side

    # -- the passes -------------------------------------------------------------------

    def run(self) -> None:
        for statement in self.found.imports:
            self.imports(statement)
        calls = [c for c in self.found.calls if _last_name(c.func) in self.call_words]
        for target, annotation, value in self.found.member_assigns:
            assert isinstance(target.value, cst.Name)
            owner = self.self_class(target.value)
            if owner is not None:
                self.members.setdefault((owner, target.attr.value), []).append((annotation, value))
        for name, annotation in self.found.annotated.items():
            scope = self.scope(name)
            if isinstance(scope, ClassScope) and isinstance(scope.node, cst.ClassDef):
                self.members.setdefault((scope.node, name.value), []).append((annotation, None))
        for call in calls:
            if call.args and self.refers_to(call.func) in (RUN_AGENT, CONNECT_TO_CLIENT):
                first = call.args[0].value
                if isinstance(first, cst.Name):
                    for assignment in self.referents(first):
                        if isinstance(assignment, Assignment) and isinstance(assignment.node, cst.ClassDef):
                            self.factories.add(assignment.node)
        for name in self.found.package_names:
            self.package_reference(name)
        for attribute in self.found.attributes:
            self.attribute(attribute)
        for call in calls:
            self.call(call)
        for function in self.found.functions:
            self.handler_method(function)
        self.attribute_type_fallbacks()

    @property
    def call_words(self) -> set[str]:
        """The last names of the calls worth resolving: methods, models and run_agent, as spelled here."""
        return (
            self.index.method_words | self.index.class_words | self.bound | {"run_agent", "connect_to_client"}
        )

    # imports and class references

    def imports(self, statement: cst.Import | cst.ImportFrom) -> None:
        rename_to = self.index.new_package
        if isinstance(statement, cst.Import):
            for alias in statement.names:
                self.bound.add(_alias_name(alias) or _chain(alias.name)[0].value)
                if rename_to is not None:
                    for name in _chain(alias.name):
                        if name.value == self.index.package:
                            self.rename(name, rename_to)
            return
        module = [n.value for n in _chain(statement.module)] if statement.module is not None else []
        if rename_to is not None and statement.module is not None:
            for name in _chain(statement.module):
                if name.value == self.index.package:
                    self.rename(name, rename_to)
        if isinstance(statement.names, cst.ImportStar):
            return
        for alias in statement.names:
            if not isinstance(alias.name, cst.Name):
                continue
            imported = alias.name.value
            self.bound.add(_alias_name(alias) or imported)
            if rename_to is not None and imported == self.index.package:
                self.rename(alias.name, rename_to)
                if alias.asname is None:
                    for reference in self.import_references(statement, imported):
                        if isinstance(reference, cst.Name):
                            self.rename(reference, rename_to)
            path = self.path_of_qualified(".".join([*module, imported]))
            if path is not None and len(path) == 2 and path[0] == "schema":
                self.class_import(statement, alias, path[1])

    def import_assignment(self, statement: cst.ImportFrom, bound: str) -> ImportAssignment | None:
        scope = self.scope(statement)
        if scope is None:
            return None
        for assignment in scope.assignments[bound]:
            if isinstance(assignment, ImportAssignment) and assignment.node is statement:
                return assignment
        return None

    def import_references(self, statement: cst.ImportFrom, bound: str) -> Iterator[cst.CSTNode]:
        """The uses of one name an import binds, each only if it can mean nothing else."""
        assignment = self.import_assignment(statement, bound)
        if assignment is None:
            return
        for access in assignment.references:
            if access.referents == {assignment}:
                yield access.node

    def class_import(self, statement: cst.ImportFrom, alias: cst.ImportAlias, cls: str) -> None:
        assert isinstance(alias.name, cst.Name)
        self.class_seen.setdefault(cls, alias.name)
        bound = _alias_name(alias) or cls
        assignment = self.import_assignment(statement, bound)
        references = [] if assignment is None else list(assignment.references)
        clean = all(access.referents == {assignment} for access in references)
        if cls in self.index.class_renames:
            new = self.index.class_renames[cls]
            if alias.asname is not None:
                self.rename(alias.name, new)
            elif not clean:
                self.edits.setdefault(alias, lambda updated: _aliased(updated, new, cls))
            else:
                self.rename(alias.name, new)
                for access in references:
                    if isinstance(access.node, cst.Name):
                        self.rename(access.node, new)
                    elif isinstance(access.node, cst.SimpleString):
                        string = access.node
                        self.edits.setdefault(string, lambda updated: _string_renamed(updated, cls, new))
        nodes = [alias.name, *(a.node for a in references if a.referents == {assignment})]
        self.class_findings(cls, nodes)

    def class_findings(self, cls: str, nodes: Iterable[cst.CSTNode]) -> None:
        """A removed class or a class whose type changed, at each of its references."""
        for node in nodes:
            if cls in self.index.removed_classes:
                self.report(node, "python-class-removed", f"{cls} is gone in {self.new_release}")
            for change in self.index.class_types.get(cls, []):
                self.report(node, change.rule, f"{cls} changed type in {self.new_release}: {change.detail}")

    def package_reference(self, name: cst.Name) -> None:
        """``acp_2_0_0_alpha_7`` in ``acp_2_0_0_alpha_7.schema.X`` (after ``import acp_2_0_0_alpha_7``)."""
        if self.index.new_package is not None and self.refers_to(name) == ():
            self.rename(name, self.index.new_package)

    # attributes: class references, model attributes and connection methods

    def attribute(self, node: cst.Attribute) -> None:
        attr = node.attr.value
        if attr == self.index.package:
            if self.index.new_package is not None and self.refers_to(node) == ():
                self.rename(node.attr, self.index.new_package)
            return
        target = self.refers_to(node)
        if target is not None:
            if len(target) == 2 and target[0] == "schema":
                cls = target[1]
                self.class_seen.setdefault(cls, node.attr)
                if cls in self.index.class_renames:
                    self.rename(node.attr, self.index.class_renames[cls])
                self.class_findings(cls, [node.attr])
            return
        side = self.handler_receiver(node.value)
        if side is not None:
            self.method_reference(side, node)
            return
        receiver = self.type_of(node.value)
        if receiver in CALLED_SIDE:
            self.method_reference(CALLED_SIDE[receiver], node)
        elif receiver is not None and _is_class(receiver) and receiver[0] == "schema":
            self.model_attribute(receiver[1], node.attr)
        else:
            self.untyped_reads.add(node.attr.value)

    def model_attribute(self, cls: str, name: cst.Name) -> None:
        attr = name.value
        self.attribute_sites.add((cls, attr))
        new = self.index.attribute_renames.get(cls, {}).get(attr)
        if new is not None:
            self.rename(name, new)
        if attr in self.index.removed_attributes.get(cls, set()):
            self.report(name, "python-attribute-removed", f"{cls}.{attr} is gone in {self.new_release}")
        for change in self.index.attribute_types.get(cls, {}).get(attr, []):
            self.report(
                name, change.rule, f"{cls}.{attr} changed type in {self.new_release}: {change.detail}"
            )

    def method_reference(self, side: Side, node: cst.Attribute) -> None:
        method = node.attr.value
        key = (side, method)
        if key in self.index.removed_methods:
            self.report(
                node.attr, "python-method-removed", f"{_caller(side)}.{method} is gone in {self.new_release}"
            )
        elif key in self.index.method_renames:
            self.rename(node.attr, self.index.method_renames[key])

    # calls: connection methods and model constructors

    def call(self, call: cst.Call) -> None:
        func = call.func
        keywords = {arg.keyword.value: arg.keyword for arg in call.args if arg.keyword is not None}
        splat = any(arg.star == "**" for arg in call.args)
        if isinstance(func, cst.Attribute) and func.attr.value in self.index.method_words:
            receiver = self.type_of(func.value)
            side = CALLED_SIDE.get(receiver) if receiver is not None else self.handler_receiver(func.value)
            if side is not None:
                key = (side, func.attr.value)
                if key in self.index.removed_methods:
                    return
                method = f"{_caller(side)}.{func.attr.value}()"
                for old, new in self.index.argument_renames.get(key, {}).items():
                    if old in keywords:
                        self.rename(keywords[old], new)
                for removed in sorted(self.index.removed_arguments.get(key, set())):
                    if removed in keywords:
                        self.report(
                            keywords[removed],
                            "python-method-argument-removed",
                            f"{method} no longer takes {removed} in {self.new_release} "
                            "(passed on, it would become a _meta key)",
                        )
                missing = [a for a in self.index.required_arguments.get(key, []) if a not in keywords]
                if missing and not splat:
                    self.report(
                        func.attr,
                        "python-method-argument-required",
                        f"{method} needs {_and(missing)} in {self.new_release}",
                    )
                return
        target = self.refers_to(func)
        if target is None or not _is_class(target) or target[0] != "schema":
            return
        cls = target[1]
        for name in keywords.values():
            self.model_attribute(cls, name)
        if splat:
            return
        where = func.attr if isinstance(func, cst.Attribute) else func
        for required in self.index.required_fields.get(cls, []):
            if required.name not in keywords and required.wire not in keywords:
                self.report(where, required.rule, f"{cls}(...) needs {required.name} in {self.new_release}")

    # handler methods

    def handler_method(self, function: cst.FunctionDef) -> None:
        name = function.name.value
        if name not in self.index.method_words:
            return
        owner = self.method_owner(function)
        side = self.handler_side(owner) if owner is not None else None
        if side is None:
            return
        key = (side, name)
        handler = f"{_handler(side)} handler {name}"
        if key in self.index.removed_methods:
            self.report(
                function.name,
                "python-method-removed",
                f"{handler}: {self.new_release} has no such method, so nothing calls it",
            )
            return
        if key in self.index.method_renames:
            self.rename(function.name, self.index.method_renames[key])
        params = {p.name.value: p for p in (*function.params.params[1:], *function.params.kwonly_params)}
        for old, new in self.index.argument_renames.get(key, {}).items():
            if old in params:
                problem = self.rename_parameter(params[old], new)
                if problem is not None:
                    self.report(
                        params[old].name,
                        "python-method-argument-renamed",
                        f"{handler}: cannot rename {old} to {new}: {problem}",
                    )
        for removed in sorted(self.index.removed_arguments.get(key, set())):
            if removed in params:
                self.report(
                    params[removed].name,
                    "python-method-argument-removed",
                    f"{handler} takes {removed}, which {self.new_release} no longer passes",
                )
        missing = [a for a in self.index.required_arguments.get(key, []) if a not in params]
        if missing:
            self.report(
                function.name,
                "python-method-argument-required",
                f"{handler} does not take {_and(missing)}, new in {self.new_release}",
            )

    def rename_parameter(self, param: cst.Param, new: str) -> str | None:
        """Rename a parameter and every use of it; the reason if that is not safe."""
        scope = self.scope(param.name)
        if scope is None:
            return "its scope is unknown"
        old = param.name.value
        if new in scope.assignments or scope.accesses[new]:
            return f"{new} is already used in the method"
        names: list[cst.Name] = []
        for assignment in scope.assignments[old]:
            if not isinstance(assignment, Assignment):
                return f"{old} is rebound in the method"
            if isinstance(assignment.node, cst.Param):
                names.append(assignment.node.name)
            elif isinstance(assignment.node, cst.Name):
                names.append(assignment.node)
            else:
                return f"{old} is rebound in the method"
            for access in assignment.references:
                if not isinstance(access.node, cst.Name):
                    return f"{old} is used in a string annotation"
                names.append(access.node)
        for name in names:
            self.rename(name, new)
        return None

    def attribute_type_fallbacks(self) -> None:
        """A changed attribute type read where the receiver's class is unknown: reported at the class.

        The file reads ``.attr`` on something the codemod cannot tie to a
        class, and refers to the class whose ``attr`` changed: the finding
        goes to the class's first reference (its import, usually).
        """
        for cls, changes in sorted(self.index.attribute_types.items()):
            where = self.class_seen.get(cls)
            if where is None:
                continue
            for attr, attr_changes in sorted(changes.items()):
                if (cls, attr) in self.attribute_sites or attr not in self.untyped_reads:
                    continue
                for change in attr_changes:
                    self.report(
                        where,
                        change.rule,
                        f"{cls}.{attr} changed type in {self.new_release}: {change.detail}",
                    )


# --- helpers ------------------------------------------------------------------------------------


def _chain(expr: cst.BaseExpression) -> list[cst.Name]:
    """The names of a dotted name, left to right (``a.b.c`` -> ``a``, ``b``, ``c``)."""
    if isinstance(expr, cst.Name):
        return [expr]
    if isinstance(expr, cst.Attribute):
        return [*_chain(expr.value), expr.attr]
    return []


def _alias_name(alias: cst.ImportAlias) -> str | None:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return None


def _last_name(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return ""


def _is_class(path: PackagePath) -> bool:
    return len(path) == 2 and path[1][:1].isupper()


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _decorator_name(decorator: cst.Decorator) -> str:
    node = decorator.decorator
    return node.value if isinstance(node, cst.Name) else ""


def _caller(side: Side) -> str:
    return "ClientSideConnection" if side == "agent" else "AgentSideConnection"


def _handler(side: Side) -> str:
    return "Agent" if side == "agent" else "Client"


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _renamed(node: cst.CSTNode, new: str) -> cst.CSTNode:
    assert isinstance(node, cst.Name)
    return node.with_changes(value=new)


def _aliased(node: cst.CSTNode, new: str, old: str) -> cst.CSTNode:
    """``from pkg.schema import Old`` -> ``from pkg.schema import New as Old``."""
    assert isinstance(node, cst.ImportAlias)
    return node.with_changes(name=cst.Name(new), asname=cst.AsName(name=cst.Name(old)))


def _string_renamed(node: cst.CSTNode, old: str, new: str) -> cst.CSTNode:
    """A string annotation with the class renamed in it (``"list[Old]"`` -> ``"list[New]"``)."""
    assert isinstance(node, cst.SimpleString)
    return node.with_changes(value=re.sub(rf"(?<![\w.]){re.escape(old)}\b", new, node.value))


class _Apply(cst.CSTTransformer):
    """Applies the recorded edits, each to the node it was recorded for (by identity)."""

    def __init__(self, edits: dict[cst.CSTNode, Edit]) -> None:
        super().__init__()
        self.edits = edits

    def on_leave(self, original_node: CSTNodeT, updated_node: CSTNodeT) -> CSTNodeT:
        edit = self.edits.get(original_node)
        if edit is None:
            return updated_node
        edited = edit(updated_node)
        assert isinstance(edited, type(updated_node))
        return edited


# --- the codemod ----------------------------------------------------------------------------------


class Codemod:
    """Rewrites source files that use the vendored package ``package`` for ``migration``.

    ``rename_package`` renames the package itself (a copy vendored under the
    versioned name of the old release moves to the new one's).
    """

    def __init__(self, migration: Migration, package: str, rename_package: str | None = None) -> None:
        self.migration = migration
        self.index = _Index(migration, package, rename_package)
        self.wanted = self.index.text_filter()

    def rewrite(self, source: bytes, path: str) -> tuple[bytes, tuple[Finding, ...], bool]:
        """``(new source, findings, resolved)`` for one file; a file that does not parse is bad input."""
        if not self.wanted(source):
            return source, (), False
        try:
            module = cst.parse_module(source)
        except cst.ParserSyntaxError as error:
            detail = _PARSER_PREFIX.sub("", " ".join(error.message.split()))
            raise CodegenError(f"cannot parse it (line {error.editor_line}): {detail}", file=path) from None
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        collector = _Collector(self.index)
        module.visit(collector)
        analysis = _Analysis(self.index, wrapper, collector)
        analysis.run()
        findings: list[Finding] = []
        if analysis.findings:
            positions = wrapper.resolve(PositionProvider)
            for node, rule, message in analysis.findings:
                start = positions[node].start
                findings.append(Finding(path, start.line, start.column + 1, rule, message))
        after = module.visit(_Apply(analysis.edits)).bytes if analysis.edits else source
        return after, tuple(sorted(set(findings))), True

    def run(self, files: Iterable[Path]) -> list[FileResult]:
        """Rewrite every file in memory; nothing is written."""
        results = []
        for path in files:
            try:
                before = path.read_bytes()
            except OSError as error:
                raise CodegenError(f"cannot read it: {error.strerror}", file=path) from None
            after, findings, resolved = self.rewrite(before, str(path))
            results.append(FileResult(path, before, after, findings, resolved))
        return results
