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

Messages are generated per ``$defs`` type (the one that holds the change's
type), at most ``examples`` per type and direction, and every change in that
type shares them.  Where the schema takes any string, the strings the other
release's definition names (its tags, enum values and reserved tags) are
tried too (:meth:`Pair.probes`).  The search is deterministic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..diff import (
    Change,
    DiffResult,
    Evidence,
    MessagePart,
    MethodPart,
    NoEvidence,
    SurfaceDiff,
    TypePart,
)
from ..diff.renames import detect_renames
from ..schema.builder.node import Pointer
from ..schema.ir import ApiSurface, NamedType, Stability
from ..schema.load import ReleaseFiles
from ..schema.releases import surfaces_of
from .instances import canonical, generation_schema, instances, shrink, size
from .models import Models, load_models
from .walk import Anchor, Located, Place, anchor_of, at, located_errors

Direction = Literal["receivers", "senders"]
"""``receivers``: new messages tried on the old models; ``senders``: old messages tried on the new models."""

DEFAULT_EXAMPLES = 200
SEARCHED_BREAKS: dict[str, tuple[Direction, ...]] = {
    "receivers": ("receivers",),
    "senders": ("senders",),
    "both": ("receivers", "senders"),
}


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
    _validators: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, files: ReleaseFiles, surface: ApiSurface, cache: Path) -> Side:
        schema = files.schema(surface.stability == "unstable").data
        return cls(files.release, surface, schema, Models(surface, load_models(files, surface, cache)))

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


@dataclass(frozen=True)
class Refusal:
    """A message valid on its side that the other side's models refuse, and each error with its places."""

    instance: Any
    error: Any
    errors: tuple[Located, ...]

    def at(self, anchor: Anchor) -> Located | None:
        """The first error of the refusal that is at ``anchor`` (``None``: none is)."""
        return next((e for e in self.errors if at(anchor, e.places, e.type)), None)

    @property
    def places(self) -> frozenset[Place]:
        return frozenset(p for e in self.errors for p in e.places)


@dataclass(frozen=True)
class Search:
    """What one search generated: how many messages (and distinct ones), and the refusals among them."""

    generated: int
    distinct: int
    refusals: tuple[Refusal, ...]


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


@dataclass(frozen=True)
class Plan:
    """Where to look for one change in one direction: the ``$defs`` type to generate, the anchor to hit."""

    direction: Direction
    root: str | None
    anchor: Anchor | None


