"""The Python API of one surface: method names and keyword-only signatures.

What code written against the generated bindings sees of each JSON-RPC method
is derived here from the IR, once, for every reader: the bindings emitter
renders it, the differ compares it between releases and the codemod rewrites
user code with it.

Rules, the same for every release:

* the Python name of a method is :func:`codegen.naming.method_name`;
* a method takes its params type's fields as keyword-only parameters (the
  ``_meta`` field excepted: extra keyword arguments carry it).  A required
  field has no default; an optional one defaults to ``None``, which leaves
  it out of the message;
* a union params type takes the fields of all its branches.  A field that
  every branch requires is required.  The tag is required unless the known
  branches have the same fields (then the values pick the branch, and the
  tag defaults to ``None``).  A field for which ``None`` is a real value in a
  branch that requires it (a JSON-RPC request id) defaults to ``UNSET``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import assert_never

from .. import naming, pysource
from ..errors import CodegenError
from ..schema.ir import (
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
    Const,
    EnumType,
    Field,
    MapOf,
    Method,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
    UnionType,
)
from . import connections


def annotation(expr: TypeExpr, extra: tuple[str, ...] = ()) -> str:
    """A type expression as a Python annotation inside the bindings module (``extra``: see pysource)."""
    return pysource.annotation(expr, module="schema", extra=extra)


def annotation_names(*exprs: TypeExpr) -> frozenset[str]:
    """The names the annotations of ``exprs`` write inside the bindings module (see :func:`annotation`)."""
    return frozenset().union(*(pysource.annotation_names(e, "schema") for e in exprs))


join_types = pysource.join_types
NULL = pysource.NULL

META = "_meta"

# names the generated methods use besides their parameters
_LOCALS = frozenset({"self", "kwargs", "arguments", "request", "result"})


def accepts_none(surface: ApiSurface, expr: TypeExpr, seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``None`` is a valid value of the expression."""
    match expr:
        case Nullable():
            return True
        case Scalar():
            return expr.type in ("any", "null")
        case AnyOf():
            return any(accepts_none(surface, m, seen) for m in expr.members)
        case Ref():
            if expr.name in seen:
                return False
            target = surface.types[expr.name]
            match target:
                case AliasType():
                    return accepts_none(surface, target.target, seen | {expr.name})
                case UnionType():
                    return any(accepts_none(surface, v.type, seen | {expr.name}) for v in target.variants)
                case ObjectType() | EnumType():
                    return False
                case _:
                    assert_never(target)
        case ArrayOf() | MapOf() | Const():
            return False
        case _:
            assert_never(expr)


# --- method signatures ---------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    name: str
    type: TypeExpr
    """What the parameter holds (``null`` already joined in for one that defaults to ``None``)."""
    default: str | None
    """``None`` for a required parameter, else the default's source (``None`` or ``UNSET``)."""
    extra: tuple[str, ...] = ()
    """Python types its annotation adds that are no JSON type (``Unset``)."""

    @property
    def annotation(self) -> str:
        return annotation(self.type, self.extra)

    @property
    def names(self) -> frozenset[str]:
        """The names :attr:`source` writes that a module imports or defines (its annotation's, ``UNSET``)."""
        default = {self.default} if self.default not in (None, "None") else set()
        return pysource.annotation_names(self.type, "schema", self.extra) | default

    @property
    def source(self) -> str:
        if self.default is None:
            return f"{self.name}: {self.annotation}"
        return f"{self.name}: {self.annotation} = {self.default}"


def signature_source(params: Iterable[Param]) -> str:
    """A method's parameter list: ``self``, the keyword-only parameters, ``**kwargs`` for ``_meta``."""
    params = list(params)
    star = ["*"] if params else []
    return ", ".join(["self", *star, *(p.source for p in params), "**kwargs: Any"])


def signature_names(params: Iterable[Param]) -> frozenset[str]:
    """The names :func:`signature_source` writes that a module imports or defines."""
    return frozenset({"Any"}).union(*(p.names for p in params))


@dataclass(frozen=True)
class Overload:
    """The signature of one branch of a union request (a ``typing.overload`` of the method).

    Its tag is the branch's ``Literal`` (the catch-all's is the open string type)
    and its parameters are the fields of that branch only, required as the
    branch requires them, so a type checker refuses a value of another branch.
    """

    params: tuple[Param, ...]

    @property
    def signature(self) -> str:
        return signature_source(self.params)

    @property
    def signature_names(self) -> frozenset[str]:
        """The names :attr:`signature` writes that a module imports or defines."""
        return signature_names(self.params)


