"""The catalog of API changes the differ reports, and who each one breaks.

Every kind of change is one :class:`Rule`: a stable kebab-case ID, the layer it
lives in (``wire`` for what peers see on the network, ``python`` for code
written against the generated names), a default severity and a one-line
explanation.  A wire rule does not name a peer.  It says which end of the
data flow it hurts: the *senders* of the data (an old sender keeps sending
what the new release no longer accepts), the *receivers* (a new sender sends
what an old receiver cannot read), *both*, or *nobody*.

Which peer that is, an old agent or an old client (or any other side the
schema has, such as a proxy), depends on who sends and who receives the type
where the change happened, in the old release and in the new one (a
:class:`Traffic` of two :class:`Flow`, read from the IR by :mod:`.senders`).
:func:`impact` turns the traffic into roles, and it is the only place that
does: no rule knows about agents or clients.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Literal, assert_never

Severity = Literal["breaking", "warning", "info"]
Layer = Literal["wire", "python"]
Peer = str
"""A side that sends and receives messages (``agent``, ``client``, ``proxy``...), as the IR names it."""
Role = str
"""Whom a change breaks: ``old <peer>`` (``old agent``), or :data:`PYTHON_CALLERS`."""
Breaks = Literal["senders", "receivers", "both", "python", "nobody"]
ExplanationStyle = Literal["text", "markdown", "json"]

SEVERITIES: tuple[Severity, ...] = ("breaking", "warning", "info")
PYTHON_CALLERS: Role = "python callers"


def role_of(peer: Peer) -> Role:
    return f"old {peer}"


@dataclass(frozen=True)
class Flow:
    """Who sends the data a change is in, and who receives it, in one release."""

    senders: frozenset[Peer] = field(default_factory=frozenset)
    receivers: frozenset[Peer] = field(default_factory=frozenset)

    def __or__(self, other: Flow) -> Flow:
        return Flow(self.senders | other.senders, self.receivers | other.receivers)

    @property
    def reversed(self) -> Flow:
        """The flow of the answer: a result goes from the handler back to the caller."""
        return Flow(self.receivers, self.senders)


NO_FLOW = Flow()


@dataclass(frozen=True)
class Traffic:
    """The flow of the data a change is in, in the old release and in the new one.

    A change breaks *old senders* when a peer running the old release sends
    the data to one running the new release, and *old receivers* when a new
    sender's data reaches a peer running the old release.  So an old sender
    is a role that sends the data in both releases (and the new release has
    someone to receive it), an old receiver a role that receives it in both
    (and the new release has someone to send it): a peer the old release does
    not have is never an old one, a role that no longer sends or receives the
    data is not hurt by its shape (what it stopped doing is a change of its
    own, such as a method that moved), and data the new release no longer
    carries breaks no one.
    """

    old: Flow = NO_FLOW
    new: Flow = NO_FLOW

    def __or__(self, other: Traffic) -> Traffic:
        return Traffic(self.old | other.old, self.new | other.new)

    @property
    def reversed(self) -> Traffic:
        """The traffic of the answer: a result goes from the handler back to the caller."""
        return Traffic(self.old.reversed, self.new.reversed)

    def hurt(self, breaks: Breaks) -> frozenset[Peer]:
        """The peers a rule that breaks ``breaks`` hurts when they still run the old release."""
        peers: set[Peer] = set()
        if breaks in ("senders", "both") and self.new.receivers:
            peers |= self.old.senders & self.new.senders
        if breaks in ("receivers", "both") and self.new.senders:
            peers |= self.old.receivers & self.new.receivers
        return frozenset(peers)


NO_TRAFFIC = Traffic()
BREAKS_TEXT: dict[Breaks, str] = {
    "senders": "old senders of the data",
    "receivers": "old receivers of the data",
    "both": "old senders and old receivers",
    "python": "python callers",
    "nobody": "nobody",
}


class RuleId(StrEnum):
    """The catalog: one member per rule, its value the stable kebab-case ID, declared with its facts.

    The values are the IDs that reports, fingerprints and waiver files show,
    so they never change; code names the members, so a misspelt rule fails the
    type check instead of a report.  Each member is declared in one row: ID,
    layer, category, default severity, whom it breaks, and its one-line summary
    (:class:`Rule`); :data:`CATALOG` is the rows in this order.
    """

    _facts: tuple[Layer, str, Severity, Breaks, str]

    def __new__(
        cls, value: str, layer: Layer, category: str, severity: Severity, breaks: Breaks, summary: str
    ) -> RuleId:
        member = str.__new__(cls, value)
        member._value_ = value
        member._facts = (layer, category, severity, breaks, summary)
        return member

    # fmt: off
    # fields
    FIELD_ADDED_REQUIRED = ("field-added-required", "wire", "field", "breaking", "senders",
        "A new required field: old senders omit it, so new receivers reject their messages.")
    FIELD_ADDED_OPTIONAL = ("field-added-optional", "wire", "field", "info", "nobody",
        "A new optional field: old receivers ignore it and new receivers cope when old senders omit it.")
    REQUIRED_FIELD_REMOVED = ("required-field-removed", "wire", "field", "breaking", "receivers",
        "A required field is gone: new senders omit it, so old receivers reject their messages.")
    OPTIONAL_FIELD_REMOVED = ("optional-field-removed", "wire", "field", "info", "nobody",
        "An optional field is gone: old receivers already cope without it, new receivers ignore it.")
    FIELD_BECAME_REQUIRED = ("field-became-required", "wire", "field", "breaking", "senders",
        "A field became required: old senders may omit it, and new receivers reject that.")
    FIELD_BECAME_OPTIONAL = ("field-became-optional", "wire", "field", "breaking", "receivers",
        "A field became optional: new senders may omit it, and old receivers reject that.")
    FIELD_BECAME_NULLABLE = ("field-became-nullable", "wire", "field", "breaking", "receivers",
        "A field accepts null: new senders may send null, which old receivers reject.")
    FIELD_BECAME_NON_NULLABLE = ("field-became-non-nullable", "wire", "field", "breaking", "senders",
        "A field no longer accepts null: old senders may still send null, which new receivers reject.")
    # objects
    OBJECT_BECAME_CLOSED = ("object-became-closed", "wire", "object", "breaking", "senders",
        "An object no longer accepts members it does not list (additionalProperties: false): old senders "
        "may send members new receivers reject.")
    OBJECT_BECAME_OPEN = ("object-became-open", "wire", "object", "breaking", "receivers",
        "An object accepts members it does not list (no more additionalProperties: false): new senders may "
        "send members old receivers reject.")
    # types
    TYPE_CHANGED = ("type-changed", "wire", "type", "breaking", "both",
        "A type was replaced by one that takes some values it refused and refuses some it took: either side "
        "may send what the other rejects.")
    TYPE_WIDENED = ("type-widened", "wire", "type", "breaking", "receivers",
        "A type accepts more values: new senders may send values old receivers reject.")
    TYPE_NARROWED = ("type-narrowed", "wire", "type", "breaking", "senders",
        "A type accepts fewer values: old senders may send values new receivers reject.")
    # constraints
    CONSTRAINT_TIGHTENED = ("constraint-tightened", "wire", "constraint", "breaking", "senders",
        "A pattern, minimum or maximum got tighter: old senders may send values new receivers reject.")
    CONSTRAINT_LOOSENED = ("constraint-loosened", "wire", "constraint", "warning", "receivers",
        "A pattern, minimum or maximum got looser: new senders may send values old receivers reject.")
    CONSTRAINT_CHANGED = ("constraint-changed", "wire", "constraint", "breaking", "both",
        "A pattern was replaced: values valid on one side may be invalid on the other.")
    # annotations
    FORMAT_CHANGED = ("format-changed", "wire", "annotation", "info", "nobody",
        "A format was added, removed or replaced: JSON Schema 2020-12 reads format as an annotation, and "
        "neither its validators nor the generated models enforce it.")
    # enums
    ENUM_VALUE_ADDED_CLOSED = ("enum-value-added-closed", "wire", "enum", "breaking", "receivers",
        "A value was added to a closed enum: new senders may send it and old receivers reject it.")
    ENUM_VALUE_ADDED_OPEN = ("enum-value-added-open", "wire", "enum", "info", "nobody",
        "A value was added to an open enum: old receivers treat it as an unknown value.")
    ENUM_VALUE_REMOVED_CLOSED = ("enum-value-removed-closed", "wire", "enum", "breaking", "senders",
        "A value was removed from a closed enum: old senders may send it and new receivers reject it.")
    ENUM_VALUE_REMOVED_OPEN = ("enum-value-removed-open", "wire", "enum", "warning", "senders",
        "A value was removed from an open enum: new receivers treat it from old senders as unknown.")
    ENUM_BECAME_CLOSED = ("enum-became-closed", "wire", "enum", "breaking", "senders",
        "An enum no longer accepts unknown values: old senders' custom values are rejected by new "
        "receivers.")
    ENUM_BECAME_OPEN = ("enum-became-open", "wire", "enum", "breaking", "receivers",
        "An enum accepts any value: new senders may send values old receivers reject.")
    # unions
    UNION_VARIANT_ADDED_CLOSED = ("union-variant-added-closed", "wire", "union", "breaking", "receivers",
        "A variant was added to a closed union: new senders may send it and old receivers reject it.")
    UNION_VARIANT_ADDED_OPEN = ("union-variant-added-open", "wire", "union", "info", "nobody",
        "A variant was added to an open union: old receivers keep it in the catch-all.")
    UNION_VARIANT_REMOVED_CLOSED = ("union-variant-removed-closed", "wire", "union", "breaking", "senders",
        "A variant was removed from a closed union: old senders may send it and new receivers reject it.")
    UNION_VARIANT_REMOVED_OPEN = ("union-variant-removed-open", "wire", "union", "warning", "senders",
        "A variant was removed from an open union: new receivers see it from old senders as unknown.")
    UNION_TAG_RESERVED = ("union-tag-reserved", "wire", "union", "breaking", "senders",
        "A union's catch-all refuses a tag value it took before: old senders' members with that tag are "
        "rejected by new receivers.")
    UNION_TAG_RELEASED = ("union-tag-released", "wire", "union", "breaking", "receivers",
        "A union's catch-all takes a tag value it refused before: new senders may send members with that "
        "tag, which old receivers reject.")
    UNION_TAG_CHANGED = ("union-tag-changed", "wire", "union", "breaking", "both",
        "A union dispatches on a different property: no variant is recognised across the change.")
    UNION_DISPATCH_CHANGED = ("union-dispatch-changed", "wire", "union", "warning", "receivers",
        "A union dispatches on a different property (or on one where it had none) but takes the same values "
        "(a default member takes what no tagged member does): no message is refused either way, but old "
        "receivers may read a new sender's member as another one.")
    UNION_TAG_CLAIMED = ("union-tag-claimed", "wire", "union", "warning", "senders",
        "A tag value the union's catch-all took is a variant of its own now: what old senders sent with that "
        "tag must have the variant's shape, or new receivers refuse it (a warning: the catch-all is where a "
        "later release's variants arrive).")
    UNION_BECAME_CLOSED = ("union-became-closed", "wire", "union", "breaking", "senders",
        "A union lost its catch-all: old senders' unknown or custom variants are rejected by new receivers.")
    UNION_BECAME_OPEN = ("union-became-open", "wire", "union", "breaking", "receivers",
        "A union gained a catch-all (a member for any other tag, or one that takes any value): new senders "
        "may send values old receivers reject.")
    UNION_BECAME_EXCLUSIVE = ("union-became-exclusive", "wire", "union", "warning", "senders",
        "A union's members went from anyOf to oneOf: a value that several members accept, which old senders "
        "may send, is refused by new receivers.")
    UNION_BECAME_INCLUSIVE = ("union-became-inclusive", "wire", "union", "warning", "receivers",
        "A union's members went from oneOf to anyOf: new senders may send a value that several members "
        "accept, which old receivers refuse.")
    OBJECT_BECAME_UNION = ("object-became-union", "wire", "union", "warning", "receivers",
        "An object became a union of objects told apart by a tag: old receivers read every member as the "
        "old object and miss the fields a member adds.")
    UNION_BECAME_OBJECT = ("union-became-object", "wire", "union", "breaking", "senders",
        "A union became one object: old senders may send members the new object does not accept.")
    # methods
    METHOD_ADDED = ("method-added", "wire", "method", "info", "nobody",
        "A new request: old handlers answer it with 'method not found', which callers must expect.")
    METHOD_REMOVED = ("method-removed", "wire", "method", "breaking", "senders",
        "A request is gone: old callers get 'method not found' from new handlers.")
    NOTIFICATION_ADDED = ("notification-added", "wire", "method", "info", "nobody",
        "A new notification: old handlers ignore it, silently.")
    NOTIFICATION_REMOVED = ("notification-removed", "wire", "method", "warning", "senders",
        "A notification is gone: new handlers ignore what old callers send, silently (a notification gets "
        "no answer, not even 'method not found').")
    METHOD_KIND_CHANGED = ("method-kind-changed", "wire", "method", "breaking", "both",
        "A notification became a request, or a request a notification: one side's old peers answer the new "
        "request with 'method not found', the other's ignore the old notification or wait for an answer "
        "that never comes.")
    METHOD_MOVED_SIDE = ("method-moved-side", "wire", "method", "breaking", "both",
        "A method is handled by the other side now: old callers and old handlers both miss it.")
    METHOD_BECAME_UNSTABLE = ("method-became-unstable", "wire", "method", "warning", "senders",
        "A stable method is now marked unstable: callers may lose it without notice.")
    METHOD_BECAME_STABLE = ("method-became-stable", "wire", "method", "info", "nobody",
        "An unstable method is now stable.")
    TYPE_BECAME_UNSTABLE = ("type-became-unstable", "wire", "stability", "warning", "nobody",
        "A type is marked unstable again: code relying on it should expect it to change or go.")
    TYPE_BECAME_STABLE = ("type-became-stable", "wire", "stability", "info", "nobody",
        "An unstable type is now part of the stable protocol (it appears in the stable schema).")
    VARIANT_BECAME_UNSTABLE = ("variant-became-unstable", "wire", "stability", "warning", "nobody",
        "A union member is marked unstable again: peers may stop sending it.")
    VARIANT_BECAME_STABLE = ("variant-became-stable", "wire", "stability", "info", "nobody",
        "An unstable union member is now part of the stable protocol.")
    # sides and root message kinds
    SIDE_ADDED = ("side-added", "wire", "side", "info", "nobody",
        "A new side (a role a peer can take): its methods are new too, and old peers never meet it.")
    SIDE_REMOVED = ("side-removed", "wire", "side", "breaking", "both",
        "A side is gone: old peers in that role and old peers that call it find no one to talk to.")
    ENVELOPE_ADDED = ("envelope-added", "wire", "side", "warning", "receivers",
        "A new root message kind (an envelope or a JSON-RPC batch): new senders may send it and old "
        "receivers refuse it.")
    ENVELOPE_REMOVED = ("envelope-removed", "wire", "side", "breaking", "senders",
        "A root message kind (an envelope or a JSON-RPC batch) is gone: old senders may still send it, and "
        "new receivers refuse it.")
    # lenient deserialisation
    LENIENT_ANNOTATION_ADDED = ("lenient-annotation-added", "wire", "lenient", "info", "nobody",
        "A field became lenient: new receivers drop an invalid value or item, or read null as the default, "
        "instead of failing.")
    LENIENT_ANNOTATION_REMOVED = ("lenient-annotation-removed", "wire", "lenient", "warning", "senders",
        "A field is no longer lenient: an invalid value (or a null) from an old sender now fails the whole "
        "message.")
    # defaults
    DEFAULT_CHANGED = ("default-changed", "wire", "default", "warning", "both",
        "A default changed: a receiver fills an omitted field with a value its peer did not mean.")
    # normative text
    NORMATIVE_TEXT_CHANGED = ("normative-text-changed", "wire", "description", "info", "nobody",
        "A description adds, drops or rewords a sentence that says MUST, SHOULD or MAY (or SHALL, REQUIRED, "
        "RECOMMENDED): peers that follow the old text may not follow the new one.")
    NORMATIVE_TEXT_MOVED = ("normative-text-moved", "wire", "description", "info", "nobody",
        "A sentence that says MUST, SHOULD or MAY moved to the description of another location of the same "
        "type (a field's to its type's, or back), reworded at most a little: the detail shows both wordings.")
    # python names
    PYTHON_CLASS_ADDED = ("python-class-added", "python", "class", "info", "nobody",
        "A new class in the generated bindings.")
    PYTHON_CLASS_REMOVED = ("python-class-removed", "python", "class", "breaking", "python",
        "A class is gone from the generated bindings: code that imports it fails.")
    PYTHON_CLASS_RENAMED = ("python-class-renamed", "python", "class", "breaking", "python",
        "A class has a new name but the same shape: the wire is unchanged, imports of the old name fail.")
    PYTHON_CLASS_BECAME_UNION = ("python-class-became-union", "python", "class", "breaking", "python",
        "A class (or a name that stood for one class: an alias of it, a union of it alone) became a union "
        "of classes: calling it raises TypeError, and code that builds it or checks isinstance against it "
        "must use one of its members.")
    PYTHON_UNION_BECAME_CLASS = ("python-union-became-class", "python", "class", "warning", "python",
        "A union became one class: code that matches on its members finds them gone.")
    REF_BECAME_INLINE = ("ref-became-inline", "python", "class", "breaking", "python",
        "A field's named type became an inline one of the same shape: same wire, different class.")
    INLINE_BECAME_REF = ("inline-became-ref", "python", "class", "breaking", "python",
        "A field's inline type became a named one of the same shape: same wire, different class.")
    PYTHON_CLASS_REPLACED = ("python-class-replaced", "python", "class", "breaking", "python",
        "A field's or a method's named type is another class now (the wire difference, if any, is reported "
        "beside it): code that builds the value with the old class must use the new one.")
    PYTHON_ATTRIBUTE_REMOVED = ("python-attribute-removed", "python", "attribute", "breaking", "python",
        "An attribute is gone from a class: code that reads or sets it fails.")
    PYTHON_ATTRIBUTE_RENAMED = ("python-attribute-renamed", "python", "attribute", "breaking", "python",
        "An attribute has a new Python name for the same wire name: code using the old name fails.")
    PYTHON_CLASS_ARGUMENT_REQUIRED = ("python-class-argument-required",
        "python", "attribute", "breaking", "python",
        "A class needs a keyword argument it did not need before (a field became required and has no "
        "default): code that constructs it without the argument fails.")
    PYTHON_ANNOTATION_CHANGED = ("python-annotation-changed", "python", "attribute", "warning", "python",
        "A type annotation changed while the values it takes on the wire did not (an open enum became its "
        "base type, any value became a union with a member that takes any value): type checkers may flag "
        "code written against the old annotation.")
    PYTHON_METHOD_REMOVED = ("python-method-removed", "python", "method", "breaking", "python",
        "A method is gone from the generated API: code that calls or implements it fails.")
    PYTHON_METHOD_RENAMED = ("python-method-renamed", "python", "method", "breaking", "python",
        "A method has a new Python name for the same wire name: code using the old name fails.")
    PYTHON_METHOD_ARGUMENT_REMOVED = ("python-method-argument-removed",
        "python", "method", "breaking", "python",
        "A keyword argument is gone from a method: calls that pass it fail.")
    PYTHON_METHOD_ARGUMENT_RENAMED = ("python-method-argument-renamed",
        "python", "method", "breaking", "python",
        "A keyword argument has a new name for the same wire name: calls that pass the old name fail.")
    PYTHON_METHOD_ARGUMENT_REQUIRED = ("python-method-argument-required",
        "python", "method", "breaking", "python",
        "A method needs a keyword argument it did not need before: calls without it fail.")
    PYTHON_METHOD_ARGUMENT_ADDED = ("python-method-argument-added", "python", "method", "info", "nobody",
        "A method takes a new optional keyword argument.")
    # fmt: on


@dataclass(frozen=True)
class Rule:
    """One kind of change."""

    id: RuleId
    layer: Layer
    category: str
    severity: Severity
    breaks: Breaks
    summary: str

    def facts(self) -> dict[str, str]:
        """The rule as plain data: its ID, layer, category, default severity, who it breaks, summary."""
        return {
            "id": self.id,
            "layer": self.layer,
            "category": self.category,
            "severity": self.severity,
            "breaks": BREAKS_TEXT[self.breaks],
            "summary": self.summary,
        }

    def explain(self, style: ExplanationStyle = "text", width: int = 0) -> str:
        """The rule in words, for ``acp-codegen rules`` and ``docs/rules.md``.

        * ``text``: two lines for a terminal, the ID padded to ``width`` so a
          list of rules lines up;
        * ``markdown``: the rule's section of the catalog page, headed by its
          ID (the anchor the reports link to);
        * ``json``: :meth:`facts` as a JSON object.
        """
        match style:
            case "text":
                first = f"{self.id:{width}}  {self.layer:6}  {self.severity:8}  {BREAKS_TEXT[self.breaks]}"
                return f"{first}\n{'':{width}}  {self.summary}"
            case "markdown":
                facts = f"layer: `{self.layer}`; default severity: `{self.severity}`"
                return f"### {self.id}\n\n{self.summary}\n\n- {facts}; breaks: {BREAKS_TEXT[self.breaks]}"
            case "json":
                return json.dumps(self.facts(), indent=2)
            case _:
                assert_never(style)


def impact(rule: Rule, traffic: Traffic) -> tuple[Severity, tuple[Role, ...]]:
    """The severity of one change and the roles it breaks.

    ``traffic`` says who sends the data the change is in and who receives it,
    in each release: for a type, whoever sends or receives a message that can
    contain it; for a method, its callers and its handlers.  Old senders are
    the old release's, old receivers too (:meth:`Traffic.hurt`).  A wire
    change that hurts no peer is reported as ``info``.
    """
    if rule.breaks == "python":
        return rule.severity, (PYTHON_CALLERS,)
    if rule.breaks == "nobody":
        return rule.severity, ()
    peers = traffic.hurt(rule.breaks)
    if not peers:
        return "info", ()
    return rule.severity, tuple(role_of(p) for p in sorted(peers))


CATALOG: tuple[Rule, ...] = tuple(Rule(rule_id, *rule_id._facts) for rule_id in RuleId)
"""Every rule, in the order of :class:`RuleId` (the order of ``docs/rules.md`` and of a report's rows)."""

RULES: Mapping[RuleId, Rule] = MappingProxyType({rule.id: rule for rule in CATALOG})
"""The catalog keyed by rule ID."""


def rule(rule_id: RuleId) -> Rule:
    return RULES[rule_id]


# --- the rules picked by a kind and a state -------------------------------------------

MemberKind = Literal["union", "enum"]
"""The types whose members (union variants, enum values) are compared one by one."""
Openness = Literal["open", "closed"]
"""Whether such a type accepts members it does not list (a catch-all variant, any value)."""


def openness(is_open: bool) -> Openness:
    return "open" if is_open else "closed"


BECAME: Mapping[tuple[MemberKind, Openness], RuleId] = MappingProxyType(
    {
        ("union", "open"): RuleId.UNION_BECAME_OPEN,
        ("union", "closed"): RuleId.UNION_BECAME_CLOSED,
        ("enum", "open"): RuleId.ENUM_BECAME_OPEN,
        ("enum", "closed"): RuleId.ENUM_BECAME_CLOSED,
    }
)
"""The rule for a union or enum that is now open or closed (the new state)."""

MEMBER_ADDED: Mapping[tuple[MemberKind, Openness], RuleId] = MappingProxyType(
    {
        ("union", "open"): RuleId.UNION_VARIANT_ADDED_OPEN,
        ("union", "closed"): RuleId.UNION_VARIANT_ADDED_CLOSED,
        ("enum", "open"): RuleId.ENUM_VALUE_ADDED_OPEN,
        ("enum", "closed"): RuleId.ENUM_VALUE_ADDED_CLOSED,
    }
)
"""The rule for a variant or value that arrived, by the new type's state."""

MEMBER_REMOVED: Mapping[tuple[MemberKind, Openness], RuleId] = MappingProxyType(
    {
        ("union", "open"): RuleId.UNION_VARIANT_REMOVED_OPEN,
        ("union", "closed"): RuleId.UNION_VARIANT_REMOVED_CLOSED,
        ("enum", "open"): RuleId.ENUM_VALUE_REMOVED_OPEN,
        ("enum", "closed"): RuleId.ENUM_VALUE_REMOVED_CLOSED,
    }
)
"""The rule for a variant or value that left, by the new type's state."""
