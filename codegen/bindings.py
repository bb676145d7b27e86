"""Emitter: the typed method bindings of one surface (``bindings.py`` and its runtime).

Everything is derived from the IR (methods, their params and result types,
union shapes, batches) plus the few facts of ``codegen/knowledge.toml``
(the handshake method, capability gates, the prompt echo); the templates in
``templates/bindings`` only lay the code out.

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

import ast
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import models, naming, pysource
from .errors import CodegenError
from .ir import (
    AliasType,
    AnyOf,
    ApiSurface,
    Field,
    Method,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    Side,
    TypeExpr,
    UnionType,
)
from .knowledge import section
from .runtime._rpc import ProtocolNames


def annotation(expr: TypeExpr) -> str:
    """A type expression as a Python annotation inside the bindings module."""
    return pysource.annotation(expr, module="schema")


join_types = pysource.join_types

if TYPE_CHECKING:
    from .package import Module

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "bindings"
META = "_meta"

# names the generated methods use besides their parameters
_LOCALS = frozenset({"self", "kwargs", "arguments", "request", "result"})


def accepts_none(surface: ApiSurface, expr: TypeExpr, seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``None`` is a valid value of the expression."""
    if isinstance(expr, Nullable):
        return True
    if isinstance(expr, Scalar):
        return expr.type in ("any", "null")
    if isinstance(expr, AnyOf):
        return any(accepts_none(surface, m, seen) for m in expr.members)
    if isinstance(expr, Ref) and expr.name not in seen:
        target = surface.types.get(expr.name)
        if isinstance(target, AliasType):
            return accepts_none(surface, target.target, seen | {expr.name})
        if isinstance(target, UnionType):
            return any(accepts_none(surface, v.type, seen | {expr.name}) for v in target.variants)
    return False


# --- method signatures ---------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    name: str
    annotation: str
    default: str | None
    """``None`` for a required parameter, else the default's source (``None`` or ``UNSET``)."""

    @property
    def source(self) -> str:
        if self.default is None:
            return f"{self.name}: {self.annotation}"
        return f"{self.name}: {self.annotation} = {self.default}"


@dataclass(frozen=True)
class UnionShape:
    """What the template needs to build a union request: the ``UnionParams`` constant."""

    constant: str
    tag: str
    known: tuple[tuple[str, str], ...]
    """(tag literal, branch source) pairs."""
    other: str | None
    infer_tag: bool


@dataclass
class MethodSpec:
    method: Method
    name: str
    params: list[Param]
    doc: str
    params_type: str
    result_type: str | None
    union: UnionShape | None = None

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
        star = ["*"] if self.params else []
        return ", ".join(["self", *star, *(p.source for p in self.params), "**kwargs: Any"])


def _fields(surface: ApiSurface, name: str) -> tuple[Field, ...]:
    return tuple(f for f in surface.all_fields(name) if f.wire_name != META)


def _leaves(surface: ApiSurface, union: UnionType) -> Iterator[tuple[object, list[ObjectType]]]:
    """(tag, the objects of that branch) for every branch, the catch-all last (tag ``None``)."""
    branches = [(v.tag, v) for v in union.variants]
    if union.catch_all is not None:
        branches.append((None, union.catch_all))
    for tag, variant in branches:
        found = surface.types.get(variant.type.name) if isinstance(variant.type, Ref) else None
        if isinstance(found, ObjectType):
            yield tag, [found]
        elif isinstance(found, UnionType) and not found.tagged and found.catch_all is None:
            members = [
                surface.types.get(v.type.name) if isinstance(v.type, Ref) else None for v in found.variants
            ]
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
    keys = tuple(f.py_name for f in _fields(surface, member.name) if f.required and f.wire_name not in theirs)
    if not keys:
        raise CodegenError(f"union request {owner}: {member.name} has no field of its own to select it by")
    return keys


