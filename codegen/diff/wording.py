"""The words of a report: a change's subject and detail, rendered from its typed fields.

Every format (text, markdown, JSON, GitHub, SARIF) and the codemod's
findings show these; nothing parses them back.  Rewording a message here
changes no fingerprint (:attr:`~.model.Change.key` hashes the rule and the
path) and no rewrite of the codemod (which reads the fields).
"""

from __future__ import annotations

import json
from typing import Any, assert_never

from ..schema.ir import AnyOf, ArrayOf, Const, MapOf, Nullable, Ref, Scalar, to_json
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
from .payload import (
    Keywords,
    MovedSentence,
    Names,
    Payload,
    Sentence,
    Sentences,
    Tag,
    TypeSet,
    words,
)
from .payload import describe as describe  # the words of a type expression, where readers of a path find them
from .proof import Premise, Relation, SetProof
from .rules import RuleId

INNER_WORDS = {"items": "items", "values": "values"}


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


def detail(rule_id: RuleId, path: Path, old: Payload | None, new: Payload | None) -> str:
    """The change itself, from its old and new values: ``minItems 1 -> 2``, ``type MessageId``.

    Each side says itself (:mod:`.payload`); a rule whose change reads otherwise than ``old -> new``
    asks its family for what it holds.
    """
    prefix = "".join(f"{INNER_WORDS[p.where]}: " for p in path if isinstance(p, InnerPart))
    match rule_id:
        case RuleId.FIELD_ADDED_REQUIRED | RuleId.FIELD_ADDED_OPTIONAL:
            return f"type {words(new)}"
        case RuleId.TYPE_WIDENED | RuleId.TYPE_NARROWED:
            assert isinstance(old, TypeSet) and isinstance(new, TypeSet)
            return prefix + old.change_to(new)
        case (
            RuleId.CONSTRAINT_TIGHTENED
            | RuleId.CONSTRAINT_LOOSENED
            | RuleId.CONSTRAINT_CHANGED
            | RuleId.FORMAT_CHANGED
        ):
            keyword = next((p for p in path if isinstance(p, KeywordPart)), None)
            word = keyword.name if keyword is not None else "constraint"
            return f"{prefix}{word} {words(old)} -> {words(new)}"
        case RuleId.OBJECT_BECAME_UNION | RuleId.PYTHON_CLASS_BECAME_UNION:
            assert isinstance(new, Tag)
            return new.union_words()
        case RuleId.METHOD_MOVED_SIDE:
            return f"handled by the {words(old)} -> by the {words(new)}"
        case RuleId.PYTHON_METHOD_REMOVED:
            return f"handled by the {words(old)} -> by the {words(new)}" if new is not None else ""
        case RuleId.LENIENT_ANNOTATION_ADDED:
            assert isinstance(old, Keywords) and isinstance(new, Keywords)
            return new.beyond(old)
        case RuleId.LENIENT_ANNOTATION_REMOVED:
            assert isinstance(old, Keywords) and isinstance(new, Keywords)
            return old.beyond(new)
        case RuleId.NORMATIVE_TEXT_CHANGED:
            assert isinstance(old, Sentences) and isinstance(new, Sentences)
            said = [
                f"drops {old.words()}" if old.sentences else "",
                f"adds {new.words()}" if new.sentences else "",
            ]
            return "; ".join(w for w in said if w)
        case RuleId.NORMATIVE_TEXT_MOVED:
            assert isinstance(old, MovedSentence) and isinstance(new, Sentence)
            moved = f"moves {old.words()} from {path_words(old.source)}"
            return moved if old.text == new.text else f"{moved}, now {new.words()}"
        case RuleId.UNION_TAG_RESERVED | RuleId.UNION_TAG_RELEASED:
            return ""
        case RuleId.PYTHON_CLASS_RENAMED:
            return f"now {words(new)}"
        case RuleId.SIDE_ADDED:
            return f"methods {new.words()}" if isinstance(new, Names) and new.names else ""
        case RuleId.SIDE_REMOVED:
            return f"methods {old.words()}" if isinstance(old, Names) and old.names else ""
        case RuleId.ENVELOPE_ADDED:
            return f"holds {new.words()}" if isinstance(new, Names) and new.names else ""
        case RuleId.ENVELOPE_REMOVED:
            return f"held {old.words()}" if isinstance(old, Names) and old.names else ""
        case _:
            # names (of types, tags, attributes, methods, arguments), kinds, defaults and type expressions
            if old is None and new is None:
                return ""
            return f"{prefix}{words(old)} -> {words(new)}"


PREMISES: dict[Premise, str] = {
    Premise.DEFAULT_MEMBER: "the union's default member (no tag property) takes it",
    Premise.CATCH_ALL: "the union's catch-all took it, and is where a later release's variants arrive",
    Premise.OTHER_MEMBER: "another member of the union takes it",
    Premise.DEFAULTS_APPLIED: "read as the new models read it, every omitted field's default filled",
    Premise.EXTRA_KEPT: "old receivers keep the keys a member adds and read every member as sent; what "
    "they miss is what the tag means",
    Premise.LENIENT: "the old models read it as the field's default (or drop the item), the new ones "
    "refuse it",
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
    if proof.premise is Premise.DEFAULTS_APPLIED:
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
    premise = f" ({PREMISES[proof.premise]})" if proof.premise else ""
    return sets + "; ".join([relation, *extra]) + premise
