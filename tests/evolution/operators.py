"""Mutation operators: each changes a real release the way upstream changes releases.

An operator takes the four documents of a release (``schema.json``,
``schema.unstable.json``, ``meta.json``, ``meta.unstable.json``, parsed) and
edits them in place.  It returns what a correct toolchain must make of the
result: the changes the differ reports (rule, subject, stability), the gaps
the generator warns about (by knowledge.toml section, or ``None`` for a gap
no section covers), and the ``$defs`` types a conformance slice must check.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Documents = dict[str, Any]


@dataclass(frozen=True)
class Expected:
    changes: tuple[tuple[str, str, str], ...]
    """(rule id, subject, stability) the differ must report against the unchanged release."""
    gaps: tuple[str | None, ...] = ()
    """The knowledge.toml sections of the gaps ``generate`` warns about (``None``: no section)."""
    types: tuple[str, ...] = ()
    """``$defs`` types the conformance slice checks (the ones the mutation touched)."""
    unstable: bool = False
    """Whether the unstable schema is the one to generate and check (else the stable one)."""
    same_output: bool = False
    """Whether the generated package must be byte-identical to the unchanged release's (headers aside)."""


Operator = Callable[[Documents], Expected]
OPERATORS: dict[str, Operator] = {}


def operator(func: Operator) -> Operator:
    OPERATORS[func.__name__] = func
    return func


def schemas(docs: Documents) -> Iterator[dict[str, Any]]:
    yield docs["schema.json"]
    yield docs["schema.unstable.json"]


def tagged(tag: str, value: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {tag: {"type": "string", "const": value}},
        "required": [tag],
        **extra,
    }


def reserve(union: dict[str, Any], tag: str, value: str) -> None:
    """Add ``value`` to the known tags the catch-all of ``union`` refuses."""
    other = next(m for m in union["anyOf"] if m.get("title") == "other")
    other["not"]["anyOf"].append(tagged(tag, value))


@operator
def nest_union_deeper(docs: Documents) -> Expected:
    """A variant's payload splits into kinds of its own, one level below the deepest union.

    Upstream did this in 2.0.0-alpha.8, when the idle state of a state update
    became a union on its stop reason; here the error stop reason splits again
    on ``errorKind``, four levels down from ``SessionUpdate``.
    """
    for schema in schemas(docs):
        error = schema["$defs"]["ErrorStopReason"]
        error["anyOf"] = [
            tagged("errorKind", "model", description="The model failed."),
            tagged("errorKind", "tool", description="A tool failed."),
            {
                "title": "other",
                "description": "Custom or future error kind.",
                "type": "object",
                "properties": {"errorKind": {"type": "string"}},
                "required": ["errorKind"],
                "not": {"anyOf": [tagged("errorKind", "model"), tagged("errorKind", "tool")]},
            },
        ]
    # reported once, where the schema defines it (the members that build on it repeat it, issue 24);
    # the kinds are no wire additions: the old object took every message of theirs (issue 32), but
    # an old sender's error without its kind is refused
    return Expected(
        changes=(
            ("object-became-union", "ErrorStopReason", "stable"),
            ("field-added-required", "ErrorStopReason.errorKind", "stable"),
            ("python-class-became-union", "ErrorIdleStateSessionUpdate", "stable"),
        ),
        types=("ErrorStopReason", "IdleStateUpdate", "SessionUpdate"),
    )


@operator
def add_common_properties(docs: Documents) -> Expected:
    """A union gains a property every member shares, written next to its ``anyOf``.

    Upstream writes shared properties this way (``IdleStateUpdate`` has
    ``_meta`` and ``stopReason`` beside its members since 2.0.0-alpha.8).
    """
    for schema in schemas(docs):
        schema["$defs"]["StateUpdate"]["properties"] = {
            "since": {"description": "When this state began (RFC 3339).", "type": ["string", "null"]}
        }
    return Expected(
        changes=(("field-added-optional", "StateUpdate.since", "stable"),),  # once, at the union (issue 24)
        types=("StateUpdate", "SessionUpdate"),
    )


@operator
def add_null_tag_variant(docs: Documents) -> Expected:
    """A union gains a member selected when its tag is null or absent.

    Upstream's ``none`` stop reason (2.0.0-alpha.8) is such a member; here a
    permission outcome may be left out.
    """
    for schema in schemas(docs):
        schema["$defs"]["RequestPermissionOutcome"]["anyOf"].append(
            {
                "title": "none",
                "description": "No outcome: `outcome` is omitted or `null`.",
                "type": "object",
                "properties": {"outcome": {"type": "null"}},
            }
        )
    return Expected(
        changes=(("union-variant-added-open", "RequestPermissionOutcome[null]", "stable"),),
        types=("RequestPermissionOutcome", "RequestPermissionResponse"),
    )


