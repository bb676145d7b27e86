"""Evidence for the differ's verdicts: a message one side's generated models accept and the other's refuse.

A wire change breaks *receivers* when a new sender may send what an old
receiver refuses: messages are generated from the **new** schema, kept if the
new schema and the new models accept them, and tried on the **old** models.
It breaks *senders* when an old sender may send what a new receiver refuses:
the same, from the old schema to the new models.  A refused message is
evidence for a change when the refusal is at the change: the validation
error's path through the message goes through the type (and the field) the
change is about (:mod:`.walk`).  The smallest such message, made smaller
still while it stays evidence (:func:`~.instances.shrink`), is attached to the
change.

Messages are generated per ``$defs`` type (the one that holds the change's
type), at most ``examples`` per type and direction, and every change in that
type shares them.  The search is deterministic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..diff import (
    Change,
    DiffResult,
    Evidence,
    FieldPart,
    MessagePart,
    MethodPart,
    NoEvidence,
    SurfaceDiff,
    TypePart,
)
from ..diff.renames import detect_renames
from ..schema.ir import ApiSurface, NamedType, Stability
from ..schema.load import ReleaseFiles
from ..schema.releases import surfaces_of
from .instances import canonical, generation_schema, instances, shrink, size
from .models import Models, load_models
from .walk import Place, error_places

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
    """A message valid on its side that the other side's models refuse, and where."""

    instance: Any
    error: Any
    places: frozenset[Place]


@dataclass(frozen=True)
class Search:
    """What one search generated: how many messages (and distinct ones), and the refusals among them."""

    generated: int
    distinct: int
    refusals: tuple[Refusal, ...]


def def_of(named: NamedType) -> str | None:
    """The ``$defs`` entry that holds a type (a derived type's pointer is inside its parent's)."""
    parts = named.pointer.split("/")
    if len(parts) < 3 or parts[1] != "$defs":
        return None
    return parts[2].replace("~1", "/").replace("~0", "~")


def first_error(error: Any) -> str:
    """A validation error in one line: where, and what."""
    try:
        detail = error.errors()[0]
    except (AttributeError, IndexError):
        return f"{type(error).__name__}: {error}".splitlines()[0][:200]
    where = ".".join(str(part) for part in detail.get("loc", ())) or "(root)"
    return f"{where}: {detail.get('msg', '')}"[:200]


