"""Methods: the JSON-RPC requests, responses and notifications each side handles.

They come from the message envelopes at the root of the schema (who sends
which request, response and notification), cross-checked with ``x-method``,
``x-side`` and the meta table.  Which sides there are, and which side handles
what each one sends, is ``[sides]`` of ``codegen/knowledge.toml``: nothing here
names a side.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from ... import naming
from ...diagnostics import gap
from ...errors import CodegenError, pointer_join
from ...knowledge import section as knowledge_section
from ..ir import Batch, Field, Method, MethodKind, Side
from .context import BuildContext, doc_of, list_of, properties_of

if TYPE_CHECKING:
    from .types import TypeBuilder

BOTH = "both"
"""The ``x-side`` of a method the agent and the client each handle (the schema's own word)."""
META_TABLE_SUFFIX = "Methods"
"""A meta table lists the methods of side ``s`` as ``<s>Methods``."""


def handlers() -> dict[str, Side]:
    """Each side of ``[sides]`` -> the side that handles what it sends."""
    return {side: str(entry["handler"]) for side, entry in knowledge_section("sides").items()}


class MethodBuilder:
    """Builds the methods, batches and extension types of one schema file."""

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx

    def envelope_payloads(self, node: Any, pointer: str) -> Iterator[tuple[str, str, str]]:
        """``(def name, title, description)`` of every payload a params/result schema lists."""
        if not isinstance(node, dict):
            return
        if "$ref" in node:
            yield self.ctx.resolve(node["$ref"], pointer_join(pointer, "$ref")), "", ""
            return
        for key in ("anyOf", "oneOf", "allOf"):
            items = node.get(key)
            if isinstance(items, list):
                for index, item in enumerate(items):
                    for def_name, title, doc in self.envelope_payloads(
                        item, pointer_join(pointer, key, index)
                    ):
                        yield def_name, title or str(item.get("title", "")), doc or doc_of(item)

    def envelope(self, node: Mapping[str, Any], pointer: str) -> dict[str, list[tuple[str, str, str, str]]]:
        """Payloads of one root message kind, by role (Request/Response/Notification)."""
        found: dict[str, list[tuple[str, str, str, str]]] = {}
        targets: list[tuple[Mapping[str, Any], str, str]] = []
        members = node.get("anyOf")
        for index, member in enumerate(members if isinstance(members, list) else []):
            if not isinstance(member, dict):
                continue
            member_pointer = pointer_join(pointer, "anyOf", index)
            role = str(member.get("title", ""))
            for ref_index, item in enumerate(list_of(member.get("allOf"))):
                if isinstance(item, dict) and "$ref" in item:
                    def_name = self.ctx.resolve(
                        item["$ref"], pointer_join(member_pointer, "allOf", ref_index, "$ref")
                    )
                    targets.append((self.ctx.defs[def_name], role, pointer_join("/$defs", def_name)))
        if "params" in properties_of(node):
            targets.append((node, "Notification", pointer))
        for target, role, target_pointer in targets:
            props = properties_of(target)
            carriers: list[tuple[Any, str]] = []
            if "params" in props:
                carriers.append((props["params"], pointer_join(target_pointer, "properties", "params")))
            for index, branch in enumerate(
                target.get("anyOf", []) if isinstance(target.get("anyOf"), list) else []
            ):
                if isinstance(branch, dict) and "result" in properties_of(branch):
                    carriers.append(
                        (
                            branch["properties"]["result"],
                            pointer_join(target_pointer, "anyOf", index, "properties", "result"),
                        )
                    )
            for carrier, carrier_pointer in carriers:
                for def_name, title, doc in self.envelope_payloads(carrier, carrier_pointer):
                    found.setdefault(role, []).append((def_name, title, doc, carrier_pointer))
        return found

    def build_methods(self) -> tuple[tuple[Method, ...], tuple[Batch, ...], dict[str, str]]:
        roots = self.ctx.root.get("anyOf")
        if not isinstance(roots, list):
            raise self.ctx.error("the schema root has no 'anyOf' list of message kinds", "")
        sent: dict[str, dict[str, list[tuple[str, str, str, str]]]] = {}
        batches: list[Batch] = []
        for index, member in enumerate(roots):
            pointer = pointer_join("/anyOf", index)
            if not isinstance(member, dict):
                raise self.ctx.error("a message kind must be an object", pointer)
            title = str(member.get("title", ""))
            if member.get("type") == "array":
                items = member.get("items")
                members = list_of(items.get("anyOf")) if isinstance(items, dict) else []
                kinds = tuple(str(m.get("title", "")) for m in members if isinstance(m, dict))
                sender = naming.snake(title).split("_")[0] if title else ""
                batches.append(Batch(name=title, sender=sender, items=kinds))
                continue
            sender = naming.snake(title).split("_")[0]
            for role, payloads in self.envelope(member, pointer).items():
                sent.setdefault(sender, {}).setdefault(role, []).extend(payloads)
        methods: list[Method] = []
        extensions: dict[str, str] = {}
        responses: dict[tuple[str, str], str] = {}
        for sender, roles in sent.items():
            for def_name, _title, _doc_text, _ptr in roles.get("Response", []):
                wire = self.ctx.defs[def_name].get("x-method")
                if isinstance(wire, str):
                    responses[(sender, wire)] = def_name
                else:
                    extensions.setdefault("response", self.ctx.class_of[def_name])
        unbound: dict[str, set[str]] = {}
        """Side -> the methods of a side the knowledge does not know (they get models only)."""
        sides = handlers()
        for sender in sorted(sent):
            roles = sent[sender]
            handler = sides.get(sender)
            for role, kind in (("Request", "request"), ("Notification", "notification")):
                for def_name, _title, doc, _carrier in roles.get(role, []):
                    node = self.ctx.defs[def_name]
                    def_pointer = pointer_join("/$defs", def_name)
                    wire = node.get("x-method")
                    if wire is None:
                        extensions.setdefault(kind, self.ctx.class_of[def_name])
                        continue
                    if not isinstance(wire, str):
                        raise self.ctx.error(
                            "'x-method' must be a string", pointer_join(def_pointer, "x-method")
                        )
                    side = node.get("x-side")
                    if handler is None or (isinstance(side, str) and side not in sides and side != BOTH):
                        unbound.setdefault(sender if handler is None else side, set()).add(wire)
                        continue
                    if side not in (handler, BOTH):
                        said = "is missing" if side is None else f"is {side!r}"
                        raise self.ctx.error(
                            f"'x-side' {said}, but the schema routes this {kind} "
                            f"from the {sender} to the {handler}",
                            pointer_join(def_pointer, "x-side"),
                        )
                    result = None
                    if kind == "request":
                        response = responses.get((handler, wire))
                        if response is None:
                            raise self.ctx.error(
                                f"x-method {wire!r} has a request but no matching response "
                                f"sent by the {handler}",
                                def_pointer,
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
                            doc=doc or doc_of(node),
                            unstable=self.ctx.type_is_unstable(def_name, node) or self.method_is_new(wire),
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
                raise self.ctx.error(f"x-method {wire!r} {what}", pointer_join("/$defs", def_name))
        methods.sort(key=lambda m: (m.side, m.wire_name, m.kind))
        return tuple(methods), tuple(batches), dict(sorted(extensions.items()))

    def envelope_senders(self) -> dict[str, str]:
        """Class name of each envelope a root message kind refers to -> the side sending it."""
        found: dict[str, str] = {}
        sides = handlers()
        for index, member in enumerate(self.ctx.root.get("anyOf", [])):
            if not isinstance(member, dict) or member.get("type") == "array":
                continue
            sender = naming.snake(str(member.get("title", ""))).split("_")[0]
            if sender not in sides:
                continue
            for role_index, role in enumerate(member.get("anyOf", [])):
                items = role.get("allOf", []) if isinstance(role, dict) else []
                for item_index, item in enumerate(items if isinstance(items, list) else []):
                    if isinstance(item, dict) and "$ref" in item:
                        where = pointer_join(
                            "/anyOf", index, "anyOf", role_index, "allOf", item_index, "$ref"
                        )
                        found[self.ctx.class_of[self.ctx.resolve(item["$ref"], where)]] = sender
        return dict(sorted(found.items()))

    def message_fields(self, types: TypeBuilder) -> dict[str, tuple[Field, ...]]:
        """Each side -> the properties beside its root message kind's ``anyOf`` (``jsonrpc``)."""
        found: dict[str, tuple[Field, ...]] = {}
        for index, member in enumerate(list_of(self.ctx.root.get("anyOf"))):
            if not isinstance(member, dict) or member.get("type") == "array" or "properties" not in member:
                continue
            title = str(member.get("title", ""))
            part = types.inline_part(member, pointer_join("/anyOf", index))
            found[naming.snake(title).split("_")[0]] = types.combine([part], naming.pascal(title), None)[0]
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
