"""What the runtime needs to know of one surface besides its methods.

The capability gates, the batches each side may send, the prompt echo helper
and the protocol names the JSON-RPC runtime relies on: each joins the IR with
a section of ``codegen/knowledge.toml`` and checks the two agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .. import knowledge, naming, pysource
from ..diagnostics import gap
from ..errors import CodegenError
from ..knowledge import CapabilityGates, GateKey, Protocol
from ..schema.ir import ApiSurface, Method, ObjectType, Ref, Side, TypeExpr, UnionType, strip_nullable
from .connections import Role, present_roles, roles
from .methods import Param, annotation, annotation_names, call_fields


@dataclass(frozen=True)
class GateSpec:
    method: str
    field: str
    capability: str


def experimental_operations(surface: ApiSurface) -> Iterator[tuple[Side, GateKey]]:
    """(handling side, gate key) of every **UNSTABLE** method, params field and tagged params kind.

    These are the operations ``[capability_gates]`` must cover: a peer may only
    send one when the other side advertised what enables it (or the table says
    nothing is needed).
    """
    for method in surface.methods:
        if method.unstable:
            yield method.side, GateKey(method.wire_name)
        for leaf in surface.classes_of(Ref(method.params)):
            for f in surface.all_fields(leaf):
                if f.unstable:
                    yield method.side, GateKey(method.wire_name, (f.wire_name,))
                target = surface.resolve(f.type)
                if isinstance(target, UnionType) and target.tag_wire_name:
                    for variant in target.variants:
                        kind = surface.resolve(variant.type)
                        if kind is not None and kind.unstable and not target.unstable:
                            path = (f.wire_name, target.tag_wire_name)
                            yield method.side, GateKey(method.wire_name, path, str(variant.tag))


def gates(surface: ApiSurface, side: Side, table: CapabilityGates | None = None) -> list[GateSpec]:
    """The capability gates of ``knowledge.toml`` (``table``) that apply to methods ``side`` handles.

    A gate on a field the release's params do not have, or on a tag value none of its
    classes pins, gates nothing, and is left out.  An experimental operation the table
    does not cover is a gap: it is sent without a check.
    """
    table = table if table is not None else knowledge.capability_gates(surface.protocol_version)
    for handler, key in dict.fromkeys(experimental_operations(surface)):
        if handler == side and not table.covers(side, key):
            gap(
                f"experimental operation {str(key)!r} (handled by the {side}) has no capability gate",
                default="sent without a check",
                section=f"[v{surface.protocol_version}.capability_gates.{side}]",
                file=surface.schema_file,
            )
    params: dict[str, set[str]] = {}
    for m in surface.methods_for(side):
        params.setdefault(m.wire_name, set()).update(surface.classes_of(Ref(m.params)))
    advertised = capabilities_of(surface, side)
    out = []
    for gate in table.of(side):
        key = gate.key
        if (
            key.method in params
            and gate.capability
            and (not key.path or _has_path(surface, params[key.method], key))
        ):
            if advertised is not None and not _resolves(surface, advertised, gate.capability.split(".")):
                owner = advertised.name if isinstance(advertised, Ref) else annotation(advertised)
                gap(
                    f"the capability gate {str(key)!r} = {gate.capability!r} names no field of the {side}'s "
                    f"capabilities ({owner}): a stale entry would refuse the operation to every peer of this "
                    "release",
                    default="sent without a check",
                    section=f"[v{surface.protocol_version}.capability_gates.{side}]",
                    file=gate.where or surface.schema_file,
                )
                continue
            out.append(GateSpec(key.method, key.selector, gate.capability))
    return sorted(out, key=lambda g: (g.method, g.field))


def capabilities_of(surface: ApiSurface, side: Side) -> TypeExpr | None:
    """The type of the capabilities ``side`` advertises in the handshake, where its gates look.

    The agent's: the ``agent_capabilities`` field of the ``initialize`` result; the
    client's: the ``client_capabilities`` field of its params (``[v<N>.protocol]``).
    ``None`` for another side, or a release without them (nothing to check against).
    """
    protocol = knowledge.protocol(surface.protocol_version)
    method = next(
        (m for m in surface.methods if m.wire_name == protocol.initialize and m.kind == "request"), None
    )
    if method is None:
        return None
    owner, wire = {
        "agent": (method.result, protocol.agent_capabilities),
        "client": (method.params, protocol.client_capabilities),
    }.get(side, (None, ""))
    fields = [f for c in surface.classes_of(Ref(owner)) for f in surface.all_fields(c)] if owner else []
    return next((strip_nullable(f.type) for f in fields if f.wire_name == wire), None)


def _resolves(surface: ApiSurface, expr: TypeExpr, path: list[str]) -> bool:
    """Whether the dotted wire ``path`` names nested fields of the objects ``expr`` stands for."""
    names = set(surface.classes_of(expr))
    for step in path:
        found = [f for c in names for f in surface.all_fields(c) if f.wire_name == step]
        if not found:
            return False
        names = {name for f in found for name in surface.classes_of(strip_nullable(f.type))}
    return True


def _has_path(surface: ApiSurface, classes: Iterable[str], key: GateKey) -> bool:
    """Whether a gate's wire path names fields of ``classes`` (and its value a tag they pin)."""
    *parents, last = key.path
    names = set(classes)
    for step in parents:
        inner = [f for c in names for f in surface.all_fields(c) if f.wire_name == step]
        names = {name for f in inner for name in surface.classes_of(strip_nullable(f.type))}
    owners = [c for c in names if any(f.wire_name == last for f in surface.all_fields(c))]
    pinned = {str(t.value) for c in owners for t in surface.tags_of(c) if t.wire_name == last}
    return bool(owners) and (key.value is None or not pinned or key.value in pinned)


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
    content: TypeExpr
    """What the update's content field holds (the type of a prompt block)."""
    message_id: TypeExpr
    """What the update's message id field holds."""
    method: str = ""
    """Wire name of the request whose response carries the message id (``session/prompt``)."""
    notification: str = ""
    """Wire name of the notification that echoes the message (``session/update``)."""

    @property
    def content_type(self) -> str:
        return annotation(self.content)

    @property
    def id_type(self) -> str:
        return annotation(self.message_id)

    @property
    def names(self) -> frozenset[str]:
        """The names its annotations and the other parameters write that a module imports."""
        return annotation_names(self.content, self.message_id).union(*(p.names for p in self.other_params))

    def fits(self, served: Iterable[str], called: Iterable[str]) -> bool:
        """Whether a connection end that serves and calls these wire names sends the echo."""
        return self.method in set(served) and self.notification in set(called)


