"""The bindings of each connection end: what its handler protocol and connection class hold.

:mod:`.connections` says which roles a surface has; this joins each with its
methods (:mod:`.methods`), the capability gates of what it calls, the batches
its peer may send, its :class:`ProtocolNames` constant and the prompt echo
(:mod:`.protocol`).  The bindings emitter lays the result out.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import knowledge
from ..errors import CodegenError
from ..schema.ir import ApiSurface, Method
from .connections import Role, article, present_roles, roles
from .methods import MethodSpec, method_spec
from .protocol import Echo, GateSpec, RuntimeProtocol, batch_kinds, gates, prompt_echo, protocol_names


@dataclass(frozen=True)
class GateTable:
    """The module constant of one side's capability gates (``AGENT_GATES``)."""

    side: str
    name: str
    gates: tuple[GateSpec, ...]
    doc: str


@dataclass(frozen=True)
class End:
    """One end of a connection as the bindings write it."""

    role: Role
    served: tuple[MethodSpec, ...]
    called: tuple[MethodSpec, ...]
    handler_base: End | None
    """The handler protocol this one extends (it serves everything that one does)."""
    connection_base: End | None
    """The connection class this one extends (it calls everything that one does)."""
    gate_tables: tuple[str, ...]
    batches: tuple[str, ...]
    protocol: str
    """The name of its :class:`ProtocolNames` constant."""
    handshake: MethodSpec | None
    """The handshake it calls, or ``None`` when it serves it."""
    echo: Echo | None
    """The prompt echo helper, when its connection class (and no base) defines it."""

    @property
    def name(self) -> str:
        return self.role.name

    @property
    def own_served(self) -> tuple[MethodSpec, ...]:
        inherited = {s.method for s in self.handler_base.served} if self.handler_base else set()
        return tuple(s for s in self.served if s.method not in inherited)

    @property
    def own_called(self) -> tuple[MethodSpec, ...]:
        inherited = {s.method for s in self.connection_base.called} if self.connection_base else set()
        return tuple(s for s in self.called if s.method not in inherited)

    @property
    def has_echo(self) -> bool:
        """Whether its connection class has the prompt echo helper, its own or one it inherits."""
        end: End | None = self
        while end is not None:
            if end.echo is not None:
                return True
            end = end.connection_base
        return False

    @property
    def connect(self) -> str:
        """Serves this end on a stream pair, returning its connection (the agent's: ``connect_to_client``)."""
        return f"connect_to_{self.role.peer}"

    @property
    def run(self) -> str | None:
        """The function that serves this end on stdin and stdout (``run_agent``), if the role has one."""
        return f"run_{self.name}" if self.role.stdio else None

    @property
    def peer_role(self) -> Role:
        return next(r for r in roles() if r.name == self.role.peer)

    @property
    def peer_phrase(self) -> str:
        """``an agent``: the peer, with its article."""
        return article(self.role.peer)


@dataclass(frozen=True)
class Bindings:
    """Everything the bindings module of one surface defines, end by end."""

    ends: tuple[End, ...]
    """In the order of the role each connects to (``connect_to_agent`` first)."""
    handlers: tuple[End, ...]
    """The same ends in ``[connections]`` order: the order of the handler protocols."""
    gate_tables: tuple[GateTable, ...]
    protocol: RuntimeProtocol

    @property
    def union_specs(self) -> tuple[MethodSpec, ...]:
        """Every method spec whose params are a union, once."""
        seen: dict[str, MethodSpec] = {}
        for end in self.handlers:
            for spec in (*end.served, *end.called):
                if spec.union is not None:
                    seen.setdefault(spec.union.constant, spec)
        return tuple(seen.values())

    @property
    def exports(self) -> tuple[str, ...]:
        names = [e.role.handler for e in self.ends] + [e.role.connection for e in self.ends]
        names += [e.connect for e in self.ends]
        names += [e.run for e in self.ends if e.run is not None]
        return tuple(sorted(names))


