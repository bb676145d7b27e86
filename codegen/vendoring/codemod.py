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
it is about to replace, and swaps them in the file's own encoding.  A file
that does not parse is one line from :mod:`ast`'s error: the Python version,
the line and column, the parser's words and the text it stopped at.  libcst
is no dependency of the tool (it is the oracle of the walker's tests, and the
baseline of the benchmark, in the ``dev`` extra).

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

**Which methods are handler methods.**  The connection ends come from the old
release's API spec (:class:`~.migration.ApiNames`, read off
:func:`codegen.api.ends.bindings`): every role a release has (agent, client,
proxy, conductor...), its handler protocol, its connection class, and the
functions that make one.  Method renames, removals and argument changes apply to

* ``def`` methods of classes whose bases resolve to a handler protocol of the
  package (``Agent``, ``Proxy``..., or such a class of the same module): the
  migration's change of the side that method belongs to (a ``Proxy`` serves the
  agent's methods and the proxy's);
* ``self.<method>`` and ``super().<method>`` inside such a class;
* method references and calls on a receiver tied to a connection class: a
  ``ClientSideConnection`` calls the agent's methods, a
  ``ConductorSideConnection`` the agent's and the proxy's.  A receiver is tied to
  one when it is a name assigned from the function that returns it
  (``connect_to_agent(...)``, ``connect_to_proxy(...)``) or from the class
  itself, a name or parameter annotated with the class (``X | None`` and
  ``Optional[X]`` too), ``self.<attr>`` where the class assigns such a value to
  ``self.<attr>`` in one of its methods or annotates ``<attr>`` in its body, or
  the first parameter of the ``__init__`` of a handler class passed as a factory
  (``run_agent(...)``, ``connect_to_client(...)``) in the same module.  A call
  whose receiver cannot be tied this way is left alone: the codemod never
  guesses from a method's name alone.

Model attributes are renamed, and reported, where the receiver is tied to a
model class the same way (a parameter annotated ``PromptResponse``, a name
assigned from ``schema.PromptResponse(...)``) and in the keyword arguments
of model constructor calls.  A change to a field every member of a union
shares is reported at the union; it applies on the member classes too.

**Where the work is.**  :mod:`.resolve` resolves names (what a name leads to
in the package, what class a value holds, which end a class handles);
:class:`_Analysis` here is the policy (what the migration rewrites or reports
at each resolved node); :mod:`.sites` locates an identifier in the text;
:mod:`.wording` words every finding.

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
libcst parse of the same files (``docs/vendoring.md`` has the figures), the
cost of the libcst codemod it replaced.
"""

from __future__ import annotations

import ast
import difflib
import functools
import re
import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import CodegenError
from .migration import EndNames, Migration, MigrationIndex, RuleId, Side, rule
from .resolve import SCHEMA, Resolver, is_model
from .scopes import Collected, Ident, ModuleScopes
from .sites import ArgSite, AttrSite, DefSite, ImportSite, KeywordSite, NameSite, Site, position, span
from .sourcetext import SourceText, Span, SpanError
from .wording import (
    ArgumentPassedGone,
    ArgumentsMissing,
    AttributeGone,
    BecameUnion,
    CalledMethodGone,
    ClassGone,
    FieldNeeded,
    HandlerLacks,
    HandlerMethodGone,
    HandlerTakesGone,
    InStringAnnotation,
    NameTaken,
    ParameterNotRenamed,
    Problem,
    Rebound,
    RenameProblem,
    ScopeUnknown,
    TypeChanged,
    message,
)


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


# --- the text filter ---------------------------------------------------------------------------


def _text_filter(index: MigrationIndex, package: str, new_package: str | None) -> Callable[[bytes], bool]:
    """Whether a file's bytes can hold anything to rewrite or report (a cheap test before parsing)."""
    words = index.class_words | index.method_words
    if new_package is not None:
        words.add(package)
    mentions = re.compile(rb"\b" + re.escape(package.encode()) + rb"\b")
    if not words:
        return lambda source: False
    alternatives = b"|".join(re.escape(w.encode()) for w in sorted(words))
    changed = re.compile(rb"\b(?:" + alternatives + rb")\b")
    return lambda source: mentions.search(source) is not None and changed.search(source) is not None