def prompt_echo(surface: ApiSurface) -> Echo | None:
    """The echo helper's data, or ``None`` when the prompt response carries no message id.

    ``None`` too for a protocol version whose ``[prompt_echo]`` is declared none.
    """
    facts = knowledge.prompt_echo(surface.protocol_version)
    if facts is None:
        return None
    method = next((m for m in surface.methods if m.wire_name == facts.method and m.result), None)
    if method is None or method.result is None:
        return None
    response = surface.types.get(method.result)
    if not isinstance(response, ObjectType) or not any(
        f.wire_name == facts.response_field for f in surface.all_fields(response.name)
    ):
        return None
    notify = next((m for m in surface.methods if m.wire_name == facts.notification), None)
    carrier = surface.types.get(notify.params) if notify else None
    if notify is None or not isinstance(carrier, ObjectType):
        _no_echo(surface, f"no {facts.notification!r} notification to echo the prompt with")
        return None
    for f in call_fields(surface, carrier.name):
        union = surface.resolve(f.type)
        if not isinstance(union, UnionType):
            continue
        variant = next((v for v in union.variants if v.tag == facts.update), None)
        if variant is None or not isinstance(variant.type, Ref):
            continue
        fields = {x.wire_name: x for x in surface.all_fields(variant.type.name)}
        id_field = fields.get(facts.update_id_field)
        content = fields.get(facts.update_content_field)
        if id_field is None or content is None:
            continue
        others = tuple(
            Param(x.py_name, x.type, None)
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
            content.type,
            id_field.type,
            facts.method,
            notify.wire_name,
        )
    _no_echo(
        surface,
        f"{facts.method} answers with {facts.response_field} but no {facts.notification} update "
        f"{facts.update!r} carries it back",
    )
    return None


def _no_echo(surface: ApiSurface, message: str) -> None:
    gap(
        message,
        default="the bindings get no echo helper",
        section=f"[v{surface.protocol_version}.prompt_echo]",
        file=surface.schema_file,
    )


UNSUPPORTED_VERSION_DATA = "UnsupportedProtocolVersionErrorData"
"""The schema's type for the data of the ``-32022`` error (from the v2 schema of TS SDK 2.4.0 on)."""


@dataclass(frozen=True)
class Code:
    """A Python expression the template writes as it is (not as a string literal)."""

    source: str
    names: frozenset[str]
    """The names it uses that a module imports."""


@dataclass(frozen=True)
class Handshake:
    """The types of the handshake, for the typed ``connect_with_fallback`` of the bindings."""

    info_type: TypeExpr
    """The client's ``Implementation`` (the params' ``client_info`` field)."""
    capabilities_type: TypeExpr
    """The client's capabilities (the params' ``client_capabilities`` field)."""
    response: str
    """The initialize result type."""

    @property
    def info(self) -> str:
        return annotation(self.info_type)

    @property
    def capabilities(self) -> str:
        return annotation(self.capabilities_type)

    @property
    def names(self) -> frozenset[str]:
        """The names the two annotations write that a module imports."""
        return annotation_names(self.info_type, self.capabilities_type)


