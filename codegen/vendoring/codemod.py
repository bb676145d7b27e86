"""The codemod: rewrite code that uses a vendored package for a :class:`~.migration.Migration`.

It resolves names by their scopes and qualified names, never by matching
text, and rewrites a file by replacing the identifiers it renames in place,
so comments, blank lines and formatting survive every rewrite byte for byte.

**How.**  The analysis runs on Python's own :mod:`ast` (CPython's C parser)
with :mod:`.scopes`, a scope walker of our own that reproduces libcst's
:class:`~libcst.metadata.ScopeProvider` and qualified names, the model this
codemod was first written against: module, class, function, lambda and
comprehension scopes, imports with ``as``, every binding form, ``global``
and ``nonlocal``, string annotations, and the order of bindings and uses
within a scope.  It is explicit code rather than libcst's provider because
the provider, libcst's position provider and its tree walks cost several
times a libcst parse on a project where every file touches a changed API,
where the walker and :func:`ast.parse` together cost less than one; the
walker's docstring lists what it does not model (control flow, star
imports).  Each node's position comes from :mod:`ast`: findings report
them, and :mod:`.sourcetext` turns them into the spans of the identifiers to
replace (a ``def``'s name and the names of an import statement are read off
the tokens of that statement alone), checks that each span holds the name
it is about to replace, and swaps them in the file's own encoding.  libcst
only phrases the message of a file that does not parse.

Since the analysis moved from libcst to :mod:`ast`, a file is read by the
Python that runs the codemod: a file that uses syntax newer than it (a 3.12
``type`` alias read by Python 3.11) is reported as not parsing, where libcst
read it; a file nested deeper than Python can parse, or than the walker can
recurse into, is one error line too (libcst's provider crashed on it).  And a
rewrite no longer goes through libcst's code generation, which did not give
back every file byte for byte (a space before the colon of ``except (A, B)
:``, a form feed at the start of a line, a last line ending in a lone ``\r``):
only the renamed identifiers change.

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
most files of a project need nothing more.  A file that does is parsed and
walked once; the few spans a rewrite needs are located only in files with
something to rewrite.  ``make bench-codemod`` measures it against a bare
libcst parse of the same files (``docs/vendoring.md`` has the figures).
"""

from __future__ import annotations

import ast
import difflib
import functools
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from ..errors import CodegenError
from .migration import Migration, RequiredField, RuleId, Side, TypeChange, rule
from .scopes import Assignment, Collected, Ident, Kind, ModuleScopes, Scope, Source, arguments
from .sourcetext import SourceText, Span, SpanError

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


@dataclass(frozen=True, order=True)
class Finding:
    """Something the codemod cannot rewrite: ``path:line:column rule message``."""

    path: str
    line: int
    column: int
    """1-based, as editors and other linters count."""
    rule: RuleId
    message: str

    def link(self, rules_url: str | None) -> str | None:
        """The rule's section in the published catalog, if one is configured (see ``--rules-url``)."""
        return f"{rules_url}#{self.rule}" if rules_url else None

    @property
    def explanation(self) -> str:
        """The rule in one line, as the catalog explains it."""
        return rule(self.rule).summary

    def line_text(self, rules_url: str | None = None) -> str:
        """``path:line:column rule message``, and the rule's link when there is a catalog to link to."""
        link = self.link(rules_url)
        return f"{self}" + (f" ({link})" if link else "")

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column} {self.rule} {self.message}"


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

Site = tuple[str, object, int]
"""Where an identifier is, as the analysis names it: ``(kind, node, index)``.

``("node", n, 0)``: a name (an :class:`ast.Name` or :class:`~.scopes.Ident`), or a
string annotation, or any other expression (its start); ``("attr", a, 0)``: an
attribute's name; ``("arg", p, 0)``: a parameter's name; ``("keyword", k, 0)``: a
keyword argument's name; ``("def", f, 0)``: a ``def``'s name; ``("import", s, i)``:
the ``i``-th name of an import statement (its ``from`` module's names, then each
alias's dotted name and ``as`` name).
"""

Edit = str | Callable[[str], str]
"""What replaces a site's text: new text, or a function of the old text."""


def _site(node: object) -> Site:
    return ("node", node, 0)


