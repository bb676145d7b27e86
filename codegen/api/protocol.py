"""What the runtime needs to know of one surface besides its methods.

The capability gates, the batches each side may send, the prompt echo helper
and the protocol names the JSON-RPC runtime relies on: each joins the IR with
a section of ``codegen/knowledge.toml`` and checks the two agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from .. import naming
from ..diagnostics import gap
from ..errors import CodegenError
from ..knowledge import section
from ..runtime._rpc import ProtocolNames
from ..schema.ir import ApiSurface, ObjectType, Ref, Side, UnionType
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
                target = surface.types.get(f.type.name) if isinstance(f.type, Ref) else None
                if isinstance(target, UnionType) and target.tag_wire_name:
                    for variant in target.variants:
                        kind = surface.types.get(variant.type.name) if isinstance(variant.type, Ref) else None
                        if kind is not None and kind.unstable and not target.unstable:
                            selector = f"{f.wire_name}.{target.tag_wire_name}={variant.tag}"
                            yield method.side, f"{method.wire_name} {selector}"


def gates(surface: ApiSurface, side: Side) -> list[GateSpec]:
    """The capability gates of ``knowledge.toml`` that apply to methods ``side`` handles.

    A gate on a field the release's params do not have gates nothing, and is left out.
    An experimental operation the table does not cover is a gap: it is sent without a check.
    """
    table = section("capability_gates").get(side, {})
    for handler, key in dict.fromkeys(experimental_operations(surface)):
        if handler == side and key not in table:
            gap(
                f"experimental operation {key!r} (handled by the {side}) has no capability gate",
                default="sent without a check",
                section=f"[capability_gates.{side}]",
                file=surface.schema_file,
            )
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
        _no_echo(surface, f"no {facts['notification']!r} notification to echo the prompt with")
        return None
    for f in call_fields(surface, carrier.name):
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
        section="[prompt_echo]",
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