@dataclass(frozen=True)
class UnionShape:
    """What the template needs to build a union request: the ``UnionParams`` constant."""

    constant: str
    tag: str
    known: tuple[tuple[str, str], ...]
    """(tag literal, branch source) pairs."""
    other: str | None
    infer_tag: bool
    names: frozenset[str]
    """The names the branches' sources write that a module imports (``schema``, ``Scopes``)."""


@dataclass
class MethodSpec:
    method: Method
    name: str
    params: list[Param]
    doc: str
    params_type: str
    result_type: str | None
    union: UnionShape | None = None
    overloads: tuple[Overload, ...] = ()
    """One signature per branch of a union request, in branch order, the catch-all last."""

    @property
    def required_args(self) -> list[str]:
        return [p.name for p in self.params if p.default is None]

    @property
    def omit_none(self) -> list[str]:
        """Optional parameters that ``None`` leaves out of the message."""
        return [p.name for p in self.params if p.default == "None"]

    @property
    def omit_unset(self) -> list[str]:
        """Parameters for which ``None`` is a value: only ``UNSET`` leaves them out."""
        return [p.name for p in self.params if p.default == "UNSET"]

    @property
    def wire(self) -> str:
        return self.method.wire_name

    @property
    def is_request(self) -> bool:
        return self.method.kind == "request"

    @property
    def returns(self) -> str:
        return self.result_type or "None"

    def __post_init__(self) -> None:
        taken = sorted({p.name for p in self.params} & _LOCALS)
        if taken:
            raise CodegenError(
                f"{self.wire}: a parameter may not be called {', '.join(taken)} "
                "(the generated method uses the name)"
            )

    @property
    def signature(self) -> str:
        return signature_source(self.params)

    @property
    def signature_names(self) -> frozenset[str]:
        """The names :attr:`signature` writes that a module imports or defines."""
        return signature_names(self.params)


def call_fields(surface: ApiSurface, name: str) -> tuple[Field, ...]:
    """The fields of a params type that become keyword arguments: all but ``_meta``."""
    return tuple(f for f in surface.all_fields(name) if f.wire_name != META)


def _leaves(surface: ApiSurface, union: UnionType) -> Iterator[tuple[object, list[ObjectType]]]:
    """(tag, the objects of that branch) for every branch, the catch-all last (tag ``None``)."""
    branches = [(v.tag, v) for v in union.variants]
    if union.catch_all is not None:
        branches.append((None, union.catch_all))
    for tag, variant in branches:
        found = surface.resolve(variant.type)
        if isinstance(found, ObjectType):
            yield tag, [found]
        elif isinstance(found, UnionType) and not found.tagged and found.catch_all is None:
            members = [surface.resolve(v.type) for v in found.variants]
            if not all(isinstance(m, ObjectType) for m in members):
                raise CodegenError(
                    f"union request {union.name}: the members of {found.name} are not all objects"
                )
            yield tag, [m for m in members if isinstance(m, ObjectType)]
        else:
            raise CodegenError(
                f"union request {union.name}: cannot build calls for branch {variant.type!r}",
                pointer=union.pointer,
            )


def _scope_keys(
    surface: ApiSurface, member: ObjectType, others: list[ObjectType], owner: str
) -> tuple[str, ...]:
    """The required fields only ``member`` has: they tell it from the other scopes."""
    theirs = {f.wire_name for o in others for f in surface.all_fields(o.name)}
    keys = tuple(
        f.py_name for f in call_fields(surface, member.name) if f.required and f.wire_name not in theirs
    )
    if not keys:
        raise CodegenError(f"union request {owner}: {member.name} has no field of its own to select it by")
    return keys


