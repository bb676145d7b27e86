"""The catalog of API changes the differ reports, and who each one breaks.

Every kind of change is one :class:`Rule`: a stable kebab-case ID, the layer it
lives in (``wire`` for what peers see on the network, ``python`` for code
written against the generated names), a default severity and a one-line
explanation.  A wire rule does not name a peer.  It says which end of the
data flow it hurts: the *senders* of the data (an old sender keeps sending
what the new release no longer accepts), the *receivers* (a new sender sends
what an old receiver cannot read), *both*, or *nobody*.

Which peer that is, an old agent or an old client, depends on who sends the
type where the change happened.  :func:`impact` turns the flow into roles, and
it is the only place that does: no rule knows about agents or clients.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Severity = Literal["breaking", "warning", "info"]
Layer = Literal["wire", "python"]
Peer = Literal["agent", "client"]
Role = Literal["old agent", "old client", "python callers"]
Breaks = Literal["senders", "receivers", "both", "python", "nobody"]

SEVERITIES: tuple[Severity, ...] = ("breaking", "warning", "info")
PEERS: tuple[Peer, ...] = ("agent", "client")
OTHER_PEER: dict[Peer, Peer] = {"agent": "client", "client": "agent"}
ROLE_OF_PEER: dict[Peer, Role] = {"agent": "old agent", "client": "old client"}
BREAKS_TEXT: dict[Breaks, str] = {
    "senders": "old senders of the data",
    "receivers": "old receivers of the data",
    "both": "old senders and old receivers",
    "python": "python callers",
    "nobody": "nobody",
}


@dataclass(frozen=True)
class Rule:
    """One kind of change."""

    id: str
    layer: Layer
    category: str
    severity: Severity
    breaks: Breaks
    summary: str


def impact(rule: Rule, senders: Iterable[Peer]) -> tuple[Severity, tuple[Role, ...]]:
    """The severity of one change and the roles it breaks.

    ``senders`` are the peers that send the data the change is in: for a
    type, whoever sends a message that can contain it; for a method, the
    callers.  A wire change in data that no method carries breaks no peer and
    is reported as ``info``.
    """
    if rule.breaks == "python":
        return rule.severity, ("python callers",)
    if rule.breaks == "nobody":
        return rule.severity, ()
    sending = set(senders)
    peers: set[Peer] = set()
    if rule.breaks in ("senders", "both"):
        peers |= sending
    if rule.breaks in ("receivers", "both"):
        peers |= {OTHER_PEER[p] for p in sending}
    if not peers:
        return "info", ()
    return rule.severity, tuple(ROLE_OF_PEER[p] for p in PEERS if p in peers)


CATALOG: tuple[Rule, ...] = (
    # fields
    Rule(
        "field-added-required",
        "wire",
        "field",
        "breaking",
        "senders",
        "A new required field: old senders omit it, so new receivers reject their messages.",
    ),
    Rule(
        "field-added-optional",
        "wire",
        "field",
        "info",
        "nobody",
        "A new optional field: old receivers ignore it and new receivers cope when old senders omit it.",
    ),
    Rule(
        "required-field-removed",
        "wire",
        "field",
        "breaking",
        "receivers",
        "A required field is gone: new senders omit it, so old receivers reject their messages.",
    ),
    Rule(
        "optional-field-removed",
        "wire",
        "field",
        "info",
        "nobody",
        "An optional field is gone: old receivers already cope without it, new receivers ignore it.",
    ),
    Rule(
        "field-became-required",
        "wire",
        "field",
        "breaking",
        "senders",
        "A field became required: old senders may omit it, and new receivers reject that.",
    ),
    Rule(
        "field-became-optional",
        "wire",
        "field",
        "breaking",
        "receivers",
        "A field became optional: new senders may omit it, and old receivers reject that.",
    ),
    Rule(
        "field-became-nullable",
        "wire",
        "field",
        "breaking",
        "receivers",
        "A field accepts null: new senders may send null, which old receivers reject.",
    ),
    Rule(
        "field-became-non-nullable",
        "wire",
        "field",
        "breaking",
        "senders",
        "A field no longer accepts null: old senders may still send null, which new receivers reject.",
    ),
    # types
    Rule(
        "type-changed",
        "wire",
        "type",
        "breaking",
        "both",
        "A type was replaced by an incompatible one: neither side can read the other's data.",
    ),
    Rule(
        "type-widened",
        "wire",
        "type",
        "breaking",
        "receivers",
        "A type accepts more values: new senders may send values old receivers reject.",
    ),
    Rule(
        "type-narrowed",
        "wire",
        "type",
        "breaking",
        "senders",
        "A type accepts fewer values: old senders may send values new receivers reject.",
    ),
    # constraints
    Rule(
        "constraint-tightened",
        "wire",
        "constraint",
        "breaking",
        "senders",
        "A pattern, minimum or maximum got tighter: old senders may send values new receivers reject.",
    ),
    Rule(
        "constraint-loosened",
        "wire",
        "constraint",
        "warning",
        "receivers",
        "A pattern, minimum or maximum got looser: new senders may send values old receivers reject.",
    ),
    Rule(
        "constraint-changed",
        "wire",
        "constraint",
        "breaking",
        "both",
        "A pattern or format was replaced: values valid on one side may be invalid on the other.",
    ),
    # enums
    Rule(
        "enum-value-added-closed",
        "wire",
        "enum",
        "breaking",
        "receivers",
        "A value was added to a closed enum: new senders may send it and old receivers reject it.",
    ),
    Rule(
        "enum-value-added-open",
        "wire",
        "enum",
        "info",
        "nobody",
        "A value was added to an open enum: old receivers treat it as an unknown value.",
    ),
    Rule(
        "enum-value-removed-closed",
        "wire",
        "enum",
        "breaking",
        "senders",
        "A value was removed from a closed enum: old senders may send it and new receivers reject it.",
    ),
    Rule(
        "enum-value-removed-open",
        "wire",
        "enum",
        "warning",
        "senders",
        "A value was removed from an open enum: new receivers treat it from old senders as unknown.",
    ),
    Rule(
        "enum-became-closed",
        "wire",
        "enum",
        "breaking",
        "senders",
        "An enum no longer accepts unknown values: old senders' custom values are rejected by new receivers.",
    ),
    Rule(
        "enum-became-open",
        "wire",
        "enum",
        "breaking",
        "receivers",
        "An enum accepts any value: new senders may send values old receivers reject.",
    ),
    # unions
    Rule(
        "union-variant-added-closed",
        "wire",
        "union",
        "breaking",
        "receivers",
        "A variant was added to a closed union: new senders may send it and old receivers reject it.",
    ),
    Rule(
        "union-variant-added-open",
        "wire",
        "union",
        "info",
        "nobody",
        "A variant was added to an open union: old receivers keep it in the catch-all.",
    ),
    Rule(
        "union-variant-removed-closed",
        "wire",
        "union",
        "breaking",
        "senders",
        "A variant was removed from a closed union: old senders may send it and new receivers reject it.",
    ),
    Rule(
        "union-variant-removed-open",
        "wire",
        "union",
        "warning",
        "senders",
        "A variant was removed from an open union: new receivers see it from old senders as unknown.",
    ),
    Rule(
        "union-tag-changed",
        "wire",
        "union",
        "breaking",
        "both",
        "A union dispatches on a different property: no variant is recognised across the change.",
    ),
    Rule(
        "union-became-closed",
        "wire",
        "union",
        "breaking",
        "senders",
        "A union lost its catch-all: old senders' unknown or custom variants are rejected by new receivers.",
    ),
    Rule(
        "union-became-open",
        "wire",
        "union",
        "breaking",
        "receivers",
        "A union gained a catch-all: new senders may send variants old receivers reject.",
    ),
    # methods (the data is the request or notification: its senders are the callers)
    Rule(
        "method-added",
        "wire",
        "method",
        "info",
        "nobody",
        "A new method: old peers answer it with 'method not found', which callers must expect.",
    ),
    Rule(
        "method-removed",
        "wire",
        "method",
        "breaking",
        "senders",
        "A method is gone: old callers get 'method not found' from new handlers.",
    ),
    Rule(
        "method-moved-side",
        "wire",
        "method",
        "breaking",
        "both",
        "A method is handled by the other side now: old callers and old handlers both miss it.",
    ),
    Rule(
        "method-became-unstable",
        "wire",
        "method",
        "warning",
        "senders",
        "A stable method is now marked unstable: callers may lose it without notice.",
    ),
    Rule("method-became-stable", "wire", "method", "info", "nobody", "An unstable method is now stable."),
    # lenient deserialisation
    Rule(
        "lenient-annotation-added",
        "wire",
        "lenient",
        "info",
        "nobody",
        "A field became lenient: new receivers drop an invalid value or item instead of failing.",
    ),
    Rule(
        "lenient-annotation-removed",
        "wire",
        "lenient",
        "warning",
        "senders",
        "A field is no longer lenient: an invalid value from an old sender now fails the whole message.",
    ),
    # defaults
    Rule(
        "default-changed",
        "wire",
        "default",
        "warning",
        "both",
        "A default changed: a receiver fills an omitted field with a value its peer did not mean.",
    ),
    # python names
    Rule("python-class-added", "python", "class", "info", "nobody", "A new class in the generated bindings."),
    Rule(
        "python-class-removed",
        "python",
        "class",
        "breaking",
        "python",
        "A class is gone from the generated bindings: code that imports it fails.",
    ),
    Rule(
        "python-class-renamed",
        "python",
        "class",
        "breaking",
        "python",
        "A class has a new name but the same shape: the wire is unchanged, imports of the old name fail.",
    ),
    Rule(
        "ref-became-inline",
        "python",
        "class",
        "breaking",
        "python",
        "A field's named type became an inline one of the same shape: same wire, different class.",
    ),
    Rule(
        "inline-became-ref",
        "python",
        "class",
        "breaking",
        "python",
        "A field's inline type became a named one of the same shape: same wire, different class.",
    ),
    Rule(
        "python-attribute-removed",
        "python",
        "attribute",
        "breaking",
        "python",
        "An attribute is gone from a class: code that reads or sets it fails.",
    ),
    Rule(
        "python-attribute-renamed",
        "python",
        "attribute",
        "breaking",
        "python",
        "An attribute has a new Python name for the same wire name: code using the old name fails.",
    ),
    Rule(
        "python-method-removed",
        "python",
        "method",
        "breaking",
        "python",
        "A method is gone from the generated API: code that calls or implements it fails.",
    ),
    Rule(
        "python-method-renamed",
        "python",
        "method",
        "breaking",
        "python",
        "A method has a new Python name for the same wire name: code using the old name fails.",
    ),
    Rule(
        "python-method-argument-removed",
        "python",
        "method",
        "breaking",
        "python",
        "A keyword argument is gone from a method: calls that pass it fail.",
    ),
    Rule(
        "python-method-argument-renamed",
        "python",
        "method",
        "breaking",
        "python",
        "A keyword argument has a new name for the same wire name: calls that pass the old name fail.",
    ),
    Rule(
        "python-method-argument-required",
        "python",
        "method",
        "breaking",
        "python",
        "A method needs a keyword argument it did not need before: calls without it fail.",
    ),
    Rule(
        "python-method-argument-added",
        "python",
        "method",
        "info",
        "nobody",
        "A method takes a new optional keyword argument.",
    ),
)

RULES: dict[str, Rule] = {rule.id: rule for rule in CATALOG}


def rule(rule_id: str) -> Rule:
    return RULES[rule_id]