# --- one file --------------------------------------------------------------------------------

Edit = str | Callable[[str], str]
"""What replaces a site's text: new text, or a function of the old text."""


class _Analysis:
    """The policy for one module: what the migration rewrites or reports at each resolved node.

    Names are resolved by :class:`~.resolve.Resolver`; findings are recorded as
    :mod:`.wording` problems and worded only when the file's findings are made.
    """

    def __init__(self, codemod: Codemod, tree: ast.Module, text: SourceText) -> None:
        index = codemod.migration.index
        self.index = index
        self.package = codemod.package
        self.new_package = codemod.rename_package
        self.text = text
        words = index.class_words | index.attribute_words | index.method_words | {codemod.package}
        self.found = Collected(frozenset(words), codemod.package)
        self.module = ModuleScopes(tree, self.found)
        self.resolver = Resolver(self.module, self.found, text, codemod.migration.api, codemod.package)
        self.api = codemod.migration.api
        self.edits: dict[Site, Edit] = {}
        self.findings: list[tuple[Site, RuleId, Problem]] = []
        self.class_seen: dict[str, Site] = {}
        """The first reference to each class in the file: where an attribute's type change falls back to."""
        self.attribute_sites: set[tuple[str, str]] = set()
        """(class, attribute) pairs read or passed somewhere in the file."""
        self.untyped_reads: set[str] = set()
        """Attribute names read on a receiver whose class is unknown."""
        self.bound: set[str] = set()
        """The names the module's imports bind."""

    # -- recording ----------------------------------------------------------------

    def rename(self, site: Site, new: str) -> None:
        self.edits.setdefault(site, new)

    def report(self, site: Site, rule: RuleId, problem: Problem) -> None:
        self.findings.append((site, rule, problem))

    # -- the passes -------------------------------------------------------------------

    def run(self) -> None:
        found = self.found
        resolver = self.resolver
        for statement in found.imports:
            self.imports(statement)
        words = self.call_words
        calls = [c for c in found.calls if _last_name(c.func) in words]
        resolver.collect(calls)
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
        """The last names of the calls worth resolving: methods, models and factories, as spelled here."""
        return self.index.method_words | self.index.class_words | self.bound | self.resolver.factory_functions

    # imports and class references

    def imports(self, statement: ast.Import | ast.ImportFrom) -> None:
        rename_to = self.new_package
        package = self.package
        if isinstance(statement, ast.Import):
            at = 0
            for alias in statement.names:
                parts = alias.name.split(".")
                self.bound.add(alias.asname or parts[0])
                if rename_to is not None:
                    for i, part in enumerate(parts):
                        if part == package:
                            self.rename(ImportSite(statement, at + i), rename_to)
                at += len(parts) + (alias.asname is not None)
            return
        module = statement.module.split(".") if statement.module is not None else []
        if rename_to is not None:
            for i, part in enumerate(module):
                if part == package:
                    self.rename(ImportSite(statement, i), rename_to)
        if statement.names[0].name == "*":
            return
        at = len(module)
        for alias in statement.names:
            imported = alias.name
            site = ImportSite(statement, at)
            at += 1 + (alias.asname is not None)
            self.bound.add(alias.asname or imported)
            if rename_to is not None and imported == package:
                self.rename(site, rename_to)
                if alias.asname is None:
                    for reference in self.resolver.import_references(statement, imported):
                        if isinstance(reference, ast.Name | Ident):
                            self.rename(NameSite(reference), rename_to)
            path = self.resolver.path_of_qualified(".".join([*module, imported]))
            if path is not None and len(path) == 2 and path[0] == SCHEMA:
                self.class_import(statement, alias, site, path[1])

    def class_import(self, statement: ast.ImportFrom, alias: ast.alias, site: Site, cls: str) -> None:
        self.class_seen.setdefault(cls, site)
        bound = alias.asname or cls
        assignment = self.resolver.import_assignment(statement, bound)
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
                        self.rename(NameSite(node), new)
                    elif isinstance(node, ast.Constant) and self.text.is_one_string(node):
                        self.edits.setdefault(
                            NameSite(node), functools.partial(_string_renamed, old=cls, new=new)
                        )
        sites: list[Site] = [site]
        nodes = [a.node for a in references if a.referents == {assignment}]
        sites += [NameSite(node) for node in nodes if isinstance(node, ast.expr | Ident)]
        self.class_findings(cls, sites)

    def class_findings(self, cls: str, sites: Iterable[Site]) -> None:
        """A removed class or a class whose type changed, at each of its references."""
        for site in sites:
            if cls in self.index.removed_classes:
                self.report(site, RuleId.PYTHON_CLASS_REMOVED, ClassGone(cls))
            for change in self.index.class_types.get(cls, ()):
                if change.members:
                    self.report(site, change.rule, BecameUnion(cls, change.tag, change.members))
                else:
                    self.report(site, change.rule, TypeChanged(cls, None, change.detail))

    def package_reference(self, name: ast.Name | Ident) -> None:
        """``acp_2_0_0_alpha_7`` in ``acp_2_0_0_alpha_7.schema.X`` (after ``import acp_2_0_0_alpha_7``)."""
        if self.new_package is not None and self.resolver.refers_to(name) == ():
            self.rename(NameSite(name), self.new_package)

    # attributes: class references, model attributes and connection methods

    def attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        site = AttrSite(node)
        resolver = self.resolver
        if attr == self.package:
            if self.new_package is not None and resolver.refers_to(node) == ():
                self.rename(site, self.new_package)
            return
        target = resolver.refers_to(node)
        if target is not None:
            if len(target) == 2 and target[0] == SCHEMA:
                cls = target[1]
                self.class_seen.setdefault(cls, site)
                if cls in self.index.class_renames:
                    self.rename(site, self.index.class_renames[cls])
                self.class_findings(cls, [site])
            return
        handler = resolver.handler_receiver(node.value)
        if handler is not None:
            side = handler.served(attr)
            if side is not None:
                self.method_reference(self.caller_of(side, attr, handler), side, node)
            return
        receiver = resolver.type_of(node.value)
        connection = resolver.connection_end(receiver)
        if connection is not None:
            side = connection.called(attr)
            if side is not None:
                self.method_reference(connection.connection, side, node)
        elif receiver is not None and is_model(receiver):
            self.model_attribute(receiver[1], attr, site)
        else:
            self.untyped_reads.add(attr)

    def caller_of(self, side: Side, method: str, handler: EndNames) -> str:
        """The connection class that calls a handler's method, as a finding names it."""
        caller = self.api.caller(side, method)
        return caller.connection if caller is not None else handler.handler

    def model_attribute(self, cls: str, attr: str, site: Site) -> None:
        self.attribute_sites.add((cls, attr))
        new = self.index.attribute_renames.get(cls, {}).get(attr)
        if new is not None:
            self.rename(site, new)
        if attr in self.index.removed_attributes.get(cls, frozenset()):
            self.report(site, RuleId.PYTHON_ATTRIBUTE_REMOVED, AttributeGone(cls, attr))
        for change in self.index.attribute_types.get(cls, {}).get(attr, ()):
            self.report(site, change.rule, TypeChanged(cls, attr, change.detail))

    def method_reference(self, connection: str, side: Side, node: ast.Attribute) -> None:
        method = node.attr
        key = (side, method)
        site = AttrSite(node)
        if key in self.index.removed_methods:
            self.report(site, RuleId.PYTHON_METHOD_REMOVED, CalledMethodGone(connection, method))
        elif key in self.index.method_renames:
            self.rename(site, self.index.method_renames[key])

    # calls: connection methods and model constructors

    def call(self, call: ast.Call) -> None:
        func = call.func
        keywords: dict[str, Site] = {k.arg: KeywordSite(k) for k in call.keywords if k.arg is not None}
        splat = any(k.arg is None for k in call.keywords)
        resolver = self.resolver
        if isinstance(func, ast.Attribute) and func.attr in self.index.method_words:
            method = func.attr
            receiver = resolver.type_of(func.value)
            connection = resolver.connection_end(receiver)
            handler = resolver.handler_receiver(func.value) if receiver is None else None
            side: Side | None = None
            caller = ""
            if connection is not None:
                side, caller = connection.called(method), connection.connection
            elif handler is not None:
                side = handler.served(method)
                caller = self.caller_of(side, method, handler) if side is not None else ""
            if connection is not None or handler is not None:
                if side is None:
                    return
                key = (side, method)
                if key in self.index.removed_methods:
                    return
                for old, new in self.index.argument_renames.get(key, {}).items():
                    if old in keywords:
                        self.rename(keywords[old], new)
                for removed in sorted(self.index.removed_arguments.get(key, frozenset())):
                    if removed in keywords:
                        self.report(
                            keywords[removed],
                            RuleId.PYTHON_METHOD_ARGUMENT_REMOVED,
                            ArgumentPassedGone(caller, method, removed),
                        )
                missing = tuple(a for a in self.index.required_arguments.get(key, ()) if a not in keywords)
                if missing and not splat:
                    self.report(
                        AttrSite(func),
                        RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED,
                        ArgumentsMissing(caller, method, missing),
                    )
                return
        target = resolver.refers_to(func)
        if target is None or not is_model(target):
            return
        cls = target[1]
        for name, keyword in keywords.items():
            self.model_attribute(cls, name, keyword)
        if splat:
            return
        where: Site = AttrSite(func) if isinstance(func, ast.Attribute) else NameSite(func)
        for required in self.index.required_fields.get(cls, ()):
            if required.name not in keywords and required.wire not in keywords:
                self.report(where, required.rule, FieldNeeded(cls, required.name))

    # handler methods

    def handler_method(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        name = function.name
        if name not in self.index.method_words:
            return
        owner = self.resolver.method_owner(function)
        end = self.resolver.handler_end(owner) if owner is not None else None
        side = end.served(name) if end is not None else None
        if end is None or side is None:
            return
        key = (side, name)
        handler = end.handler
        where = DefSite(function)
        if key in self.index.removed_methods:
            self.report(where, RuleId.PYTHON_METHOD_REMOVED, HandlerMethodGone(handler, name))
            return
        if key in self.index.method_renames:
            self.rename(where, self.index.method_renames[key])
        params = {p.arg: p for p in (*function.args.args[1:], *function.args.kwonlyargs)}
        for old, new in self.index.argument_renames.get(key, {}).items():
            if old in params:
                problem = self.rename_parameter(params[old], new)
                if problem is not None:
                    self.report(
                        ArgSite(params[old]),
                        RuleId.PYTHON_METHOD_ARGUMENT_RENAMED,
                        ParameterNotRenamed(handler, name, old, new, problem),
                    )
        for removed in sorted(self.index.removed_arguments.get(key, frozenset())):
            if removed in params:
                self.report(
                    ArgSite(params[removed]),
                    RuleId.PYTHON_METHOD_ARGUMENT_REMOVED,
                    HandlerTakesGone(handler, name, removed),
                )
        missing = tuple(a for a in self.index.required_arguments.get(key, ()) if a not in params)
        if missing:
            self.report(where, RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED, HandlerLacks(handler, name, missing))

    def rename_parameter(self, param: ast.arg, new: str) -> RenameProblem | None:
        """Rename a parameter and every use of it; the reason if that is not safe."""
        scope = self.resolver.scope(param)
        if scope is None:
            return ScopeUnknown()
        old = param.arg
        if scope.assignments.get(new) or scope.accesses.get(new):
            return NameTaken(new)
        sites: list[Site] = []
        for assignment in scope.assignments.get(old, ()):
            node = assignment.node
            if isinstance(node, ast.arg):
                sites.append(ArgSite(node))
            elif isinstance(node, ast.Name | Ident):
                sites.append(NameSite(node))
            else:
                return Rebound(old)
            for access in assignment.references:
                if not isinstance(access.node, ast.Name | Ident):
                    return InStringAnnotation(old)
                sites.append(NameSite(access.node))
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
                    self.report(where, change.rule, TypeChanged(cls, attr, change.detail))


# --- helpers ------------------------------------------------------------------------------------


def _preorder(node: ast.AST) -> tuple[int, int, int, int]:
    """Sorts nodes as a walk of the tree meets them: by start, an enclosing node before those inside."""
    return (node.lineno, node.col_offset, -(node.end_lineno or 0), -(node.end_col_offset or 0))  # type: ignore[attr-defined]


def _last_name(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return ""


def _string_renamed(value: str, old: str, new: str) -> str:
    """A string annotation with the class renamed in it (``"list[Old]"`` -> ``"list[New]"``)."""
    return re.sub(rf"(?<![\w.]){re.escape(old)}\b", new, value)


def _parse(source: bytes, path: str) -> ast.Module:
    """The module's syntax tree; a file that does not parse is bad input: one line, from :mod:`ast`'s error.

    The line says which Python read it (syntax newer than it does not parse),
    where (line and column, as editors count them) and, for a bare ``invalid
    syntax``, the text the parser stopped at.
    """
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError) as error:
        problem = error
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    if not isinstance(problem, SyntaxError):  # a null byte
        raise CodegenError(f"cannot parse it with Python {version}: {problem}", file=path) from None
    where = ""
    if problem.lineno:  # 0: no line (an unknown coding)
        decoding = problem.msg.startswith("(unicode error)")  # its column is not where the bad byte is
        column = f", column {problem.offset}" if problem.offset and not decoding else ""
        where = f" (line {problem.lineno}{column})"
    detail = _syntax(problem)
    raise CodegenError(f"cannot parse it with Python {version}{where}: {detail}", file=path) from None


def _syntax(error: SyntaxError) -> str:
    """The parser's words; a bare ``invalid syntax`` with where it stopped (``at ':'``, at the end of the
    line)."""
    if error.msg != "invalid syntax" or not error.text or not error.offset:
        return error.msg
    line, start = error.text.rstrip("\r\n"), error.offset - 1
    end = error.end_offset - 1 if error.end_offset and error.end_lineno == error.lineno else start + 1
    stopped = line[start:end].strip()
    return f"{error.msg} at {stopped!r}" if stopped else f"{error.msg} at the end of the line"


# --- the codemod ----------------------------------------------------------------------------------


class Codemod:
    """Rewrites source files that use the vendored package ``package`` for ``migration``.

    ``rename_package`` renames the package itself (a copy vendored under the
    versioned name of the old release moves to the new one's).
    """

    def __init__(self, migration: Migration, package: str, rename_package: str | None = None) -> None:
        self.migration = migration
        self.package = package
        self.rename_package = rename_package
        self.wanted = _text_filter(migration.index, package, rename_package)

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
                analysis = _Analysis(self, tree, text)
            except RecursionError:
                raise CodegenError("cannot analyse it: it nests expressions too deeply", file=path) from None
        try:
            analysis.run()
            release = self.migration.new_release
            findings = [
                Finding(path, *position(text, site), rule, message(problem, release))
                for site, rule, problem in analysis.findings
            ]
            after = source
            if analysis.edits:
                edits: dict[Span, str] = {}
                for site, edit in analysis.edits.items():
                    where = span(text, site)
                    edits[where] = edit if isinstance(edit, str) else edit(text.text[where.start : where.end])
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
