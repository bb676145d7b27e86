"""What the runtime needs to know of one surface besides its methods.

The capability gates, the batches each side may send, the prompt echo helper
and the protocol names the JSON-RPC runtime relies on: each joins the IR with
a section of ``codegen/knowledge.toml`` and checks the two agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .. import naming
from ..diagnostics import gap
from ..errors import CodegenError
from ..knowledge import KNOWLEDGE_FILE, section
from ..runtime._rpc import ProtocolNames
from ..schema.ir import ApiSurface, ObjectType, Ref, Side, UnionType, strip_nullable
from .methods import Param, annotation, call_fields


@dataclass(frozen=True)
class GateSpec:
    method: str
    field: str
    capability: str


def experimental_operations(surface: ApiSurface) -> Iterator[tuple[Side, str]]:
    """(handling side, gate key) of every **UNSTABLE** method, params field and tagged params kind.

    These are the operations ``[capability_gates]`` must cover: a peer may only
    send one when the other side advertised what enables it (or the table says
    nothing is needed).
    """
    for method in surface.methods:
        if method.side == "protocol":
            continue
        if method.unstable:
            yield method.side, method.wire_name
        for leaf in surface.classes_of(Ref(method.params)):
            for f in surface.all_fields(leaf):
                if f.unstable:
                    yield method.side, f"{method.wire_name} {f.wire_name}"
                target = surface.resolve(f.type)
                if isinstance(target, UnionType) and target.tag_wire_name:
                    for variant in target.variants:
                        kind = surface.resolve(variant.type)
                        if kind is not None and kind.unstable and not target.unstable:
                            selector = f"{f.wire_name}.{target.tag_wire_name}={variant.tag}"
                            yield method.side, f"{method.wire_name} {selector}"


def gates(surface: ApiSurface, side: Side) -> list[GateSpec]:
    """The capability gates of ``knowledge.toml`` that apply to methods ``side`` handles.

    A gate on a field the release's params do not have, or on a tag value none of its
    classes pins, gates nothing, and is left out.  An experimental operation the table
    does not cover is a gap: it is sent without a check.
    """
    table = section("capability_gates", surface.protocol_version).get(side, {})
    for handler, key in dict.fromkeys(experimental_operations(surface)):
        if handler == side and key not in table:
            gap(
                f"experimental operation {key!r} (handled by the {side}) has no capability gate",
                default="sent without a check",
                section=f"[v{surface.protocol_version}.capability_gates.{side}]",
                file=surface.schema_file,
            )
    params: dict[str, set[str]] = {}
    for m in surface.methods_for(side):
        params.setdefault(m.wire_name, set()).update(surface.classes_of(Ref(m.params)))
    out = []
    for key, capability in table.items():
        method, _, path = key.partition(" ")
        if method in params and capability and (not path or _has_path(surface, params[method], path)):
            out.append(GateSpec(method, path, capability))
    return sorted(out, key=lambda g: (g.method, g.field))


def _has_path(surface: ApiSurface, classes: Iterable[str], path: str) -> bool:
    """Whether a gate's dotted wire path names fields of ``classes`` (and its ``=value`` a tag they pin)."""
    fields_path, equals, value = path.partition("=")
    *parents, last = fields_path.split(".")
    names = set(classes)
    for key in parents:
        inner = [f for c in names for f in surface.all_fields(c) if f.wire_name == key]
        names = {name for f in inner for name in surface.classes_of(strip_nullable(f.type))}
    owners = [c for c in names if any(f.wire_name == last for f in surface.all_fields(c))]
    pinned = {str(t.value) for c in owners for t in surface.tags_of(c) if t.wire_name == last}
    return bool(owners) and (not equals or not pinned or value in pinned)


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
    """The echo helper's data, or ``None`` when the prompt response carries no message id.

    ``None`` too for a protocol version whose ``[prompt_echo]`` is declared none.
    """
    facts = section("prompt_echo", surface.protocol_version, optional=True)
    if facts is None:
        return None
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
        _no_echo(surface, f"no {facts['notification']!r} notification to echo the prompt with")
        return None
    for f in call_fields(surface, carrier.name):
        union = surface.resolve(f.type)
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
            for x in call_fields(surface, carrier.name)
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
    _no_echo(
        surface,
        f"{facts['method']} answers with {facts['response_field']} but no {facts['notification']} update "
        f"{facts['update']!r} carries it back",
    )
    return None


