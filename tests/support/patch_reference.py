"""A reference model of session-update semantics written with plain dicts, and update strategies.

The reference reads the ``[patches]`` table and the IR, and applies updates to
JSON dicts with the protocol's rules written out the obvious way.  It shares no
code with ``codegen/runtime/_patch.py``, so the property tests can compare the
two.  The strategies build random, schema-valid ``session/update`` payloads of
one release from its IR, with small pools of ids so that updates meet.
"""

from __future__ import annotations

import base64
import copy
import functools
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from codegen.schema.ir import (
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
    Const,
    EnumType,
    Field,
    MapOf,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
    UnionType,
    strip_nullable,
)
from tests.support.releases import knowledge_of

TAG = "sessionUpdate"
META = "_meta"
VENDOR_UPDATE = "_vendor_update"
VENDOR_TAG = "_vendor"


class PredictedError(Exception):
    """What the reference predicts a bad update raises: ``kind`` is the runtime's error class name."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


@dataclass(frozen=True)
class RefRule:
    """One table entry, resolved against one release's IR with wire names only."""

    tag: str
    role: str
    variant: str
    collection: str | None = None
    entity: str | None = None
    key: tuple[str, ...] = ()
    keep_on_null: frozenset[str] = frozenset()
    of: str | None = None
    append: str | None = None
    into: tuple[str, ...] = ()
    base64: bool = False
    creates: bool = False
    shared: frozenset[str] = frozenset()
    value: str | None = None


@dataclass(frozen=True)
class Spec:
    """The reference's view of one release."""

    surface: ApiSurface
    rules: dict[str, RefRule]
    states: dict[str, str]
    """State variant class -> activity ("working", "done", "unconfirmed")."""
    keyed: tuple[str, ...]
    single: tuple[str, ...]


def _fields(surface: ApiSurface, name: str) -> set[str]:
    return {f.wire_name for f in surface.all_fields(name)}


def _entity(surface: ApiSurface, variant: str) -> str:
    """The variant's payload class: its base, when the base does not carry the tag."""
    base = surface.object(variant).base
    return base if base and TAG not in _fields(surface, base) else variant


def _per_surface(build: Any) -> Any:
    """Cache ``build(surface)`` per release and stability (surfaces are not hashable)."""
    cache: dict[tuple[str, str], Any] = {}

    @functools.wraps(build)
    def cached(surface: ApiSurface) -> Any:
        key = (surface.release, surface.stability)
        if key not in cache:
            cache[key] = build(surface)
        return cache[key]

    return cached


@_per_surface
def spec_of(surface: ApiSurface) -> Spec:
    table = knowledge_of(surface, "patches")
    assert table is not None
    union = surface.type("SessionUpdate")
    assert isinstance(union, UnionType)
    rules: dict[str, RefRule] = {}
    states: dict[str, str] = {}
    variants = {str(v.tag): v.type.name for v in union.variants if isinstance(v.type, Ref)}
    for tag, variant in variants.items():
        entry = table["updates"][tag]
        role = entry["role"]
        if role == "upsert":
            rules[tag] = RefRule(
                tag,
                role,
                variant,
                collection=entry["collection"],
                entity=_entity(surface, variant),
                key=(entry["key"],) if "key" in entry else (),
                keep_on_null=frozenset(entry.get("keep_on_null", ())),
            )
        elif role == "state":
            inner = surface.type(variant)
            assert isinstance(inner, UnionType)
            for member in inner.variants:
                assert isinstance(member.type, Ref)
                states[member.type.name] = table["activity"][str(member.tag)]
            if inner.catch_all is not None:
                assert isinstance(inner.catch_all.type, Ref)
                states[inner.catch_all.type.name] = "unconfirmed"
            rules[tag] = RefRule(tag, role, variant)
        else:
            rules[tag] = RefRule(
                tag,
                role,
                variant,
                collection=entry.get("collection"),
                entity=_entity(surface, variant),
                key=tuple(entry["key"].split(".")) if "key" in entry else (),
                value=entry.get("value"),
            )
    for tag, rule in list(rules.items()):
        if rule.role != "chunk":
            continue
        entry = table["updates"][tag]
        upsert = rules[entry["of"]]
        skip = {*upsert.key, entry["append"], META, TAG}
        shared = (_fields(surface, rule.variant) & _fields(surface, str(upsert.entity))) - skip
        rules[tag] = RefRule(
            tag,
            "chunk",
            rule.variant,
            collection=upsert.collection,
            entity=upsert.entity,
            key=upsert.key,
            keep_on_null=upsert.keep_on_null,
            of=entry["of"],
            append=entry["append"],
            into=tuple(entry["into"].split(".")),
            base64=entry.get("join") == "base64",
            creates=entry["creates"],
            shared=frozenset(shared),
        )
    stored = [r for r in rules.values() if r.role in ("upsert", "snapshot", "removal")]
    keyed = tuple(dict.fromkeys(str(r.collection) for r in stored if r.key or r.role == "removal"))
    single = tuple(dict.fromkeys(str(r.collection) for r in stored if str(r.collection) not in keyed))
    return Spec(surface, rules, states, keyed, single)


