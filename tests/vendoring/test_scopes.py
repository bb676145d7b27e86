"""The codemod's scope walker on small modules: what each name may mean.

:mod:`codegen.vendoring.scopes` reproduces libcst's ``ScopeProvider`` on Python's
own :mod:`ast`; these tests pin the resolution rules the codemod relies on
(shadowing, scopes, order, imports, string annotations), each with the
qualified names a use resolves to: ``import:acp.schema.X`` for an import,
``local:f.<locals>.X`` for a local binding, ``builtin:builtins.print``.
"""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest

from codegen.vendoring.scopes import Collected, Ident, Kind, ModuleScopes
from tests.support.releases import ROOT


def walk(source: str) -> tuple[ast.Module, ModuleScopes]:
    tree = ast.parse(textwrap.dedent(source))
    return tree, ModuleScopes(tree, Collected(frozenset(), "acp"))


def uses(tree: ast.Module, name: str) -> list[ast.Name]:
    """The loads of ``name``, in source order."""
    found = [
        n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name and n.ctx.__class__ is ast.Load
    ]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def meanings(scopes: ModuleScopes, node: ast.AST | Ident) -> set[str]:
    return {f"{q.source.value}:{q.name}" for q in scopes.qualified_names(node)}


def meanings_of_uses(source: str, name: str) -> list[set[str]]:
    tree, scopes = walk(source)
    return [meanings(scopes, use) for use in uses(tree, name)]


IMPORTED = {"import:acp.schema.X"}


# --- shadowing ---------------------------------------------------------------------------------


def test_a_parameter_shadows_the_import_only_in_its_function() -> None:
    assert (
        meanings_of_uses(
            """\
        from acp.schema import X

        def f(X):
            return X

        def g():
            return X
        """,
            "X",
        )
        == [{"local:f.<locals>.X"}, IMPORTED]
    )


def test_a_local_shadows_from_its_binding_on_and_a_use_before_it_falls_back_to_the_import() -> None:
    assert (
        meanings_of_uses(
            """\
        from acp.schema import X

        def f():
            print(X)
            X = 1
            print(X)
        """,
            "X",
        )
        == [IMPORTED, {"local:f.<locals>.X"}]
    )


def test_a_class_body_binding_is_invisible_to_its_methods() -> None:
    assert (
        meanings_of_uses(
            """\
        from acp.schema import X

        class C:
            X = 1
            y = X

            def m(self):
                return X
        """,
            "X",
        )
        == [{"local:C.X"}, IMPORTED]
    )


def test_a_comprehension_target_is_local_to_it_and_its_first_iterable_is_outside() -> None:
    assert (
        meanings_of_uses(
            """\
        from acp.schema import X

        a = [X for X in X]
        b = X
        """,
            "X",
        )
        == [{"local:<comprehension>.X"}, IMPORTED, IMPORTED]
    )


def test_lambda_parameters_are_local_to_the_lambda() -> None:
    assert meanings_of_uses(
        "from acp.schema import X\nf = lambda X: X\ng = lambda: X\n",
        "X",
    ) == [{"local:<locals>.X"}, IMPORTED]


def test_defaults_annotations_and_decorators_belong_to_the_enclosing_scope() -> None:
    assert (
        meanings_of_uses(
            """\
        from acp.schema import X

        @X
        def f(X: X = X) -> X:
            return X
        """,
            "X",
        )
        == [IMPORTED, IMPORTED, IMPORTED, IMPORTED, {"local:f.<locals>.X"}]
    )


def test_a_walrus_binds_in_the_scope_it_is_in() -> None:
    assert (
        meanings_of_uses(
            """\
        from acp.schema import X

        def f():
            if (X := 1):
                return X
        """,
            "X",
        )
        == [{"local:f.<locals>.X"}]
    )


def test_except_with_and_for_targets_bind() -> None:
    tree, scopes = walk("""\
        from acp.schema import X

        def f():
            try:
                pass
            except Exception as X:
                return X

        def g(items):
            for X in items:
                return X

        def h(manager):
            with manager as X:
                return X
        """)
    assert [meanings(scopes, use) for use in uses(tree, "X")] == [
        {"local:f.<locals>.X"},
        {"local:g.<locals>.X"},
        {"local:h.<locals>.X"},
    ]
    handler = next(n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler))
    (binding,) = scopes.referents(uses(tree, "X")[0])
    assert isinstance(binding.node, Ident) and binding.node.owner is handler


