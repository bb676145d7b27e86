"""Name resolution for the codemod, on Python's own :mod:`ast`: scopes, assignments, accesses.

The codemod used libcst's :class:`~libcst.metadata.ScopeProvider` and
qualified names.  On a project where every file touches a changed API, that
provider and :class:`~libcst.metadata.PositionProvider` cost several times a
libcst parse, so the analysis now runs on :func:`ast.parse` (CPython's C
parser, several times faster than libcst's) with this walker, which
reproduces the provider's model on purpose, quirks included, so that the
codemod's decisions stay what they were:

* **Scopes**: the module, each class body, each ``def`` and ``lambda``, and
  each comprehension or generator expression.  A class body is invisible to
  the functions and classes nested in it.  ``global`` and ``nonlocal`` send a
  name's assignments to the module's or the enclosing scope.  Parameter
  defaults and annotations, decorators, return annotations and class bases
  belong to the enclosing scope; the first ``for ... in`` iterable of a
  comprehension too.
* **Assignments** (:class:`Assignment`): a stored name (``x = ...``, ``x: T``,
  ``x += ...``, a ``for``, ``with ... as``, ``except ... as`` or comprehension
  target, ``:=``), a parameter, a ``def`` or ``class`` name, and each name an
  import binds (``import a.b.c`` binds ``a.b.c``, ``a.b`` and ``a``, so that
  an access ``a.b.c.d`` finds its longest imported prefix).  A star import
  binds nothing.  Each assignment has an index in its scope's running count of
  binding statements, which orders it against the accesses.
* **Accesses** (:class:`Access`): every loaded or deleted name, and every name
  in a ``match`` pattern (libcst reads captures and class-pattern keywords as
  loads).  An access whose name starts a dotted chain (``a.b.c``) is recorded
  under the longest prefix some scope binds, with that attribute as its node.
  An access inside a string annotation (``x: "list[Foo]"``, ``cast("Foo",
  y)``; not inside ``Literal[...]``) is parsed from the string and recorded
  with the string as its node, ``None``, ``True`` and ``False`` included.
* **Resolution**: an access refers to the assignments of its name in the
  nearest scope that binds it; in its own scope, only to those before it (by
  index); when none is before it, to the enclosing scope's.  An assignment's
  references are the accesses that may see it.

The same walk gathers the nodes the codemod asks about (:class:`Collected`),
so that a module is walked once.

**Limits** (shared with the provider it replaces): it does not follow control
flow (both branches of an ``if`` are "before" a later use), does not model
the rule that a name bound anywhere in a function is local to all of it (a use
before the local binding falls back to the enclosing scope's), records a
``:=`` in a comprehension in the comprehension's scope, and knows nothing of
star imports, ``exec``, ``globals()`` or attribute assignment on modules.
Python 3.12 type parameters and ``type`` aliases get their own annotation
scope, as in libcst.  Where it differs from libcst on purpose: identifiers are
compared as Python compares them (after NFKC normalization), where libcst
compared their spellings; a string annotation is parsed with :func:`ast.parse`
rather than libcst's parser (they differ only on strings that are no Python);
an implicitly concatenated annotation with an f-string part
(``"A" f"{b}"``) is not read as an annotation; and ``nonlocal`` at module
level, which libcst's provider refused with an exception, declares nothing.

Tested against libcst's provider, access by access, on this repository, the
standard library and the dependencies' sources (``tests/vendoring/test_scopes.py``
pins the rules the codemod relies on).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = [
    "Access",
    "Assignment",
    "Ident",
    "Kind",
    "ModuleScopes",
    "QualifiedName",
    "Scope",
    "Source",
    "arguments",
    "full_name",
]


class Kind(Enum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    COMPREHENSION = "comprehension"
    ANNOTATION = "annotation"
    BUILTINS = "builtins"


class Source(Enum):
    """Where a qualified name comes from (libcst's ``QualifiedNameSource``)."""

    IMPORT = "import"
    BUILTIN = "builtin"
    LOCAL = "local"


@dataclass(frozen=True)
class QualifiedName:
    name: str
    source: Source


@dataclass(eq=False)
class Ident:
    """An identifier that :mod:`ast` keeps as a bare string, so that it has a node of its own.

    ``except E as name`` (an assignment), and in ``match`` patterns a capture
    (``case x``, ``case P() as x``, ``case [*x]``), a mapping's rest
    (``case {**x}``) and a class pattern's keyword (``case P(x=1)``), which are
    accesses.  ``owner`` is the handler or pattern node; ``index`` numbers a
    class pattern's keywords.
    """

    id: str
    owner: ast.AST
    index: int = 0


NameNode = ast.Name | Ident
"""A node that stands for one identifier the walker records."""


class Scope:
    """One scope: its assignments by name, the accesses made in it, and how names resolve from it."""

    __slots__ = (
        "accesses",
        "assignments",
        "count",
        "globals",
        "kind",
        "name",
        "node",
        "overwrites",
        "parent",
        "prefix",
    )

    def __init__(
        self, kind: Kind, parent: Scope | None, node: ast.AST | None, name: str | None = None
    ) -> None:
        self.kind = kind
        self.parent: Scope = parent if parent is not None else self
        self.globals: Scope = (
            self if kind is Kind.MODULE else (parent.globals if parent is not None else self)
        )
        self.node = node
        self.name = name
        self.assignments: dict[str, list[Assignment]] = {}
        self.accesses: dict[str, list[Access]] = {}
        """The accesses made in this scope, by the name they were resolved under."""
        self.count = 0
        """How many binding statements this scope has seen: the index of its next assignment."""
        self.overwrites: dict[str, Scope] = {}
        """Names declared ``global`` or ``nonlocal`` here, and the scope they live in."""
        parent_prefix: str = parent.prefix if parent is not None else ""
        self.prefix: str
        if kind is Kind.FUNCTION:
            self.prefix = ".".join(p for p in (parent_prefix, name, "<locals>") if p)
        elif kind is Kind.CLASS:
            self.prefix = ".".join(p for p in (parent_prefix, name) if p)
        elif kind is Kind.COMPREHENSION:
            self.prefix = ".".join(p for p in (parent_prefix, "<comprehension>") if p)
        else:
            self.prefix = parent_prefix

    def __repr__(self) -> str:
        return f"<{self.kind.value} scope {self.name or ''}>"

    # -- visibility --------------------------------------------------------------

    def _visible_from_children(self, from_scope: Scope) -> bool:
        if self.kind is Kind.CLASS:
            return from_scope.parent is self and from_scope.kind is Kind.ANNOTATION
        return True

    def _next_visible_parent(self, from_scope: Scope, first: Scope | None = None) -> Scope:
        parent = first if first is not None else self.parent
        while not parent._visible_from_children(from_scope):
            parent = parent.parent
        return parent

    def binds(self, name: str) -> bool:
        """Whether ``name`` is visible here: bound in this scope or one it can see (``name in scope``)."""
        kind = self.kind
        if kind is Kind.BUILTINS:
            return hasattr(builtins, name)
        if kind is not Kind.MODULE and name in self.overwrites:
            return self.overwrites[name].binds(name)
        if self.assignments.get(name):
            return True
        return self._next_visible_parent(self).binds(name)

    def resolve(self, name: str, from_scope: Scope | None = None) -> list[Assignment]:
        """The assignments an access to ``name`` made in ``from_scope`` (this scope by default) may see."""
        if from_scope is None:
            from_scope = self
        kind = self.kind
        if kind is Kind.BUILTINS:
            found = self.assignments.get(name)
            if found is not None:
                return found
            if hasattr(builtins, name):
                created = [Assignment(name, self, None, -1, builtin=True)]
                self.assignments[name] = created
                return created
            return []
        if kind is not Kind.MODULE and name in self.overwrites:
            return self._next_visible_parent(from_scope, self.overwrites[name]).resolve(name, from_scope)
        found = self.assignments.get(name)
        if found is not None:
            return found
        if kind is Kind.MODULE:
            return self.parent.resolve(name, self.parent)
        return self._next_visible_parent(from_scope).resolve(name, from_scope)

    def _assignment_target(self, name: str) -> Scope:
        if self.kind is not Kind.MODULE and name in self.overwrites:
            return self._next_visible_parent(self, self.overwrites[name])._assignment_target(name)
        return self

    # -- recording -----------------------------------------------------------------

    def record_assignment(self, name: str, node: ast.AST | Ident) -> None:
        target = self._assignment_target(name)
        target.assignments.setdefault(name, []).append(Assignment(name, target, node, target.count))

    def record_import(self, name: str, statement: ast.Import | ast.ImportFrom) -> None:
        target = self._assignment_target(name)
        assignment = Assignment(name, target, statement, target.count, statement=statement)
        target.assignments.setdefault(name, []).append(assignment)


_DETACHED = Scope(Kind.BUILTINS, None, None)
"""What a released scope's links point to (see :meth:`ModuleScopes.release`)."""


class Assignment:
    """A binding of ``name`` in ``scope``: an import, a builtin, or a local binding (``node``)."""

    __slots__ = ("builtin", "index", "name", "node", "references", "scope", "statement")

    def __init__(
        self,
        name: str,
        scope: Scope,
        node: ast.AST | Ident | None,
        index: int,
        *,
        statement: ast.Import | ast.ImportFrom | None = None,
        builtin: bool = False,
    ) -> None:
        self.name = name
        self.scope = scope
        self.node = node
        """The binding node: a stored :class:`ast.Name`, an :class:`Ident`, an :class:`ast.arg`, a
        ``def`` or ``class`` (or a 3.12 type parameter or alias); the statement for an import."""
        self.index = index
        self.statement = statement
        """The ``import`` statement, for an import."""
        self.builtin = builtin
        self.references: set[Access] = set()

    def __repr__(self) -> str:
        kind = "import" if self.statement is not None else "builtin" if self.builtin else "local"
        return f"<{kind} assignment {self.name}@{self.index} in {self.scope!r}>"

    @property
    def is_import(self) -> bool:
        return self.statement is not None

    def qualified_names(self, full: str) -> set[QualifiedName]:
        """What the dotted name ``full`` (which starts with this assignment's name) means through it."""
        if self.builtin:
            return {QualifiedName(f"builtins.{self.name}", Source.BUILTIN)}
        statement = self.statement
        if statement is None:
            prefix = self.scope.prefix
            return {QualifiedName(f"{prefix}.{full}" if prefix else full, Source.LOCAL)}
        module = ""
        if isinstance(statement, ast.ImportFrom):
            module = "." * statement.level + (statement.module or "")
        results = set()
        for alias in statement.names:
            parts = alias.name.split(".")
            for i in range(len(parts), 0, -1):
                real = ".".join(parts[:i])
                as_name = real
                if module.endswith("."):
                    real = f"{module}{real}"
                elif module:
                    real = f"{module}.{real}"
                if alias.asname is not None:
                    as_name = alias.asname
                if full.startswith(as_name):
                    remaining = full.split(as_name, 1)[1]
                    if remaining and not remaining.startswith("."):
                        continue
                    remaining = remaining.lstrip(".")
                    results.add(QualifiedName(f"{real}.{remaining}" if remaining else real, Source.IMPORT))
                    break
        return results


class Access:
    """A use of a name: its node, the scope it is made in, its index there, and what it may refer to."""

    __slots__ = ("attribute", "index", "name", "node", "referents", "scope", "string")

    def __init__(
        self,
        node: ast.AST | Ident,
        scope: Scope,
        attribute: ast.Attribute | None,
        string: ast.Constant | None,
    ) -> None:
        self.node = node
        """The :class:`ast.Name` (or :class:`Ident`); the attribute of a dotted import (``a.b`` after
        ``import a.b``); the string constant of a string annotation."""
        self.scope = scope
        self.index = scope.count
        self.attribute = attribute
        self.string = string
        self.name = ""
        self.referents: set[Assignment] = set()

    def __repr__(self) -> str:
        return f"<access {self.name}@{self.index} in {self.scope!r}>"


def full_name(node: ast.AST | Ident | str) -> str | None:
    """The dotted name of a name, attribute, call or subscript (libcst's ``get_full_name_for_node``).

    A call or subscript stands for what it calls or subscripts; an attribute
    of anything else reads ``None.attr``, as libcst's does.
    """
    if isinstance(node, ast.Name | Ident):
        return node.id
    if isinstance(node, str):
        return node
    if isinstance(node, ast.Attribute):
        return f"{full_name(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return full_name(node.func)
    if isinstance(node, ast.Subscript):
        return full_name(node.value)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    return None


def _dotted_names(node: ast.Attribute | ast.Name) -> Iterator[tuple[str, ast.Attribute | ast.Name]]:
    """``a.b.c`` -> ``("a.b.c", a.b.c), ("a.b", a.b), ("a", a)`` (libcst's ``_gen_dotted_names``)."""
    if isinstance(node, ast.Name):
        yield node.id, node
        return
    value = node.value
    if isinstance(value, ast.Call):
        func = value.func
        if isinstance(func, ast.Attribute | ast.Name):
            yield from _dotted_names(func)
    elif isinstance(value, ast.Attribute | ast.Name):
        names = _dotted_names(value)
        first = next(names, None)
        if first is None:
            return
        yield f"{first[0]}.{node.attr}", node
        yield first
        yield from names


_TYPING = ("typing.", "typing_extensions.")
_METHODS: dict[type, Callable[[ModuleScopes, Any], None]] = {}
"""The walker's method for each node type, found by name once."""
_TYPE_HINT_CALLS = frozenset({"typing.NewType", "typing.TypeVar"})
_LITERALS = frozenset({"typing.Literal", "typing_extensions.Literal"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class Collected:
    """The nodes the codemod's analysis asks about, gathered on the same walk.

    ``words`` are the identifiers an attribute must end with to be kept;
    ``package`` the name a name must have to be kept.
    """

    words: frozenset[str]
    package: str
    imports: list[ast.Import | ast.ImportFrom] = field(default_factory=list)
    calls: list[ast.Call] = field(default_factory=list)
    attributes: list[ast.Attribute] = field(default_factory=list)
    package_names: list[NameNode] = field(default_factory=list)
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=list)
    assigned: dict[ast.Name, ast.expr] = field(default_factory=dict)
    """A name assigned alone (``x = value``): its value."""
    annotated: dict[ast.Name, ast.expr] = field(default_factory=dict)
    """A name annotated (``x: T`` or ``x: T = value``): its annotation."""
    member_assigns: list[tuple[ast.Attribute, ast.expr | None, ast.expr | None]] = field(default_factory=list)
    """``name.attr = value`` and ``name.attr: T = value``: (target, annotation, value)."""


class ModuleScopes:
    """Every scope of a module, the scope of each node the analysis asks about, and the resolved accesses."""

    def __init__(self, tree: ast.Module, collected: Collected) -> None:
        builtin_scope = Scope(Kind.BUILTINS, None, None)
        self.module = Scope(Kind.MODULE, builtin_scope, tree)
        builtin_scope.globals = self.module
        self._scopes = [builtin_scope, self.module]
        self.scope_of: dict[object, Scope] = {}
        """The scope of each name, attribute, call, subscript, string annotation, parameter,
        ``def``, ``class`` and import (what libcst's provider gave each node)."""
        self.by_node: dict[object, list[Access]] = {}
        self._found = collected
        self._deferred: list[Access] = []
        self._attribute: list[ast.Attribute | None] = [None]
        self._annotation = False
        self._type_hint: list[bool] = [False]
        self._literal = 0
        self._string: ast.Constant | None = None
        self._typing = {"typing", "typing_extensions"}
        """The first names of the dotted names that may mean something of ``typing`` so far: the
        names imports from it bind (and its own, which a module-level local may take)."""
        self._dotted = False
        """Whether an import binds a dotted name (``import a.b``)."""
        self.scope = self.module
        self._collect = True
        self._statements(tree.body)
        self._infer()

    # -- queries -----------------------------------------------------------------------

    def qualified_names(self, node: ast.AST | Ident) -> set[QualifiedName]:
        """What a node may mean (libcst's ``Scope.get_qualified_names_for``); empty if it has no scope."""
        scope = self.scope_of.get(node)
        if scope is None:
            return set()
        return self._qualified_names(scope, node)

    def _qualified_names(self, scope: Scope, node: ast.AST | Ident) -> set[QualifiedName]:
        accesses = self.by_node.get(node)
        if accesses:
            return {q for access in accesses for r in access.referents for q in r.qualified_names(r.name)}
        full = full_name(node)
        if full is None:
            return set()
        assignments: list[Assignment] = []
        prefix: str | None = full
        while prefix:
            if scope.binds(prefix):
                assignments = scope.resolve(prefix)
                break
            idx = prefix.rfind(".")
            prefix = None if idx == -1 else prefix[:idx]
        for assignment in assignments:
            if assignment.node is node and not assignment.builtin:
                return assignment.qualified_names(full)
        results: set[QualifiedName] = set()
        for assignment in assignments:
            results |= assignment.qualified_names(full)
        return results

    def referents(self, node: ast.AST | Ident) -> set[Assignment]:
        """The assignments a name (an access node) may refer to."""
        found: set[Assignment] = set()
        for access in self.by_node.get(node, ()):
            found |= access.referents
        return found

    # -- the walk --------------------------------------------------------------------------

    def _statements(self, body: list[ast.stmt]) -> None:
        visit = self._visit
        for statement in body:
            visit(statement)

    def _visit(self, node: ast.AST) -> None:
        method = _METHODS.get(type(node))
        if method is None:
            found: Callable[[ModuleScopes, Any], None] = getattr(
                ModuleScopes, f"_{type(node).__name__}", ModuleScopes._generic
            )
            method = _METHODS[type(node)] = found
        method(self, node)

    def _new(self, kind: Kind, parent: Scope, node: ast.AST, name: str | None = None) -> Scope:
        scope = Scope(kind, parent, node, name)
        self._scopes.append(scope)
        return scope

    def release(self) -> None:
        """Break the reference cycles between scopes, assignments and accesses.

        A module's analysis is then freed as soon as the codemod is done with
        it, not at the next collection of the garbage collector, whose cost
        would grow with every file that waits for it.
        """
        for scope in self._scopes:
            for assignments in scope.assignments.values():
                for assignment in assignments:
                    assignment.references = set()
            for accesses in scope.accesses.values():
                for access in accesses:
                    access.referents = set()
            scope.assignments, scope.accesses, scope.overwrites = {}, {}, {}
            scope.node = None
            scope.parent = scope.globals = _DETACHED
        self._scopes = []
        self.scope = self.module = _DETACHED
        self.scope_of, self.by_node = {}, {}

    def _generic(self, node: ast.AST) -> None:
        visit = self._visit
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        visit(item)
            elif isinstance(value, ast.AST):
                visit(value)

    def _skip(self, node: ast.AST) -> None:
        """Operators and expression contexts: nothing to record."""

    _Load = _Store = _Del = _skip
    _And = _Or = _Add = _Sub = _Mult = _MatMult = _Div = _Mod = _Pow = _LShift = _RShift = _skip
    _BitOr = _BitXor = _BitAnd = _FloorDiv = _Invert = _Not = _UAdd = _USub = _skip
    _Eq = _NotEq = _Lt = _LtE = _Gt = _GtE = _Is = _IsNot = _In = _NotIn = _skip
    _Pass = _Break = _Continue = _MatchSingleton = _skip

    def _collect_only(self, node: ast.AST) -> None:
        """A subtree libcst's provider skips (the name given to ``TypeVar``): gathered, not recorded."""
        if not self._collect:
            return
        found = self._found
        for child in ast.walk(node):
            if isinstance(child, ast.Call):
                found.calls.append(child)
            elif isinstance(child, ast.Attribute) and child.attr in found.words:
                found.attributes.append(child)

    # names

    def _Name(self, node: ast.Name) -> None:  # noqa: N802
        scope = self.scope
        self.scope_of[node] = scope
        if self._string is None and isinstance(node.ctx, ast.Store):
            scope.record_assignment(node.id, node)
            return
        if self._collect and node.id == self._found.package:
            self._found.package_names.append(node)
        self._deferred.append(Access(node, scope, self._attribute[-1], self._string))

    def _ident_access(self, ident: Ident) -> None:
        scope = self.scope
        self.scope_of[ident] = scope
        if self._collect and ident.id == self._found.package:
            self._found.package_names.append(ident)
        self._deferred.append(Access(ident, scope, self._attribute[-1], self._string))

    def _Attribute(self, node: ast.Attribute) -> None:  # noqa: N802
        self.scope_of[node] = self.scope
        if self._collect and node.attr in self._found.words:
            self._found.attributes.append(node)
        stack = self._attribute
        if stack[-1] is None:
            stack[-1] = node
            self._visit(node.value)
            if stack[-1] is node:
                stack[-1] = None
        else:
            self._visit(node.value)

    def _Subscript(self, node: ast.Subscript) -> None:  # noqa: N802
        self.scope_of[node] = self.scope
        hint = False
        literal = False
        value = node.value
        if isinstance(value, ast.Name) and value.id in self._typing:
            names = {q.name for q in self._qualified_names(self.scope, value)}
            hint = any(n.startswith(_TYPING) for n in names)
            literal = not names.isdisjoint(_LITERALS)
        self._type_hint.append(hint)
        self._literal += literal
        self._visit(value)
        self._visit(node.slice)
        self._literal -= literal
        self._type_hint.pop()

    def _Call(self, node: ast.Call) -> None:  # noqa: N802
        self.scope_of[node] = self.scope
        if self._collect:
            self._found.calls.append(node)
        self._attribute.append(None)
        self._type_hint.append(False)
        passed = arguments(node)
        names: set[str] = set()
        if _first_name(node.func) in self._typing:
            names = {q.name for q in self._qualified_names(self.scope, node)}
        visit = self._visit
        if not names.isdisjoint(_TYPE_HINT_CALLS):
            visit(node.func)
            self._type_hint[-1] = True
            if passed:
                self._collect_only(passed[0])
            for argument in passed[1:]:
                visit(argument)
        elif "typing.cast" in names:
            visit(node.func)
            if passed:
                self._type_hint.append(True)
                visit(passed[0])
                self._type_hint.pop()
                for argument in passed[1:]:
                    visit(argument)
        else:
            visit(node.func)
            for argument in passed:
                visit(argument)
        self._attribute.pop()
        self._type_hint.pop()

    def _keyword(self, node: ast.keyword) -> None:
        self._visit(node.value)

    def _Starred(self, node: ast.Starred) -> None:  # noqa: N802
        self._visit(node.value)

    def _Constant(self, node: ast.Constant) -> None:  # noqa: N802
        value = node.value
        if not isinstance(value, str | bytes) or not value:
            if self._string is not None and (value is None or value is True or value is False):
                # libcst reads None, True and False as names: in a string annotation they are
                # accesses of the string, like the names beside them
                self._ident_access(Ident(str(value), node))
            return
        if not (self._annotation or self._type_hint[-1]) or self._literal:
            return
        self.scope_of[node] = self.scope
        try:
            parsed = ast.parse(value)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return
        outer, collect = self._string, self._collect
        if outer is None:
            self._string = node
        self._collect = False
        self._statements(parsed.body)
        self._string, self._collect = outer, collect

    def _JoinedStr(self, node: ast.JoinedStr) -> None:  # noqa: N802
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                self._visit(value)

    def _FormattedValue(self, node: ast.FormattedValue) -> None:  # noqa: N802
        self._visit(node.value)
        if node.format_spec is not None:
            self._visit(node.format_spec)

    def _BinOp(self, node: ast.BinOp) -> None:  # noqa: N802
        """``a + b + c`` nests to the left: walked in a loop, so that long chains do not recurse."""
        rights = [node.right]
        left = node.left
        while isinstance(left, ast.BinOp):
            rights.append(left.right)
            left = left.left
        visit = self._visit
        visit(left)
        for right in reversed(rights):
            visit(right)

    def _Dict(self, node: ast.Dict) -> None:  # noqa: N802
        visit = self._visit
        for key, value in zip(node.keys, node.values, strict=True):
            if key is not None:
                visit(key)
            visit(value)

    def _IfExp(self, node: ast.IfExp) -> None:  # noqa: N802
        self._visit(node.body)
        self._visit(node.test)
        self._visit(node.orelse)

    def _NamedExpr(self, node: ast.NamedExpr) -> None:  # noqa: N802
        self._visit(node.target)
        self._visit(node.value)
        self.scope.count += 1

    def _Lambda(self, node: ast.Lambda) -> None:  # noqa: N802
        outer = self.scope
        self.scope = self._new(Kind.FUNCTION, outer, node)
        self._parameters(node.args)
        self._visit(node.body)
        self.scope = outer

    def _ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> None:  # noqa: N802
        self._comprehension(node, (node.elt,))

    _SetComp = _GeneratorExp = _ListComp

    def _DictComp(self, node: ast.DictComp) -> None:  # noqa: N802
        self._comprehension(node, (node.key, node.value))

    def _comprehension(self, node: ast.expr, results: tuple[ast.expr, ...]) -> None:
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        first = generators[0]
        visit = self._visit
        visit(first.iter)
        outer = self.scope
        self.scope = self._new(Kind.COMPREHENSION, outer, node)
        visit(first.target)
        self.scope.count += 1
        for condition in first.ifs:
            visit(condition)
        if len(generators) > 1:
            self._inner_generator(generators, 1)
        for result in results:
            visit(result)
        self.scope = outer

    def _inner_generator(self, generators: list[ast.comprehension], i: int) -> None:
        generator = generators[i]
        visit = self._visit
        visit(generator.target)
        visit(generator.iter)
        for condition in generator.ifs:
            visit(condition)
        if i + 1 < len(generators):
            self._inner_generator(generators, i + 1)
        self.scope.count += 1

    # statements

    def _Import(self, node: ast.Import | ast.ImportFrom) -> None:  # noqa: N802
        scope = self.scope
        self.scope_of[node] = scope
        if self._collect:
            self._found.imports.append(node)
        if isinstance(node, ast.ImportFrom):
            typing = node.level == 0 and (node.module or "").startswith("typing")
        for alias in node.names:
            if alias.name == "*":
                break
            if isinstance(node, ast.Import):
                typing = alias.name.startswith("typing")
            if alias.asname is not None:
                scope.record_import(alias.asname, node)
                if typing:
                    self._typing.add(alias.asname)
                continue
            parts = alias.name.split(".")
            for i in range(len(parts), 0, -1):
                scope.record_import(".".join(parts[:i]), node)
            self._dotted |= len(parts) > 1
            if typing:
                self._typing.add(parts[0])
        scope.count += 1

    _ImportFrom = _Import

    def _Global(self, node: ast.Global) -> None:  # noqa: N802
        scope = self.scope
        if scope.kind is not Kind.MODULE:
            for name in node.names:
                scope.overwrites[name] = scope.globals
        scope.count += 1

    def _Nonlocal(self, node: ast.Nonlocal) -> None:  # noqa: N802
        scope = self.scope
        if scope.kind is not Kind.MODULE:
            for name in node.names:
                scope.overwrites[name] = scope.parent
        scope.count += 1

    def _Assign(self, node: ast.Assign) -> None:  # noqa: N802
        if self._collect and len(node.targets) == 1:
            self._target(node.targets[0], None, node.value)
        for target in node.targets:
            self._visit(target)
        self._visit(node.value)
        self.scope.count += 1

    def _AnnAssign(self, node: ast.AnnAssign) -> None:  # noqa: N802
        if self._collect:
            self._target(node.target, node.annotation, node.value)
        self._visit(node.target)
        self._annotation_of(node.annotation)
        if node.value is not None:
            self._visit(node.value)
        self.scope.count += 1

    def _target(self, target: ast.expr, annotation: ast.expr | None, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            if annotation is not None:
                self._found.annotated[target] = annotation
            elif value is not None:
                self._found.assigned[target] = value
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            self._found.member_assigns.append((target, annotation, value))

    def _AugAssign(self, node: ast.AugAssign) -> None:  # noqa: N802
        self._visit(node.target)
        self._visit(node.value)
        self.scope.count += 1

    def _For(self, node: ast.For | ast.AsyncFor) -> None:  # noqa: N802
        self._visit(node.target)
        self.scope.count += 1
        self._visit(node.iter)
        self._statements(node.body)
        self._statements(node.orelse)

    _AsyncFor = _For

    def _withitem(self, node: ast.withitem) -> None:
        self._visit(node.context_expr)
        if node.optional_vars is not None:
            self._visit(node.optional_vars)
            self.scope.count += 1  # libcst's AsName
        self.scope.count += 1

    def _ExceptHandler(self, node: ast.ExceptHandler) -> None:  # noqa: N802
        if node.type is not None:
            self._visit(node.type)
        if node.name is not None:
            ident = Ident(node.name, node)
            self.scope_of[ident] = self.scope
            self.scope.record_assignment(node.name, ident)
            self.scope.count += 1
        self._statements(node.body)

    def _annotation_of(self, node: ast.expr) -> None:
        outer = self._annotation
        self._annotation = True
        self._visit(node)
        self._annotation = outer

    def _parameters(self, arguments: ast.arguments) -> None:
        """Parameters in the new scope, their defaults and annotations in the enclosing one."""
        scope = self.scope
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
        defaults += arguments.defaults
        ordered: list[tuple[ast.arg, ast.expr | None]] = list(zip(positional, defaults, strict=True))
        if arguments.vararg is not None:
            ordered.append((arguments.vararg, None))
        ordered += zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if arguments.kwarg is not None:
            ordered.append((arguments.kwarg, None))
        for param, default in ordered:
            scope.record_assignment(param.arg, param)
            self.scope_of[param] = scope
            self.scope = scope.parent
            if default is not None:
                self._visit(default)
            if param.annotation is not None:
                self._annotation_of(param.annotation)
            self.scope = scope
        scope.count += 1

    def _FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:  # noqa: N802
        outer = self.scope
        outer.record_assignment(node.name, node)
        if self._collect:
            self._found.functions.append(node)
        type_params = getattr(node, "type_params", None)
        if type_params:
            self.scope = self._new(Kind.ANNOTATION, outer, node)
            for param in type_params:
                self._visit(param)
        self.scope = self._new(Kind.FUNCTION, self.scope, node, node.name)
        self._parameters(node.args)
        self._statements(node.body)
        self.scope = self.scope.parent
        for decorator in node.decorator_list:
            self._visit(decorator)
        if node.returns is not None:
            self._annotation_of(node.returns)
        self.scope = outer
        self.scope_of[node] = outer
        outer.count += 1

    _AsyncFunctionDef = _FunctionDef

    def _ClassDef(self, node: ast.ClassDef) -> None:  # noqa: N802
        outer = self.scope
        outer.record_assignment(node.name, node)
        for decorator in node.decorator_list:
            self._visit(decorator)
        type_params = getattr(node, "type_params", None)
        if type_params:
            self.scope = self._new(Kind.ANNOTATION, outer, node)
            for param in type_params:
                self._visit(param)
        for base in node.bases:
            self._visit(base)
        for keyword in node.keywords:
            self._visit(keyword.value)
        self.scope = self._new(Kind.CLASS, self.scope, node, node.name)
        self._statements(node.body)
        self.scope = outer
        self.scope_of[node] = outer
        outer.count += 1

    # Python 3.12: type parameters and aliases

    def _TypeVar(self, node: ast.AST) -> None:  # noqa: N802
        self.scope.record_assignment(node.name, node)  # type: ignore[attr-defined]
        bound = getattr(node, "bound", None)
        if bound is not None:
            self._visit(bound)
        self.scope.count += 1

    def _ParamSpec(self, node: ast.AST) -> None:  # noqa: N802
        self.scope.record_assignment(node.name, node)  # type: ignore[attr-defined]
        self.scope.count += 1

    _TypeVarTuple = _ParamSpec

    def _TypeAlias(self, node: ast.AST) -> None:  # noqa: N802
        name: ast.Name = node.name  # type: ignore[attr-defined]
        outer = self.scope
        outer.record_assignment(name.id, node)
        self.scope = self._new(Kind.ANNOTATION, outer, node)
        for param in getattr(node, "type_params", ()):
            self._visit(param)
        self._visit(node.value)  # type: ignore[attr-defined]
        self.scope = outer
        outer.count += 1

    # match patterns: libcst reads every name in a pattern as a load

    def _MatchAs(self, node: ast.MatchAs) -> None:  # noqa: N802
        if node.pattern is not None:
            self._visit(node.pattern)
        if node.name is not None:
            self._ident_access(Ident(node.name, node))

    def _MatchStar(self, node: ast.MatchStar) -> None:  # noqa: N802
        if node.name is not None:
            self._ident_access(Ident(node.name, node))

    def _MatchMapping(self, node: ast.MatchMapping) -> None:  # noqa: N802
        for key, pattern in zip(node.keys, node.patterns, strict=True):
            self._visit(key)
            self._visit(pattern)
        if node.rest is not None:
            self._ident_access(Ident(node.rest, node))

    def _MatchClass(self, node: ast.MatchClass) -> None:  # noqa: N802
        self._visit(node.cls)
        for pattern in node.patterns:
            self._visit(pattern)
        for index, (key, pattern) in enumerate(zip(node.kwd_attrs, node.kwd_patterns, strict=True)):
            self._ident_access(Ident(key, node, index))
            self._visit(pattern)

    # -- resolution ----------------------------------------------------------------------

    def _infer(self) -> None:
        """Resolve every access, then attach each to the assignments that may reach it (libcst's order)."""
        groups: dict[tuple[Scope, str], list[Access]] = {}
        by_node = self.by_node
        dotted_keys = self._dotted
        for access in self._deferred:
            name = access.node.id  # type: ignore[union-attr]
            scope = access.scope
            # only ``import a.b`` binds a dotted name: without one, a chain's base is the access
            if dotted_keys and access.attribute is not None:
                for dotted, dotted_node in _dotted_names(access.attribute):
                    if scope.binds(dotted):
                        access.node = dotted_node
                        name = dotted
                        break
            if access.string is not None:
                access.node = access.string
            access.name = name
            key = (scope, name)
            group = groups.get(key)
            if group is None:
                groups[key] = [access]
            else:
                group.append(access)
            scope.accesses.setdefault(name, []).append(access)
            found = by_node.get(access.node)
            if found is None:
                by_node[access.node] = [access]
            else:
                found.append(access)
        for (scope, name), accesses in groups.items():
            assignments = scope.resolve(name)
            outer: set[Assignment] | None = None
            for access in accesses:
                index = access.index
                previous = {a for a in assignments if a.scope is not scope or a.index < index}
                if not previous and assignments and scope.parent is not scope:
                    if outer is None:
                        outer = set(scope.parent.resolve(name, scope))
                    previous = set(outer)
                access.referents = previous
            for assignment in assignments:
                _attach(assignment, accesses)
        self._deferred = []


def _attach(assignment: Assignment, accesses: list[Access]) -> None:
    """``assignment`` is seen by the accesses after it; the earlier ones go to the enclosing scope's."""
    scope = assignment.scope
    earlier = []
    for access in accesses:
        if access.scope is not scope or assignment.index < access.index:
            assignment.references.add(access)
        else:
            earlier.append(access)
    if earlier and scope.parent is not scope:
        for shadowed in scope.parent.resolve(assignment.name):
            _attach(shadowed, earlier)


def arguments(call: ast.Call) -> list[ast.expr | ast.keyword]:
    """A call's arguments in source order (``ast`` keeps keywords apart)."""
    args: list[ast.expr | ast.keyword] = list(call.args)
    if not call.keywords:
        return args
    if not args:
        return list(call.keywords)
    merged: list[ast.expr | ast.keyword] = [*args, *call.keywords]
    last = args[-1]
    first = call.keywords[0]
    if (last.lineno, last.col_offset) > (first.lineno, first.col_offset):
        merged.sort(key=lambda n: (n.lineno, n.col_offset))
    return merged


def _first_name(node: ast.expr) -> str | None:
    """The first name of a dotted name, a call or a subscript (what the typing checks resolve)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return None
