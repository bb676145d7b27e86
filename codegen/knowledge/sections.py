"""The sections of ``knowledge.toml`` besides ``[connections]`` and ``[patches]``, as typed values.

One dataclass per section, each read and checked by a ``read_*`` function
from its :class:`~.reader.Table`; nothing here knows a release.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from .reader import Table, listing

# --- [extensions] ---------------------------------------------------------------


@dataclass(frozen=True)
class Extension:
    """One ``x-`` keyword of the schema and what the generator does with it."""

    keyword: str
    does: str
    lenient: str | None = None
    """For a leniency keyword: the :class:`~codegen.schema.ir.Field` flag it sets (``default_on_error``)."""


@dataclass(frozen=True)
class Extensions:
    """``[extensions]``: every ``x-`` keyword the schema uses, in the file's order."""

    entries: tuple[Extension, ...]

    @property
    def keywords(self) -> frozenset[str]:
        """The keywords the generator reads (any other one is dropped, with a gap)."""
        return frozenset(e.keyword for e in self.entries)

    @property
    def lenient(self) -> tuple[tuple[str, str], ...]:
        """``(Field flag, keyword)`` of every leniency keyword, in the file's order."""
        return tuple((e.lenient, e.keyword) for e in self.entries if e.lenient is not None)


LENIENT_FLAGS = ("default_on_error", "default_on_null", "skip_invalid_items")
"""The :class:`~codegen.schema.ir.Field` flags a leniency keyword may set."""


def read_extensions(table: Table) -> Extensions:
    entries = []
    for keyword in table:
        if not keyword.startswith("x-"):
            raise table.error(f"{keyword!r} is no extension keyword (they start with x-)", keyword)
        entry = table.entry(keyword)
        entry.only(["does"], ["lenient"])
        lenient = entry.choice("lenient", LENIENT_FLAGS) if "lenient" in entry else None
        entries.append(Extension(keyword, entry.string("does"), lenient))
    return Extensions(tuple(entries))


# --- [sides] ------------------------------------------------------------------------


@dataclass(frozen=True)
class ProtocolSide:
    """One side of the protocol (``[sides]``): it names a root message kind and an ``x-side``."""

    name: str
    handler: str
    """The ``x-side`` of what this side sends: the side that handles it."""


def read_sides(table: Table) -> tuple[ProtocolSide, ...]:
    sides = []
    for name in table:
        entry = table.entry(name)
        entry.only(["handler"])
        sides.append(ProtocolSide(name, entry.string("handler")))
    names = {s.name for s in sides}
    for side in sides:
        if side.handler not in names:
            raise table.error(f"{side.name}: its handler {side.handler!r} is no side", side.name)
    return tuple(sides)


# --- [models] --------------------------------------------------------------------------


@dataclass(frozen=True)
class Models:
    """``[models]``: how the models say what ACP reserves on every type."""

    metadata: str
    """The wire name of the field ACP reserves for extensions (``_meta``)."""


def read_models(table: Table) -> Models:
    table.only(["metadata"])
    return Models(table.string("metadata"))


# --- [v<N>.protocol] --------------------------------------------------------------------

RepeatInitialize = Literal["always", "before-other-requests"]


@dataclass(frozen=True)
class Protocol:
    """``[v<N>.protocol]``: the JSON-RPC methods and fields the connection runtime relies on."""

    initialize: str
    cancel_request: str
    request_id: str
    client_capabilities: str
    agent_capabilities: str
    protocol_version: str
    client_info: str
    repeat_initialize: RepeatInitialize
    session_id: str
    """The field of params and results naming a session: the remote transports route by it."""
    reattach: tuple[str, ...] = ()
    """Requests that reattach a session whose stream was lost (Streamable HTTP reopens the stream)."""
    session_ends: tuple[str, ...] = ()
    """Requests after whose success the session's stream is closed."""
    response_on_connection: tuple[str, ...] = ()
    """Requests whose response comes on the connection's stream although they name a session."""
    where: str = field(default="", compare=False, repr=False)
    """``file:line`` of the section."""

    def capabilities(self, served: bool) -> str:
        """Where an end reads its peer's capabilities: the handshake's params when it serves the
        handshake (``client_capabilities``), its result when it calls it (``agent_capabilities``)."""
        return self.client_capabilities if served else self.agent_capabilities


_PROTOCOL_NAMES = (
    "initialize",
    "cancel_request",
    "request_id",
    "client_capabilities",
    "agent_capabilities",
    "protocol_version",
    "client_info",
)


_SESSION_LISTS = ("reattach", "session_ends", "response_on_connection")