def method_spec(surface: ApiSurface, method: Method) -> MethodSpec:
    name = naming.method_name(method.wire_name, method.kind, method.params)
    params_type = surface.types[method.params]
    result = f"schema.{method.result}" if method.result else None
    doc = method.doc or params_type.doc
    if isinstance(params_type, ObjectType):
        fields = _fields(surface, params_type.name)
        ordered = [f for f in fields if f.required] + [f for f in fields if not f.required]
        params = [
            (
                Param(f.py_name, annotation(f.type), None)
                if f.required
                else Param(f.py_name, join_types([annotation(f.type), "None"]), "None")
            )
            for f in ordered
        ]
        return MethodSpec(method, name, params, doc, f"schema.{params_type.name}", result)
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
        and len({frozenset(f.wire_name for f in _fields(surface, objs[0].name)) for _t, objs in known}) == 1
    )
    by_name: dict[str, list[tuple[ObjectType, Field]]] = {}
    for leaf in leaves:
        for f in _fields(surface, leaf.name):
            by_name.setdefault(f.py_name, []).append((leaf, f))
    params: list[Param] = []
    for py_name, found in by_name.items():
        types = join_types([annotation(f.type) for _leaf, f in found])
        everywhere = len(found) == len(leaves) and all(f.required for _leaf, f in found)
        if py_name == tag:
            everywhere = not infer_tag
        if everywhere:
            params.append(Param(py_name, types, None))
        elif any(f.required and accepts_none(surface, f.type) for _leaf, f in found):
            params.append(Param(py_name, join_types([types, "Unset"]), "UNSET"))
        else:
            params.append(Param(py_name, join_types([types, "None"]), "None"))
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
    shape = UnionShape(
        constant="_" + naming.snake(union.name).upper(),
        tag=tag,
        known=tuple((pysource.literal(t), branch_source(objs)) for t, objs in known),
        other=other,
        infer_tag=infer_tag,
    )
    return MethodSpec(method, name, params, doc, f"schema.{union.name}", result, union=shape)


# --- the surface -----------------------------------------------------------------------


def handled_by(surface: ApiSurface, side: Side) -> list[Method]:
    """Methods the given side handles: its own and the protocol's."""
    return [m for m in surface.methods if m.side in (side, "protocol")]


def specs(surface: ApiSurface, side: Side) -> list[MethodSpec]:
    out = [method_spec(surface, m) for m in handled_by(surface, side)]
    names: dict[str, str] = {}
    for spec in out:
        if spec.name in names:
            raise CodegenError(
                f"methods {names[spec.name]!r} and {spec.wire!r} both get the Python name {spec.name!r}",
                file=surface.schema_file,
            )
        names[spec.name] = spec.wire
    return out


@dataclass(frozen=True)
class GateSpec:
    method: str
    field: str
    capability: str


def gates(surface: ApiSurface, side: Side) -> list[GateSpec]:
    """The capability gates of ``knowledge.toml`` that apply to methods ``side`` handles.

    A gate on a field the release's params do not have gates nothing, and is left out.
    """
    table = section("capability_gates").get(side, {})
    fields: dict[str, set[str]] = {}
    for m in surface.methods_for(side):
        fields.setdefault(m.wire_name, set()).update(
            f.wire_name for name in surface.classes_of(Ref(m.params)) for f in surface.all_fields(name)
        )
    out = []
    for key, capability in table.items():
        method, _, path = key.partition(" ")
        if (
            method in fields
            and capability
            and (not path or path.split(".")[0].split("=")[0] in fields[method])
        ):
            out.append(GateSpec(method, path, capability))
    return sorted(out, key=lambda g: (g.method, g.field))


def batch_kinds(surface: ApiSurface, sender: str) -> list[str]:
    """``call`` and/or ``response``: the batches the schema lets ``sender`` send."""
    kinds: set[str] = set()
    for batch in surface.batches:
        if batch.sender != sender:
            continue
        for item in batch.items:
            kinds.add("response" if item in ("Result", "Error") else "call")
    return sorted(kinds)