@dataclass(frozen=True)
class ProtocolConstant:
    """One :class:`ProtocolNames` the bindings define, and the connection ends that use it."""

    name: str
    fields: dict[str, object]
    """The keyword arguments of ``ProtocolNames`` (``initialize`` is the handshake)."""
    sides: tuple[str, ...]
    """The roles whose connection uses it: ``capabilities`` is where it reads the peer's."""
    during_handshake: tuple[str, ...] = ()
    """Methods both ends may exchange before the handshake has succeeded."""
    peers: tuple[str, ...] = ()
    """The peer of each of ``sides``: whose capabilities it reads."""

    @property
    def source(self) -> dict[str, str]:
        """Each keyword argument as Python source."""
        return {k: v.source if isinstance(v, Code) else pysource.literal(v) for k, v in self.fields.items()}

    @property
    def names(self) -> frozenset[str]:
        """The names its keyword arguments write that a module imports."""
        return frozenset().union(*(v.names for v in self.fields.values() if isinstance(v, Code)))


@dataclass(frozen=True)
class SessionRoutes:
    """What the remote transports route by: the runtime's ``SessionRoutes`` of one release.

    ``scoped`` comes from the schema (what the agent handles whose params require ``field``);
    the three lists from ``[v<N>.protocol]``, keeping the methods the release has.
    """

    field: str
    scoped: tuple[str, ...]
    reattach: tuple[str, ...]
    ends: tuple[str, ...]
    response_on_connection: tuple[str, ...]

    @property
    def source(self) -> dict[str, str]:
        """Each keyword argument of ``SessionRoutes`` as Python source."""
        sets = {
            "scoped": self.scoped,
            "reattach": self.reattach,
            "ends": self.ends,
            "response_on_connection": self.response_on_connection,
        }
        out = {"field": pysource.literal(self.field)}
        for key, names in sets.items():
            listed = ", ".join(pysource.literal(n) for n in names)
            out[key] = f"frozenset({{{listed}}})" if names else "frozenset()"
        return out