# --- the reference store ----------------------------------------------------------


@dataclass
class Entity:
    kind: str
    fields: dict[str, Any]


@dataclass
class Reference:
    """SessionState, written with dicts."""

    spec: Spec
    keyed: dict[str, dict[Any, Any]] = field(default_factory=dict)
    single: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] | None = None
    working: bool = False
    completions: int = 0
    replay_touched: set[tuple[str, Any]] | None = None
    replay_state: tuple[str, dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        self.keyed = {name: {} for name in self.spec.keyed}
        self.single = dict.fromkeys(self.spec.single)

    def apply(self, update: dict[str, Any]) -> None:
        """Apply one update (wire JSON), or raise :class:`PredictedError` and change nothing."""
        rule = self.spec.rules.get(update[TAG])
        if rule is None or rule.role == "live":
            return
        if rule.role == "state":
            variant = _state_variant(self.spec, update)
            snapshot = {k: v for k, v in update.items() if k != TAG}
            if self.replay_touched is not None:
                self.replay_state = (variant, snapshot)
            else:
                self._set_state(variant, snapshot)
            return
        collection = str(rule.collection)
        if rule.role == "snapshot":
            key = _path(update, rule.key) if rule.key else None
            value = update[rule.value] if rule.value else {k: v for k, v in update.items() if k != TAG}
            self._put(collection, key, copy.deepcopy(value))
        elif rule.role == "removal":
            self.keyed[collection].pop(update[rule.key[0]], None)
        elif rule.role == "upsert":
            key = update[rule.key[0]] if rule.key else None
            current = self._current(collection, key, rule)
            fields = dict(current.fields) if current else {}
            for wire, value in update.items():
                if wire == TAG or (value is None and wire in rule.keep_on_null):
                    continue
                if wire == META and value is not None:
                    old = fields.get(META)
                    base = old if isinstance(old, dict) else {}
                    merged = {k: v for k, v in base.items() if value.get(k, v) is not None}
                    merged.update((k, v) for k, v in value.items() if v is not None)
                    if merged != base:
                        fields[META] = merged
                    continue
                fields[wire] = copy.deepcopy(value)
            self._put(collection, key, Entity(str(rule.entity), fields))
        else:
            key = update[rule.key[0]]
            current = self._current(collection, key, rule)
            if current is None and not rule.creates:
                raise PredictedError("UnknownEntityError")
            fields = dict(current.fields) if current else {rule.key[0]: key}
            _append(fields, rule.into, update[str(rule.append)], rule.base64)
            for wire in rule.shared:
                if wire in update and not (update[wire] is None and wire in rule.keep_on_null):
                    fields[wire] = update[wire]
            self._put(collection, key, Entity(str(rule.entity), fields))

    def _current(self, collection: str, key: Any, rule: RefRule) -> Entity | None:
        if self.replay_touched is not None and (collection, key) not in self.replay_touched:
            return None
        found = self.keyed[collection].get(key) if collection in self.keyed else self.single[collection]
        if found is not None and found.kind != rule.entity:
            raise PredictedError("EntityMismatchError")
        return found  # type: ignore[no-any-return]

    def _put(self, collection: str, key: Any, value: Any) -> None:
        if collection in self.keyed:
            self.keyed[collection][key] = value
        else:
            self.single[collection] = value
        if self.replay_touched is not None:
            self.replay_touched.add((collection, key))

    def _set_state(self, variant: str, snapshot: dict[str, Any]) -> None:
        self.state = snapshot
        activity = self.spec.states[variant]
        if activity == "working":
            self.working = True
        elif activity == "done":
            self.completions += self.working
            self.working = False

    def begin_replay(self) -> None:
        self.replay_touched = set()
        self.replay_state = None

    def end_replay(self) -> None:
        self.replay_touched = None
        if self.replay_state is not None:
            self._set_state(*self.replay_state)

    def dump(self) -> dict[str, Any]:
        def plain(value: Any) -> Any:
            return value.fields if isinstance(value, Entity) else value

        out: dict[str, Any] = {}
        for name, entries in self.keyed.items():
            out[camel(name)] = {key: plain(value) for key, value in entries.items()}
        for name, value in self.single.items():
            out[camel(name)] = plain(value)
        out["state"] = self.state
        return out


def camel(name: str) -> str:
    """``tool_calls`` -> ``toolCalls``: a collection's key in ``SessionState.dump()`` (wire JSON)."""
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def _path(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def _append(fields: dict[str, Any], into: tuple[str, ...], item: Any, as_bytes: bool) -> None:
    head, rest = into[0], into[1:]
    old = fields.get(head)
    if rest:
        inner = dict(old) if isinstance(old, dict) else {}
        _append(inner, rest, item, as_bytes)
        fields[head] = inner
    elif as_bytes:
        joined = base64.b64decode(old if isinstance(old, str) else "") + base64.b64decode(item)
        fields[head] = base64.b64encode(joined).decode()
    else:
        fields[head] = [*(old if isinstance(old, list) else []), copy.deepcopy(item)]


def _state_variant(spec: Spec, update: dict[str, Any]) -> str:
    union = spec.surface.type(spec.rules[update[TAG]].variant)
    assert isinstance(union, UnionType)
    for member in union.variants:
        if member.tag == update["state"]:
            assert isinstance(member.type, Ref)
            return member.type.name
    assert union.catch_all is not None and isinstance(union.catch_all.type, Ref)
    return union.catch_all.type.name


# --- strategies ------------------------------------------------------------------------

_TIMES = ("2026-01-01T00:00:00Z", "2026-05-04T12:30:00+02:00")
_URIS = ("https://example.com/a", "file:///work/x.py")
_JSON_LEAVES = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["a", "b", ""])
JSON = st.recursive(
    _JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("xyz"), inner, max_size=2),
    max_leaves=4,
)
"""Small JSON values (``None`` included)."""
META_VALUES = st.dictionaries(st.sampled_from(["a", "b", "c"]), JSON, max_size=3)
"""``_meta`` objects over a few keys, so that patches meet; ``None`` values remove keys."""
BASE64 = st.binary(max_size=6).map(lambda raw: base64.b64encode(raw).decode())