@dataclass
class Pair:
    """The two sides of one stability level of a diff, and the searches already run on them."""

    old: Side
    new: Side
    examples: int = DEFAULT_EXAMPLES
    cache: Path | None = None
    """Where generated messages are kept between runs (``None``: nowhere)."""
    renames: dict[str, str] = field(default_factory=dict)
    _searches: dict[tuple[str, Direction, frozenset[Place], int], Search | str] = field(default_factory=dict)

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

    def search(
        self,
        direction: Direction,
        schema_name: str,
        wanted: frozenset[Place] = frozenset(),
        examples: int | None = None,
    ) -> Search | str:
        """The refusals among the generated messages of ``$defs[schema_name]``, or why there are none.

        With ``wanted``, generation stops once every one of those places has a
        refusal.  ``examples`` defaults to the pair's.
        """
        count = self.examples if examples is None else examples
        key = (schema_name, direction, wanted, count)
        if key not in self._searches:
            self._searches[key] = self._search(direction, schema_name, wanted, count)
        return self._searches[key]

    def _search(
        self, direction: Direction, schema_name: str, wanted: frozenset[Place], examples: int
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
                missing.difference_update(refusal.places)
            return bool(wanted) and not missing

        try:
            count = instances(generation_schema(source.defs, schema_name), examples, accept, self.cache)
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
        return Refusal(instance, error, frozenset(error_places(source.surface, root, instance, error)))

    # -- a change and its anchor -----------------------------------------------------------------

    def anchor(self, change: Change, direction: Direction) -> Place | None:
        """The place a change is about, named as on the generating side (``None``: no type to search)."""
        match change.path:
            case (TypePart(name=name), FieldPart(name=wire), *_):
                place: Place = (name, wire)
            case (TypePart(name=name), *_):
                place = (name, None)
            case (MethodPart(name=wire, method_kind=kind, side=side), MessagePart(which=which), *_):
                methods = [
                    m for m in self.new.surface.methods if (m.wire_name, m.kind, m.side) == (wire, kind, side)
                ]
                target = (methods[0].params if which == "params" else methods[0].result) if methods else None
                if target is None:
                    return None
                place = (target, None)
            case _:
                return None
        name = place[0] if direction == "receivers" else self.renamed_from.get(place[0], place[0])
        return name, place[1]

    def roots(self, change: Change, direction: Direction) -> str | None:
        """The ``$defs`` entry whose messages can show a change."""
        anchor = self.anchor(change, direction)
        if anchor is None:
            return None
        source, _ = self.sides(direction)
        named = source.surface.types.get(anchor[0])
        if named is None or named.internal:
            return None
        return def_of(named)

    def evidence(self, changes: Iterable[Change]) -> dict[int, Evidence | NoEvidence]:
        """For each change (by its index in ``changes``): the smallest message that shows it, or none found.

        Changes whose messages come from the same ``$defs`` type and direction
        share one search, which stops once every one of them has a refusal.
        """
        listed = list(changes)
        groups: dict[tuple[Direction, str], set[Place]] = {}
        plans: list[list[tuple[Direction, str | None, Place | None]]] = []
        for change in listed:
            plan = []
            for direction in SEARCHED_BREAKS[change.rule.breaks]:
                anchor, root = self.anchor(change, direction), self.roots(change, direction)
                plan.append((direction, root, anchor))
                if anchor is not None and root is not None:
                    groups.setdefault((direction, root), set()).add(anchor)
            plans.append(plan)
        searched = {
            key: self.search(key[0], key[1], frozenset(wanted)) for key, wanted in sorted(groups.items())
        }
        out: dict[int, Evidence | NoEvidence] = {}
        for index, (change, plan) in enumerate(zip(listed, plans, strict=True)):
            tried = 0
            reasons: list[str] = []
            for direction, root, anchor in plan:
                if root is None or anchor is None:
                    reasons.append("no type of the generated models carries it")
                    continue
                found = searched[(direction, root)]
                if isinstance(found, str):
                    reasons.append(found)
                    continue
                tried += found.generated
                matching = [r for r in found.refusals if anchor in r.places]
                if matching:
                    best = min(matching, key=lambda r: (size(r.instance), canonical(r.instance)))
                    out[index] = self.witness(change, direction, root, anchor, best)
                    break
            else:
                out[index] = NoEvidence(tried, "; ".join(dict.fromkeys(reasons)))
        return out

    def witness(
        self, change: Change, direction: Direction, root: str, anchor: Place, best: Refusal
    ) -> Evidence:
        source, target = self.sides(direction)
        target_name = self.target_def(direction, root)
        named = source.surface.by_schema_name(root)
        assert target_name is not None and named is not None

        def keeps(instance: Any) -> bool:
            refusal = self.refusal(direction, root, target_name, named, instance)
            return refusal is not None and anchor in refusal.places

        message = shrink(best.instance, keeps)
        # a new sender's message refused by an old receiver, or the reverse
        traffic = change.flow
        source_flow, target_flow = (
            (traffic.new, traffic.old) if direction == "receivers" else (traffic.old, traffic.new)
        )
        error = target.models.refusal(target_name, message)
        return Evidence(
            message=message,
            schema_type=root,
            sent_by=_peers(source.release, source_flow.senders),
            refused_by=_peers(target.release, target_flow.receivers),
            error=first_error(error),
            schema_refuses=not target.valid(target_name, message),
        )


def _peers(release: str, peers: Iterable[str]) -> str:
    named = sorted(peers)
    return f"{release} {' or '.join(named)}" if named else release


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