def test_match_patterns_are_read_as_uses_as_libcst_reads_them() -> None:
    _, scopes = walk("""\
        from acp.schema import X

        match value:
            case X(title=t):
                pass
            case X:
                pass
        """)
    idents = [i for i in scopes.by_node if isinstance(i, Ident)]
    assert sorted(i.id for i in idents) == ["X", "t", "title"]
    capture = next(i for i in idents if i.id == "X")
    assert meanings(scopes, capture) == IMPORTED


# --- global and nonlocal -------------------------------------------------------------------------


def test_global_sends_the_binding_to_the_module() -> None:
    assert (
        meanings_of_uses(
            """\
        from acp.schema import X

        def f():
            global X
            X = 1
            return X

        y = X
        """,
            "X",
        )
        == [IMPORTED | {"local:X"}, IMPORTED | {"local:X"}]
    )


def test_nonlocal_sends_the_binding_to_the_enclosing_function() -> None:
    assert (
        meanings_of_uses(
            """\
        def outer():
            X = 1

            def inner():
                nonlocal X
                X = 2
                return X

            return X
        """,
            "X",
        )
        == [{"local:outer.<locals>.X"}, {"local:outer.<locals>.X"}]
    )


# --- order at module level ---------------------------------------------------------------------------


def test_a_use_before_a_rebinding_is_the_import_and_one_after_may_be_either() -> None:
    assert (
        meanings_of_uses(
            """\
        from acp.schema import X

        before = X

        class X:
            pass

        after = X

        def later():
            return X
        """,
            "X",
        )
        == [IMPORTED, IMPORTED | {"local:X"}, IMPORTED | {"local:X"}]
    )


def test_an_import_knows_the_uses_that_can_only_mean_it() -> None:
    _, scopes = walk("""\
        from acp.schema import X

        a = X

        def f(X):
            return X

        def g():
            return X
        """)
    imported = next(a for a in scopes.module.assignments["X"] if a.is_import)
    lines = sorted(access.node.lineno for access in imported.references)  # type: ignore[union-attr]
    assert lines == [3, 9]


# --- imports ---------------------------------------------------------------------------------------


def test_import_forms() -> None:
    tree, scopes = walk("""\
        import acp.schema
        import acp.schema as s
        from acp import schema as sch
        from ..vendor import acp as pinned

        acp.schema.X
        s.X
        sch.X
        pinned.schema.X
        """)
    attributes = [
        n.value
        for n in tree.body
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Attribute) and n.value.attr == "X"
    ]
    assert [meanings(scopes, a) for a in attributes] == [
        {"import:acp.schema.X"},
        {"import:acp.schema.X"},
        {"import:acp.schema.X"},
        {"import:..vendor.acp.schema.X"},
    ]


def test_a_dotted_import_is_used_through_its_longest_bound_prefix() -> None:
    tree, scopes = walk("import acp.schema\nacp.schema.X\nacp.other\n")
    first, second = (n.value for n in tree.body[1:])  # type: ignore[attr-defined]
    assert isinstance(first, ast.Attribute) and isinstance(second, ast.Attribute)
    assert first.value in scopes.by_node  # the access is ``acp.schema``, not ``acp``
    assert second.value in scopes.by_node  # only ``acp`` is bound for ``acp.other``
    assert meanings(scopes, first) == {"import:acp.schema.X"}
    assert meanings(scopes, second) == {"import:acp.other"}


def test_a_star_import_binds_nothing() -> None:
    assert meanings_of_uses("from acp.schema import *\nX\n", "X") == [set()]


def test_an_undefined_name_means_nothing_and_a_builtin_is_a_builtin() -> None:
    assert meanings_of_uses("X\n", "X") == [set()]
    assert meanings_of_uses("print\n", "print") == [{"builtin:builtins.print"}]


# --- string annotations --------------------------------------------------------------------------------


def test_a_string_annotation_is_a_use_of_the_names_in_it() -> None:
    tree, scopes = walk('from acp.schema import X\n\ndef f(x: "list[X]", y: "X | None") -> None: ...\n')
    strings = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)),
        key=lambda n: n.col_offset,
    )
    assert [meanings(scopes, s) for s in strings] == [
        {"builtin:builtins.list", "import:acp.schema.X"},
        {"builtin:builtins.None", "import:acp.schema.X"},
    ]


def test_strings_are_annotations_only_where_types_go() -> None:
    tree, scopes = walk("""\
        from typing import Literal, cast
        from acp.schema import X

        a = cast("X", None)
        b: Literal["X"] = "X"
        c = "X"
        """)
    strings = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value == "X"),
        key=lambda n: (n.lineno, n.col_offset),
    )
    assert [meanings(scopes, s) for s in strings] == [IMPORTED, set(), set(), set()]