class Strategies:
    """Schema-valid JSON for the types of one release, with chosen fields overridden."""

    def __init__(self, surface: ApiSurface, overrides: dict[tuple[str, str], st.SearchStrategy[Any]]) -> None:
        self.surface = surface
        self.overrides = overrides

    def of(self, expr: TypeExpr, depth: int = 0) -> st.SearchStrategy[Any]:
        if isinstance(expr, Nullable):
            return st.none() | self.of(expr.inner, depth)
        if isinstance(expr, Const):
            return st.just(expr.value)
        if isinstance(expr, Scalar):
            return _scalar(expr)
        if isinstance(expr, ArrayOf):
            low = expr.constraints.min_items or 0
            return st.lists(
                self.of(expr.item, depth + 1), min_size=low, max_size=max(low, 2 if depth < 2 else 1)
            )
        if isinstance(expr, MapOf):
            if expr.value == Scalar("any"):
                return META_VALUES
            return st.dictionaries(st.sampled_from(["a", "b"]), self.of(expr.value, depth + 1), max_size=2)
        if isinstance(expr, AnyOf):
            return st.one_of([self.of(m, depth) for m in expr.members])
        assert isinstance(expr, Ref)
        return self.named(expr.name, depth)

    def named(self, name: str, depth: int) -> st.SearchStrategy[Any]:
        found = self.surface.types[name]
        if isinstance(found, ObjectType):
            return self.object(name, depth)
        if isinstance(found, AliasType):
            return self.of(found.target, depth)
        if isinstance(found, EnumType):
            values = [v.value for v in found.values]
            if found.open and found.base == "string":
                values.append(VENDOR_TAG)
            return st.sampled_from(values)
        options = [self.of(v.type, depth) for v in found.variants]
        if found.catch_all is not None and found.tag_wire_name and isinstance(found.catch_all.type, Ref):
            tag = {found.tag_wire_name: st.just(VENDOR_TAG)}
            options.append(self.object(found.catch_all.type.name, depth, tag))
        return st.one_of(options)

    def object(
        self, name: str, depth: int, fixed: dict[str, st.SearchStrategy[Any]] | None = None
    ) -> st.SearchStrategy[dict[str, Any]]:
        required: dict[str, st.SearchStrategy[Any]] = {}
        optional: dict[str, st.SearchStrategy[Any]] = {}
        for f in self.surface.all_fields(name):
            value = (fixed or {}).get(f.wire_name)
            if value is None:
                value = self.overrides.get((name, f.wire_name))
            if value is None:
                value = self.of(f.type, depth + 1)
            elif f.nullable and not f.required:
                value = st.none() | value
            if f.required:
                required[f.wire_name] = value
            elif depth < 2 or f.wire_name == META:
                optional[f.wire_name] = value
        return st.fixed_dictionaries(required, optional=optional)