def session_routes(surface: ApiSurface, protocol: Protocol) -> SessionRoutes:
    """The session routes of ``surface``: the methods of ``protocol``'s lists it has, and the ones
    the agent handles whose params require the session field."""
    served = knowledge.role("agent").served(surface)
    scoped = [
        m.wire_name
        for m in served
        if any(
            f.wire_name == protocol.session_id and f.required
            for c in surface.classes_of(Ref(m.params))
            for f in surface.all_fields(c)
        )
    ]
    has = {m.wire_name for m in served}
    named = {
        f.wire_name for m in served for c in surface.classes_of(Ref(m.params)) for f in surface.all_fields(c)
    }
    if protocol.session_id not in named:
        gap(
            f"session_id = {protocol.session_id!r} names no field of the params of any method the agent "
            "handles: a stale entry would route no request by its session",
            default="every request goes on the connection's stream",
            section=f"[v{surface.protocol_version}.protocol]",
            file=protocol.where or surface.schema_file,
        )

    def kept(names: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(sorted(n for n in names if n in has))

    return SessionRoutes(
        protocol.session_id,
        tuple(sorted(set(scoped))),
        kept(protocol.reattach),
        kept(protocol.session_ends),
        kept(protocol.response_on_connection),
    )


@dataclass(frozen=True)
class RuntimeProtocol:
    """``[protocol]`` of the knowledge file, with each end's handshake, as the runtime gets it."""

    initialize: str
    constants: tuple[ProtocolConstant, ...]
    handshake: Handshake | None = None
    sessions: SessionRoutes | None = None
    """What the remote transports route by (the bindings' ``SESSIONS``)."""

    def constant_of(self, role: str) -> str:
        """The constant the connection of ``role`` uses."""
        return next(c.name for c in self.constants if role in c.sides)


def protocol_names(surface: ApiSurface) -> RuntimeProtocol:
    """``[protocol]`` of the knowledge file, checked against the surface: what the runtime relies on.

    A connection reads the capabilities its peer advertised in the handshake: the end that serves
    the handshake from its params (``client_capabilities``), the end that calls it from its result
    (``agent_capabilities``).  The handshake is ``initialize`` unless ``[connections]`` names another
    for the end.  When every end reads the same names, they share one ``PROTOCOL``; otherwise each
    end gets its own ``<ROLE>_SIDE_PROTOCOL``.
    """
    where = f"[v{surface.protocol_version}.protocol] in codegen/knowledge.toml"
    protocol = knowledge.protocol(surface.protocol_version)
    by_wire = {(m.wire_name, m.kind): m for m in surface.methods}
    for key, wire, kind in (
        ("initialize", protocol.initialize, "request"),
        ("cancel_request", protocol.cancel_request, "notification"),
    ):
        if (wire, kind) not in by_wire:
            raise CodegenError(
                f"the schema has no {wire!r} method ({key} of {where})", file=surface.schema_file
            )
    cancel = by_wire[(protocol.cancel_request, "notification")]
    _check_field(surface, cancel.params, protocol.request_id, f"request_id of {where}")
    initialize = by_wire[(protocol.initialize, "request")]
    handshake_facts: dict[str, object] = {
        "protocol_version": protocol.protocol_version,
        "client_info": protocol.client_info,
        "repeat_initialize": protocol.repeat_initialize,
        "version": surface.protocol_version,
    }
    if UNSUPPORTED_VERSION_DATA in surface.types:
        handshake_facts["unsupported_version_data"] = Code(
            f"schema.{UNSUPPORTED_VERSION_DATA}", frozenset({"schema"})
        )
    readers: list[tuple[Role, dict[str, object]]] = []
    for end in present_roles(surface):
        handshake = end.handshake or protocol.initialize
        method = by_wire.get((handshake, "request"))
        source = f"[connections.{end.name}]" if end.handshake else where
        if method is None or method.result is None:
            raise CodegenError(
                f"the schema has no {handshake!r} request (the handshake of {source})",
                file=surface.schema_file,
            )
        if method in end.served(surface):
            type_name, key, served = method.params, "client_capabilities", True
        elif method in end.called(surface):
            type_name, key, served = method.result, "agent_capabilities", False
        else:
            raise CodegenError(
                f"[connections.{end.name}] neither serves nor calls its handshake {handshake!r}",
                file=end.where,
            )
        _check_field(surface, type_name, protocol.capabilities(served), f"{key} of {where}")
        fields: dict[str, object] = {
            "initialize": handshake,
            "cancel_request": protocol.cancel_request,
            "request_id": protocol.request_id,
            "capabilities": protocol.capabilities(served),
            **handshake_facts,
        }
        readers.append((end, fields))
    for checked, key, wire in (
        (initialize.params, "protocol_version", protocol.protocol_version),
        (initialize.result, "protocol_version", protocol.protocol_version),
        (initialize.params, "client_info", protocol.client_info),
    ):
        if checked is not None:  # the handshake's request always has a result (checked above)
            _check_field(surface, checked, wire, f"{key} of {where}")
    readers.sort(key=lambda reader: _by_peer(reader[0]))
    early = {end.name: end.during_handshake for end, _ in readers}
    if len({(tuple(f.items()), early[e.name]) for e, f in readers}) <= 1 and readers:
        end, fields = readers[0]
        both = ProtocolConstant(
            "PROTOCOL",
            fields,
            tuple(e.name for e, _ in readers),
            end.during_handshake,
            tuple(e.peer for e, _ in readers),
        )
        constants: tuple[ProtocolConstant, ...] = (both,)
    else:
        constants = tuple(
            ProtocolConstant(
                f"{end.constant}_SIDE_PROTOCOL", fields, (end.name,), end.during_handshake, (end.peer,)
            )
            for end, fields in readers
        )
    return RuntimeProtocol(
        protocol.initialize,
        constants,
        _handshake(surface, initialize, protocol),
        session_routes(surface, protocol),
    )


def _handshake(surface: ApiSurface, initialize: Method, protocol: Protocol) -> Handshake | None:
    """The client's ``Implementation`` and capabilities types, from the ``initialize`` params."""
    fields = {
        f.wire_name: f for c in surface.classes_of(Ref(initialize.params)) for f in surface.all_fields(c)
    }
    info, capabilities = fields.get(protocol.client_info), fields.get(protocol.client_capabilities)
    if info is None or capabilities is None or initialize.result is None:
        return None
    return Handshake(
        strip_nullable(info.type),
        strip_nullable(capabilities.type),
        f"schema.{initialize.result}",
    )


def _check_field(surface: ApiSurface, type_name: str | None, wire: str, what: str) -> None:
    classes = surface.classes_of(Ref(type_name)) if type_name else ()
    if wire not in {f.wire_name for c in classes for f in surface.all_fields(c)}:
        raise CodegenError(f"{type_name} has no field {wire!r} ({what})", file=surface.schema_file)


def _by_peer(end: Role) -> int:
    """Ends in the order of the role they connect to (``connect_to_agent`` first)."""
    names = [r.name for r in roles()]
    return names.index(end.peer)