class _Analysis:
    """Resolves the collected nodes of one module and records edits and findings."""

    def __init__(self, index: _Index, tree: ast.Module, text: SourceText) -> None:
        self.index = index
        self.text = text
        words = index.class_words | index.attribute_words | index.method_words | {index.package}
        self.found = Collected(frozenset(words), index.package)
        self.module = ModuleScopes(tree, self.found)
        self.edits: dict[Site, Edit] = {}
        self.findings: list[tuple[Site, RuleId, str]] = []
        self.factories: set[ast.ClassDef] = set()
        self.members: dict[tuple[ast.ClassDef, str], list[tuple[ast.expr | None, ast.expr | None]]] = {}
        self.sides: dict[ast.ClassDef, Side | None] = {}
        self.class_seen: dict[str, Site] = {}
        """The first reference to each class in the file: where an attribute's type change falls back to."""
        self.attribute_sites: set[tuple[str, str]] = set()
        """(class, attribute) pairs read or passed somewhere in the file."""
        self.untyped_reads: set[str] = set()
        """Attribute names read on a receiver whose class is unknown."""
        self.new_release = index.migration.new_release
        self.bound: set[str] = set()
        """The names the module's imports bind."""

    # -- recording ----------------------------------------------------------------

    def rename(self, site: Site, new: str) -> None:
        self.edits.setdefault(site, new)

    def report(self, site: Site, rule: RuleId, message: str) -> None:
        self.findings.append((site, rule, message))

    # -- resolution -----------------------------------------------------------------

    def scope(self, node: object) -> Scope | None:
        return self.module.scope_of.get(node)

    def path_of_qualified(self, name: str) -> PackagePath | None:
        """The path inside the package of an imported qualified name (``acp.schema.X``), if it is one."""
        parts = name.lstrip(".").split(".")
        for i, part in enumerate(parts):
            if part == self.index.package:
                rest = tuple(parts[i + 1 :])
                return ("bindings", *rest) if rest and rest[0] in _REEXPORTED else rest
        return None

    def refers_to(self, node: ast.AST | Ident) -> PackagePath | None:
        """Where a name or attribute leads in the package, when every binding it may have leads there."""
        paths: set[PackagePath | None] = set()
        for qualified in self.module.qualified_names(node):
            if qualified.source is not Source.IMPORT:
                return None
            paths.add(self.path_of_qualified(qualified.name))
        if len(paths) != 1:
            return None
        return paths.pop()

    def referents(self, node: ast.AST) -> set[Assignment]:
        return self.module.referents(node)

    def type_of(self, expr: ast.expr, seen: frozenset[ast.expr] = frozenset()) -> PackagePath | None:
        """The package class of the value ``expr`` holds, if it can be tied to one (see the module doc)."""
        if expr in seen:
            return None
        seen |= {expr}
        if isinstance(expr, ast.Name):
            found = {self.assignment_type(a, seen) for a in self.referents(expr)}
            return found.pop() if len(found) == 1 else None
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            owner = self.self_class(expr.value)
            if owner is not None:
                return self.member_type(owner, expr.attr, seen)
        return None

    def assignment_type(self, assignment: Assignment, seen: frozenset[ast.expr]) -> PackagePath | None:
        if assignment.builtin or assignment.is_import:
            return None
        node = assignment.node
        if isinstance(node, ast.arg):
            if node.annotation is not None:
                return self.annotation_type(node.annotation)
            return AGENT_SIDE if self.is_factory_connection(node, assignment.scope) else None
        if isinstance(node, ast.Name):
            if node in self.found.annotated:
                return self.annotation_type(self.found.annotated[node])
            if node in self.found.assigned:
                return self.value_type(self.found.assigned[node], seen)
        return None

    def value_type(self, value: ast.expr, seen: frozenset[ast.expr]) -> PackagePath | None:
        if isinstance(value, ast.Call):
            target = self.refers_to(value.func)
            if target == CONNECT_TO_AGENT:
                return CLIENT_SIDE
            if target == CONNECT_TO_CLIENT:
                return AGENT_SIDE
            return target if target is not None and _is_class(target) else None
        if isinstance(value, ast.Name | ast.Attribute):
            return self.type_of(value, seen)
        return None

    def annotation_type(self, annotation: ast.expr) -> PackagePath | None:
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            sides = [s for s in (annotation.left, annotation.right) if not _is_none(s)]
            return self.annotation_type(sides[0]) if len(sides) == 1 else None
        if isinstance(annotation, ast.Subscript):
            element = self.only_element(annotation)
            if element is not None:
                names = {q.name for q in self.module.qualified_names(annotation.value)}
                if names == {"typing.Optional"} and not isinstance(element, ast.Slice):
                    return self.annotation_type(element)
                return None
        target = self.refers_to(annotation)
        return target if target is not None and _is_class(target) else None

    def only_element(self, subscript: ast.Subscript) -> ast.expr | None:
        """The one thing a subscript holds (``X[a]``, ``X[a,]``, ``X[(a, b)]``), None for ``X[a, b]``."""
        index = subscript.slice
        if not isinstance(index, ast.Tuple) or self.text.is_parenthesized(index):
            return index
        if len(index.elts) != 1:
            return None
        element = index.elts[0]
        return element.value if isinstance(element, ast.Starred) else element

    def self_class(self, name: ast.Name) -> ast.ClassDef | None:
        """The class whose method ``name`` is the first parameter of (``self``), if it is one."""
        referents = self.referents(name)
        if len(referents) != 1:
            return None
        (assignment,) = referents
        if assignment.builtin or not isinstance(assignment.node, ast.arg):
            return None
        scope = assignment.scope
        function = scope.node
        if scope.kind is not Kind.FUNCTION or not isinstance(function, _FUNCTIONS):
            return None
        if not function.args.args or function.args.args[0] is not assignment.node:
            return None
        if any(_decorator_name(d) in ("staticmethod", "classmethod") for d in function.decorator_list):
            return None
        return self.method_owner(function)

    def method_owner(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.ClassDef | None:
        scope = self.scope(function)
        if scope is not None and scope.kind is Kind.CLASS and isinstance(scope.node, ast.ClassDef):
            return scope.node
        return None

    def member_type(self, owner: ast.ClassDef, attr: str, seen: frozenset[ast.expr]) -> PackagePath | None:
        found: set[PackagePath | None] = set()
        for annotation, value in self.members.get((owner, attr), []):
            if annotation is not None:
                found.add(self.annotation_type(annotation))
            elif value is not None:
                found.add(self.value_type(value, seen))
        return found.pop() if len(found) == 1 else None

    def is_factory_connection(self, param: ast.arg, scope: Scope) -> bool:
        """Whether ``param`` is the connection that ``run_agent(MyAgent)`` gives ``MyAgent.__init__``."""
        function = scope.node
        if scope.kind is not Kind.FUNCTION or not isinstance(function, _FUNCTIONS):
            return False
        params = function.args.args
        if function.name != "__init__" or len(params) < 2 or params[1] is not param:
            return False
        owner = self.method_owner(function)
        return owner is not None and owner in self.factories

    def handler_receiver(self, expr: ast.expr) -> Side | None:
        """The side of a handler class's own methods reached as ``self.m`` or ``super().m`` inside it."""
        if isinstance(expr, ast.Name):
            owner = self.self_class(expr)
        elif (
            isinstance(expr, ast.Call)
            and not expr.args
            and not expr.keywords
            and isinstance(expr.func, ast.Name)
            and expr.func.id == "super"
            and self.refers_to_builtin(expr.func)
        ):
            scope = self.scope(expr)
            function = scope.node if scope is not None and scope.kind is Kind.FUNCTION else None
            owner = self.method_owner(function) if isinstance(function, _FUNCTIONS) else None
        else:
            return None
        return self.handler_side(owner) if owner is not None else None

    def refers_to_builtin(self, name: ast.Name) -> bool:
        return {q.name for q in self.module.qualified_names(name)} == {f"builtins.{name.id}"}

    def handler_side(self, classdef: ast.ClassDef) -> Side | None:
        """``agent`` or ``client`` for a class whose bases lead to the package's ``Agent`` or ``Client``."""
        if classdef in self.sides:
            return self.sides[classdef]
        self.sides[classdef] = None  # a cycle resolves to nothing
        side: Side | None = None
        for base in classdef.bases:
            value = base.value if isinstance(base, ast.Starred) else base
            target = self.refers_to(value)
            if target in HANDLER_SIDES:
                side = HANDLER_SIDES[target]
            elif isinstance(value, ast.Name):
                for assignment in self.referents(value):
                    if not assignment.builtin and isinstance(assignment.node, ast.ClassDef):
                        side = side or self.handler_side(assignment.node)
            if side is not None:
                break
        self.sides[classdef] = side
        return side

    # -- the passes -------------------------------------------------------------------

    def run(self) -> None:
        found = self.found
        for statement in found.imports:
            self.imports(statement)
        words = self.call_words
        calls = [c for c in found.calls if _last_name(c.func) in words]
        for target, annotation, value in found.member_assigns:
            assert isinstance(target.value, ast.Name)
            owner = self.self_class(target.value)
            if owner is not None:
                self.members.setdefault((owner, target.attr), []).append((annotation, value))
        for name, annotation in found.annotated.items():
            scope = self.scope(name)
            if scope is not None and scope.kind is Kind.CLASS and isinstance(scope.node, ast.ClassDef):
                self.members.setdefault((scope.node, name.id), []).append((annotation, None))
        for call in calls:
            passed = arguments(call)
            if passed and self.refers_to(call.func) in (RUN_AGENT, CONNECT_TO_CLIENT):
                first = _argument_value(passed[0])
                if isinstance(first, ast.Name):
                    for assignment in self.referents(first):
                        if not assignment.builtin and isinstance(assignment.node, ast.ClassDef):
                            self.factories.add(assignment.node)
        for package_name in found.package_names:
            self.package_reference(package_name)
        # in source order, as a tree walk meets them: the first reference to a class counts
        for attribute in sorted(found.attributes, key=_preorder):
            self.attribute(attribute)
        for call in calls:
            self.call(call)
        for function in found.functions:
            self.handler_method(function)
        self.attribute_type_fallbacks()

    @property
    def call_words(self) -> set[str]:
        """The last names of the calls worth resolving: methods, models and run_agent, as spelled here."""
        return (
            self.index.method_words | self.index.class_words | self.bound | {"run_agent", "connect_to_client"}
        )

    # imports and class references

    def imports(self, statement: ast.Import | ast.ImportFrom) -> None:
        rename_to = self.index.new_package
        package = self.index.package
        if isinstance(statement, ast.Import):
            at = 0
            for alias in statement.names:
                parts = alias.name.split(".")
                self.bound.add(alias.asname or parts[0])
                if rename_to is not None:
                    for i, part in enumerate(parts):
                        if part == package:
                            self.rename(("import", statement, at + i), rename_to)
                at += len(parts) + (alias.asname is not None)
            return
        module = statement.module.split(".") if statement.module is not None else []
        if rename_to is not None:
            for i, part in enumerate(module):
                if part == package:
                    self.rename(("import", statement, i), rename_to)
        if statement.names[0].name == "*":
            return
        at = len(module)
        for alias in statement.names:
            imported = alias.name
            site: Site = ("import", statement, at)
            at += 1 + (alias.asname is not None)
            self.bound.add(alias.asname or imported)
            if rename_to is not None and imported == package:
                self.rename(site, rename_to)
                if alias.asname is None:
                    for reference in self.import_references(statement, imported):
                        if isinstance(reference, ast.Name | Ident):
                            self.rename(_site(reference), rename_to)
            path = self.path_of_qualified(".".join([*module, imported]))
            if path is not None and len(path) == 2 and path[0] == "schema":
                self.class_import(statement, alias, site, path[1])

    def import_assignment(self, statement: ast.ImportFrom, bound: str) -> Assignment | None:
        scope = self.scope(statement)
        if scope is None:
            return None
        for assignment in scope.assignments.get(bound, ()):
            if assignment.statement is statement:
                return assignment
        return None

    def import_references(self, statement: ast.ImportFrom, bound: str) -> Iterator[object]:
        """The uses of one name an import binds, each only if it can mean nothing else."""
        assignment = self.import_assignment(statement, bound)
        if assignment is None:
            return
        for access in assignment.references:
            if access.referents == {assignment}:
                yield access.node

    def class_import(self, statement: ast.ImportFrom, alias: ast.alias, site: Site, cls: str) -> None:
        self.class_seen.setdefault(cls, site)
        bound = alias.asname or cls
        assignment = self.import_assignment(statement, bound)
        references = [] if assignment is None else list(assignment.references)
        clean = all(access.referents == {assignment} for access in references)
        if cls in self.index.class_renames:
            new = self.index.class_renames[cls]
            if alias.asname is not None:
                self.rename(site, new)
            elif not clean:
                self.edits.setdefault(site, f"{new} as {cls}")
            else:
                self.rename(site, new)
                for access in references:
                    node = access.node
                    if isinstance(node, ast.Name | Ident):
                        self.rename(_site(node), new)
                    elif isinstance(node, ast.Constant) and self.text.is_one_string(node):
                        self.edits.setdefault(
                            _site(node), functools.partial(_string_renamed, old=cls, new=new)
                        )
        sites = [site, *(_site(a.node) for a in references if a.referents == {assignment})]
        self.class_findings(cls, sites)

    def class_findings(self, cls: str, sites: Iterable[Site]) -> None:
        """A removed class or a class whose type changed, at each of its references."""
        for site in sites:
            if cls in self.index.removed_classes:
                self.report(site, RuleId.PYTHON_CLASS_REMOVED, f"{cls} is gone in {self.new_release}")
            for change in self.index.class_types.get(cls, []):
                self.report(site, change.rule, f"{cls} changed type in {self.new_release}: {change.detail}")

    def package_reference(self, name: ast.Name | Ident) -> None:
        """``acp_2_0_0_alpha_7`` in ``acp_2_0_0_alpha_7.schema.X`` (after ``import acp_2_0_0_alpha_7``)."""
        if self.index.new_package is not None and self.refers_to(name) == ():
            self.rename(_site(name), self.index.new_package)

    # attributes: class references, model attributes and connection methods

    def attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        site: Site = ("attr", node, 0)
        if attr == self.index.package:
            if self.index.new_package is not None and self.refers_to(node) == ():
                self.rename(site, self.index.new_package)
            return
        target = self.refers_to(node)
        if target is not None:
            if len(target) == 2 and target[0] == "schema":
                cls = target[1]
                self.class_seen.setdefault(cls, site)
                if cls in self.index.class_renames:
                    self.rename(site, self.index.class_renames[cls])
                self.class_findings(cls, [site])
            return
        side = self.handler_receiver(node.value)
        if side is not None:
            self.method_reference(side, node)
            return
        receiver = self.type_of(node.value)
        if receiver in CALLED_SIDE:
            self.method_reference(CALLED_SIDE[receiver], node)
        elif receiver is not None and _is_class(receiver) and receiver[0] == "schema":
            self.model_attribute(receiver[1], attr, site)
        else:
            self.untyped_reads.add(attr)

    def model_attribute(self, cls: str, attr: str, site: Site) -> None:
        self.attribute_sites.add((cls, attr))
        new = self.index.attribute_renames.get(cls, {}).get(attr)
        if new is not None:
            self.rename(site, new)
        if attr in self.index.removed_attributes.get(cls, set()):
            self.report(site, RuleId.PYTHON_ATTRIBUTE_REMOVED, f"{cls}.{attr} is gone in {self.new_release}")
        for change in self.index.attribute_types.get(cls, {}).get(attr, []):
            self.report(
                site, change.rule, f"{cls}.{attr} changed type in {self.new_release}: {change.detail}"
            )

    def method_reference(self, side: Side, node: ast.Attribute) -> None:
        method = node.attr
        key = (side, method)
        site: Site = ("attr", node, 0)
        if key in self.index.removed_methods:
            self.report(
                site, RuleId.PYTHON_METHOD_REMOVED, f"{_caller(side)}.{method} is gone in {self.new_release}"
            )
        elif key in self.index.method_renames:
            self.rename(site, self.index.method_renames[key])

    # calls: connection methods and model constructors

    def call(self, call: ast.Call) -> None:
        func = call.func
        keywords: dict[str, Site] = {k.arg: ("keyword", k, 0) for k in call.keywords if k.arg is not None}
        splat = any(k.arg is None for k in call.keywords)
        if isinstance(func, ast.Attribute) and func.attr in self.index.method_words:
            receiver = self.type_of(func.value)
            side = CALLED_SIDE.get(receiver) if receiver is not None else self.handler_receiver(func.value)
            if side is not None:
                key = (side, func.attr)
                if key in self.index.removed_methods:
                    return
                method = f"{_caller(side)}.{func.attr}()"
                for old, new in self.index.argument_renames.get(key, {}).items():
                    if old in keywords:
                        self.rename(keywords[old], new)
                for removed in sorted(self.index.removed_arguments.get(key, set())):
                    if removed in keywords:
                        self.report(
                            keywords[removed],
                            RuleId.PYTHON_METHOD_ARGUMENT_REMOVED,
                            f"{method} no longer takes {removed} in {self.new_release} "
                            "(passed on, it would become a _meta key)",
                        )
                missing = [a for a in self.index.required_arguments.get(key, []) if a not in keywords]
                if missing and not splat:
                    self.report(
                        ("attr", func, 0),
                        RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED,
                        f"{method} needs {_and(missing)} in {self.new_release}",
                    )
                return
        target = self.refers_to(func)
        if target is None or not _is_class(target) or target[0] != "schema":
            return
        cls = target[1]
        for name, keyword in keywords.items():
            self.model_attribute(cls, name, keyword)
        if splat:
            return
        where: Site = ("attr", func, 0) if isinstance(func, ast.Attribute) else _site(func)
        for required in self.index.required_fields.get(cls, []):
            if required.name not in keywords and required.wire not in keywords:
                self.report(where, required.rule, f"{cls}(...) needs {required.name} in {self.new_release}")

    # handler methods

    def handler_method(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        name = function.name
        if name not in self.index.method_words:
            return
        owner = self.method_owner(function)
        side = self.handler_side(owner) if owner is not None else None
        if side is None:
            return
        key = (side, name)
        handler = f"{_handler(side)} handler {name}"
        where: Site = ("def", function, 0)
        if key in self.index.removed_methods:
            self.report(
                where,
                RuleId.PYTHON_METHOD_REMOVED,
                f"{handler}: {self.new_release} has no such method, so nothing calls it",
            )
            return
        if key in self.index.method_renames:
            self.rename(where, self.index.method_renames[key])
        params = {p.arg: p for p in (*function.args.args[1:], *function.args.kwonlyargs)}
        for old, new in self.index.argument_renames.get(key, {}).items():
            if old in params:
                problem = self.rename_parameter(params[old], new)
                if problem is not None:
                    self.report(
                        ("arg", params[old], 0),
                        RuleId.PYTHON_METHOD_ARGUMENT_RENAMED,
                        f"{handler}: cannot rename {old} to {new}: {problem}",
                    )
        for removed in sorted(self.index.removed_arguments.get(key, set())):
            if removed in params:
                self.report(
                    ("arg", params[removed], 0),
                    RuleId.PYTHON_METHOD_ARGUMENT_REMOVED,
                    f"{handler} takes {removed}, which {self.new_release} no longer passes",
                )
        missing = [a for a in self.index.required_arguments.get(key, []) if a not in params]
        if missing:
            self.report(
                where,
                RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED,
                f"{handler} does not take {_and(missing)}, new in {self.new_release}",
            )

    def rename_parameter(self, param: ast.arg, new: str) -> str | None:
        """Rename a parameter and every use of it; the reason if that is not safe."""
        scope = self.scope(param)
        if scope is None:
            return "its scope is unknown"
        old = param.arg
        if scope.assignments.get(new) or scope.accesses.get(new):
            return f"{new} is already used in the method"
        sites: list[Site] = []
        for assignment in scope.assignments.get(old, ()):
            node = assignment.node
            if isinstance(node, ast.arg):
                sites.append(("arg", node, 0))
            elif isinstance(node, ast.Name | Ident):
                sites.append(_site(node))
            else:
                return f"{old} is rebound in the method"
            for access in assignment.references:
                if not isinstance(access.node, ast.Name | Ident):
                    return f"{old} is used in a string annotation"
                sites.append(_site(access.node))
        for site in sites:
            self.rename(site, new)
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

    # -- where sites are --------------------------------------------------------------------

    def span(self, site: Site) -> Span:
        """The identifier (or string) a site names, checked against the text."""
        kind, node, index = site
        text = self.text
        if kind == "node":
            if isinstance(node, Ident):
                return text.ident(node)
            assert isinstance(node, ast.expr)
            span = text.node_span(node)
            if isinstance(node, ast.Name):
                return text.checked(span, node.id)
            return span
        if kind == "attr":
            assert isinstance(node, ast.Attribute)
            return text.ending_identifier(node, node.attr)
        if kind == "arg":
            assert isinstance(node, ast.arg)
            return text.starting_identifier(node, node.arg)
        if kind == "keyword":
            assert isinstance(node, ast.keyword) and node.arg is not None
            return text.starting_identifier(node, node.arg)
        if kind == "def":
            assert isinstance(node, _FUNCTIONS)
            return text.def_name(node)
        assert isinstance(node, ast.Import | ast.ImportFrom)
        names = text.import_names(node)
        expected = _import_names(node)
        if len(names) != len(expected):
            raise SpanError(f"the import at line {node.lineno} does not read as {expected}")
        return text.checked(names[index][1], expected[index])

    def position(self, site: Site) -> tuple[int, int]:
        """``(line, column)`` of a site, both 1-based."""
        kind, node, _ = site
        if kind in ("node", "arg", "keyword") and not isinstance(node, Ident):
            return self.text.start_of(node)  # type: ignore[arg-type]
        return self.text.position(self.span(site))


# --- helpers ------------------------------------------------------------------------------------

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _import_names(statement: ast.Import | ast.ImportFrom) -> list[str]:
    """The names of an import statement as :meth:`SourceText.import_names` finds them in the text."""
    names = statement.module.split(".") if isinstance(statement, ast.ImportFrom) and statement.module else []
    for alias in statement.names:
        if alias.name != "*":
            names += alias.name.split(".")
        if alias.asname is not None:
            names.append(alias.asname)
    return names


def _preorder(node: ast.AST) -> tuple[int, int, int, int]:
    """Sorts nodes as a walk of the tree meets them: by start, an enclosing node before those inside."""
    return (node.lineno, node.col_offset, -(node.end_lineno or 0), -(node.end_col_offset or 0))  # type: ignore[attr-defined]


def _argument_value(argument: ast.expr | ast.keyword) -> ast.expr:
    """What an argument passes (libcst's ``Arg.value``): ``x`` of ``x``, ``*x``, ``k=x`` and ``**x``."""
    if isinstance(argument, ast.keyword | ast.Starred):
        return argument.value
    return argument


def _last_name(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return ""


def _is_class(path: PackagePath) -> bool:
    return len(path) == 2 and path[1][:1].isupper()


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _decorator_name(decorator: ast.expr) -> str:
    return decorator.id if isinstance(decorator, ast.Name) else ""


def _caller(side: Side) -> str:
    return "ClientSideConnection" if side == "agent" else "AgentSideConnection"


def _handler(side: Side) -> str:
    return "Agent" if side == "agent" else "Client"


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _string_renamed(value: str, old: str, new: str) -> str:
    """A string annotation with the class renamed in it (``"list[Old]"`` -> ``"list[New]"``)."""
    return re.sub(rf"(?<![\w.]){re.escape(old)}\b", new, value)


def _parse(source: bytes, path: str) -> ast.Module:
    """The module's syntax tree; a file that does not parse is bad input, reported as libcst reads it."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError) as error:
        problem = error
    # libcst's message is the one the codemod has always given
    try:
        cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        detail = _PARSER_PREFIX.sub("", " ".join(error.message.split()))
        raise CodegenError(f"cannot parse it (line {error.editor_line}): {detail}", file=path) from None
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    if isinstance(problem, SyntaxError):
        raise CodegenError(
            f"cannot parse it with Python {version} (line {problem.lineno}): {problem.msg}", file=path
        ) from None
    raise CodegenError(f"cannot parse it with Python {version}: {problem}", file=path) from None


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
        with warnings.catch_warnings():
            # ast.parse warns about odd escapes in strings; the codemod is no linter
            warnings.simplefilter("ignore")
            try:
                tree = _parse(source, path)
                text = SourceText(source)
                analysis = _Analysis(self.index, tree, text)
            except RecursionError:
                raise CodegenError("cannot analyse it: it nests expressions too deeply", file=path) from None
        try:
            analysis.run()
            findings = [
                Finding(path, *analysis.position(site), rule, message)
                for site, rule, message in analysis.findings
            ]
            after = source
            if analysis.edits:
                edits: dict[Span, str] = {}
                for site, edit in analysis.edits.items():
                    span = analysis.span(site)
                    edits[span] = edit if isinstance(edit, str) else edit(text.text[span.start : span.end])
                after = text.replaced(edits)
        except SpanError as error:
            raise CodegenError(f"cannot rewrite it: {error} (a bug in the codemod)", file=path) from None
        finally:
            analysis.module.release()
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