@operator
def add_side(docs: Documents) -> Expected:
    """A new role joins the protocol, with its own root envelope and methods.

    Models an observer that announces itself to the client: nothing in the
    generator knows the side (``[sides]`` of knowledge.toml lists agent, client,
    protocol and proxy), so its types get models and its method gets no
    bindings, with a warning that names it.
    """
    for schema, meta in (
        (docs["schema.json"], docs["meta.json"]),
        (docs["schema.unstable.json"], docs["meta.unstable.json"]),
    ):
        defs = schema["$defs"]
        defs["AnnounceObserverNotification"] = {
            "description": "An observer announces itself to the client.",
            "type": "object",
            "properties": {"observerName": {"type": "string"}, "hops": {"type": "integer", "minimum": 0}},
            "required": ["observerName"],
            "x-method": "observer/announce",
            "x-side": "client",
        }
        defs["ObserverNotification"] = {
            "type": "object",
            "properties": {
                "method": {"type": "string"},
                "params": {
                    "anyOf": [
                        {
                            "title": "AnnounceObserverNotification",
                            "allOf": [{"$ref": "#/$defs/AnnounceObserverNotification"}],
                        },
                        {"type": "null"},
                    ]
                },
            },
            "required": ["method"],
            "x-docs-ignore": True,
        }
        schema["anyOf"].append(
            {
                "title": "Observer",
                "type": "object",
                "properties": {"jsonrpc": {"type": "string", "enum": ["2.0"]}},
                "required": ["jsonrpc"],
                "anyOf": [{"title": "Notification", "allOf": [{"$ref": "#/$defs/ObserverNotification"}]}],
            }
        )
        meta["observerMethods"] = {"observer_announce": "observer/announce"}
    return Expected(
        changes=(("python-class-added", "AnnounceObserverNotification", "stable"),),
        gaps=("[sides]",),
        types=("AnnounceObserverNotification",),
    )


def _add_keyword(node: Any) -> None:
    """Put ``x-anything`` into every schema below ``node`` (never into property names or data)."""
    if isinstance(node, list):
        for item in node:
            _add_keyword(item)
        return
    if not isinstance(node, dict):
        return
    for key, value in list(node.items()):
        if key in ("const", "enum", "default", "examples"):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            for item in value.values():
                _add_keyword(item)
        else:
            _add_keyword(value)
    node["x-anything"] = {"note": "a keyword no acp-codegen knows", "type": "null"}


@operator
def add_unknown_keywords(docs: Documents) -> Expected:
    """Upstream's schema generator starts writing an ``x-`` annotation of its own, everywhere."""
    for schema in schemas(docs):
        _add_keyword(schema)
    return Expected(
        changes=(), gaps=("[extensions]",), types=("SessionUpdate", "IdleStateUpdate"), same_output=True
    )


@operator
def add_session_update_tag(docs: Documents) -> Expected:
    """A new kind of session update that ``[patches.updates]`` does not classify yet."""
    for schema in schemas(docs):
        defs = schema["$defs"]
        defs["ProgressUpdate"] = {
            "description": "How far the current work has come.",
            "type": "object",
            "properties": {"percent": {"type": "number", "minimum": 0, "maximum": 100}},
            "required": ["percent"],
        }
        union = defs["SessionUpdate"]
        union["anyOf"].insert(
            0, tagged("sessionUpdate", "progress_update", allOf=[{"$ref": "#/$defs/ProgressUpdate"}])
        )
        reserve(union, "sessionUpdate", "progress_update")
    return Expected(
        changes=(("union-variant-added-open", "SessionUpdate['progress_update']", "stable"),),
        gaps=("[v2.patches.updates]",),
        types=("SessionUpdate", "ProgressUpdate"),
    )


@operator
def rename_type(docs: Documents) -> Expected:
    """A ``$defs`` type is renamed and keeps its shape (upstream renamed ``SessionNotification`` so)."""
    for name in ("schema.json", "schema.unstable.json"):
        text = json.dumps(docs[name]).replace('"#/$defs/Cost"', '"#/$defs/Price"')
        data = json.loads(text)
        data["$defs"] = {("Price" if k == "Cost" else k): v for k, v in data["$defs"].items()}
        docs[name] = data
    return Expected(changes=(("python-class-renamed", "Cost", "stable"),), types=("Price", "UsageUpdate"))


def _closure(defs: dict[str, Any], name: str) -> set[str]:
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(ref.removeprefix("#/$defs/") for ref in _refs(defs[current]))
    return seen


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _unmark(node: Any) -> Any:
    """``node`` without the ``**UNSTABLE**`` paragraphs upstream puts in descriptions."""
    note = "This capability is not part of the spec yet, and may be removed or changed at any point."
    text = json.dumps(node).replace(f"**UNSTABLE**\\n\\n{note}\\n\\n", "")
    return json.loads(text.replace("**UNSTABLE**", ""))


@operator
def promote_unstable(docs: Documents) -> Expected:
    """An unstable session update moves into the stable schema (as notices did in 2.0.0-alpha.8)."""
    stable, unstable = docs["schema.json"]["$defs"], docs["schema.unstable.json"]["$defs"]
    member = next(
        m
        for m in unstable["SessionUpdate"]["anyOf"]
        if m.get("properties", {}).get("sessionUpdate", {}).get("const") == "session_message"
    )
    for name in sorted(_closure(unstable, "SessionMessage")):
        unstable[name] = _unmark(unstable[name])
        stable.setdefault(name, unstable[name])
    promoted = _unmark(member)
    unstable["SessionUpdate"]["anyOf"] = [
        promoted if m is member else m for m in unstable["SessionUpdate"]["anyOf"]
    ]
    stable["SessionUpdate"]["anyOf"].insert(0, promoted)
    reserve(stable["SessionUpdate"], "sessionUpdate", "session_message")
    return Expected(
        changes=(
            ("union-variant-added-open", "SessionUpdate['session_message']", "stable"),
            ("variant-became-stable", "SessionUpdate['session_message']", "unstable"),
            ("type-became-stable", "SessionMessage", "unstable"),
        ),
        types=("SessionUpdate", "SessionMessage"),
        unstable=True,
    )