def read_protocol(table: Table) -> Protocol:
    table.only([*_PROTOCOL_NAMES, "repeat_initialize", "session_id"], _SESSION_LISTS)
    repeat = table.choice("repeat_initialize", get_args(RepeatInitialize))
    return Protocol(
        initialize=table.string("initialize"),
        cancel_request=table.string("cancel_request"),
        request_id=table.string("request_id"),
        client_capabilities=table.string("client_capabilities"),
        agent_capabilities=table.string("agent_capabilities"),
        protocol_version=table.string("protocol_version"),
        client_info=table.string("client_info"),
        repeat_initialize="always" if repeat == "always" else "before-other-requests",
        session_id=table.string("session_id"),
        reattach=table.strings("reattach"),
        session_ends=table.strings("session_ends"),
        response_on_connection=table.strings("response_on_connection"),
        where=table.where(),
    )


# --- [v<N>.prompt_echo] -------------------------------------------------------------------


@dataclass(frozen=True)
class PromptEcho:
    """``[v<N>.prompt_echo]``: the session update that carries a prompt's user message back."""

    method: str
    """The request whose response carries the message id (``session/prompt``)."""
    response_field: str
    notification: str
    """The notification that echoes the message (``session/update``)."""
    update: str
    """The tag of the update that carries it (``user_message_chunk``)."""
    update_id_field: str
    update_content_field: str
    where: str = field(default="", compare=False, repr=False)


def read_prompt_echo(table: Table) -> PromptEcho:
    names = (
        "method",
        "response_field",
        "notification",
        "update",
        "update_id_field",
        "update_content_field",
    )
    table.only(names)
    return PromptEcho(
        method=table.string("method"),
        response_field=table.string("response_field"),
        notification=table.string("notification"),
        update=table.string("update"),
        update_id_field=table.string("update_id_field"),
        update_content_field=table.string("update_content_field"),
        where=table.where(),
    )


# --- [v<N>.capability_gates] -----------------------------------------------------------------


@dataclass(frozen=True)
class GateKey:
    """What a gate covers: a method, or what its params hold (``session/new systemPrompt.mode=override``).

    Written ``"<method>"``, ``"<method> <field>"`` or ``"<method> <field>=<value>"``, where
    ``<field>`` is a dotted wire path into the params.
    """

    method: str
    path: tuple[str, ...] = ()
    value: str | None = None
    """The value the field must have (``=value``); ``None``: any value but ``null``."""

    @property
    def selector(self) -> str:
        """``systemPrompt.mode=override``: the field part of the key (``""`` for the whole method)."""
        equals = f"={self.value}" if self.value is not None else ""
        return ".".join(self.path) + equals

    def __str__(self) -> str:
        return f"{self.method} {self.selector}" if self.path else self.method

    @classmethod
    def parse(cls, key: str) -> GateKey | None:
        """The key ``key`` names, or ``None`` when it is not one."""
        method, space, selector = key.partition(" ")
        fields, equals, value = selector.partition("=")
        path = tuple(fields.split(".")) if fields else ()
        if not method or " " in selector or (space and not path) or not all(path) or "=" in value:
            return None
        return cls(method, path, value if equals else None)


@dataclass(frozen=True)
class Gate:
    """One entry of ``[v<N>.capability_gates.<side>]``."""

    key: GateKey
    capability: str
    """A dotted wire path into the handling side's capabilities, or ``""`` when none is needed."""
    where: str = field(default="", compare=False, repr=False)


@dataclass(frozen=True)
class CapabilityGates:
    """``[v<N>.capability_gates]``: per side that handles the operations, its gates in the file's order."""

    sides: Mapping[str, tuple[Gate, ...]]
    where: str = field(default="", compare=False, repr=False)

    def of(self, side: str) -> tuple[Gate, ...]:
        return self.sides.get(side, ())

    def covers(self, side: str, key: GateKey) -> bool:
        """Whether the table lists ``key`` for ``side`` (with a capability or with ``""``)."""
        return any(g.key == key for g in self.of(side))


def read_capability_gates(table: Table, sides: tuple[str, ...]) -> CapabilityGates:
    found: dict[str, tuple[Gate, ...]] = {}
    for side, gates in table.subtables():
        if side not in sides:
            raise table.error(f"{side!r} is no side of [sides] (one of {listing(sides)})", side)
        entries = []
        for key in gates:
            parsed = GateKey.parse(key)
            if parsed is None:
                raise gates.error(
                    f"{key!r} is neither '<method>', '<method> <field>' nor '<method> <field>=<value>'", key
                )
            capability = gates.string(key)
            if capability and not all(capability.split(".")):
                raise gates.error(f"{key!r}: the capability {capability!r} is no dotted path", key)
            entries.append(Gate(parsed, capability, gates.where(key)))
        found[side] = tuple(entries)
    return CapabilityGates(found, table.where())
