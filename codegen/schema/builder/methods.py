"""Methods: the JSON-RPC requests, responses and notifications each side handles.

They come from the message envelopes at the root of the schema (who sends
which request, response and notification), cross-checked with ``x-method``,
``x-side`` and the meta table.  Which sides there are, and which side handles
what each one sends, is ``[sides]`` of ``codegen/knowledge.toml``: nothing here
names a side.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

from ... import knowledge, naming
from ...diagnostics import gap
from ...errors import CodegenError, pointer_join
from ..ir import Batch, Field, Method, MethodKind, Side
from .context import BuildContext, properties_of
from .node import Node, Pointer

if TYPE_CHECKING:
    from .types import TypeBuilder

BOTH = "both"
"""The ``x-side`` of a method the agent and the client each handle (the schema's own word)."""
META_TABLE_SUFFIX = "Methods"
"""A meta table lists the methods of side ``s`` as ``<s>Methods``."""


def handlers() -> dict[str, Side]:
    """Each side of ``[sides]`` -> the side that handles what it sends."""
    return knowledge.handlers()


def side_of_title(title: str) -> str:
    """The side a root message kind is sent by: the first word of its title (``AgentRequest``: agent).

    The schema names each message kind after its sender and nothing else says who sends it;
    ``[sides]`` of the knowledge file lists the sides this names.
    """
    return naming.snake(title).split("_")[0]


@dataclass(frozen=True)
class Envelope:
    """One payload a root message kind carries: the ``$defs`` type of an envelope's params or result."""

    role: str
    """``Request``, ``Response`` or ``Notification``: the title of the member that holds the envelope."""
    payload: str
    """The ``$defs`` name of the type it carries."""
    title: str
    doc: str
    carrier: Pointer
    """Where the ``params`` or ``result`` schema that lists the type is."""


class MethodBuilder:
    """Builds the methods, batches and extension types of one schema file."""

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx

    def envelope_payloads(self, node: Node) -> Iterator[tuple[str, str, str]]:
        """``(def name, title, description)`` of every payload a params/result schema lists."""
        if not node.is_object:
            return
        if "$ref" in node:
            yield self.ctx.resolve(node.child("$ref")), "", ""
            return
        for key in ("anyOf", "oneOf", "allOf"):
            for item in node.entries(key):
                for def_name, title, doc in self.envelope_payloads(item):
                    yield def_name, title or item.title(), doc or item.doc()

    def envelopes(self, node: Node) -> list[Envelope]:
        """The payloads of one root message kind, each with the role of its envelope."""
        targets = [
            (self.ctx.definition(self.ctx.resolve(item.child("$ref"))), member.title())
            for member in node.entries("anyOf")
            if member.is_object
            for item in member.entries("allOf")
            if item.is_object and "$ref" in item
        ]
        if "params" in properties_of(node):
            targets.append((node, "Notification"))
        found: list[Envelope] = []
        for target, role in targets:
            props = properties_of(target)
            carriers = [props["params"]] if "params" in props else []
            carriers += [
                branch.child("properties", "result")
                for branch in target.entries("anyOf")
                if branch.is_object and "result" in properties_of(branch)
            ]
            found += [
                Envelope(role, def_name, title, doc, carrier.pointer)
                for carrier in carriers
                for def_name, title, doc in self.envelope_payloads(carrier)
            ]
        return found

    def build_methods(self) -> tuple[tuple[Method, ...], tuple[Batch, ...], dict[str, str]]:
        if not isinstance(self.ctx.root.get("anyOf"), list):
            raise self.ctx.error("the schema root has no 'anyOf' list of message kinds", self.ctx.root)
        sent: dict[str, list[Envelope]] = {}
        batches: list[Batch] = []
        for member in self.ctx.root.entries("anyOf"):
            if not member.is_object:
                raise self.ctx.error("a message kind must be an object", member)
            title = member.title()
            if member.get("type") == "array":
                items = member.child("items") if isinstance(member.get("items"), dict) else None
                kinds = tuple(m.title() for m in (items.entries("anyOf") if items else []) if m.is_object)
                batches.append(Batch(name=title, sender=side_of_title(title), items=kinds))
                continue
            sent.setdefault(side_of_title(title), []).extend(self.envelopes(member))
        methods: list[Method] = []
        extensions: dict[str, str] = {}
        responses: dict[tuple[str, str], str] = {}
        response_docs: dict[tuple[str, str], str] = {}
        for sender, envelopes in sent.items():
            for envelope in envelopes:
                if envelope.role != "Response":
                    continue
                wire = self.ctx.definition(envelope.payload).get("x-method")
                if isinstance(wire, str):
                    responses[(sender, wire)] = envelope.payload
                    response_docs[(sender, wire)] = envelope.doc
                else:
                    extensions.setdefault("response", self.ctx.class_of[envelope.payload])
        unbound: dict[str, set[str]] = {}
        """Side -> the methods of a side the knowledge does not know (they get models only)."""
        sides = handlers()
        for sender in sorted(sent):
            handler = sides.get(sender)
            for role, kind in (("Request", "request"), ("Notification", "notification")):
                for envelope in sent[sender]:
                    if envelope.role != role:
                        continue
                    def_name = envelope.payload
                    node = self.ctx.definition(def_name)
                    wire = node.get("x-method")
                    if wire is None:
                        extensions.setdefault(kind, self.ctx.class_of[def_name])
                        continue
                    if not isinstance(wire, str):
                        raise self.ctx.error("'x-method' must be a string", node.at("x-method"))
                    side = node.get("x-side")
                    if handler is None or (isinstance(side, str) and side not in sides and side != BOTH):
                        unbound.setdefault(sender if handler is None else side, set()).add(wire)
                        continue
                    if side not in (handler, BOTH):
                        said = "is missing" if side is None else f"is {side!r}"
                        raise self.ctx.error(
                            f"'x-side' {said}, but the schema routes this {kind} "
                            f"from the {sender} to the {handler}",
                            node.at("x-side"),
                        )
                    result = None
                    if kind == "request":
                        response = responses.get((handler, wire))
                        if response is None:
                            raise self.ctx.error(
                                f"x-method {wire!r} has a request but no matching response "
                                f"sent by the {handler}",
                                node,
                            )
                        result = self.ctx.class_of[response]
                    methods.append(
                        Method(
                            wire_name=wire,
                            key="",
                            side=handler,
                            kind=cast(MethodKind, kind),
                            params=self.ctx.class_of[def_name],
                            result=result,
                            doc=envelope.doc or node.doc(),
                            unstable=self.ctx.type_is_unstable(def_name, node) or self.method_is_new(wire),
                            envelope_doc=envelope.doc,
                            result_envelope_doc=response_docs.get((handler, wire), "") if result else "",
                        )
                    )
        methods = self.attach_meta_keys(methods)
        for side, wires in sorted(unbound.items()):
            gap(
                f"the schema has methods of a side the knowledge does not know, {side!r}: "
                + ", ".join(sorted(wires)),
                default="their types get models, the methods get no bindings",
                section="[sides]",
                file=self.ctx.doc.path,
            )
        unbound_wires = {wire for wires in unbound.values() for wire in wires}
        for def_name, node in self.ctx.defs.items():
            wire = node.get("x-method")
            if (
                isinstance(wire, str)
                and wire not in unbound_wires
                and not any(
                    wire == m.wire_name and self.ctx.class_of[def_name] in (m.params, m.result)
                    for m in methods
                )
            ):
                what = (
                    "is a response with no request of that method"
                    if def_name in responses.values()
                    else "is not a request, response or notification of any message kind"
                )
                raise self.ctx.error(f"x-method {wire!r} {what}", node)
        methods.sort(key=lambda m: (m.side, m.wire_name, m.kind))
        return tuple(methods), tuple(batches), dict(sorted(extensions.items()))

    def envelope_senders(self) -> dict[str, str]:
        """Class name of each envelope a root message kind refers to -> the side sending it."""
        found: dict[str, str] = {}
        sides = handlers()
        for member in self.ctx.root.entries("anyOf"):
            if not member.is_object or member.get("type") == "array":
                continue
            sender = side_of_title(member.title())
            if sender not in sides:
                continue
            for role in member.entries("anyOf"):
                for item in role.entries("allOf") if role.is_object else []:
                    if item.is_object and "$ref" in item:
                        found[self.ctx.class_of[self.ctx.resolve(item.child("$ref"))]] = sender
        return dict(sorted(found.items()))

    def message_fields(self, types: TypeBuilder) -> dict[str, tuple[Field, ...]]:
        """Each side -> the properties beside its root message kind's ``anyOf`` (``jsonrpc``)."""
        found: dict[str, tuple[Field, ...]] = {}
        for member in self.ctx.root.entries("anyOf"):
            if not member.is_object or member.get("type") == "array" or "properties" not in member:
                continue
            part = types.inline_part(member)
            found[side_of_title(member.title())] = types.combine([part], naming.pascal(member.title()), None)[
                0
            ]
        return dict(sorted(found.items()))

    def method_is_new(self, wire: str) -> bool:
        if self.ctx.stability == "stable" or self.ctx.baseline is None:
            return False
        return not any(m.wire_name == wire for m in self.ctx.baseline.methods)

    def attach_meta_keys(self, methods: list[Method]) -> list[Method]:
        meta = self.ctx.meta.data
        if not isinstance(meta, dict):
            raise CodegenError("the meta table must be a JSON object", file=self.ctx.meta.path, pointer="")
        keyed: list[Method] = []
        known = handlers()
        listed = {key.removesuffix(META_TABLE_SUFFIX) for key in meta if key.endswith(META_TABLE_SUFFIX)}
        for side in [s for s in known if s in listed or any(m.side == s for m in methods)]:
            table_name = side + META_TABLE_SUFFIX
            table = meta.get(table_name, {})
            if not isinstance(table, dict):
                raise CodegenError(
                    f"'{table_name}' must be an object", file=self.ctx.meta.path, pointer=f"/{table_name}"
                )
            wires = {m.wire_name for m in methods if m.side == side}
            for key, wire in table.items():
                if not isinstance(wire, str):
                    where = pointer_join(f"/{table_name}", key)
                    raise CodegenError(
                        "a method name must be a string", file=self.ctx.meta.path, pointer=where
                    )
                if wire not in wires:
                    raise CodegenError(
                        f"meta names method {wire!r} for the {side} but the schema has no type for it",
                        file=self.ctx.meta.path,
                        pointer=pointer_join(f"/{table_name}", key),
                    )
            by_wire = {wire: key for key, wire in table.items()}
            for method in methods:
                if method.side != side:
                    continue
                if method.wire_name not in by_wire:
                    raise CodegenError(
                        f"the schema defines {method.kind} {method.wire_name!r} for the {side} "
                        f"but '{table_name}' does not list it",
                        file=self.ctx.meta.path,
                        pointer=f"/{table_name}",
                    )
                keyed.append(replace(method, key=by_wire[method.wire_name]))
        return keyed
