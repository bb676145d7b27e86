"""Evidence for the differ's verdicts: a message one side's generated models accept and the other's refuse,
refused at the change's own location.

A wire change breaks *receivers* when a new sender may send what an old
receiver refuses: messages are generated from the **new** schema, kept if the
new schema and the new models accept them, and tried on the **old** models.
It breaks *senders* when an old sender may send what a new receiver refuses:
the same, from the old schema to the new models.  A refused message is
evidence for a change only when one of the validation errors is *at* the
change's location, read from the error's ``loc`` (:mod:`.walk`): the type and
the members the change names, its field, the tag or enum value, the kind of
error its constraint keyword gives.  The smallest such message, made smaller
still while it stays evidence (:func:`~.instances.shrink`), is attached with
that error.  A change no message can carry (a batch, a method that is gone,
the properties of every message) is *not searchable*; one no generated
message shows has *no evidence found*, with the number tried.

A refused message of that type is not yet a witness: a peer receives whole
messages, a method's params or result, and reads the type inside them as the
fields on the way say (a lenient field reads a value its schema refuses as
omitted).  So the smallest refused message is wrapped in a message that
carries it (:meth:`Pair.whole`: a method's params or result that the refusing
peer receives, the fields and union members on the way made present), and
that whole message is checked again on both sides: valid under the sending
release's schema, accepted by its models, refused by the other release's
models at the change.  Only a whole message is a witness; a change whose
refused messages no whole message carries has none, and says so.  Where a
lenient place on the way makes the other release's models accept the whole
message, the way they read it is the witness when it loses the value at the
change (:mod:`.lenient`, :meth:`Pair.whole_read`); a change those models
refuse nothing of (a lenient field, an open object) is searched for such a
reading alone (:meth:`Pair.read_leniently`).  A removed method or batch, which
no model validates, gets the message its rule predicts (:meth:`Pair.predicted`,
:mod:`.batches`).

Before any message is generated, the ones the rule predicts are built (:func:`built_at`,
:func:`~.instances.built`): the smallest message at the change's anchor, the tag value it names put
at the union's tag, a batch of one smallest envelope, the smallest whole message around a refused
one; each is checked as a generated one is, and generation runs only where none shows the change.
Messages are generated per ``$defs`` type (the one that holds the change's
type), at most ``examples`` per type and direction, and every change in that
type shares them.  Where the schema takes any string, the strings the other
release's definition names (its tags, enum values and reserved tags) are
tried too (:meth:`Pair.probes`).  The search is deterministic.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, Protocol

from ..diff import (
    ABSENT,
    Built,
    Change,
    DiffResult,
    Evidence,
    FieldPart,
    MessagePart,
    MethodPart,
    NoEvidence,
    RuleId,
    SurfaceDiff,
    TypePart,
)
from ..diff.reading import LenientRead
from ..diff.renames import detect_renames
from ..diff.sets import Sets
from ..schema.builder.node import Pointer
from ..schema.ir import (
    ApiSurface,
    ArrayOf,
    Method,
    NamedType,
    Nullable,
    ObjectType,
    Ref,
    Stability,
    UnionType,
    references_of,
    refs_in,
)
from ..schema.ir import Field as IrField
from ..schema.load import ReleaseFiles
from ..schema.releases import surfaces_of
from .batches import BATCH_KEY, batch_kind, batch_member, batch_refused, removed_batch, sendable_batch
from .instances import (
    built,
    canonical,
    generation_schema,
    instances,
    prepare,
    shrink,
    size,
    through,
    with_field,
    with_tag,
)
from .lenient import lost_at
from .models import Models, Wanted, load_all, load_models, missing_models
from .parallel import Progress, Tick, heap_frozen, run_all
from .walk import (
    ERRORS_OF_KEYWORDS,
    EXCLUSIVITY,
    Anchor,
    Located,
    Place,
    anchor_of,
    at,
    carried_leniently,
    located_errors,
    objects_only,
    takes_any_object,
)


class Validator(Protocol):
    """What the search uses of a ``jsonschema`` validator."""

    def is_valid(self, instance: Any) -> bool: ...

    def evolve(self, **changes: Any) -> Validator: ...


Direction = Literal["receivers", "senders"]
"""``receivers``: new messages tried on the old models; ``senders``: old messages tried on the new models."""
SearchKey = tuple[str, Direction, frozenset[Anchor], int]
"""A search: the ``$defs`` type, the direction, the anchors it may stop at, the messages to generate."""

DEFAULT_EXAMPLES = 25
"""Messages generated per type and direction, after the ones built at each anchor (:data:`TARGETED`).
A search that finds nothing costs the whole number, which is most of the cost of evidence, and hypothesis
spreads a generation over the number it is given (25 is not the beginning of 50), so the number changes
which messages are tried.  On every locked pair (``make diff-oracle``, ``--evidence-examples N``), 5,
10, 25 and 50 each show 104 of the 182 verdicts searched, every one by message 9 of its search at the
latest: the messages built before any is generated (:func:`built_at`) show most of them.  Before those,
with the messages generated at each anchor only, 25 showed 96 (the latest at message 10) and 5 showed
92.  ``diff --evidence-examples N`` searches further."""
TARGETED = 5
"""Messages generated first at each anchor on the searched type itself (:func:`at_anchor`: the union
member it names, the optional field it names made present), the search stopping at the first that
shows it; the anchors none of them shows are then searched over the whole type (a constraint on the
field's value only: a field's other changes, such as becoming required, may need it absent)."""
SEARCHED_BREAKS: dict[str, tuple[Direction, ...]] = {
    "receivers": ("receivers",),
    "senders": ("senders",),
    "both": ("senders", "receivers"),
}
"""The directions searched for a rule's verdict, in order: a change that breaks both sides is searched
first with old senders' messages (what a peer upgraded first meets from every peer not yet upgraded),
and the other way only if none shows it (:meth:`Pair.requests`)."""


CARRIERS_TRIED = 3
"""The whole messages tried to carry a refused message (:meth:`Pair.whole`), nearest first."""
CARRIERS_RENDERED = 1
"""Of those, the whole messages whose models are rendered before the search (:meth:`Planner.types`):
a whole message's models are most of the cost of evidence on a cold cache (a params type refers to
much of the schema), and the nearest carries what it can show in the pairs measured."""
WITNESS_TRIES = 3
"""Refused messages of the searched type (the smallest first) wrapped in a whole message per change."""
WRAPS = 10
"""Messages generated per whole message tried, the refused one fixed inside (the first that is a witness
is kept)."""


def wants_evidence(change: Change) -> bool:
    """A breaking or warning verdict on the wire that breaks a peer."""
    return (
        change.layer == "wire"
        and change.severity in ("breaking", "warning")
        and change.rule.breaks in SEARCHED_BREAKS
        and bool(change.roles)
    )


@dataclass
class Side:
    """One release at one stability level: its IR, its raw schema and its generated models."""

    release: str
    surface: ApiSurface
    schema: dict[str, Any]
    models: Models
    _validators: dict[str, Validator] = field(default_factory=dict)

    @classmethod
    def load(cls, files: ReleaseFiles, surface: ApiSurface, cache: Path) -> Side:
        return cls.of(files, surface, load_models(files, surface, cache))

    @classmethod
    def of(cls, files: ReleaseFiles, surface: ApiSurface, module: ModuleType) -> Side:
        """The side of ``surface`` (of ``files``), its models the module ``module``."""
        schema = files.schema(surface.stability == "unstable").data
        return cls(files.release, surface, schema, Models(surface, module))

    @property
    def defs(self) -> dict[str, Any]:
        found: dict[str, Any] = self.schema.get("$defs", {})
        return found

    def valid(self, schema_name: str, instance: Any) -> bool:
        """Whether the side's JSON Schema (Draft 2020-12) accepts ``instance`` as ``$defs[schema_name]``."""
        if schema_name not in self._validators:
            import jsonschema  # type: ignore[import-untyped]

            root = self._validators.setdefault("", jsonschema.Draft202012Validator(self.schema))
            self._validators[schema_name] = root.evolve(schema=self.defs[schema_name])
        return bool(self._validators[schema_name].is_valid(instance))

    def valid_root(self, instance: Any) -> bool:
        """Whether the side's JSON Schema accepts ``instance`` as a root message (any kind it allows)."""
        if "" not in self._validators:
            import jsonschema

            self._validators[""] = jsonschema.Draft202012Validator(self.schema)
        return bool(self._validators[""].is_valid(instance))


@dataclass(frozen=True)
class Refusal:
    """A message valid on its side that the other side's models refuse, and each error with its places."""

    instance: Any
    error: Any
    errors: tuple[Located, ...]
    index: int = 0
    """Which of the search's distinct messages it is (1 for the first; 0: not from a search)."""

    def at(self, anchor: Anchor) -> Located | None:
        """The first error of the refusal that is at ``anchor`` (``None``: none is)."""
        return next((e for e in self.errors if at(anchor, e.places, e.type)), None)

    @property
    def places(self) -> frozenset[Place]:
        return frozenset(p for e in self.errors for p in e.places)


@dataclass(frozen=True)
class Found:
    """What a search found, as a worker sends it back: the refused messages, without their errors."""

    generated: int
    distinct: int
    refused: tuple[tuple[int, Any], ...]
    """Each refused message, with its :attr:`Refusal.index`."""


@dataclass(frozen=True)
class Search:
    """What one search generated: how many messages (and distinct ones), and the refusals among them."""

    generated: int
    distinct: int
    refusals: tuple[Refusal, ...]


Searched = dict[tuple[Direction, str], Search | str]
"""The searches of a set of changes, by direction and ``$defs`` type (:meth:`Pair.searched`)."""


def def_of(named: NamedType) -> str | None:
    """The ``$defs`` entry that holds a type (a derived type's pointer is inside its parent's)."""
    return Pointer.parse(named.pointer).defs_entry


