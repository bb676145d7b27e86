"""The oracle: the evidence search run the other way, over every consecutive locked pair.

For each pair of consecutive releases of one protocol major, stable and
unstable, the differ's changes are computed, evidence is searched for each
breaking or warning verdict (:func:`~.search.attach_evidence`'s search), and
then every ``$defs`` type whose own definition changed is searched in both
directions without a change to look for: messages generated from one side's
schema, valid there, are tried on the other side's generated models.  Every
refusal must be explained by a reported wire change whose rule breaks that
direction (receivers for new messages refused by old models, senders for the
reverse) and which is about a type (and field) on the refusal's path
(:mod:`.walk`).  A refusal nothing explains is either a change the differ
missed, or, when the refusing side's own JSON Schema accepts the message, a
gap of that side's generated models (they are stricter than their schema);
both are listed.  A committed file may excuse listed refusals, each with a
reason; anything else not explained is a failure (exit 1).

Types whose definition is the same on both sides (descriptions aside, names
read through the renames) are not searched: a refusal inside them comes from
a type they refer to, which is searched itself.  Envelope types (the
JSON-RPC messages) are not searched either: their contents are the methods'
params and results, which are.

Every witness is checked both ways (:func:`witness_holds`): the whole message
is valid under the sending release's schema and accepted by its models, and
the other release's models refuse it at its own change.  And every unproven
verdict (a breaking or warning wire row with neither a witness nor a set
proof) is tried once more with the oracle's own messages of its type, each
refused one wrapped in a whole message (:meth:`~.search.Pair.whole`): one
that is a witness is an unproven row the oracle can witness, a failure.

``python -m codegen.evidence.oracle`` (``make diff-oracle``) prints one row
per pair and stability level: the changes, the changes with evidence, the
witnesses checked both ways, the unproven rows, the refusals the changes
explain, and the unexplained ones.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import collecting
from ..diff import Change, Evidence, NoEvidence, diff_releases
from ..diff.report import release_pairs
from ..errors import CodegenError
from ..schema.ir import Stability
from ..schema.load import SchemaSource, default_cache_dir, read_lock
from .batches import batch_kind, batch_refused, removed_batch, sendable_batch
from .instances import canonical, size
from .search import (
    DEFAULT_EXAMPLES,
    SEARCHED_BREAKS,
    Direction,
    Pair,
    Refusal,
    first_error,
    pairs_of,
    search_all,
    wants_evidence,
)

ORACLE_EXAMPLES = 25
"""Messages generated per changed ``$defs`` type and direction by default."""
_IGNORED = frozenset({"description", "title", "$comment", "examples"})


@dataclass(frozen=True)
class Unexplained:
    """A refusal no reported change explains: where, which way, and the smallest message."""

    old: str
    new: str
    stability: Stability
    schema_type: str
    direction: Direction
    message: Any
    error: str
    model_gap: bool
    """The refusing side's JSON Schema accepts the message: its generated models are stricter than it."""

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.old, self.new, self.stability, self.schema_type, self.direction)

    def line(self) -> str:
        kind = "model gap" if self.model_gap else "missed change"
        shown = json.dumps(self.message, sort_keys=True, ensure_ascii=False)
        way = "new message, old models" if self.direction == "receivers" else "old message, new models"
        return (
            f"{self.old} -> {self.new} {self.stability}: {kind}: {self.schema_type} ({way}) "
            f"refused: {shown} ({self.error})"
        )


@dataclass
class PairResult:
    old: str
    new: str
    stability: Stability
    changes: int = 0
    searched: int = 0
    """Breaking or warning wire changes, for which evidence was searched."""
    with_evidence: int = 0
    latest: int = 0
    """The latest message of its search that first showed a change (the most any evidence needed)."""
    misplaced: list[tuple[Change, Evidence]] = field(default_factory=list)
    """Evidence whose message is not refused at its own change's location, or not accepted by the side
    that sends it (there should be none)."""
    unproven: int = 0
    """Breaking or warning wire verdicts searched with neither a witness nor a set proof."""
    witnessable: list[tuple[Change, Evidence]] = field(default_factory=list)
    """Unproven verdicts the oracle's own messages witness (there should be none)."""
    contradicted: list[Change] = field(default_factory=list)
    """Changes not searched as no message can show them, that a message shows (there should be none)."""
    types: int = 0
    """``$defs`` types searched in both directions."""
    messages: int = 0
    explained: int = 0
    unexplained: list[Unexplained] = field(default_factory=list)
    excused: list[tuple[Unexplained, str]] = field(default_factory=list)
    seconds: float = 0.0