def _scalar(expr: Scalar) -> st.SearchStrategy[Any]:
    c = expr.constraints
    if expr.type == "string":
        if c.pattern:
            return st.from_regex(c.pattern, fullmatch=True)
        if c.format == "date-time":
            return st.sampled_from(_TIMES)
        if c.format == "uri":
            return st.sampled_from(_URIS)
        return st.text(alphabet="abc", min_size=c.min_length or 0, max_size=max(3, c.min_length or 0))
    if expr.type == "integer":
        low = int(c.minimum) if c.minimum is not None else -1000
        return st.integers(low, int(c.maximum) if c.maximum is not None else 10**12)
    if expr.type == "number":
        low = c.minimum if c.minimum is not None else -1e6
        high = c.maximum if c.maximum is not None else 1e6
        return st.floats(low, high, allow_nan=False, allow_infinity=False)
    if expr.type == "boolean":
        return st.booleans()
    if expr.type == "null":
        return st.none()
    return JSON


@_per_surface
def variant_strategies(surface: ApiSurface) -> dict[str, st.SearchStrategy[dict[str, Any]]]:
    """By class: a strategy for each session-update class of ``surface``, ids from small pools."""
    spec = spec_of(surface)
    overrides: dict[tuple[str, str], st.SearchStrategy[Any]] = {}
    for rule in spec.rules.values():
        if rule.role not in ("upsert", "chunk", "snapshot", "removal"):
            continue
        pool = st.sampled_from(
            [f"{rule.collection}-{rule.entity}-1", f"{rule.collection}-{rule.entity}-2", "same"]
        )
        if rule.role in ("snapshot", "removal"):
            pool = st.sampled_from([f"{rule.collection}-1", f"{rule.collection}-2"])
        if rule.role == "snapshot" and len(rule.key) == 2:
            for name in surface.classes_of(_field(surface, rule.variant, rule.key[0]).type):
                overrides[(name, rule.key[1])] = pool
        elif rule.key:
            overrides[(rule.variant, rule.key[0])] = pool
        if rule.base64:
            overrides[(rule.variant, str(rule.append))] = BASE64
            owner = str(rule.entity)
            for step in rule.into[:-1]:
                owner = surface.classes_of(strip_nullable(_field(surface, owner, step).type))[0]
            overrides[(owner, rule.into[-1])] = BASE64
    make = Strategies(surface, overrides)
    union = surface.type("SessionUpdate")
    assert isinstance(union, UnionType)
    known = {name for v in union.variants if isinstance(v.type, Ref) for name in surface.classes_of(v.type)}
    out: dict[str, st.SearchStrategy[dict[str, Any]]] = {}
    for variant in union.variants:
        inner = surface.types.get(variant.type.name) if isinstance(variant.type, Ref) else None
        catch_all = inner.catch_all if isinstance(inner, UnionType) else None
        for name in surface.classes_of(variant.type):
            custom = catch_all is not None and isinstance(catch_all.type, Ref) and catch_all.type.name == name
            fixed = (
                {str(inner.tag_wire_name): st.just(VENDOR_TAG)}
                if custom and isinstance(inner, UnionType)
                else {}
            )
            out[name] = make.object(name, 0, fixed)
    assert known == set(out)
    return out


def update_strategy(surface: ApiSurface) -> st.SearchStrategy[dict[str, Any]]:
    """Any session update of ``surface``, including custom ones of an unknown tag."""
    custom = st.fixed_dictionaries({TAG: st.just(VENDOR_UPDATE)}, optional={"x": JSON})
    return st.one_of([*variant_strategies(surface).values(), custom])


def upsert_strategy(surface: ApiSurface) -> st.SearchStrategy[dict[str, Any]]:
    """Any upsert of ``surface``: each patch field omitted, ``null`` or a value."""
    upserts = [rule.variant for rule in spec_of(surface).rules.values() if rule.role == "upsert"]
    return st.one_of([variant_strategies(surface)[name] for name in upserts])


def _field(surface: ApiSurface, owner: str, wire: str) -> Field:
    return next(f for f in surface.all_fields(owner) if f.wire_name == wire)