# --- scopes --------------------------------------------------------------------------------------------


def test_each_node_knows_its_scope() -> None:
    tree, scopes = walk("""\
        class C:
            def m(self):
                return [self for _ in range(2)]
        """)
    method = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    self_use = uses(tree, "self")[0]
    assert scopes.scope_of[method].kind is Kind.CLASS
    assert scopes.scope_of[self_use].kind is Kind.COMPREHENSION
    (parameter,) = scopes.referents(self_use)
    assert parameter.node is method.args.args[0] and parameter.scope.kind is Kind.FUNCTION


@pytest.mark.skipif(sys.version_info < (3, 12), reason="type parameters are Python 3.12 syntax")
def test_type_parameters_have_a_scope_of_their_own() -> None:
    assert meanings_of_uses(
        "from acp.schema import X\n\ndef f[X](a: X) -> X:\n    return a\n\ny = X\n", "X"
    ) == [{"local:X"}, {"local:X"}, IMPORTED]


# --- against libcst's provider ----------------------------------------------------------------------

TRICKY = """\
import acp.schema, acp.bindings as b
from acp.schema import Implementation as Impl, StopReason
from typing import Literal, Optional, cast
from . import sibling


@Impl
class Holder(b.Agent, metaclass=type):
    back: "Optional[StopReason]"
    Impl = Impl

    def method(self, x: Impl = Impl, *args: "list[Impl]", y=lambda Impl: Impl, **kw) -> StopReason:
        global StopReason
        for StopReason in args:
            with x as (a, *b):
                pass
        for args in args:
            y: "StopReason | None" = args
        try:
            del x
        except Impl as err:
            print(err, [Impl for Impl in kw if (z := Impl)], {k: v for k, v in kw.items()})
        match kw:
            case {"a": Impl(title=t), **rest} | [Impl, *rest] if rest:
                return cast("StopReason", t)
        def inner():
            nonlocal x
            x = acp.schema.Implementation
            return f"{x!r:>{StopReason}}", acp.bindings.Client, acp.other
        return Literal["Impl"], inner, sibling.acp


before = Holder


class Holder:
    pass


after = Holder
"""


def _libcst_model(source: str) -> dict[tuple[int, int, str], frozenset[tuple[str, str, str, int]]]:
    """Each access by position and name, with what it refers to, as libcst's provider sees it."""
    import libcst as cst
    from libcst.metadata import (
        BuiltinAssignment,
        ImportAssignment,
        MetadataWrapper,
        PositionProvider,
        ScopeProvider,
    )

    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    scopes = {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}
    positions = wrapper.resolve(PositionProvider)
    model = {}
    for scope in scopes:
        for name, accesses in scope._accesses_by_name.items():
            for access in accesses:
                node = access.node
                if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
                    continue  # ast has constants there, and the codemod never asks about them
                start = positions[node].start
                model[(start.line, start.column, name)] = frozenset(
                    (
                        (
                            "import"
                            if isinstance(r, ImportAssignment)
                            else "builtin" if isinstance(r, BuiltinAssignment) else "local"
                        ),
                        r.scope._name_prefix,
                        r.name,
                        r._index,
                    )
                    for r in access.referents
                )
    return model


def _ast_model(source: str) -> dict[tuple[int, int, str], frozenset[tuple[str, str, str, int]]]:
    from codegen.vendoring.sourcetext import SourceText

    _, scopes = walk(source)
    text = SourceText(source.encode())
    model = {}
    for accesses in scopes.by_node.values():
        for access in accesses:
            node = access.node
            if isinstance(node, Ident):
                line, column = text.position(text.ident(node))
            else:
                line, column = text.start_of(node)
            model[(line, column - 1, access.name)] = frozenset(
                (
                    "import" if r.is_import else "builtin" if r.builtin else "local",
                    r.scope.prefix,
                    r.name,
                    r.index,
                )
                for r in access.referents
            )
    return model


@pytest.mark.parametrize(
    "path",
    [
        "tricky",
        *sorted(
            str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "fixtures" / "vendor_project").rglob("*.py")
        ),
        "codegen/vendoring/codemod.py",
        "codegen/vendoring/scopes.py",
    ],
)
def test_the_walker_resolves_every_access_as_libcst_s_provider_does(path: str) -> None:
    source = TRICKY if path == "tricky" else (ROOT / path).read_text()
    assert _ast_model(source) == _libcst_model(source)