def _specs(surface: ApiSurface, role: Role, what: str) -> tuple[MethodSpec, ...]:
    methods = role.served(surface) if what == "serves" else role.called(surface)
    out = tuple(method_spec(surface, m) for m in methods)
    names: dict[str, str] = {}
    for spec in out:
        if spec.name in names:
            raise CodegenError(
                f"methods {names[spec.name]!r} and {spec.wire!r} both get the Python name {spec.name!r} "
                f"(what the {role.name} {what})",
                file=surface.schema_file,
            )
        names[spec.name] = spec.wire
    return out


def _gate_tables(surface: ApiSurface, present: tuple[Role, ...]) -> tuple[GateTable, ...]:
    """One table per side a present end calls and ``[capability_gates]`` has, in ``[sides]`` order."""
    tables = knowledge.capability_gates(surface.protocol_version)
    called = {m.side for r in present for m in r.called(surface)}
    out: list[GateTable] = []
    for side in (s.name for s in knowledge.sides()):
        if side not in called or side not in tables.sides:
            continue
        owner = next((r for r in present if side in r.serves_all_of), None)
        sender = article(owner.peer) if owner else "its peer"
        doc = (
            f"What the {side} must have advertised before {sender} sends these (``codegen/knowledge.toml``)."
        )
        out.append(GateTable(side, f"{side.upper()}_GATES", tuple(gates(surface, side, tables)), doc))
    return tuple(out)


def _widest_subset(mine: set[Method], others: list[tuple[Role, set[Method]]]) -> Role | None:
    """The role whose set is the largest proper subset of ``mine`` (a base to extend), if any."""
    candidates = [(len(theirs), role) for role, theirs in others if theirs and theirs < mine]
    return max(candidates, key=lambda c: c[0])[1] if candidates else None


def bindings(surface: ApiSurface) -> Bindings:
    """The ends of the surface's bindings (none for a surface without methods)."""
    present = present_roles(surface)
    protocol = protocol_names(surface) if present else RuntimeProtocol("", ())
    tables = _gate_tables(surface, present)
    table_of = {t.side: t.name for t in tables}
    echo = prompt_echo(surface) if present else None
    served = {r.name: set(r.served(surface)) for r in present}
    called = {r.name: set(r.called(surface)) for r in present}
    built: dict[str, End] = {}

    def build(role: Role) -> End:
        if role.name in built:
            return built[role.name]
        others = [r for r in present if r.name != role.name]
        handler_base = _widest_subset(served[role.name], [(r, served[r.name]) for r in others])
        connection_base = _widest_subset(called[role.name], [(r, called[r.name]) for r in others])
        serves = _specs(surface, role, "serves")
        calls = _specs(surface, role, "calls")
        handshake_wire = role.handshake or knowledge.protocol(surface.protocol_version).initialize
        handshake = next((s for s in calls if s.wire == handshake_wire and s.is_request), None)
        base = build(connection_base) if connection_base else None
        sends_echo = echo is not None and echo.fits((s.wire for s in serves), (s.wire for s in calls))
        end = End(
            role=role,
            served=serves,
            called=calls,
            handler_base=build(handler_base) if handler_base else None,
            connection_base=base,
            gate_tables=tuple(
                table_of[side] for side in table_of if any(m.side == side for m in called[role.name])
            ),
            batches=tuple(batch_kinds(surface, role.peer)),
            protocol=protocol.constant_of(role.name),
            handshake=handshake,
            echo=echo if sends_echo and not (base is not None and base.has_echo) else None,
        )
        built[role.name] = end
        return end

    handlers = tuple(build(r) for r in present)
    names = [r.name for r in roles()]
    ends = tuple(sorted(handlers, key=lambda e: names.index(e.role.peer)))
    return Bindings(ends, handlers, tables, protocol)