@dataclass(frozen=True)
class Echo:
    """The prompt echo helper: which session update carries the user message back."""

    notify: str
    """Python name of the notification that carries the update."""
    update_param: str
    other_params: tuple[Param, ...]
    update_class: str
    id_field: str
    content_field: str
    content_type: str
    id_type: str


def prompt_echo(surface: ApiSurface) -> Echo | None:
    """The echo helper's data, or ``None`` when the prompt response carries no message id."""
    facts = section("prompt_echo")
    method = next((m for m in surface.methods if m.wire_name == facts["method"] and m.result), None)
    if method is None or method.result is None:
        return None
    response = surface.types.get(method.result)
    if not isinstance(response, ObjectType) or not any(
        f.wire_name == facts["response_field"] for f in surface.all_fields(response.name)
    ):
        return None
    notify = next((m for m in surface.methods if m.wire_name == facts["notification"]), None)
    carrier = surface.types.get(notify.params) if notify else None
    if notify is None or not isinstance(carrier, ObjectType):
        raise CodegenError(
            f"no {facts['notification']!r} notification to echo the prompt with", file=surface.schema_file
        )
    for f in _fields(surface, carrier.name):
        union = surface.types.get(f.type.name) if isinstance(f.type, Ref) else None
        if not isinstance(union, UnionType):
            continue
        variant = next((v for v in union.variants if v.tag == facts["update"]), None)
        if variant is None or not isinstance(variant.type, Ref):
            continue
        fields = {x.wire_name: x for x in surface.all_fields(variant.type.name)}
        id_field = fields.get(facts["update_id_field"])
        content = fields.get(facts["update_content_field"])
        if id_field is None or content is None:
            continue
        others = tuple(
            Param(x.py_name, annotation(x.type), None)
            for x in _fields(surface, carrier.name)
            if x.required and x is not f
        )
        return Echo(
            naming.method_name(notify.wire_name, notify.kind, notify.params),
            f.py_name,
            others,
            variant.type.name,
            id_field.py_name,
            content.py_name,
            annotation(content.type),
            annotation(id_field.type),
        )
    raise CodegenError(
        f"{facts['method']} answers with {facts['response_field']} but no {facts['notification']} update "
        f"{facts['update']!r} carries it back (see [prompt_echo] in codegen/knowledge.toml)",
        file=surface.schema_file,
    )


def protocol_names(surface: ApiSurface) -> dict[str, str]:
    """``[protocol]`` of the knowledge file, checked against the surface: what the runtime relies on."""
    protocol = section("protocol")
    expected = [f.name for f in dataclasses.fields(ProtocolNames)]
    if sorted(protocol) != sorted(expected):
        raise CodegenError(f"[protocol] in codegen/knowledge.toml must name exactly {', '.join(expected)}")
    by_wire = {m.wire_name: m for m in surface.methods}
    for key in ("initialize", "cancel_request"):
        if protocol[key] not in by_wire:
            raise CodegenError(
                f"the schema has no {protocol[key]!r} method ([protocol] {key} in codegen/knowledge.toml)",
                file=surface.schema_file,
            )
    initialize, cancel = by_wire[protocol["initialize"]], by_wire[protocol["cancel_request"]]
    for type_name, key in (
        (cancel.params, "request_id"),
        (initialize.params, "capabilities"),
        (initialize.result, "capabilities"),
    ):
        classes = surface.classes_of(Ref(type_name)) if type_name else ()
        if protocol[key] not in {f.wire_name for c in classes for f in surface.all_fields(c)}:
            raise CodegenError(
                f"{type_name} has no field {protocol[key]!r} ([protocol] {key} in codegen/knowledge.toml)",
                file=surface.schema_file,
            )
    return {name: protocol[name] for name in expected}