def first_error(error: Any) -> str:
    """A validation error in one line: where, and what."""
    try:
        detail = error.errors()[0]
    except (AttributeError, IndexError):
        return f"{type(error).__name__}: {error}".splitlines()[0][:200]
    where = ".".join(str(part) for part in detail.get("loc", ())) or "(root)"
    return f"{where}: {detail.get('msg', '')}"[:200]


NOT_SEARCHABLE = "no type of the generated models carries it"
LENIENCY_ONLY = (
    "only the field's leniency changed (its schema, and every type it refers to, the same on both sides "
    "but for descriptions and leniency), which changes how a value its schema refuses is read, and "
    "evidence is a message the sender's schema accepts"
)
"""Why a removed lenient annotation is not searchable, when :func:`not_shown` says so."""
DEFAULT_ONLY = (
    "a default is what a receiver reads for an omitted field, never checked against the schema: it "
    "changes what is read, never what is refused"
)
"""Why a changed default is not searchable."""


READ_AS_SENT = (
    "every value of the new union is one of the old object (set inclusion), whose models keep extra "
    "keys: an old receiver accepts every member and reads it as it was sent, the member's own fields as "
    "extra keys, nothing refused, dropped or replaced; what it misses is what the tag means, which no "
    "message shows"
)
"""Why an object that became a union is not searchable, when :func:`read_as_sent` says so."""

NOT_EXCLUSIVE = (
    "the models of a union take a value several of its members accept as one of them (pydantic tries "
    "the members and keeps one that accepts it), whether the schema writes oneOf or anyOf: no message "
    "is refused for matching several members; only the refusing release's schema refuses the value "
    "the set proof names"
)
"""Why a union that became exclusive or inclusive is not searchable, when :func:`not_shown` says so."""

_EXCLUSIVITY_RULES = frozenset({RuleId.UNION_BECAME_EXCLUSIVE, RuleId.UNION_BECAME_INCLUSIVE})
"""The rules of a union's exclusivity (``oneOf`` or ``anyOf``): their anchor names :data:`EXCLUSIVITY`."""


def read_as_sent(change: Change, old: ApiSurface, new: ApiSurface) -> bool:
    """Whether an ``object-became-union`` change leaves every new member read as sent by the old models:
    every value of the new union is a value of the old object (:class:`~codegen.diff.sets.Sets`), so
    no lenient field of it reads one otherwise, and the old object (and every type it extends) keeps
    the keys it does not name."""
    match change.path:
        case (TypePart(name=name),) if change.rule.id is RuleId.OBJECT_BECAME_UNION:
            pass
        case _:
            return False
    renamed_from = {n: o for o, n in detect_renames(old, new).items()}
    was = old.types.get(renamed_from.get(name, name))
    if not isinstance(was, ObjectType) or not isinstance(new.types.get(name), UnionType):
        return False
    if any(o.extra != "allow" for o in old.lineage(was.name)):
        return False
    sets = Sets(old, new, renamed_from)
    return sets.includes(sets.old_term(Ref(name)), ("new", Ref(name)))


def not_shown(change: Change, old: ApiSurface, new: ApiSurface) -> str | None:
    """Why no message a search generates can show ``change`` (``None``: one may), from its typed fields.

    A changed default is one: the models fill an omitted field with it and never check it, so it
    changes what a receiver reads, never what it refuses.

    A union that became exclusive or inclusive is one: its models take a value several members accept
    as one of them (:data:`~.walk.ERRORS_OF_KEYWORDS` of ``oneOf``), so only the refusing release's
    schema refuses the value its set proof names.  A refusal inside the union is some member's own (a
    member's field that changed too), which that change's row shows.

    A lenient annotation removed from a field is one, when the field's schema is the same on both sides:
    its type, requiredness, nullability and default, and every type it refers to, their descriptions and
    leniency aside (:func:`_as_validated`).  Messages are kept only if valid on the sender's schema, so
    the field's value is one the receiver's schema accepts too, and the receiver's models accept it,
    lenient or not: the models refuse what the schema refuses and no more (leniency only reads more; a
    catch-all refuses the tags its schema's ``not`` names; the conformance tests check the models on
    every release, and ``make diff-oracle`` that no message shows a change said not shown).  It is one
    too, whatever its item type became, when the field is a list whose invalid items the receiver still
    skips, with no minimum length: no list is refused there.
    """
    if change.rule.id is RuleId.DEFAULT_CHANGED:
        return DEFAULT_ONLY
    if change.rule.id in _EXCLUSIVITY_RULES and not ERRORS_OF_KEYWORDS[EXCLUSIVITY]:
        return NOT_EXCLUSIVE
    if read_as_sent(change, old, new):
        return READ_AS_SENT
    if change.rule.id is not RuleId.LENIENT_ANNOTATION_REMOVED:
        return None
    match change.path:
        case (TypePart(name=name), FieldPart(name=wire)):
            pass
        case _:
            return None
    if name not in old.types or name not in new.types:
        return None
    was = next((f for f in old.all_fields(name) if f.wire_name == wire), None)
    now = next((f for f in new.all_fields(name) if f.wire_name == wire), None)
    if was is None or now is None or _as_validated(was) != _as_validated(now):
        return None
    if _skips_any_item(now):
        return ITEMS_SKIPPED
    if not _validated_alike(old, new, was.type):
        return None
    return LENIENCY_ONLY


_NOT_VALIDATED = frozenset({"doc", "pointer", "default_on_error", "skip_invalid_items", "default_on_null"})
"""What of an IR value does not change which JSON its schema accepts: its words, where it is, its
leniency (the receiver's models read more with it, never less)."""


def _validated_alike(
    source: ApiSurface,
    target: ApiSurface,
    expr: Any,
    counterpart: Callable[[str], str] = lambda name: name,
) -> bool:
    """Whether every type ``expr`` refers to, and every type those refer to, is on ``target`` (under
    its ``counterpart`` name) and validated there as on ``source`` (:func:`_as_validated`)."""
    seen: set[str] = set()
    stack = list(refs_in(expr))
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        before, after = source.types.get(current), target.types.get(counterpart(current))
        if before is None or after is None or _as_validated(before) != _as_validated(after):
            return False
        stack.extend(references_of(before))
    return True