def method_spec(surface: ApiSurface, method: Method) -> MethodSpec:
    name = naming.method_name(method.wire_name, method.kind, method.params)
    declared = surface.types[method.params]
    params_type = surface.unaliased(method.params)  # an alias of a class takes that class's fields
    result = f"schema.{method.result}" if method.result else None
    doc = method.doc or declared.doc
    if isinstance(params_type, ObjectType):
        fields = call_fields(surface, params_type.name)
        ordered = [f for f in fields if f.required] + [f for f in fields if not f.required]
        params = [
            (
                Param(f.py_name, f.type, None)
                if f.required
                else Param(f.py_name, join_types([f.type, NULL]), "None")
            )
            for f in ordered
        ]
        return MethodSpec(method, name, params, doc, f"schema.{declared.name}", result)
    if isinstance(params_type, UnionType) and params_type.tagged and params_type.tag_py_name:
        return _union_spec(surface, method, name, params_type, result, doc)
    raise CodegenError(
        f"cannot build calls for {method.wire_name}: "
        f"its params type {method.params} is not an object or a tagged union"
    )


def _union_spec(
    surface: ApiSurface, method: Method, name: str, union: UnionType, result: str | None, doc: str
) -> MethodSpec:
    assert union.tag_py_name is not None
    tag = union.tag_py_name
    branches = list(_leaves(surface, union))
    leaves = [leaf for _tag, objects in branches for leaf in objects]
    known = [(t, objs) for t, objs in branches if t is not None]
    infer_tag = (
        all(len(objs) == 1 for _t, objs in known)
        and len({frozenset(f.wire_name for f in call_fields(surface, objs[0].name)) for _t, objs in known})
        == 1
    )
    by_name: dict[str, list[tuple[ObjectType, Field]]] = {}
    for leaf in leaves:
        for f in call_fields(surface, leaf.name):
            by_name.setdefault(f.py_name, []).append((leaf, f))
    params: list[Param] = []
    for py_name, found in by_name.items():
        types = join_types(f.type for _leaf, f in found)
        everywhere = len(found) == len(leaves) and all(f.required for _leaf, f in found)
        if py_name == tag:
            everywhere = not infer_tag
        if everywhere:
            params.append(Param(py_name, types, None))
        elif any(f.required and accepts_none(surface, f.type) for _leaf, f in found):
            params.append(Param(py_name, types, "UNSET", extra=("Unset",)))
        else:
            params.append(Param(py_name, join_types([types, NULL]), "None"))
    params = [p for p in params if p.default is None] + [p for p in params if p.default is not None]

    def branch_source(objects: list[ObjectType]) -> str:
        if len(objects) == 1:
            return f"schema.{objects[0].name}"
        members = []
        for member in objects:
            keys = _scope_keys(surface, member, [o for o in objects if o is not member], union.name)
            members.append(f"(schema.{member.name}, ({''.join(pysource.literal(k) + ', ' for k in keys)}))")
        return f"Scopes(({', '.join(members)},))"

    other = next((branch_source(objs) for t, objs in branches if t is None), None)
    order = {p.name: index for index, p in enumerate(params)}
    overloads = tuple(
        _overload(surface, leaf, tag, known_tag, infer_tag, order)
        for known_tag, objs in branches
        for leaf in objs
    )
    shape = UnionShape(
        constant="_" + naming.snake(union.name).upper(),
        tag=tag,
        known=tuple((pysource.literal(t), branch_source(objs)) for t, objs in known),
        other=other,
        infer_tag=infer_tag,
        names=frozenset({"schema", *(["Scopes"] if any(len(objs) > 1 for _t, objs in branches) else [])}),
    )
    return MethodSpec(
        method, name, params, doc, f"schema.{union.name}", result, union=shape, overloads=overloads
    )


def _overload(
    surface: ApiSurface, leaf: ObjectType, tag: str, known: object, infer_tag: bool, order: dict[str, int]
) -> Overload:
    """The signature of one leaf of a union request; ``known`` is its tag (``None``: the catch-all).

    A known tag the values can infer may be left out; the catch-all's never.  The
    parameters come in the order of the method's own signature, required ones first.
    """
    params = []
    for f in call_fields(surface, leaf.name):
        if f.required and not (f.py_name == tag and known is not None and infer_tag):
            params.append(Param(f.py_name, f.type, None))
        else:
            params.append(Param(f.py_name, join_types([f.type, NULL]), "None"))
    params.sort(key=lambda p: (p.default is not None, order[p.name]))
    return Overload(tuple(params))


# --- the surface -----------------------------------------------------------------------


def handled_by(surface: ApiSurface, role: str) -> list[Method]:
    """Methods the handler of ``role`` (a role of ``[connections]``: ``agent``, ``client``...) serves."""
    return connections.role(role).served(surface)
