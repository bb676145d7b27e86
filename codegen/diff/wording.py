"""The words of a report: a change's subject and detail, rendered from its typed fields.

Every format (text, markdown, JSON, GitHub, SARIF) and the codemod's
findings show these; nothing parses them back.  Rewording a message here
changes no fingerprint (:attr:`~.model.Change.key` hashes the rule and the
path) and no rewrite of the codemod (which reads the fields).
"""

from __future__ import annotations

import json
from typing import Any, assert_never

from ..schema.ir import AnyOf, ArrayOf, Const, MapOf, Nullable, Ref, Scalar, TypeExpr, to_json
from .path import (
    ABSENT,
    ArgumentPart,
    AttributePart,
    EnvelopePart,
    FieldPart,
    HandlerPart,
    InnerPart,
    KeywordPart,
    MemberPart,
    MessagePart,
    MessagesPart,
    MethodPart,
    Part,
    Path,
    SidePart,
    TypePart,
    ValuePart,
)
from .proof import Relation, SetProof
from .rules import RuleId

INNER_WORDS = {"items": "items", "values": "values"}


def describe(expr: TypeExpr) -> str:
    """A type expression the way a reader of the report thinks of it."""
    match expr:
        case Ref(name=name):
            return name
        case Scalar(type=scalar):
            return scalar
        case ArrayOf(item=item):
            return f"list[{describe(item)}]"
        case MapOf(value=value):
            return f"dict[str, {describe(value)}]"
        case Const(value=value):
            return repr(value)
        case Nullable(inner=inner):
            return f"{describe(inner)} | null"
        case AnyOf(members=members):
            return " | ".join(describe(m) for m in members)
        case _:
            assert_never(expr)


def _member_key(part: MemberPart) -> str:
    if part.other:
        return "other"
    if part.title is not None:
        return part.title
    if part.member is not None:
        return describe(part.member)
    return "null" if part.value is None else repr(part.value)


def _part(part: Part, previous: Part | None) -> str:
    match part:
        case TypePart(name=name):
            return name
        case FieldPart(name=name) | AttributePart(name=name):
            return f".{name}"
        case MemberPart():
            key = _member_key(part)
            if isinstance(previous, TypePart):
                return f"[{key}]"
            return f" > {part.tag}[{key}]" if part.tag is not None else f" > [{key}]"
        case ValuePart(value=value):
            return f"[{value!r}]"
        case MethodPart(name=name, method_kind=method_kind, side=side):
            return f"{method_kind} {name} (handled by the {side})"
        case MessagePart(which=which):
            return f" {which}"
        case SidePart(name=name):
            return f"side {name}"
        case EnvelopePart(name=name, sender=sender, batch=batch):
            return f"{'batch' if batch else 'envelope'} {name} (sent by the {sender})"
        case MessagesPart(sender=sender):
            return f"{sender} messages"
        case HandlerPart(side=side, name=name):
            return f"{side}.{name}"
        case ArgumentPart(name=name):
            return f"({name})"
        case InnerPart() | KeywordPart():
            return ""  # shown in the detail
        case _:
            assert_never(part)


def path_words(path: tuple[Part, ...]) -> str:
    """A path as a report shows it: ``PromptResponse.messageId``, ``SessionUpdate['plan'] > ...``."""
    out = []
    previous: Part | None = None
    for part in path:
        out.append(_part(part, previous))
        previous = part
    return "".join(out)


def _show(value: Any) -> str:
    """A value of the report: a type expression described, a JSON value as Python shows it."""
    if value is ABSENT:
        return "none"
    if isinstance(value, (Ref, Scalar, ArrayOf, MapOf, Const, Nullable, AnyOf)):
        return describe(value)
    return repr(to_json(value))


def _names(items: Any) -> str:
    return ", ".join(describe(i) if not isinstance(i, str) else i for i in items)


def _set_change(before: tuple[Any, ...], after: tuple[Any, ...]) -> str:
    if not set(before) & set(after):  # nothing kept: the one type replaced by the other
        return f"{' | '.join(sorted(map(describe, before)))} -> {' | '.join(sorted(map(describe, after)))}"
    added = sorted(describe(e) for e in after if e not in before)
    dropped = sorted(describe(e) for e in before if e not in after)
    parts = []
    if added:
        parts.append("adds " + ", ".join(added))
    if dropped:
        parts.append("drops " + ", ".join(dropped))
    return "; ".join(parts)


def _union_words(tag: Any) -> str:
    return f"a union on {tag}" if tag else "an untagged union"