def render_bindings(surface: ApiSurface) -> str:
    protocol = protocol_names(surface)
    echo = prompt_echo(surface)
    context = {
        "surface": surface,
        "agent_methods": specs(surface, "agent"),
        "client_methods": specs(surface, "client"),
        "agent_gates": gates(surface, "agent"),
        "client_gates": gates(surface, "client"),
        "agent_batches": batch_kinds(surface, "agent"),
        "client_batches": batch_kinds(surface, "client"),
        "protocol": protocol,
        "echo": echo,
    }
    body = pysource.template_environment(TEMPLATES).get_template("bindings.py.jinja2").render(**context)
    _check_members(surface, body)
    imports = pysource.import_block(pysource.used_names(body), _IMPORTS)
    source = models.header(surface, "Typed method bindings.") + module_doc(surface) + "\n\n" + imports + body
    return models.format_source(source)


def module_doc(surface: ApiSurface) -> str:
    return pysource.docstring(
        f"ACP {surface.release} ({surface.stability} schema): typed method bindings.\n\n"
        ":class:`Agent` and :class:`Client` describe the handlers of each side: every method takes\n"
        "the fields of its params as keyword-only, snake_case parameters and returns its response\n"
        "model (``None`` for a notification).  Subclassing them is optional; a method left out\n"
        "answers method-not-found (a notification is ignored).  Extra keyword arguments carry the\n"
        'message\'s ``_meta`` keys; ``kwargs["_meta"]`` is the whole ``_meta`` when the message had one.\n\n'
        ":class:`ClientSideConnection` calls the agent's methods and :class:`AgentSideConnection`\n"
        "the client's, with the same signatures; extra keyword arguments become ``_meta`` keys\n"
        "(``_meta=...`` sets it whole)."
    )


def _check_members(surface: ApiSurface, body: str) -> None:
    """Refuse a method whose Python name is a member the template writes (``close``, ``ext_method``...)."""
    for node in ast.parse(body).body:
        if not isinstance(node, ast.ClassDef):
            continue
        seen: set[str] = set()
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if item.name in seen:
                    raise CodegenError(
                        f"{node.name}.{item.name}: a method of the schema gets the name of a member "
                        "the bindings define themselves",
                        file=surface.schema_file,
                    )
                seen.add(item.name)


# name -> the module it comes from (see pysource.import_block); only the names the module uses are imported
_IMPORTS: dict[str, str] = {
    "asyncio": "",
    "uuid": "",
    "Callable": "collections.abc",
    "Mapping": "collections.abc",
    "Sequence": "collections.abc",
    "Any": "typing",
    "Final": "typing",
    "Literal": "typing",
    "Protocol": "typing",
    "schema": ".",
    "UNSET": "._params",
    "Scopes": "._params",
    "UnionParams": "._params",
    "Unset": "._params",
    "build": "._params",
    "omit": "._params",
    "DEFAULT_MAX_MESSAGE_BYTES": "._rpc",
    "Connection": "._rpc",
    "Gate": "._rpc",
    "ProtocolNames": "._rpc",
    "RequestError": "._rpc",
    "Route": "._rpc",
    "Writer": "._rpc",
    "handler_of": "._rpc",
    "stdio_streams": "._streams",
}


def emit_bindings(surface: ApiSurface) -> dict[str, Module]:
    """The emitter (see :data:`codegen.package.EMITTERS`): the bindings and the runtime they run on.

    A schema that defines no methods at all (only types) gets models and no bindings.
    """
    from .package import Module, runtime_module

    if not surface.methods:
        return {}
    return {
        "bindings.py": Module(
            render_bindings(surface),
            exports=(
                "Agent",
                "AgentSideConnection",
                "Client",
                "ClientSideConnection",
                "connect_to_agent",
                "connect_to_client",
                "run_agent",
            ),
            expose=True,
        ),
        "_rpc.py": runtime_module(
            surface, "_rpc.py", exports=("CapabilityError", "RequestError", "current_request_id")
        ),
        "_params.py": runtime_module(surface, "_params.py", exports=("UNSET", "Unset")),
        "_streams.py": runtime_module(
            surface, "_streams.py", exports=("memory_pipe", "spawn", "stdio_streams")
        ),
    }