def _stripped(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _stripped(v) for k, v in node.items() if k not in _IGNORED}
    if isinstance(node, list):
        return [_stripped(v) for v in node]
    return node


def _renamed(node: Any, names: dict[str, str]) -> Any:
    """A definition with each ``$ref`` to another ``$defs`` entry read through ``names``."""
    if isinstance(node, dict):
        out = {k: _renamed(v, names) for k, v in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = ref[len("#/$defs/") :]
            out["$ref"] = f"#/$defs/{names.get(target, target)}"
        return out
    if isinstance(node, list):
        return [_renamed(v, names) for v in node]
    return node


def changed_types(pair: Pair, direction: Direction) -> list[str]:
    """The ``$defs`` entries of the generating side whose definition differs on the other side."""
    source, target = pair.sides(direction)
    names: dict[str, str] = {}
    for schema_name in source.defs:
        other = pair.target_def(direction, schema_name)
        if other is not None:
            names[schema_name] = other
    found = []
    for schema_name, other in sorted(names.items()):
        named = source.surface.by_schema_name(schema_name)
        if named is None or named.internal or source.models.adapter(schema_name) is None:
            continue
        mine = canonical(_stripped(_renamed(source.defs[schema_name], names)))
        theirs = canonical(_stripped(target.defs[other]))
        if mine != theirs:
            found.append(schema_name)
    return found


def explains(pair: Pair, change: Change, direction: Direction, refusal: Refusal) -> bool:
    """Whether a reported change accounts for a refusal in this direction: one of its errors is at the
    change's location (its type, members, field, value or keyword)."""
    if change.layer != "wire" or direction not in SEARCHED_BREAKS.get(change.rule.breaks, ()):
        return False
    anchor = pair.plan(change, direction).anchor
    return anchor is not None and refusal.at(anchor) is not None


def evidence_at_its_row(pair: Pair, change: Change, evidence: Evidence) -> bool:
    """Whether a witness holds both ways (:func:`witness_holds`) in a direction the change's rule breaks:
    the whole message, of ``evidence.schema_type``, valid under the sending side's schema and accepted
    by its models, refused by the other side's models at the change's own location (read from their
    errors' ``loc``)."""
    return any(
        witness_holds(pair, change, evidence, direction)
        for direction in SEARCHED_BREAKS.get(change.rule.breaks, ())
    )


def witness_holds(pair: Pair, change: Change, evidence: Evidence, direction: Direction) -> bool:
    """Whether ``evidence`` is a witness of ``change`` in ``direction``, checked again from scratch: a
    whole message (its carrier named), accepted by the sending side (its JSON Schema and its models,
    :meth:`~.search.Pair.refusal` checks both) and refused by the other side's models at the anchor; or,
    for a witness read leniently (:attr:`~codegen.diff.Evidence.read`), accepted by the other side's
    models too, which lose the value it names there, at the anchor (:meth:`~.search.Pair.reading`)."""
    if evidence.by_dispatch:
        return dispatch_holds(pair, change, evidence)
    anchor = pair.planner.located(change, direction).anchor
    top = evidence.schema_type
    source, _ = pair.sides(direction)
    target_name = pair.target_def(direction, top)
    named = source.surface.by_schema_name(top)
    if not evidence.carrier or anchor is None or target_name is None or named is None:
        return False
    if not source.valid(top, evidence.message) or source.models.refusal(top, evidence.message) is not None:
        return False
    if evidence.read is not None:  # accepted by both: the receiver's models lose the value it names
        shown = pair.reading(direction, top, target_name, named, evidence.message, anchor)
        return shown is not None and shown[0] == evidence.read
    refusal = pair.refusal(direction, top, target_name, named, evidence.message)
    return refusal is not None and refusal.at(anchor) is not None


def check_pair(
    pair: Pair,
    old: str,
    new: str,
    changes: Sequence[Change],
    exceptions: dict[tuple[str, ...], str],
    examples: int = ORACLE_EXAMPLES,
) -> PairResult:
    stability = pair.new.surface.stability
    result = PairResult(old, new, stability, changes=len(changes))
    started = time.perf_counter()
    wanted = [c for c in changes if wants_evidence(c)]
    result.searched = len(wanted)
    sweep = [
        (pair, pair.key(direction, schema_name, examples=examples))
        for direction in SEARCHED_BREAKS["both"]
        for schema_name in changed_types(pair, direction)
    ]
    search_all([(pair, key) for key in pair.requests(wanted)] + sweep)  # on every core
    found = pair.evidence(wanted)
    result.with_evidence = sum(isinstance(e, Evidence) for e in found.values())
    result.latest = max(
        (pair.first_hit(wanted[i]) or 0 for i, e in found.items() if isinstance(e, Evidence)), default=0
    )
    for index, evidence in found.items():
        if isinstance(evidence, Evidence) and not evidence_at_its_row(pair, wanted[index], evidence):
            result.misplaced.append((wanted[index], evidence))
    for direction in ("receivers", "senders"):
        _, target = pair.sides(direction)
        for schema_name in changed_types(pair, direction):
            result.types += 1
            search = pair.search(direction, schema_name, examples=examples)
            if isinstance(search, str):
                continue
            result.messages += search.distinct
            worst: Unexplained | None = None
            for refusal in search.refusals:
                if any(explains(pair, c, direction, refusal) for c in changes):
                    result.explained += 1
                    continue
                other = pair.target_def(direction, schema_name)
                assert other is not None
                item = Unexplained(
                    old,
                    new,
                    stability,
                    schema_name,
                    direction,
                    refusal.instance,
                    refusal.errors[0].line() if refusal.errors else first_error(refusal.error),
                    model_gap=target.valid(other, refusal.instance),
                )
                if worst is None or (size(item.message), canonical(item.message)) < (
                    size(worst.message),
                    canonical(worst.message),
                ):
                    worst = item
            if worst is not None:
                reason = exceptions.get(worst.key)
                if reason is not None:
                    result.excused.append((worst, reason))
                else:
                    result.unexplained.append(worst)
    result.contradicted = contradicted(pair, wanted, found, examples)
    result.unproven = sum(
        1 for i, e in found.items() if isinstance(e, NoEvidence) and wanted[i].proof is None
    )
    result.witnessable = witnessable(pair, wanted, found, examples)
    result.seconds = time.perf_counter() - started
    return result


def dispatch_holds(pair: Pair, change: Change, evidence: Evidence) -> bool:
    """Whether a call the rule predicted holds: its params valid under the old schema and accepted by
    the old models, its method one the old release's handler has and the new release's has not."""
    removed = pair.planner.removed_method(change)
    message = evidence.message
    if removed is None:
        return batch_holds(pair, change, evidence)
    if not isinstance(message, dict) or message.get("method") != removed.wire_name:
        return False
    params, top = message.get("params"), evidence.schema_type
    if not pair.old.valid(top, params) or pair.old.models.refusal(top, params) is not None:
        return False
    kept = {(m.wire_name, m.kind, m.side) for m in pair.new.surface.methods}
    return (removed.wire_name, removed.kind, removed.side) not in kept


def batch_holds(pair: Pair, change: Change, evidence: Evidence) -> bool:
    """Whether a batch the rule predicted holds (:mod:`.batches`): an array valid under the old schema's
    root whose every item one of the sender's old envelope models accepts, that the new schema's root
    refuses, of a kind the new release lets that sender send no batch of."""
    batch = removed_batch(change, pair.old.surface)
    if batch is None or evidence.schema_type != batch.name:
        return False
    sendable = sendable_batch(pair.old.surface, batch, pair.old.valid_root, pair.old.models.refusal)
    kind = batch_kind(pair.old.surface, batch)
    message = evidence.message
    return sendable(message) and batch_refused(pair.new.surface, batch, kind, pair.new.valid_root, message)


WITNESS_TRIES = 3
"""Refused messages of its type (the smallest first) the oracle wraps for each unproven verdict."""


def witnessable(
    pair: Pair, wanted: Sequence[Change], found: Mapping[int, Evidence | NoEvidence], examples: int
) -> list[tuple[Change, Evidence]]:
    """The unproven verdicts (no witness, no set proof) that a message of the oracle's own search of
    their type, refused at their location and wrapped in a whole message a refusing peer receives,
    witnesses after all, or that a message its receiver reads otherwise witnesses
    (:meth:`~.search.Pair.read_leniently`): each one a verdict the differ could have proven."""
    out = []
    for index, evidence in found.items():
        change = wanted[index]
        if isinstance(evidence, Evidence) or change.proof is not None:
            continue
        for plan in (pair.planner.located(change, d) for d in SEARCHED_BREAKS[change.rule.breaks]):
            if plan.root is None or plan.anchor is None:
                continue
            search = pair.search(plan.direction, plan.root, examples=examples)
            if isinstance(search, str):
                continue
            anchor = plan.anchor
            refused = sorted(
                (r.instance for r in search.refusals if r.at(anchor) is not None),
                key=lambda m: (size(m), canonical(m)),
            )
            wrapped = (pair.whole(change, plan, m)[0] for m in refused[:WITNESS_TRIES])
            shown = next((w for w in wrapped if w is not None), None)
            if shown is not None:
                out.append((change, shown))
                break
        else:
            read = pair.read_leniently(change, examples)
            if read is not None:
                out.append((change, read))
    return out


def contradicted(
    pair: Pair, wanted: Sequence[Change], found: Mapping[int, Evidence | NoEvidence], examples: int
) -> list[Change]:
    """The changes not searched because no message can show them (:func:`not_shown`, or
    :meth:`~codegen.evidence.search.Planner.refuses_nothing`) that a message of the oracle's own search
    of their type shows all the same: each one a wrong ``not searchable``."""
    out = []
    for index, evidence in found.items():
        change = wanted[index]
        if isinstance(evidence, Evidence) or evidence.searchable:
            continue
        for plan in (pair.planner.located(change, d) for d in SEARCHED_BREAKS[change.rule.breaks]):
            if plan.root is None or plan.anchor is None:
                continue
            search = pair.search(plan.direction, plan.root, examples=examples)
            anchor = plan.anchor
            if not isinstance(search, str) and any(r.at(anchor) is not None for r in search.refusals):
                out.append(change)
                break
    return out


def read_exceptions(path: Path | None) -> dict[tuple[str, ...], str]:
    """``[[refusal]]`` tables (old, new, stability, type, direction, reason) that excuse listed refusals."""
    if path is None or not path.is_file():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: dict[tuple[str, ...], str] = {}
    for index, entry in enumerate(data.get("refusal", [])):
        keys = ("old", "new", "stability", "type", "direction")
        if not all(isinstance(entry.get(k), str) for k in (*keys, "reason")) or not entry["reason"].strip():
            raise CodegenError(f"refusal {index} needs {', '.join(keys)} and a reason", file=path)
        out[tuple(entry[k] for k in keys)] = entry["reason"].strip()
    return out


def run(
    source: SchemaSource,
    cache: Path,
    examples: int,
    evidence_examples: int,
    exceptions: dict[tuple[str, ...], str],
    only: Sequence[str] = (),
    without: Sequence[str] = (),
) -> Iterator[PairResult]:
    """Every consecutive pair of locked releases (or those naming a release in ``only``), both levels.

    ``without`` names rules whose changes are dropped before the check, as if the differ lacked them.
    """
    for old, new in release_pairs(list(source.lock.releases)):
        if only and old not in only and new not in only:
            continue
        old_files, new_files = source.load(old), source.load(new)
        both = "schema.unstable.json" in old_files.documents and "schema.unstable.json" in new_files.documents
        stabilities: list[Stability] = ["stable", "unstable"] if both else ["stable"]
        diff = diff_releases(old_files, new_files, stabilities)
        pairs = pairs_of(old_files, new_files, stabilities, cache, evidence_examples)
        for pair, surface in zip(pairs, diff.surfaces, strict=True):
            kept = [c for c in surface.changes if c.rule.id not in without]
            yield check_pair(pair, old, new, kept, exceptions, examples)


TABLE_HEADER = (
    "| pair | schema | changes | searched for evidence | with evidence | holds both ways | unproven "
    "| witnessable | types searched | messages | refusals explained | unexplained | excused |"
)
TABLE_RULE = "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"


def row(found: PairResult) -> str:
    at_row = found.with_evidence - len(found.misplaced)
    return (
        f"| {found.old} → {found.new} | {found.stability} | {found.changes} | {found.searched} | "
        f"{found.with_evidence} | {at_row} | {found.unproven} | {len(found.witnessable)} | {found.types} | "
        f"{found.messages} | {found.explained} | {len(found.unexplained)} | {len(found.excused)} |"
    )


def parser() -> argparse.ArgumentParser:
    """The oracle's command line."""
    parser = argparse.ArgumentParser(
        prog="python -m codegen.evidence.oracle",
        description="Check the differ against behaviour on every consecutive locked pair: every refusal "
        "of a generated message by the other release's models must be explained by a reported change.",
    )
    parser.add_argument("--examples", type=int, default=ORACLE_EXAMPLES, help="per type and direction")
    parser.add_argument(
        "--evidence-examples",
        type=int,
        default=DEFAULT_EXAMPLES,
        help="per type and direction, in the evidence search (as diff's --evidence-examples)",
    )
    parser.add_argument("--release", action="append", default=[], help="only the pairs with this release")
    parser.add_argument("--exceptions", type=Path, default=None, help="a TOML file of excused refusals")
    parser.add_argument("--cache", type=Path, default=default_cache_dir())
    parser.add_argument(
        "--without-rule",
        action="append",
        default=[],
        metavar="RULE",
        help="check a differ that lacks this rule (its changes dropped): what the oracle would catch",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    source = SchemaSource(read_lock())
    exceptions = read_exceptions(args.exceptions)
    print(TABLE_HEADER)
    print(TABLE_RULE)
    results = []
    started = time.perf_counter()
    with collecting(strict=False):
        checked = run(
            source,
            args.cache,
            args.examples,
            args.evidence_examples,
            exceptions,
            args.release,
            args.without_rule,
        )
        for found in checked:
            results.append(found)
            print(row(found), flush=True)
    unexplained = [u for r in results for u in r.unexplained]
    excused = [pair for r in results for pair in r.excused]
    misplaced = [(r, change, evidence) for r in results for change, evidence in r.misplaced]
    contradicted = [(r, change) for r in results for change in r.contradicted]
    witnessed = [(r, change, evidence) for r in results for change, evidence in r.witnessable]
    print()
    total = sum(len(r.unexplained) for r in results)

    def total_of(name: str) -> int:
        return sum(getattr(r, name) for r in results)

    print(
        f"{len(results)} pair levels, {total_of('changes')} changes, {total_of('with_evidence')} of "
        f"{total_of('searched')} searched with evidence (each by message "
        f"{max((r.latest for r in results), default=0)} of its search at the latest), "
        f"{total_of('messages')} messages, "
        f"{total_of('explained')} refusals explained, {total} unexplained, {len(excused)} excused, "
        f"{len(misplaced)} witnesses that do not hold both ways, {len(contradicted)} not searchable yet "
        f"shown, {total_of('unproven')} unproven verdicts, {len(witnessed)} of them witnessable "
        f"({time.perf_counter() - started:.0f} s)"
    )
    for found, change, evidence in misplaced:
        shown = json.dumps(evidence.message, sort_keys=True, ensure_ascii=False)
        where = f"{found.old} -> {found.new} {found.stability}: {change.rule.id} {change.subject}"
        print(f"not at its row: {where}: {evidence.schema_type} {shown} ({evidence.error})")
    for found, change in contradicted:
        where = f"{found.old} -> {found.new} {found.stability}"
        print(f"not searchable yet shown: {where}: {change.rule.id} {change.subject}")
    for found, change, evidence in witnessed:
        shown = json.dumps(evidence.message, sort_keys=True, ensure_ascii=False)
        where = f"{found.old} -> {found.new} {found.stability}: {change.rule.id} {change.subject}"
        print(f"unproven yet witnessable: {where}: {evidence.carrier} {shown} ({evidence.error})")
    for item in unexplained:
        print(f"unexplained: {item.line()}")
    for item, reason in excused:
        print(f"excused: {item.line()}: {reason}")
    return 1 if unexplained or misplaced or contradicted or witnessed else 0


if __name__ == "__main__":
    sys.exit(main())