@dataclass
class Pair:
    """The two sides of one stability level of a diff, and the searches already run on them."""

    old: Side
    new: Side
    examples: int = DEFAULT_EXAMPLES
    cache: Path | None = None
    """Where generated messages are kept between runs (``None``: nowhere)."""
    renames: dict[str, str] = field(default_factory=dict)
    _searches: dict[tuple[str, Direction, frozenset[Anchor], int], Search | str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.renames = detect_renames(self.old.surface, self.new.surface)
        self.renamed_from = {n: o for o, n in self.renames.items()}

    def sides(self, direction: Direction) -> tuple[Side, Side]:
        """(the side messages are generated from, the side whose models try them)."""
        return (self.new, self.old) if direction == "receivers" else (self.old, self.new)

    def counterpart(self, direction: Direction, name: str) -> str:
        """A type's name on the trying side, from its name on the generating side."""
        return self.renamed_from.get(name, name) if direction == "receivers" else self.renames.get(name, name)

    def target_def(self, direction: Direction, schema_name: str) -> str | None:
        """The ``$defs`` entry on the trying side for an entry of the generating side."""
        source, target = self.sides(direction)
        named = source.surface.by_schema_name(schema_name)
        if named is None:
            return None
        other = target.surface.types.get(self.counterpart(direction, named.name))
        return other.schema_name if other is not None else None

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
        refusal at it.  ``examples`` defaults to the pair's.
        """
        count = self.examples if examples is None else examples
        key = (schema_name, direction, wanted, count)
        if key not in self._searches:
            self._searches[key] = self._search(direction, schema_name, wanted, count)
        return self._searches[key]

    def _search(
        self, direction: Direction, schema_name: str, wanted: frozenset[Anchor], examples: int
    ) -> Search | str:
        source, target = self.sides(direction)
        root = source.surface.by_schema_name(schema_name)
        target_name = self.target_def(direction, schema_name)
        if root is None or target_name is None or target.models.adapter(target_name) is None:
            return f"{schema_name} has no model on both sides"
        if source.models.adapter(schema_name) is None:
            return f"{schema_name} has no model"
        found: list[Refusal] = []
        seen: set[str] = set()
        missing = set(wanted)

        def accept(instance: Any) -> bool:
            text = canonical(instance)
            if text in seen:
                return False
            seen.add(text)
            refusal = self.refusal(direction, schema_name, target_name, root, instance)
            if refusal is not None:
                found.append(refusal)
                missing.difference_update({a for a in missing if refusal.at(a) is not None})
            return bool(wanted) and not missing

        schema = generation_schema(source.defs, schema_name, self.probes(direction, schema_name))
        try:
            count = instances(schema, examples, accept, self.cache)
        except ValueError as error:
            return f"the generator cannot read {schema_name}: {error}"
        return Search(count, len(seen), tuple(found))

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

    # -- a change and its anchor -----------------------------------------------------------------

    def plan(self, change: Change, direction: Direction) -> Plan:
        """The ``$defs`` type whose messages can show a change in one direction, and the change's anchor
        there, named as on the generating side (both ``None`` when no message can carry it)."""
        source, _ = self.sides(direction)
        match change.path:
            case (TypePart(name=name), *_):
                start: str | None = name if direction == "receivers" else self.renamed_from.get(name, name)
            case (MethodPart(name=wire, method_kind=kind, side=side), MessagePart(which=which), *_):
                methods = [
                    m for m in source.surface.methods if (m.wire_name, m.kind, m.side) == (wire, kind, side)
                ]
                start = (methods[0].params if which == "params" else methods[0].result) if methods else None
            case _:
                start = None
        named = source.surface.types.get(start) if start is not None else None
        if start is None or named is None:
            return Plan(direction, None, None)
        return Plan(direction, def_of(named), anchor_of(change.path, start))

    def evidence(self, changes: Iterable[Change]) -> dict[int, Evidence | NoEvidence]:
        """For each change (by its index in ``changes``): the smallest message refused at its location,
        or why there is none.

        Changes whose messages come from the same ``$defs`` type and direction
        share one search, which stops once every one of them has a refusal.
        """
        listed = list(changes)
        groups: dict[tuple[Direction, str], set[Anchor]] = {}
        plans: list[list[Plan]] = []
        for change in listed:
            plan = [self.plan(change, direction) for direction in SEARCHED_BREAKS[change.rule.breaks]]
            for p in plan:
                if p.root is not None and p.anchor is not None:
                    groups.setdefault((p.direction, p.root), set()).add(p.anchor)
            plans.append(plan)
        searched = {
            key: self.search(key[0], key[1], frozenset(wanted)) for key, wanted in sorted(groups.items())
        }
        out: dict[int, Evidence | NoEvidence] = {}
        for index, (change, plan) in enumerate(zip(listed, plans, strict=True)):
            tried = 0
            reasons: list[str] = []
            for p in plan:
                if p.root is None or p.anchor is None:
                    continue
                found = searched[(p.direction, p.root)]
                if isinstance(found, str):
                    reasons.append(found)
                    continue
                tried += found.generated
                matching = [r for r in found.refusals if r.at(p.anchor) is not None]
                if matching:
                    best = min(matching, key=lambda r: (size(r.instance), canonical(r.instance)))
                    out[index] = self.witness(change, p, best)
                    break
            else:
                if not any(p.root is not None and p.anchor is not None for p in plan):
                    out[index] = NoEvidence(0, NOT_SEARCHABLE, searchable=False)
                elif tried == 0:
                    out[index] = NoEvidence(0, "; ".join(dict.fromkeys(reasons)), searchable=False)
                else:
                    out[index] = NoEvidence(tried, "; ".join(dict.fromkeys(reasons)))
        return out

    def witness(self, change: Change, plan: Plan, best: Refusal) -> Evidence:
        direction, root, anchor = plan.direction, plan.root, plan.anchor
        assert root is not None and anchor is not None
        source, target = self.sides(direction)
        target_name = self.target_def(direction, root)
        named = source.surface.by_schema_name(root)
        assert target_name is not None and named is not None

        def keeps(instance: Any) -> bool:
            refusal = self.refusal(direction, root, target_name, named, instance)
            return refusal is not None and refusal.at(anchor) is not None

        message = shrink(best.instance, keeps)
        refusal = self.refusal(direction, root, target_name, named, message)
        assert refusal is not None
        error = refusal.at(anchor)
        assert error is not None
        # a new sender's message refused by an old receiver, or the reverse
        traffic = change.flow
        source_flow, target_flow = (
            (traffic.new, traffic.old) if direction == "receivers" else (traffic.old, traffic.new)
        )
        return Evidence(
            message=message,
            schema_type=root,
            sent_by=_peers(source.release, source_flow.senders),
            refused_by=_peers(target.release, target_flow.receivers),
            error=error.line(),
            schema_refuses=not target.valid(target_name, message),
        )


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


# --- a whole diff ------------------------------------------------------------------------------


def pairs_of(
    old: ReleaseFiles,
    new: ReleaseFiles,
    stabilities: Iterable[Stability],
    cache: Path,
    examples: int = DEFAULT_EXAMPLES,
) -> Iterator[Pair]:
    """The two sides of each stability level, their models loaded."""
    wanted = list(stabilities)
    before, after = surfaces_of(old, wanted), surfaces_of(new, wanted)
    for stability in wanted:
        yield Pair(
            Side.load(old, before[stability], cache),
            Side.load(new, after[stability], cache),
            examples,
            cache,
        )


def attach_evidence(
    result: DiffResult, old: ReleaseFiles, new: ReleaseFiles, cache: Path, examples: int = DEFAULT_EXAMPLES
) -> DiffResult:
    """``result`` with evidence searched for every breaking or warning verdict on the wire."""
    stabilities = [s.stability for s in result.surfaces]
    if not any(wants_evidence(c) for c in result.changes):
        return result
    pairs = {p.new.surface.stability: p for p in pairs_of(old, new, stabilities, cache, examples)}
    surfaces: list[SurfaceDiff] = []
    for surface in result.surfaces:
        wanted = [i for i, c in enumerate(surface.changes) if wants_evidence(c)]
        found = pairs[surface.stability].evidence(surface.changes[i] for i in wanted)
        by_index = {wanted[i]: evidence for i, evidence in found.items()}
        changes = tuple(
            dataclasses.replace(c, evidence=by_index[i]) if i in by_index else c
            for i, c in enumerate(surface.changes)
        )
        surfaces.append(dataclasses.replace(surface, changes=changes))
    return dataclasses.replace(result, surfaces=tuple(surfaces))