def detail(rule_id: RuleId, path: Path, old: Any, new: Any) -> str:
    """The change itself, from its old and new values: ``minItems 1 -> 2``, ``type MessageId``."""
    prefix = "".join(f"{INNER_WORDS[p.where]}: " for p in path if isinstance(p, InnerPart))
    match rule_id:
        case RuleId.FIELD_ADDED_REQUIRED | RuleId.FIELD_ADDED_OPTIONAL:
            return f"type {describe(new)}"
        case RuleId.TYPE_WIDENED | RuleId.TYPE_NARROWED:
            return prefix + _set_change(old, new)
        case (
            RuleId.CONSTRAINT_TIGHTENED
            | RuleId.CONSTRAINT_LOOSENED
            | RuleId.CONSTRAINT_CHANGED
            | RuleId.FORMAT_CHANGED
        ):
            keyword = next((p for p in path if isinstance(p, KeywordPart)), None)
            word = keyword.name if keyword is not None else "constraint"
            return f"{prefix}{word} {_show(old)} -> {_show(new)}"
        case RuleId.OBJECT_BECAME_UNION | RuleId.PYTHON_CLASS_BECAME_UNION:
            return _union_words(new)
        case RuleId.METHOD_MOVED_SIDE:
            return f"handled by the {old} -> by the {new}"
        case RuleId.PYTHON_METHOD_REMOVED:
            return f"handled by the {old} -> by the {new}" if new is not ABSENT else ""
        case RuleId.LENIENT_ANNOTATION_ADDED:
            return ", ".join(k for k in new if k not in old)
        case RuleId.LENIENT_ANNOTATION_REMOVED:
            return ", ".join(k for k in old if k not in new)
        case RuleId.NORMATIVE_TEXT_CHANGED:
            words = [f"drops {_quoted(old)}" if old else "", f"adds {_quoted(new)}" if new else ""]
            return "; ".join(w for w in words if w)
        case RuleId.NORMATIVE_TEXT_MOVED:
            source, sentence = old
            moved = f"moves “{sentence}” from {path_words(source)}"
            return moved if sentence == new else f"{moved}, now “{new}”"
        case RuleId.UNION_TAG_RESERVED | RuleId.UNION_TAG_RELEASED:
            return ""
        case RuleId.METHOD_KIND_CHANGED:
            return f"{old} -> {new}"
        case RuleId.DEFAULT_CHANGED:
            return f"{_show(old)} -> {_show(new)}"
        case RuleId.PYTHON_CLASS_RENAMED:
            return f"now {new}"
        case RuleId.SIDE_ADDED:
            return "methods " + _names(new) if new else ""
        case RuleId.SIDE_REMOVED:
            return "methods " + _names(old) if old else ""
        case RuleId.ENVELOPE_ADDED:
            return "holds " + _names(new) if new else ""
        case RuleId.ENVELOPE_REMOVED:
            return "held " + _names(old) if old else ""
        case _:
            # names (of types, tags, attributes, methods, arguments) and type expressions
            if old is ABSENT and new is ABSENT:
                return ""
            return f"{prefix}{_name(old)} -> {_name(new)}"


def _quoted(sentences: Any) -> str:
    return " ".join(f"“{s}”" for s in sentences)


def _name(value: Any) -> str:
    return value if isinstance(value, str) else _show(value)


PREMISES = {
    "default-member": "the union's default member (no tag property) takes it",
    "catch-all": "the union's catch-all took it, and is where a later release's variants arrive",
    "other-member": "another member of the union takes it",
    "defaults-applied": "read as the new models read it, every omitted field's default filled",
    "lenient": "the old models read it as the field's default (or drop the item), the new ones refuse it",
}
"""The words of each :attr:`~.proof.SetProof.premise` token."""


def _value(value: Any) -> str:
    """A value of a proof: a type expression described, a JSON value as JSON."""
    if isinstance(value, (Ref, Scalar, ArrayOf, MapOf, Const, Nullable, AnyOf)):
        return describe(value)
    try:
        return json.dumps(to_json(value), sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def proof_words(proof: SetProof) -> str:
    """A set proof as one line: the two sets, the relation, a value only one side accepts, the premise."""
    if proof.premise == "defaults-applied":
        return (
            f"an omitted field is read as {_value(proof.old)} by old receivers and meant as "
            f"{_value(proof.new)} by new senders ({PREMISES[proof.premise]})"
        )
    relation = {
        Relation.EQUAL: "the same values are accepted before and after",
        Relation.WIDER: "every old value is still accepted",
        Relation.NARROWER: "every new value was already accepted",
        Relation.OVERLAP: "neither set of values includes the other",
    }[proof.relation]
    sets = f"{_value(proof.old)} → {_value(proof.new)}: " if proof.old is not ABSENT else ""
    shown = ((proof.only_new, "new"), (proof.only_old, "no longer accepted"))
    extra = [f"{_value(v)} is {w}" for v, w in shown if v is not ABSENT]
    premise = f" ({PREMISES.get(proof.premise, proof.premise)})" if proof.premise else ""
    return sets + "; ".join([relation, *extra]) + premise