def _no_echo(surface: ApiSurface, message: str) -> None:
    gap(
        message,
        default="the bindings get no echo helper",
        section=f"[v{surface.protocol_version}.prompt_echo]",
        file=surface.schema_file,
    )


@dataclass(frozen=True)
class ProtocolConstant:
    """One :class:`ProtocolNames` the bindings define, and the connection sides that use it."""

    name: str
    fields: dict[str, str]
    """The keyword arguments of ``ProtocolNames``."""
    sides: tuple[Side, ...]
    """The sides whose connection uses it: ``capabilities`` is where it reads the peer's."""


@dataclass(frozen=True)
class RuntimeProtocol:
    """``[protocol]`` of the knowledge file as the bindings pass it to the runtime."""

    initialize: str
    constants: tuple[ProtocolConstant, ...]

    def constant_of(self, side: Side) -> str:
        """The constant the connection of ``side`` (its handler's side) uses."""
        return next(c.name for c in self.constants if side in c.sides)


def protocol_names(surface: ApiSurface) -> RuntimeProtocol:
    """``[protocol]`` of the knowledge file, checked against the surface: what the runtime relies on.

    A connection reads the capabilities its peer advertised: the agent's side from the initialize
    params (``client_capabilities``), the client's side from its result (``agent_capabilities``).
    When both fields have one name, both sides share one ``PROTOCOL``; otherwise each side gets its own.
    """
    where = f"[v{surface.protocol_version}.protocol] in codegen/knowledge.toml"
    protocol = section("protocol", surface.protocol_version)
    shared = [f.name for f in dataclasses.fields(ProtocolNames) if f.name != "capabilities"]
    expected = [*shared, "client_capabilities", "agent_capabilities"]
    if sorted(protocol) != sorted(expected):
        raise CodegenError(f"{where} must name exactly {', '.join(expected)}", file=KNOWLEDGE_FILE)
    by_wire = {m.wire_name: m for m in surface.methods}
    for key in ("initialize", "cancel_request"):
        if protocol[key] not in by_wire:
            raise CodegenError(
                f"the schema has no {protocol[key]!r} method ({key} of {where})", file=surface.schema_file
            )
    initialize, cancel = by_wire[protocol["initialize"]], by_wire[protocol["cancel_request"]]
    for type_name, key in (
        (cancel.params, "request_id"),
        (initialize.params, "client_capabilities"),
        (initialize.result, "agent_capabilities"),
    ):
        classes = surface.classes_of(Ref(type_name)) if type_name else ()
        if protocol[key] not in {f.wire_name for c in classes for f in surface.all_fields(c)}:
            raise CodegenError(
                f"{type_name} has no field {protocol[key]!r} ({key} of {where})", file=surface.schema_file
            )
    common = {name: protocol[name] for name in shared}
    peer_field: dict[Side, str] = {
        "client": protocol["agent_capabilities"],
        "agent": protocol["client_capabilities"],
    }
    if peer_field["client"] == peer_field["agent"]:
        both = ProtocolConstant(
            "PROTOCOL", {**common, "capabilities": peer_field["client"]}, ("client", "agent")
        )
        return RuntimeProtocol(protocol["initialize"], (both,))
    each = tuple(
        ProtocolConstant(
            f"{side.upper()}_SIDE_PROTOCOL", {**common, "capabilities": peer_field[side]}, (side,)
        )
        for side in ("client", "agent")
    )
    return RuntimeProtocol(protocol["initialize"], each)
