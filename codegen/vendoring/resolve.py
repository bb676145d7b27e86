"""Name resolution for the codemod: where a name leads in the vendored package, and what a value is.

A :class:`Resolver` answers questions about one module, on the scopes
:mod:`.scopes` built: which package name a name or attribute refers to
(:meth:`~Resolver.refers_to`), which package class a value holds
(:meth:`~Resolver.type_of`), which connection end a class handles
(:meth:`~Resolver.handler_end`).  The ends, their classes and functions come
from the old release's API spec (:class:`~.migration.ApiNames`), for every
role a release has; nothing here names a role.  It decides nothing about the
migration: :mod:`.codemod` does, with these answers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TypeGuard

from .migration import ApiNames, EndNames
from .scopes import Assignment, Collected, Ident, Kind, ModuleScopes, Scope, Source, arguments
from .sourcetext import SourceText

PackagePath = tuple[str, ...]
"""Where a name leads inside the package: ``("schema", "PromptResponse")``, ``("bindings", "Agent")``."""

BINDINGS = "bindings"
SCHEMA = "schema"

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)

Member = tuple[ast.expr | None, ast.expr | None]
"""How a class's attribute is set: ``(annotation, value)``."""


class Resolver:
    """Resolves the collected nodes of one module against the package and its API names."""

    def __init__(
        self, module: ModuleScopes, found: Collected, text: SourceText, api: ApiNames, package: str
    ) -> None:
        self.module = module
        self.found = found
        self.text = text
        self.api = api
        self.package = package
        self.exports = api.exports
        self.members: dict[tuple[ast.ClassDef, str], list[Member]] = {}
        """What each class assigns to ``self.<attr>`` or annotates in its body."""
        self.factories: dict[ast.ClassDef, EndNames] = {}
        """Classes passed as handler factories (``run_agent(MyAgent)``), with the end they serve."""
        self.ends: dict[ast.ClassDef, EndNames | None] = {}

    def collect(self, calls: list[ast.Call]) -> None:
        """Gather the class members and the handler factories among ``calls``."""
        found = self.found
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
            called = self.refers_to(call.func)
            end = self.api.served_by_factory_of(called[1]) if _in_bindings(called) else None
            if passed and end is not None:
                first = _argument_value(passed[0])
                if isinstance(first, ast.Name):
                    for assignment in self.referents(first):
                        if not assignment.builtin and isinstance(assignment.node, ast.ClassDef):
                            self.factories[assignment.node] = end

    @property
    def factory_functions(self) -> set[str]:
        return {name for end in self.api.ends for name in end.factory_functions}

    # -- names ---------------------------------------------------------------------------------

    def scope(self, node: object) -> Scope | None:
        return self.module.scope_of.get(node)

    def referents(self, node: ast.AST) -> set[Assignment]:
        return self.module.referents(node)

    def path_of_qualified(self, name: str) -> PackagePath | None:
        """The path inside the package of an imported qualified name (``acp.schema.X``), if it is one."""
        parts = name.lstrip(".").split(".")
        for i, part in enumerate(parts):
            if part == self.package:
                rest = tuple(parts[i + 1 :])
                return (BINDINGS, *rest) if rest and rest[0] in self.exports else rest
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

    def refers_to_builtin(self, name: ast.Name) -> bool:
        return {q.name for q in self.module.qualified_names(name)} == {f"builtins.{name.id}"}

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

    # -- values --------------------------------------------------------------------------------

    def type_of(self, expr: ast.expr, seen: frozenset[ast.expr] = frozenset()) -> PackagePath | None:
        """The package class of the value ``expr`` holds, if it can be tied to one (see :mod:`.codemod`)."""
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
            end = self.factory_connection(node, assignment.scope)
            return (BINDINGS, end.connection) if end is not None else None
        if isinstance(node, ast.Name):
            if node in self.found.annotated:
                return self.annotation_type(self.found.annotated[node])
            if node in self.found.assigned:
                return self.value_type(self.found.assigned[node], seen)
        return None

    def value_type(self, value: ast.expr, seen: frozenset[ast.expr]) -> PackagePath | None:
        if isinstance(value, ast.Call):
            target = self.refers_to(value.func)
            end = self.api.connected_by(target[1]) if _in_bindings(target) else None
            if end is not None:
                return (BINDINGS, end.connection)
            return target if target is not None and is_class(target) else None
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
        return target if target is not None and is_class(target) else None

    def only_element(self, subscript: ast.Subscript) -> ast.expr | None:
        """The one thing a subscript holds (``X[a]``, ``X[a,]``, ``X[(a, b)]``), None for ``X[a, b]``."""
        index = subscript.slice
        if not isinstance(index, ast.Tuple) or self.text.is_parenthesized(index):
            return index
        if len(index.elts) != 1:
            return None
        element = index.elts[0]
        return element.value if isinstance(element, ast.Starred) else element

    def member_type(self, owner: ast.ClassDef, attr: str, seen: frozenset[ast.expr]) -> PackagePath | None:
        found: set[PackagePath | None] = set()
        for annotation, value in self.members.get((owner, attr), []):
            if annotation is not None:
                found.add(self.annotation_type(annotation))
            elif value is not None:
                found.add(self.value_type(value, seen))
        return found.pop() if len(found) == 1 else None

    def connection_end(self, path: PackagePath | None) -> EndNames | None:
        """The end whose connection class a package path names."""
        return self.api.connection(path[1]) if _in_bindings(path) else None

    # -- classes and methods -------------------------------------------------------------------

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
        if scope.kind is not Kind.FUNCTION or not isinstance(function, FUNCTIONS):
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

    def factory_connection(self, param: ast.arg, scope: Scope) -> EndNames | None:
        """The end whose connection ``run_agent(MyAgent)`` gives ``MyAgent.__init__`` as ``param``."""
        function = scope.node
        if scope.kind is not Kind.FUNCTION or not isinstance(function, FUNCTIONS):
            return None
        params = function.args.args
        if function.name != "__init__" or len(params) < 2 or params[1] is not param:
            return None
        owner = self.method_owner(function)
        return self.factories.get(owner) if owner is not None else None

    def handler_receiver(self, expr: ast.expr) -> EndNames | None:
        """The end of a handler class's own methods reached as ``self.m`` or ``super().m`` inside it."""
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
            owner = self.method_owner(function) if isinstance(function, FUNCTIONS) else None
        else:
            return None
        return self.handler_end(owner) if owner is not None else None

    def handler_end(self, classdef: ast.ClassDef) -> EndNames | None:
        """The end whose handler protocol (``Agent``, ``Proxy``...) a class's bases lead to."""
        if classdef in self.ends:
            return self.ends[classdef]
        self.ends[classdef] = None  # a cycle resolves to nothing
        end: EndNames | None = None
        for base in classdef.bases:
            value = base.value if isinstance(base, ast.Starred) else base
            target = self.refers_to(value)
            if _in_bindings(target):
                end = self.api.handler(target[1])
            elif isinstance(value, ast.Name):
                for assignment in self.referents(value):
                    if not assignment.builtin and isinstance(assignment.node, ast.ClassDef):
                        end = end or self.handler_end(assignment.node)
            if end is not None:
                break
        self.ends[classdef] = end
        return end


def is_class(path: PackagePath) -> bool:
    return len(path) == 2 and path[1][:1].isupper()


def is_model(path: PackagePath | None) -> bool:
    """Whether a package path names a class of the schema module."""
    return path is not None and is_class(path) and path[0] == SCHEMA


def _in_bindings(path: PackagePath | None) -> TypeGuard[PackagePath]:
    return path is not None and len(path) == 2 and path[0] == BINDINGS


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _decorator_name(decorator: ast.expr) -> str:
    return decorator.id if isinstance(decorator, ast.Name) else ""


def _argument_value(argument: ast.expr | ast.keyword) -> ast.expr:
    """What an argument passes (libcst's ``Arg.value``): ``x`` of ``x``, ``*x``, ``k=x`` and ``**x``."""
    if isinstance(argument, ast.keyword | ast.Starred):
        return argument.value
    return argument