def _as_validated(value: Any) -> Any:
    """An IR value (a type, a field, an expression) as its schema validates it, comparable with ``==``:
    every dataclass field but those of :data:`_NOT_VALIDATED`, recursively."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            tuple(
                (f.name, _as_validated(getattr(value, f.name)))
                for f in dataclasses.fields(value)
                if f.name not in _NOT_VALIDATED
            ),
        )
    if isinstance(value, (tuple, list)):
        return tuple(_as_validated(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((k, _as_validated(v)) for k, v in value.items()))
    return value


LENIENT_THERE = (
    "the receiver's models read the field leniently (x-deserialize-default-on-error): a value its "
    "schema refuses there is read as omitted, so no message is refused at it"
)
"""Why a constraint on a field is not searchable, when :meth:`Planner.refuses_nothing` says so."""
OPEN_THERE = (
    "the receiver's models read any JSON object as this type (every field optional, extra keys "
    "kept, nothing checked of the object as a whole), and every message of the sender's type is one"
)
"""Why a change to a type as a whole is not searchable, when :meth:`Planner.refuses_nothing` says so."""


ITEMS_SKIPPED = (
    "the receiver's models still skip the list's invalid items (x-deserialize-skip-invalid-items) and "
    "the list has no minimum length, so a list the sender's schema accepts is read whatever its items"
)
"""Why a removed ``x-deserialize-default-on-error`` is not searchable on a list that still skips items."""


def _skips_any_item(f: IrField) -> bool:
    """Whether the models read every list at ``f`` without an error: its invalid items skipped, and no
    minimum length a list left shorter could fall below (``null``, when allowed, is valid as it is)."""
    expr = f.type.inner if isinstance(f.type, Nullable) else f.type
    return f.skip_invalid_items and isinstance(expr, ArrayOf) and not expr.constraints.min_items


@dataclass(frozen=True)
class Plan:
    """Where to look for one change in one direction: the ``$defs`` type to generate, the anchor to hit."""

    direction: Direction
    root: str | None
    anchor: Anchor | None
    reason: str = NOT_SEARCHABLE
    """Why no message can carry the change, when ``root`` or ``anchor`` is ``None``."""

    @property
    def searchable(self) -> bool:
        """Whether a search can show the change: there is a type to generate and an anchor to hit."""
        return self.root is not None and self.anchor is not None


@dataclass(frozen=True)
class Carrier:
    """A whole message a peer receives (a method's params or result, or a JSON-RPC envelope) and the
    ``$defs`` entries from it down to a type it carries (``chain``: the message's own first, the carried
    one last).  ``to`` is the peer that receives it; ``not_to`` the one that sends it, when any other
    peer may receive it (a result goes back to whoever called, an envelope to the other end)."""

    words: str
    """``params of notification session/update (handled by the client)``, ``AgentResponse message``."""
    chain: tuple[str, ...]
    to: str | None = None
    not_to: str | None = None

    @classmethod
    def of_method(cls, method: Method, which: str, chain: tuple[str, ...]) -> Carrier:
        words = f"{which} of {method.kind} {method.wire_name} (handled by the {method.side})"
        if which == "params":
            return cls(words, chain, to=method.side)
        return cls(words, chain, not_to=method.side)

    @property
    def schema_name(self) -> str:
        return self.chain[0]

    def receivers(self, peers: Iterable[str]) -> frozenset[str]:
        """Which of ``peers`` receive it."""
        return frozenset(p for p in peers if (self.to is None or p == self.to) and p != self.not_to)

    def received_by(self, peers: frozenset[str]) -> bool:
        """Whether one of ``peers`` receives it (every message, without peers to ask about)."""
        return not peers or bool(self.receivers(peers))


def _ref(schema_name: str) -> str:
    return "#/$defs/" + schema_name.replace("~", "~0").replace("/", "~1")


@dataclass
class Planner:
    """Where the changes of one stability level can be searched for, from the two surfaces alone: the
    ``$defs`` type to generate messages from in each direction, and the anchor a refusal must be at."""

    old: ApiSurface
    new: ApiSurface
    renames: dict[str, str] = field(init=False)
    renamed_from: dict[str, str] = field(init=False)

    _reverse: dict[int, dict[str, set[str]]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.renames = detect_renames(self.old, self.new)
        self.renamed_from = {n: o for o, n in self.renames.items()}

    # -- the whole messages that carry a type ------------------------------------------------------

    def _referrers(self, surface: ApiSurface) -> dict[str, set[str]]:
        """Each ``$defs`` entry of ``surface`` -> the entries whose definition refers to it."""
        key = id(surface)
        if key not in self._reverse:
            found: dict[str, set[str]] = {}
            for named in surface.types.values():
                outer = def_of(named)
                for name in references_of(named):
                    inner = surface.types.get(name)
                    entry = def_of(inner) if inner is not None else None
                    if outer is not None and entry is not None and entry != outer:
                        found.setdefault(entry, set()).add(outer)
            self._reverse[key] = found
        return self._reverse[key]

    def carriers(self, direction: Direction, root: str, peers: frozenset[str] = frozenset()) -> list[Carrier]:
        """The whole messages of the generating side that carry ``$defs[root]`` and that one of ``peers``
        receives (any, without peers), their counterparts on the trying side too, nearest first."""
        source, _ = self.surfaces(direction)
        toward: dict[str, str | None] = {root: None}
        queue = [root]
        referrers = self._referrers(source)
        for current in queue:
            for outer in sorted(referrers.get(current, ())):
                if outer not in toward:
                    toward[outer] = current
                    queue.append(outer)
        found: list[Carrier] = []

        def chain_from(name: str | None) -> tuple[str, ...] | None:
            named = source.types.get(name) if name else None
            top = def_of(named) if named is not None else None
            if top is None or top not in toward or self.target_def(direction, top) is None:
                return None
            chain = [top]
            while (following := toward[chain[-1]]) is not None:
                chain.append(following)
            return tuple(chain)

        for method in source.methods:
            for which, name in (("params", method.params), ("result", method.result)):
                chain = chain_from(name)
                if chain is not None:
                    found.append(Carrier.of_method(method, which, chain))
        for envelope, sender in source.envelopes.items():
            chain = chain_from(envelope)
            if chain is not None:
                found.append(Carrier(f"{envelope} message (sent by the {sender})", chain, not_to=sender))
        kept = {c.words: c for c in found if c.received_by(peers)}
        return sorted(kept.values(), key=lambda c: (len(c.chain), c.words))

    PREDICTED = frozenset({RuleId.METHOD_REMOVED, RuleId.NOTIFICATION_REMOVED})
    """Rules whose message the rule itself predicts (:meth:`Pair.predicted`)."""

    def removed_method(self, change: Change) -> Method | None:
        """The old release's method a ``method-removed`` or ``notification-removed`` change names."""
        match change.path:
            case (MethodPart(name=wire, method_kind=kind, side=side),) if change.rule.id in self.PREDICTED:
                return next(
                    (m for m in self.old.methods if (m.wire_name, m.kind, m.side) == (wire, kind, side)), None
                )
        return None

    @staticmethod
    def refusers(change: Change, direction: Direction) -> frozenset[str]:
        """The peers that refuse a witness of ``change`` in ``direction``: the old receivers of a new
        message, the new receivers of an old one."""
        flow = change.flow.old if direction == "receivers" else change.flow.new
        return frozenset(flow.receivers)

    def surfaces(self, direction: Direction) -> tuple[ApiSurface, ApiSurface]:
        """(the surface messages are generated from, the surface whose models try them)."""
        return (self.new, self.old) if direction == "receivers" else (self.old, self.new)

    def counterpart(self, direction: Direction, name: str) -> str:
        """A type's name on the trying side, from its name on the generating side."""
        return self.renamed_from.get(name, name) if direction == "receivers" else self.renames.get(name, name)

    def target_type(self, direction: Direction, schema_name: str) -> NamedType | None:
        """The type on the trying side for a ``$defs`` entry of the generating side."""
        source, target = self.surfaces(direction)
        named = source.by_schema_name(schema_name)
        return target.types.get(self.counterpart(direction, named.name)) if named is not None else None

    def target_def(self, direction: Direction, schema_name: str) -> str | None:
        """The ``$defs`` entry on the trying side for an entry of the generating side."""
        other = self.target_type(direction, schema_name)
        return other.schema_name if other is not None else None

    # -- a change and its anchor -----------------------------------------------------------------

    def plan(self, change: Change, direction: Direction) -> Plan:
        """The ``$defs`` type whose messages can show a change in one direction, and the change's anchor
        there, named as on the generating side (both ``None`` when no message can carry it)."""
        reason = not_shown(change, self.old, self.new)
        if reason is not None:
            return Plan(direction, None, None, reason)
        plan = self.located(change, direction)
        reason = self.refuses_nothing(direction, plan.anchor) if plan.anchor is not None else None
        return Plan(direction, None, None, reason) if reason is not None else plan

    def refuses_nothing(self, direction: Direction, anchor: Anchor) -> str | None:
        """Why the trying side's models refuse no message at ``anchor`` (``None``: they may), read from
        the trying side's type there (:data:`LENIENT_THERE`, :data:`OPEN_THERE`)."""
        source, target = self.surfaces(direction)
        mine, theirs = (
            source.types.get(anchor.type),
            target.types.get(self.counterpart(direction, anchor.type)),
        )
        if anchor.members or not isinstance(theirs, ObjectType):
            return None
        if anchor.field is not None and anchor.keyword in ERRORS_OF_KEYWORDS:
            found = next((f for f in target.all_fields(theirs.name) if f.wire_name == anchor.field), None)
            return LENIENT_THERE if found is not None and found.default_on_error else None
        if (
            anchor.whole
            and mine is not None
            and objects_only(source, mine)
            and takes_any_object(target, theirs)
        ):
            return OPEN_THERE
        return None

    def located(self, change: Change, direction: Direction) -> Plan:
        """:meth:`plan`, for a change :func:`not_shown` says no message shows too (the oracle checks so)."""
        source, _ = self.surfaces(direction)
        match change.path:
            case (TypePart(name=name), *_):
                start: str | None = name if direction == "receivers" else self.renamed_from.get(name, name)
            case (MethodPart(name=wire, method_kind=kind, side=side), MessagePart(which=which), *_):
                methods = [m for m in source.methods if (m.wire_name, m.kind, m.side) == (wire, kind, side)]
                start = (methods[0].params if which == "params" else methods[0].result) if methods else None
            case _:
                start = None
        named = source.types.get(start) if start is not None else None
        if start is None or named is None:
            return Plan(direction, None, None)
        anchor = anchor_of(change.path, start)
        if change.rule.id in _EXCLUSIVITY_RULES:  # only an error about matching several members is at it
            anchor = dataclasses.replace(anchor, keyword=EXCLUSIVITY)
        return Plan(direction, def_of(named), anchor)

    def plans(self, change: Change) -> list[Plan]:
        """Where to look for a change: one plan per direction its rule breaks."""
        return [self.plan(change, direction) for direction in SEARCHED_BREAKS[change.rule.breaks]]

    def read_plans(self, change: Change) -> list[Plan]:
        """Where to look for a change the trying side's models refuse no message of
        (:meth:`refuses_nothing`: a lenient field, an open object), for a message they read otherwise
        (:meth:`Pair.read_leniently`): one plan per such direction its rule breaks."""
        if not_shown(change, self.old, self.new) is not None:
            return []
        found = []
        for direction in SEARCHED_BREAKS[change.rule.breaks]:
            plan = self.located(change, direction)
            if (
                plan.anchor is not None
                and self.refuses_nothing(direction, plan.anchor) is not None
                and not self.read_as_refused(direction, plan.anchor)
            ):
                found.append(plan)
        return found

    def read_as_refused(self, direction: Direction, anchor: Anchor) -> bool:
        """Whether the trying side's lenient reading of every value it refuses at ``anchor`` (and the
        generating side accepts) is that value itself, so that no message is read otherwise there:
        a list made to hold at least one item (``minItems`` 1, none before), whose only value refused
        is the empty list, at a field the trying side reads leniently (its fallback for a required
        list is the empty list, as for one whose default is), the field and its items the same on
        both sides as validated but for that bound (:func:`_as_validated`; an item one side refuses
        could be dropped, leaving a list read as empty)."""
        if anchor.keyword != "minItems" or anchor.field is None or anchor.members:
            return False
        source, target = self.surfaces(direction)
        if (
            anchor.type not in source.types
            or (theirs := self.counterpart(direction, anchor.type)) not in target.types
        ):
            return False
        sent = next((f for f in source.all_fields(anchor.type) if f.wire_name == anchor.field), None)
        read = next((f for f in target.all_fields(theirs) if f.wire_name == anchor.field), None)
        if sent is None or read is None or not read.default_on_error:
            return False
        if not (read.required or read.default == []):
            return False
        if not isinstance(sent.type, ArrayOf) or not isinstance(read.type, ArrayOf):
            return False
        if (sent.type.constraints.min_items or 0) != 0 or read.type.constraints.min_items != 1:
            return False
        bound = dataclasses.replace(sent.type.constraints, min_items=1)
        as_read = dataclasses.replace(sent, type=dataclasses.replace(sent.type, constraints=bound))
        if _as_validated(dataclasses.replace(as_read, required=read.required, default=read.default)) != (
            _as_validated(read)
        ):
            return False
        return _validated_alike(source, target, sent.type, functools.partial(self.counterpart, direction))

    @staticmethod
    def groups(plans: Iterable[list[Plan]]) -> dict[tuple[Direction, str], set[Anchor]]:
        """The searches the plans need: one per direction and ``$defs`` type, with every anchor in it."""
        groups: dict[tuple[Direction, str], set[Anchor]] = {}
        for plan in plans:
            for p in plan:
                if p.root is not None and p.anchor is not None:
                    groups.setdefault((p.direction, p.root), set()).add(p.anchor)
        return groups

    def types(self, changes: Iterable[Change]) -> tuple[frozenset[str], frozenset[str]]:
        """The types whose models the searches for ``changes`` try, on the old side and on the new: the
        type each search generates from, on its side, and its counterpart on the other."""
        wanted: dict[str, set[str]] = {"old": set(), "new": set()}
        listed = list(changes)
        roots: set[tuple[Direction, str]] = set(self.groups(self.plans(change) for change in listed))
        for change in listed:  # the whole messages that carry what they search
            for plan in [*self.plans(change), *self.read_plans(change)]:
                if plan.root is None or plan.anchor is None:
                    continue
                roots.add((plan.direction, plan.root))
                peers = self.refusers(change, plan.direction)
                carriers = self.carriers(plan.direction, plan.root, peers)[:CARRIERS_RENDERED]
                roots.update((plan.direction, carrier.schema_name) for carrier in carriers)
        for change in listed:  # the params of a removed method, sent by an old caller
            removed = self.removed_method(change)
            if removed is not None and removed.params in self.old.types:
                wanted["old"].add(removed.params)
            batch = removed_batch(change, self.old)
            if batch is not None:  # the envelopes the items of an old sender's batch are
                wanted["old"].update(n for n, side in self.old.envelopes.items() if side == batch.sender)
        for direction, root in sorted(roots):
            source, _ = self.surfaces(direction)
            named, other = source.by_schema_name(root), self.target_type(direction, root)
            generating, trying = ("new", "old") if direction == "receivers" else ("old", "new")
            wanted[generating].update([named.name] if named is not None else [])
            wanted[trying].update([other.name] if other is not None else [])
        return frozenset(wanted["old"]), frozenset(wanted["new"])


class _Searches(Mapping[SearchKey, "Search | str"]):
    """A pair's searches by key: what each found (as a worker sends it), made a :class:`Search` with its
    refusals when it is first read.

    Making the refusals again builds the validators of the searched type's models, which a worker has
    built already: a cold run whose jobs weigh every change in the workers reads none of them here.
    """

    def __init__(
        self, raw: Mapping[SearchKey, Found | str], make: Callable[[SearchKey, Found | str], Search | str]
    ):
        self._raw = raw
        self._make = make
        self._made: dict[SearchKey, Search | str] = {}

    def __getitem__(self, key: SearchKey) -> Search | str:
        if key not in self._made:
            self._made[key] = self._make(key, self._raw[key])
        return self._made[key]

    def __iter__(self) -> Iterator[SearchKey]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def forget(self, key: SearchKey) -> None:
        """What was made of ``key`` before it was found again."""
        self._made.pop(key, None)


@dataclass
class Pair:
    """The two sides of one stability level of a diff, and the searches already run on them."""

    old: Side
    new: Side
    examples: int = DEFAULT_EXAMPLES
    cache: Path | None = None
    """Where generated messages are kept between runs (``None``: nowhere)."""
    fresh: bool = False
    """Whether this run rendered its models: a cold cache, whose messages must be generated too (the
    changes are then weighed on every core, :class:`Weighing`)."""
    planner: Planner = field(init=False)
    _found_raw: dict[SearchKey, Found | str] = field(default_factory=dict)
    """What each search in :attr:`_searches` found, as a worker sends it (:meth:`run_searches`)."""
    _searches: _Searches = field(init=False)

    def __post_init__(self) -> None:
        self.planner = Planner(self.old.surface, self.new.surface)
        self._searches = _Searches(self._found_raw, self._found)

    def sides(self, direction: Direction) -> tuple[Side, Side]:
        """(the side messages are generated from, the side whose models try them)."""
        return (self.new, self.old) if direction == "receivers" else (self.old, self.new)

    def target_def(self, direction: Direction, schema_name: str) -> str | None:
        """The ``$defs`` entry on the trying side for an entry of the generating side."""
        return self.planner.target_def(direction, schema_name)

    def plan(self, change: Change, direction: Direction) -> Plan:
        """:meth:`Planner.plan`."""
        return self.planner.plan(change, direction)

    def plans(self, change: Change) -> list[Plan]:
        """:meth:`Planner.plans`."""
        return self.planner.plans(change)

    def probes(self, direction: Direction, schema_name: str) -> tuple[str, ...]:
        """The strings the trying side's definition names (tags, enum values, reserved tags) and the
        generating side's does not: candidates for a free string, where the two differ."""
        source, target = self.sides(direction)
        other = self.target_def(direction, schema_name)
        if other is None:
            return ()
        return tuple(sorted(constants(target.defs, other) - constants(source.defs, schema_name)))

    def search(
        self,
        direction: Direction,
        schema_name: str,
        wanted: frozenset[Anchor] = frozenset(),
        examples: int | None = None,
    ) -> Search | str:
        """The refusals among the generated messages of ``$defs[schema_name]``, or why there are none.

        With ``wanted``, generation stops once every one of those anchors has a
        refusal at it.  ``examples`` defaults to the pair's.  A search
        :func:`search_all` ran already is not run again.
        """
        key = self.key(direction, schema_name, wanted, examples)
        if key not in self._searches:
            self.keep(key, self._search(*key))
        return self._searches[key]

    def keep(self, key: SearchKey, found: Found | str) -> None:
        """Keep what the search ``key`` found (here or in a worker), its refusals made again here when
        it is first read (:class:`_Searches`)."""
        self._found_raw[key] = found
        self._searches.forget(key)

    def key(
        self,
        direction: Direction,
        schema_name: str,
        wanted: frozenset[Anchor] = frozenset(),
        examples: int | None = None,
    ) -> SearchKey:
        """How :meth:`search` with these arguments is known (to :func:`search_all`)."""
        return (schema_name, direction, wanted, self.examples if examples is None else examples)

    def _found(self, key: SearchKey, found: Found | str) -> Search | str:
        """A search's messages, with the refusals made again here (a worker sends the messages only)."""
        if isinstance(found, str):
            return found
        schema_name, direction, _, _ = key
        source, _ = self.sides(direction)
        root = source.surface.by_schema_name(schema_name)
        target_name = self.target_def(direction, schema_name)
        assert root is not None and target_name is not None
        refusals = []
        for index, instance in found.refused:
            refusal = self.refusal(direction, schema_name, target_name, root, instance)
            assert refusal is not None
            refusals.append(dataclasses.replace(refusal, index=index))
        return Search(found.generated, found.distinct, tuple(refusals))

    def generation(self, direction: Direction, schema_name: str) -> str:
        """What the messages of a search are generated from (two searches with the same share them)."""
        source, _ = self.sides(direction)
        if schema_name not in source.defs:
            return ""
        try:
            schema = generation_schema(source.defs, schema_name, self.probes(direction, schema_name))
        except (ValueError, KeyError):
            return ""
        return canonical(schema)

    def _search(
        self, schema_name: str, direction: Direction, wanted: frozenset[Anchor], examples: int
    ) -> Found | str:
        source, target = self.sides(direction)
        root = source.surface.by_schema_name(schema_name)
        target_name = self.target_def(direction, schema_name)
        if root is None or target_name is None or target.models.adapter(target_name) is None:
            return f"{schema_name} has no model on both sides"
        if source.models.adapter(schema_name) is None:
            return f"{schema_name} has no model"
        found: list[tuple[int, Any]] = []
        seen: set[str] = set()
        missing = set(wanted)

        def accept(instance: Any) -> bool:
            text = canonical(instance)
            if text in seen:
                return False
            seen.add(text)
            refusal = self.refusal(direction, schema_name, target_name, root, instance)
            if refusal is not None:
                found.append((len(seen), instance))
                missing.difference_update({a for a in missing if refusal.at(a) is not None})
            return bool(wanted) and not missing

        def shown(anchor: Anchor, instance: Any) -> bool:
            return accept(instance) or anchor not in missing

        schema = generation_schema(source.defs, schema_name, self.probes(direction, schema_name))
        count = 0
        for anchor in sorted(wanted, key=repr):  # first the messages built at each anchor
            for instance in built_at(schema, root, anchor):
                if anchor not in missing:
                    break
                count += 1
                shown(anchor, instance)
        try:
            for anchor in sorted(wanted, key=repr):
                narrowed = at_anchor(schema, root, anchor)
                if narrowed is not None and anchor in missing:
                    count += instances(narrowed, TARGETED, functools.partial(shown, anchor), self.cache)
            if missing or not wanted:
                count += instances(schema, examples, accept, self.cache)
        except ValueError as error:
            return f"the generator cannot read {schema_name}: {error}"
        return Found(count, len(seen), tuple(found))

    def refusal(
        self, direction: Direction, schema_name: str, target_name: str, root: NamedType, instance: Any
    ) -> Refusal | None:
        """A refusal if ``instance`` is valid on the generating side and refused by the other's models."""
        source, target = self.sides(direction)
        if (
            not source.valid(schema_name, instance)
            or source.models.refusal(schema_name, instance) is not None
        ):
            return None
        error = target.models.refusal(target_name, instance)
        if error is None:
            return None
        return Refusal(instance, error, located_errors(source.surface, root, instance, error))

    def requests(self, changes: Iterable[Change], then: bool = False) -> list[SearchKey]:
        """The searches :meth:`evidence` runs for these changes (for :func:`search_all`), in two waves.

        First the search of each change's first direction; with ``then``, after those have run, the
        searches of its other direction, for the changes its first did not show (a change that
        breaks both sides needs one message, and the first direction usually has it).  Each search
        looks for every anchor planned in its ``$defs`` type and direction, whichever wave runs it.
        """
        planned = [
            [p for p in self.plans(change) if p.root is not None and p.anchor is not None]
            for change in changes
        ]
        groups = self.planner.groups(planned)
        keys = {where: self.key(where[0], where[1], frozenset(anchors)) for where, anchors in groups.items()}
        first = {_where(plan[0]) for plan in planned if plan}
        wanted = first
        if then:
            wanted = {
                _where(later)
                for plan in planned
                if plan and not self._shows(keys[_where(plan[0])], plan[0])
                for later in plan[1:]
            } - first
        return [keys[where] for where in sorted(wanted)]

    def _shows(self, key: SearchKey, plan: Plan) -> bool:
        """Whether the search ``key``, run already, has a refusal at the plan's anchor."""
        found = self._searches.get(key)
        return (
            isinstance(found, Search)
            and plan.anchor is not None
            and any(r.at(plan.anchor) is not None for r in found.refusals)
        )

    def evidence(self, changes: Iterable[Change]) -> dict[int, Evidence | NoEvidence]:
        """For each change (by its index in ``changes``): the smallest message refused at its location,
        or why there is none.

        Changes whose messages come from the same ``$defs`` type and direction
        share one search, which stops once every one of them has a refusal; a
        change's other direction is searched only if its first shows nothing.
        """
        listed = list(changes)
        searched = self.searched(listed)
        return {index: self.evidence_of(change, searched) for index, change in enumerate(listed)}

    def searched(self, changes: Iterable[Change]) -> Searched:
        """The searches of ``changes`` (each run here unless :func:`search_all` ran it already), by
        direction and ``$defs`` type: what :meth:`evidence_of` reads for each of them."""
        listed = list(changes)
        search_all((self, key) for key in self.requests(listed))
        search_all((self, key) for key in self.requests(listed, then=True))
        return {
            (d, root): self._searches[key]
            for (d, root), anchors in self.planner.groups(self.plans(change) for change in listed).items()
            if (key := self.key(d, root, frozenset(anchors))) in self._searches
        }

    def evidence_of(self, change: Change, searched: Searched) -> Evidence | NoEvidence:
        """The evidence of one change of those :meth:`searched` ran the searches of: the smallest
        message refused at its location in a whole message (or the message its rule predicts, or a
        lenient reading), or why there is none.  It depends on that change and those searches only
        (a search it runs more of is one another change would run the same), so the changes of a
        diff can be weighed in any order, or at once (:func:`evidence_all`)."""
        plan = self.plans(change)
        tried = 0
        reasons: list[str] = []
        for p in plan:
            if p.root is None or p.anchor is None:
                continue
            found = searched.get((p.direction, p.root))
            if found is None:  # not run: the first direction showed it
                continue
            if isinstance(found, str):
                reasons.append(found)
                continue
            tried += found.generated
            matching = [r for r in found.refusals if r.at(p.anchor) is not None]
            if matching:
                witness, why = self.first_witness(change, p, matching)
                if witness is None:  # the search stopped at refusals of the type alone: search on
                    whole = self.search(p.direction, p.root)
                    if isinstance(whole, Search):
                        tried += whole.generated
                        more = [r for r in whole.refusals if r.at(p.anchor) is not None]
                        witness, why = self.first_witness(change, p, more)
                if witness is not None:
                    return witness
                reasons.append(why)
        predicted = self.predicted(change) or self.read_leniently(change)
        if predicted is not None:
            return predicted
        if not any(p.searchable for p in plan):
            return unsearchable(plan)
        if tried == 0:
            return NoEvidence(0, "; ".join(dict.fromkeys(reasons)), searchable=False)
        return NoEvidence(tried, "; ".join(dict.fromkeys(reasons)))

    def predicted(self, change: Change) -> Evidence | None:
        """The message the rule itself predicts, where the search found none: for a method or
        notification the new release no longer handles, an old caller's call of it (its params
        generated from the old schema, valid there and accepted by the old models), which the new
        handler's dispatcher refuses (``-32601``) or ignores (``None``: no such rule, or no message)."""
        removed = self.planner.removed_method(change)
        if removed is None:
            return self.predicted_batch(change)
        params = self.old.surface.types.get(removed.params)
        top = def_of(params) if params is not None else None
        if top is None or self.old.models.adapter(top) is None:
            return None
        if any(
            (m.wire_name, m.kind, m.side) == (removed.wire_name, removed.kind, removed.side)
            for m in self.new.surface.methods
        ):
            return None

        def sendable(instance: Any) -> bool:
            return self.old.valid(top, instance) and self.old.models.refusal(top, instance) is None

        first = self.first_kept(lambda: generation_schema(self.old.defs, top), TARGETED, sendable)
        if first is None:
            return None
        call = {"id": 0} if removed.kind == "request" else {}
        params = shrink(first, sendable)
        message = {"jsonrpc": "2.0", **call, "method": removed.wire_name, "params": params}
        answer = (
            f"-32601 Method not found: the {self.new.release} {removed.side} handles no {removed.wire_name}"
            if removed.kind == "request"
            else f"ignored: the {self.new.release} {removed.side} handles no {removed.wire_name} notification"
        )
        callers = sorted(change.flow.old.senders - {removed.side}) or sorted(change.flow.old.senders)
        return Evidence(
            message=message,
            schema_type=top,
            sent_by=_peers(self.old.release, callers),
            refused_by=_peers(self.new.release, [removed.side]),
            error=answer,
            schema_refuses=False,
            by_dispatch=True,
            carrier=f"{removed.kind} {removed.wire_name} (handled by the {removed.side})",
        )

    def predicted_batch(self, change: Change) -> Evidence | None:
        """For a batch the new release no longer has (:mod:`.batches`): an old sender's batch, valid
        under the old schema's root, each item accepted by one of the sender's old envelope models,
        which the new schema's root refuses and the new receiver's dispatcher answers with ``-32600``
        (``None``: no such rule, or no batch generated)."""
        batch = removed_batch(change, self.old.surface)
        member = batch_member(self.old.schema, batch) if batch is not None else None
        if batch is None or member is None:
            return None
        kind = batch_kind(self.old.surface, batch)
        sendable = sendable_batch(self.old.surface, batch, self.old.valid_root, self.old.models.refusal)

        def keeps(instance: Any) -> bool:
            return sendable(instance) and batch_refused(
                self.new.surface, batch, kind, self.new.valid_root, instance
            )

        first = self.first_kept(
            lambda: generation_schema({**self.old.defs, BATCH_KEY: member}, BATCH_KEY),
            DEFAULT_EXAMPLES,
            keeps,
        )
        if first is None:
            return None
        receivers = sorted(change.flow.old.receivers) or sorted(
            p for p in self.new.surface.envelopes.values() if p != batch.sender
        )
        return Evidence(
            message=shrink(first, keeps),
            schema_type=batch.name,
            sent_by=_peers(self.old.release, [batch.sender]),
            refused_by=_peers(self.new.release, receivers),
            error=(
                f"-32600 Invalid Request: the {self.new.release} schema has no {batch.name}, and its "
                f"runtime takes no {kind} batch from the {batch.sender}"
            ),
            schema_refuses=True,
            by_dispatch=True,
            carrier=f"batch {batch.name}",
        )

    def _read_otherwise(
        self, direction: Direction, root: str, anchor: Anchor, examples: int | None, value: Any = ABSENT
    ) -> Any | None:
        """The smallest generated message of ``$defs[root]`` the trying side's models read otherwise at
        ``anchor`` (:meth:`reading`), ``None``: none of ``examples`` (the pair's by default).

        ``value`` is the value the change's set proof names at the anchor (one the generating side
        accepts and the trying side's schema refuses): where the anchor is a field of ``root`` itself,
        the messages built there (:func:`built_at`) carrying that value are tried first."""
        source, target = self.sides(direction)
        named, other = source.surface.by_schema_name(root), self.target_def(direction, root)
        if named is None or other is None or target.models.adapter(other) is None:
            return None

        def keeps(instance: Any) -> bool:
            return self.reading(direction, root, other, named, instance, anchor) is not None

        schema = generation_schema(source.defs, root, self.probes(direction, root))
        if (
            value is not ABSENT
            and anchor.field is not None
            and not anchor.members
            and anchor.type == named.name
        ):
            field_name = anchor.field
            for message in built_at(schema, named, anchor):
                candidate = {**message, field_name: value} if isinstance(message, dict) else None
                if candidate is not None and keeps(candidate):
                    return shrink(candidate, keeps)
        first = self.first_kept(lambda: schema, self.examples if examples is None else examples, keeps)
        return shrink(first, keeps) if first is not None else None

    def first_kept(
        self, schema: Callable[[], Any], examples: int, keeps: Callable[[Any], bool]
    ) -> Any | None:
        """The first instance of ``schema()`` that ``keeps`` takes: of those built with the fewest fields
        (:func:`~.instances.built`: what a rule predicts is usually such a message, a batch of one
        envelope, a call with its required params), then of ``examples`` generated ones (``None``:
        none did, or the schema cannot be generated from)."""
        found: list[Any] = []

        def accept(instance: Any) -> bool:
            if keeps(instance):
                found.append(instance)
            return bool(found)

        try:
            generating = schema()
            if not any(accept(instance) for instance in built(generating)):
                instances(generating, examples, accept, self.cache)
        except (ValueError, KeyError):
            return None
        return found[0] if found else None

    def first_hit(self, change: Change) -> int | None:
        """The first of the distinct messages of a search already run that showed the change (1 for
        the first message; ``None``: none did)."""
        hits = [
            refusal.index
            for p in self.plans(change)
            if p.anchor is not None
            for (schema_name, direction, _, _), found in self._searches.items()
            if (direction, schema_name) == (p.direction, p.root) and not isinstance(found, str)
            for refusal in found.refusals
            if refusal.index and refusal.at(p.anchor) is not None
        ]
        return min(hits) if hits else None

    def first_witness(
        self, change: Change, plan: Plan, refusals: Iterable[Refusal]
    ) -> tuple[Evidence | None, str]:
        """The witness of the first of the :data:`WITNESS_TRIES` smallest refusals that gives one
        (:meth:`witness`), or ``None`` and why the smallest gives none."""
        ordered = sorted(refusals, key=lambda r: (size(r.instance), canonical(r.instance)))
        first_why = "no refused message"
        for number, refusal in enumerate(ordered[:WITNESS_TRIES]):
            witness, why = self.witness(change, plan, refusal)
            if witness is not None:
                return witness, ""
            first_why = why if number == 0 else first_why
        return None, first_why

    def witness(self, change: Change, plan: Plan, best: Refusal) -> tuple[Evidence | None, str]:
        """The witness a refused message of the searched type gives: the smallest such message, made
        smaller, wrapped in a whole message a refusing peer receives (:meth:`whole`); or ``None`` and
        why no whole message carrying it is one."""
        direction, root, anchor = plan.direction, plan.root, plan.anchor
        assert root is not None and anchor is not None
        source, _ = self.sides(direction)
        target_name = self.target_def(direction, root)
        named = source.surface.by_schema_name(root)
        assert target_name is not None and named is not None

        def keeps(instance: Any) -> bool:
            refusal = self.refusal(direction, root, target_name, named, instance)
            return refusal is not None and refusal.at(anchor) is not None

        message = shrink(best.instance, keeps)
        return self.whole(change, plan, message)

    def whole(self, change: Change, plan: Plan, message: Any) -> tuple[Evidence | None, str]:
        """``message`` (of the searched type, refused at the change) inside a whole message a refusing
        peer receives, checked as that peer reads it: valid under the sending side's schema and
        accepted by its models, refused by the other side's models at the change's anchor; or
        ``None`` and why none of the :data:`CARRIERS_TRIED` nearest is.

        The whole message is generated from its own schema with the fields and union members on the
        way to the searched type made present (:func:`~.instances.through`) and the searched type
        fixed to ``message``, then made smaller while it stays a witness.
        """
        direction, root, anchor = plan.direction, plan.root, plan.anchor
        assert root is not None and anchor is not None
        source, target = self.sides(direction)
        carriers = self.planner.carriers(direction, root, self.planner.refusers(change, direction))
        if not carriers:
            return None, f"no message a refusing peer receives carries {root}"
        tried: list[str] = []
        read_leniently: set[tuple[str, ...]] = set()
        for carrier in carriers[:CARRIERS_TRIED]:
            top, other = carrier.schema_name, self.target_def(direction, carrier.schema_name)
            named = source.surface.by_schema_name(top)
            if other is None or named is None or target.models.adapter(other) is None:
                continue
            if self.carries_leniently(direction, carrier) or self.envelope_of(
                direction, carrier, read_leniently
            ):
                read_leniently.add(carrier.chain)
                tried.append(f"{carrier.words}, whose models read it leniently")
                continue

            def keeps(instance: Any, top: str = top, other: str = other, named: NamedType = named) -> bool:
                refusal = self.refusal(direction, top, other, named, instance)
                return refusal is not None and refusal.at(anchor) is not None

            found = self._carried(direction, carrier, message, keeps)
            tried.append(carrier.words)
            if found is None:
                continue
            found = shrink(found, keeps)
            refusal = self.refusal(direction, top, other, named, found)
            assert refusal is not None
            error = refusal.at(anchor)
            assert error is not None
            # a new sender's message refused by an old receiver, or the reverse
            return self._evidence(change, direction, carrier, found, error.line(), other), ""
        lenient = self.whole_read(change, plan, message, carriers[:CARRIERS_TRIED])
        if lenient is not None:
            return lenient, ""
        where = "; ".join(tried) or "none has a model on both sides"
        return None, (
            f"a {root} alone is refused, but no whole message a refusing peer receives that carries it is "
            f"(tried: {where})"
        )

    def method_named(self, direction: Direction, carrier: Carrier) -> dict[str, Any] | None:
        """The raw schema of an envelope ``carrier`` (the chain narrowed already) with its ``method``
        fixed to the wire names of the methods whose params are the next entry of its chain (``None``:
        no envelope, or no such method): an envelope's schema takes any string there, which its models
        then read against the params, so a message built with its fewest fields names the method that
        carries them (:meth:`_carried`; random messages are generated from the schema as it is)."""
        source, _ = self.sides(direction)
        top = source.surface.by_schema_name(carrier.schema_name)
        if top is None or top.name not in source.surface.envelopes or len(carrier.chain) < 2:
            return None
        inner = carrier.chain[1]
        names = sorted(
            {
                m.wire_name
                for m in source.surface.methods
                if (params := source.surface.types.get(m.params)) is not None and def_of(params) == inner
            }
        )
        node = source.defs.get(carrier.schema_name)
        narrowed = through(node, _ref(inner)) if isinstance(node, dict) else None
        if not names or narrowed is None or "method" not in narrowed.get("properties", {}):
            return None
        return {**narrowed, "properties": {**narrowed["properties"], "method": {"enum": names}}}

    def envelope_of(self, direction: Direction, carrier: Carrier, lenient: set[tuple[str, ...]]) -> bool:
        """Whether ``carrier`` is an envelope that carries the type only as the params of a method
        (:meth:`method_named`) whose own carrier, the rest of its chain, is one of ``lenient`` (read
        leniently where it holds the type): the envelope's models read those params with the same
        models, so no envelope message is refused there either."""
        return carrier.chain[1:] in lenient and self.method_named(direction, carrier) is not None

    def carries_leniently(self, direction: Direction, carrier: Carrier) -> bool:
        """Whether the trying side's models read every place a ``carrier`` message holds the type it
        carries leniently (:func:`~.walk.carried_leniently`): none is refused there, so no message of
        it is generated for a refusal (:meth:`whole_read` may still show how they read one)."""
        source, target = self.sides(direction)
        top = source.surface.by_schema_name(carrier.schema_name)
        other = self.planner.target_type(direction, carrier.schema_name)
        if len(carrier.chain) < 2 or top is None or other is None:
            return False
        return carried_leniently(source.surface, target.surface, top, other, carrier.chain[-1])

    def reading(
        self, direction: Direction, top: str, other: str, named: NamedType, instance: Any, anchor: Anchor
    ) -> tuple[LenientRead, str] | None:
        """Where the trying side's models, accepting ``instance`` (a ``$defs[top]`` valid on the
        generating side and accepted by its models), read it otherwise than it was sent at ``anchor``
        (:func:`~.lenient.lost_at`), and why their strict reading refuses what they lose there."""
        source, target = self.sides(direction)
        if not source.valid(top, instance) or source.models.refusal(top, instance) is not None:
            return None
        adapter = target.models.adapter(other)
        if adapter is None:
            return None
        try:
            read = adapter.dump_python(
                adapter.validate_python(copy.deepcopy(instance)), mode="json", by_alias=True
            )
        except Exception:  # refused, or not dumped back: no lenient reading to show
            return None

        def refused(inner: NamedType, value: Any) -> tuple[Located, ...]:
            there = self.target_def(direction, inner.schema_name) if inner.schema_name else None
            error = target.models.refusal(there, value) if there is not None else None
            return () if error is None else located_errors(source.surface, inner, value, error)

        return lost_at(source.surface, named, instance, read, anchor, refused)

    def whole_read(
        self, change: Change, plan: Plan, message: Any, carriers: list[Carrier]
    ) -> Evidence | None:
        """``message`` inside a whole message of one of ``carriers`` that the trying side's models accept
        but read leniently, losing it at the change (:meth:`reading`); ``None``: none does."""
        direction, anchor = plan.direction, plan.anchor
        assert anchor is not None
        source, target = self.sides(direction)
        for carrier in carriers:
            top, other = carrier.schema_name, self.target_def(direction, carrier.schema_name)
            named = source.surface.by_schema_name(top)
            if other is None or named is None or target.models.adapter(other) is None:
                continue

            def keeps(instance: Any, top: str = top, other: str = other, named: NamedType = named) -> bool:
                return self.reading(direction, top, other, named, instance, anchor) is not None

            found = self._carried(direction, carrier, message, keeps)
            if found is None:
                continue
            found = shrink(found, keeps)
            shown = self.reading(direction, top, other, named, found, anchor)
            assert shown is not None
            return self._evidence(change, direction, carrier, found, shown[1], other, shown[0])
        return None

    def _evidence(
        self,
        change: Change,
        direction: Direction,
        carrier: Carrier,
        message: Any,
        error: str,
        other: str,
        read: LenientRead | None = None,
    ) -> Evidence:
        """The witness ``message`` of ``carrier`` gives: who sends it, who refuses (or misreads) it."""
        source, target = self.sides(direction)
        traffic = change.flow
        source_flow, target_flow = (
            (traffic.new, traffic.old) if direction == "receivers" else (traffic.old, traffic.new)
        )
        refusing = carrier.receivers(target_flow.receivers) or frozenset(target_flow.receivers)
        sending = frozenset(source_flow.senders) - refusing or frozenset(source_flow.senders)
        return Evidence(
            message=message,
            schema_type=carrier.schema_name,
            sent_by=_peers(source.release, sending),
            refused_by=_peers(target.release, refusing),
            error=error,
            schema_refuses=not target.valid(other, message),
            carrier=carrier.words,
            read=read,
        )

    def read_leniently(self, change: Change, examples: int | None = None) -> Evidence | None:
        """A witness, for a change the trying side's models refuse no message of (a lenient field, an
        open object: :meth:`Planner.refuses_nothing`), of how they read one: a message of the change's
        type they accept but read otherwise at the change (:meth:`reading`), in a whole message that
        carries it (``None``: none of the messages generated)."""
        for plan in self.planner.read_plans(change):
            direction, root, anchor = plan.direction, plan.root, plan.anchor
            if root is None or anchor is None:
                continue
            proof = change.proof
            value = ABSENT if proof is None else proof.only_old if direction == "senders" else proof.only_new
            message = self._read_otherwise(direction, root, anchor, examples, value)
            if message is None:
                continue
            carriers = self.planner.carriers(direction, root, self.planner.refusers(change, direction))
            shown = self.whole_read(change, plan, message, carriers[:CARRIERS_TRIED])
            if shown is not None:
                return shown
        return None

    def _carried(
        self, direction: Direction, carrier: Carrier, message: Any, keeps: Callable[[Any], bool]
    ) -> Any | None:
        """A message of ``carrier`` (on the generating side of ``direction``) with ``message`` inside,
        for which ``keeps`` holds: of those built with the fewest fields around it (an envelope's
        method named after the params it carries, :meth:`method_named`), then of :data:`WRAPS`
        generated ones (``None``: none is)."""
        if len(carrier.chain) == 1:
            return message if keeps(message) else None
        source, _ = self.sides(direction)
        defs = dict(source.defs)
        for outer, inner in itertools.pairwise(carrier.chain):
            narrowed = through(defs[outer], _ref(inner))
            if narrowed is None:
                return None
            defs[outer] = narrowed
        defs[carrier.chain[-1]] = {"const": message}
        try:
            schema = generation_schema(defs, carrier.schema_name)
            named = self.method_named(direction, carrier)
            fixed = (
                generation_schema({**defs, carrier.schema_name: named}, carrier.schema_name)
                if named
                else None
            )
        except (ValueError, KeyError):
            return None
        hits: list[Any] = []

        def accept(instance: Any) -> bool:
            if keeps(instance):
                hits.append(instance)
                return True
            return False

        if any(accept(instance) for instance in [*built(fixed), *built(schema)]):
            return hits[0]
        try:
            instances(schema, WRAPS, accept, self.cache)
        except ValueError:
            return None
        return hits[0] if hits else None


def at_anchor(schema: Any, root: NamedType, anchor: Anchor) -> Any | None:
    """The generation schema of ``root`` kept to messages that reach ``anchor``, where the anchor is on
    ``root`` itself: a union's member by its tag, or an object's optional field made required where the
    anchor is a constraint on its value (``None``: no such narrowing; a field's other changes, such as
    becoming required, may need the field absent).  Each message of it is one of ``root`` too."""
    if anchor.type != root.name:
        return None
    match anchor.members:
        case (("tag", value), *_) if isinstance(root, UnionType) and root.tag_wire_name is not None:
            return with_tag(schema, root.tag_wire_name, value)
        case () if anchor.field is not None and anchor.keyword is not None and isinstance(root, ObjectType):
            return with_field(schema, anchor.field)  # a constraint on its value (absence shows no other)
    return None


def built_at(schema: Any, root: NamedType, anchor: Anchor) -> list[Any]:
    """The messages of ``root`` built at ``anchor`` (:func:`~.instances.built`), tried before any is
    generated: the smallest messages of the schema :func:`at_anchor` narrows to (of the whole schema
    where it narrows none), and where the anchor names a tag value of ``root``'s own union (a tag a
    catch-all took, a member given to it), the object of that tag alone and each of those with that
    value at the tag (the value the rule's set proof names), first.  Each is a candidate, checked as a
    generated one is."""
    narrowed = at_anchor(schema, root, anchor)
    found = built(narrowed if narrowed is not None else schema)
    tag = root.tag_wire_name if isinstance(root, UnionType) and anchor.type == root.name else None
    if tag is not None and anchor.has_value and anchor.tag:
        tagged = [{**m, tag: anchor.value} for m in found if isinstance(m, dict) and tag in m]
        # the tag alone first: the smallest object that carries it (what a set proof names), which
        # the fields of the smallest message of another member may make a valid member elsewhere
        found = [{tag: anchor.value}, *tagged, *found]
    return found


def unsearchable(plans: list[Plan]) -> NoEvidence:
    """What a change none of whose plans has a type to search says: the first plan's reason."""
    return NoEvidence(0, plans[0].reason, searchable=False)


def _where(plan: Plan) -> tuple[Direction, str]:
    """The search a plan with a type needs: its direction and its ``$defs`` type."""
    assert plan.root is not None
    return plan.direction, plan.root


def _peers(release: str, peers: Iterable[str]) -> str:
    named = sorted(peers)
    return f"{release} {' or '.join(named)}" if named else release


def constants(defs: Mapping[str, Any], name: str) -> set[str]:
    """The strings ``$defs[name]`` names as a ``const`` or in an ``enum``, through its references."""
    found: set[str] = set()
    seen: set[str] = set()
    stack = [name]
    while stack:
        current = stack.pop()
        if current in seen or current not in defs:
            continue
        seen.add(current)
        nodes = [defs[current]]
        while nodes:
            node = nodes.pop()
            if isinstance(node, dict):
                for key, value in node.items():
                    if key == "const" and isinstance(value, str):
                        found.add(value)
                    elif key == "enum" and isinstance(value, list):
                        found.update(v for v in value if isinstance(v, str))
                    elif key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                        stack.append(value[len("#/$defs/") :].replace("~1", "/").replace("~0", "~"))
                    elif not key.startswith("x-") and key not in ("description", "title", "examples"):
                        nodes.append(value)
            elif isinstance(node, list):
                nodes.extend(node)
    return found


def search_all(
    requests: Iterable[tuple[Pair, SearchKey]],
    tick: Tick | None = None,
    also: Sequence[Callable[[], Any]] = (),
) -> list[Any]:
    """Run the searches not run yet, on every core; each pair keeps its own (:meth:`Pair.search`).

    Searches that generate from the same schema (a type the same in the
    stable and the unstable schema) run one after the other, so that the
    second reads the messages the first kept under the cache.  ``tick`` is
    called once per search run and once per job of ``also``: jobs that need
    no search, run beside the first searches (before them, so that a long one starts at once),
    their results returned in order.
    """
    todo: dict[tuple[int, SearchKey], tuple[Pair, SearchKey]] = {}
    for pair, key in requests:
        if key not in pair._searches:
            todo.setdefault((id(pair), key), (pair, key))
    waves: list[list[tuple[Pair, SearchKey]]] = [[], []]
    generations: set[tuple[str, int]] = set()
    for pair, key in todo.values():
        generation = (pair.generation(key[1], key[0]), key[3])
        waves[generation in generations and bool(generation[0])].append((pair, key))
        generations.add(generation)
    extra: list[Any] = []
    for number, wave in enumerate(waves):
        first = list(also) if number == 0 else []
        found = run_all([*first, *(functools.partial(pair._search, *key) for pair, key in wave)], tick)
        extra.extend(found[: len(first)])
        for (pair, key), result in zip(wave, found[len(first) :], strict=True):
            pair.keep(key, result)
    return extra


Weighed = tuple[list[tuple[int, int, Evidence | NoEvidence]], list[dict[SearchKey, Found | str]]]
"""What one job of :class:`Weighing` sends back: (pair, change, evidence) for each of its changes, and
per pair the searches it ran that were not run before it."""


@dataclass
class Weighing:
    """:meth:`Pair.evidence` of each pair's changes, the changes weighed on every core.

    Once the searches have run, what is left of a change's evidence is its
    own: its refused messages wrapped in whole messages, the message its rule
    predicts, a lenient reading (:meth:`Pair.evidence_of`), each generating
    messages of its own.  The changes are weighed in jobs run on every core,
    the same change at each stability level in one job, one level after the
    other (a type the same at both levels generates the same messages, which
    the second reads back from the cache), and the changes that need a search
    in common in one job too, so that no search is needed by two jobs.  On a
    cold cache each job runs the searches its changes need itself, then
    weighs them (:meth:`early`): no job waits for a search stage, and a
    search is the same wherever it runs (the same key: a type, a direction,
    every anchor planned there; the same messages).  A search a job runs is
    kept by its pair here too (:meth:`Pair.keep`), as if it had been run
    here.  The evidence is the same as one change after the other gives,
    since each change's depends on it and the searches alone.

    On a warm cache (no pair :attr:`~Pair.fresh`) the messages are read back,
    not generated: what is left is checking them, which a worker would pay
    again for each model it builds a validator of, so the changes are weighed
    here, one after the other.
    """

    work: list[tuple[Pair, list[Change]]]
    found: list[dict[int, Evidence | NoEvidence]] = field(init=False)
    jobs: list[list[tuple[int, int]]] = field(init=False)
    """Each job's (pair, change) indexes: a change at each stability level, and every change that needs
    a search one of those needs."""
    handed: bool = field(default=False, init=False)
    """Whether :meth:`early` handed out the jobs, each to run its own searches."""

    def __post_init__(self) -> None:
        self.found = [{} for _ in self.work]
        grouped: dict[str, list[tuple[int, int]]] = {}
        for p, (_, changes) in enumerate(self.work):
            for c, change in enumerate(changes):
                grouped.setdefault(change.key, []).append((p, c))
        self.jobs = _joined(list(grouped.values()), self._wheres)

    def _wheres(self, job: list[tuple[int, int]]) -> set[tuple[int, tuple[Direction, str]]]:
        """The searches a job's changes need, per pair: each plan's direction and ``$defs`` type (the
        key of a search adds the anchors planned there by every change of the pair)."""
        return {
            (p, where)
            for p, c in job
            for where in self.work[p][0].planner.groups([self.work[p][0].plans(self.work[p][1][c])])
        }

    @property
    def spread(self) -> bool:
        """Whether the jobs run on every core (a pair's models were rendered: a cold cache)."""
        return any(pair.fresh for pair, _ in self.work)

    def early(self) -> list[Callable[[], Weighed]]:
        """Every job, each running its own searches first (:class:`Weighing`), to run as the search stage
        (none on a warm cache: :meth:`rest` weighs every change there)."""
        if not self.spread:
            return []
        self.handed = True
        return [functools.partial(self._weigh, job, None) for job in self.jobs]

    def rest(self, progress: Progress | None = None) -> None:
        """Weigh the changes, once their searches have run (a stage of ``progress``), unless :meth:`early`
        handed out their jobs."""
        if self.handed:
            return
        searched = [pair.searched(changes) for pair, changes in self.work]
        jobs = [functools.partial(self._weigh, job, searched) for job in self.jobs]
        tick = (
            progress.stage("weighing the messages found", len(jobs))
            if progress is not None and jobs
            else None
        )
        if self.spread:
            self.take(run_all(jobs, tick))
            return
        for job in jobs:
            self.take([job()])
            if tick is not None:
                tick()

    def take(self, results: Iterable[Weighed]) -> None:
        """Keep what jobs found."""
        for found, ran in results:
            for p, c, evidence in found:
                self.found[p][c] = evidence
            for (pair, _), more in zip(self.work, ran, strict=True):
                for key, raw in more.items():
                    if key not in pair._searches:
                        pair.keep(key, raw)

    def evidence(self) -> list[dict[int, Evidence | NoEvidence]]:
        """Each pair's evidence by change index, once every job has been taken."""
        return [dict(sorted(found.items())) for found in self.found]

    def _weigh(self, job: list[tuple[int, int]], searched: list[Searched] | None) -> Weighed:
        """The evidence of a job's changes, from ``searched`` (``None``: from the searches of the job's
        own changes, run here first: an early job's)."""
        before = [set(pair._found_raw) for pair, _ in self.work]
        if searched is None:
            searched = [
                pair.searched([changes[c] for q, c in job if q == p])
                for p, (pair, changes) in enumerate(self.work)
            ]
        found = [(p, c, self.work[p][0].evidence_of(self.work[p][1][c], searched[p])) for p, c in job]
        ran = [
            {key: raw for key, raw in pair._found_raw.items() if key not in seen}
            for (pair, _), seen in zip(self.work, before, strict=True)
        ]
        return found, ran


def _joined(
    jobs: list[list[tuple[int, int]]], needs: Callable[[list[tuple[int, int]]], Iterable[Any]]
) -> list[list[tuple[int, int]]]:
    """``jobs`` with those that ``needs`` something in common (a search) made one, each where its first
    part was."""
    first: dict[Any, int] = {}
    into = list(range(len(jobs)))

    def root(j: int) -> int:
        while into[j] != j:
            j = into[j]
        return j

    for j, job in enumerate(jobs):
        for need in needs(job):
            if need in first:
                a, b = root(j), root(first[need])
                into[max(a, b)] = min(a, b)
            else:
                first[need] = j
    joined: dict[int, list[tuple[int, int]]] = {}
    for j, job in enumerate(jobs):
        joined.setdefault(root(j), []).extend(job)
    return list(joined.values())


def evidence_all(
    work: list[tuple[Pair, list[Change]]], progress: Progress | None = None
) -> list[dict[int, Evidence | NoEvidence]]:
    """:meth:`Pair.evidence` of each pair's changes, weighed on every core (:class:`Weighing`)."""
    weighing = Weighing(work)
    weighing.take(run_all(weighing.early()))
    weighing.rest(progress)
    return weighing.evidence()


# --- a whole diff ------------------------------------------------------------------------------


def pairs_of(
    old: ReleaseFiles,
    new: ReleaseFiles,
    stabilities: Iterable[Stability],
    cache: Path,
    examples: int = DEFAULT_EXAMPLES,
    progress: Progress | None = None,
    built: Built | None = None,
    only: Mapping[Stability, tuple[frozenset[str], frozenset[str]]] | None = None,
) -> list[Pair]:
    """The two sides of each stability level, their models loaded (those not cached rendered on every
    core, a stage of ``progress``); ``built`` are the two releases' surfaces when the caller has them.

    ``only`` names, per stability level, the types whose models the searches try on the old side and
    on the new (:meth:`Planner.types`): only those are rendered, with the types they refer to.
    Without it every type is.
    """
    wanted = list(stabilities)
    before, after = built if built is not None else (surfaces_of(old, wanted), surfaces_of(new, wanted))
    sides = [Wanted(old, before[s], only[s][0] if only else None) for s in wanted] + [
        Wanted(new, after[s], only[s][1] if only else None) for s in wanted
    ]
    rendering = missing_models(sides, cache)
    tick = progress.stage("rendering the models", rendering) if progress is not None and rendering else None
    # a cold cache: the searches will generate; this process gets ready while the models render,
    # and the workers of the searches inherit it
    modules = load_all(sides, cache, tick, functools.partial(prepare, cache) if rendering else None)
    loaded = [Side.of(side.files, side.surface, module) for side, module in zip(sides, modules, strict=True)]
    fresh = bool(rendering)
    return [Pair(loaded[i], loaded[len(wanted) + i], examples, cache, fresh) for i in range(len(wanted))]


NOT_A_PEERS_MESSAGE = "its rule names no peer whose messages could show it"
"""Why a breaking or warning wire verdict that :func:`wants_evidence` leaves out has no witness."""


def _weighed(result: DiffResult) -> DiffResult:
    """``result`` with every breaking or warning wire verdict the search leaves out marked as weighed
    without a witness, so that the report calls it unproven rather than not searched."""

    def marked(change: Change) -> Change:
        weighed = change.layer == "wire" and change.severity in ("breaking", "warning")
        if not weighed or wants_evidence(change) or change.evidence is not None:
            return change
        return dataclasses.replace(change, evidence=NoEvidence(0, NOT_A_PEERS_MESSAGE, searchable=False))

    surfaces = tuple(
        dataclasses.replace(s, changes=tuple(marked(c) for c in s.changes)) for s in result.surfaces
    )
    return dataclasses.replace(result, surfaces=surfaces)


def attach_evidence(
    result: DiffResult,
    old: ReleaseFiles,
    new: ReleaseFiles,
    cache: Path,
    examples: int = DEFAULT_EXAMPLES,
    progress: Progress | None = None,
    built: Built | None = None,
) -> DiffResult:
    """``result`` with evidence searched for every breaking or warning verdict on the wire.

    ``progress`` is told of each stage (the models rendered, the searches run) and of each step.
    ``built`` are the two releases' surfaces the diff read, when the caller has them.
    """
    result = _weighed(result)
    if not any(wants_evidence(c) for c in result.changes):
        return result
    with heap_frozen():
        return _attached(result, old, new, cache, examples, progress, built)


def _attached(
    result: DiffResult,
    old: ReleaseFiles,
    new: ReleaseFiles,
    cache: Path,
    examples: int,
    progress: Progress | None,
    built: Built | None,
) -> DiffResult:
    """:func:`attach_evidence` of a result with a verdict to search evidence for."""
    wanted = {
        surface.stability: [i for i, c in enumerate(surface.changes) if wants_evidence(c)]
        for surface in result.surfaces
    }
    levels = [surface.stability for surface in result.surfaces]
    before, after = built if built is not None else (surfaces_of(old, levels), surfaces_of(new, levels))
    planners = {s: Planner(before[s], after[s]) for s in levels}
    searched = {
        surface.stability: [surface.changes[i] for i in wanted[surface.stability]]
        for surface in result.surfaces
    }
    # the models of a stability level are rendered only if one of its changes can be searched for,
    # and of its types only those its searches try
    tried = {s: planners[s].types(searched[s]) for s in levels}
    stabilities = [s for s in levels if any(tried[s])]
    pairs = (
        {
            p.new.surface.stability: p
            for p in pairs_of(old, new, stabilities, cache, examples, progress, (before, after), tried)
        }
        if stabilities
        else {}
    )
    weighed = [s for s in levels if s in pairs]
    weighing = Weighing([(pairs[s], searched[s]) for s in weighed])
    for then, stage in ((False, "searching for evidence"), (True, "searching the other direction")):
        early = [] if then else weighing.early()  # a cold cache: every job, running its own searches
        requests = [
            (pairs[stability], key)
            for surface in result.surfaces
            if (stability := surface.stability) in pairs and not weighing.handed
            for key in pairs[stability].requests((surface.changes[i] for i in wanted[stability]), then)
        ]
        todo = len({(id(pair), key) for pair, key in requests if key not in pair._searches}) + len(early)
        tick = progress.stage(stage, todo) if progress is not None and todo else None
        weighing.take(search_all(requests, tick, early))
    weighing.rest(progress)
    by_level = dict(zip(weighed, weighing.evidence(), strict=True))
    surfaces: list[SurfaceDiff] = []
    for surface in result.surfaces:
        indexes = wanted[surface.stability]
        if surface.stability in by_level:
            found = by_level[surface.stability]
        else:  # none of its changes can be searched for: each says why
            planner = planners[surface.stability]
            found = {n: unsearchable(planner.plans(c)) for n, c in enumerate(searched[surface.stability])}
        by_index = {indexes[i]: evidence for i, evidence in found.items()}
        changes = tuple(
            dataclasses.replace(c, evidence=by_index[i]) if i in by_index else c
            for i, c in enumerate(surface.changes)
        )
        surfaces.append(dataclasses.replace(surface, changes=changes))
    return dataclasses.replace(result, surfaces=tuple(surfaces))
