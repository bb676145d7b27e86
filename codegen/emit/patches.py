"""Stage 4b: the patch semantics of ``session/update``, one ``patches.py`` per package.

Which updates are upserts, chunks, snapshots, removals, state snapshots or
live notices is said only in the schema's prose, so it comes from the
``[patches]`` section of ``codegen/knowledge.toml``.  Everything else comes
from the IR: the variant classes and the classes their entities are stored
as, key and patch fields, the types a chunk appends, the foreground states.
:func:`session_plan` joins the two and refuses a release the table does not
fully cover; :func:`render_patches` writes the module through
``templates/patches``.  The behaviour itself lives in the hand-written
runtime ``codegen/runtime/_patch.py``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar, assert_never

from .. import knowledge, pysource
from ..diagnostics import gap
from ..errors import CodegenError
from ..knowledge import (
    ChunkEntry,
    LiveEntry,
    PatchEntry,
    Patches,
    RemovalEntry,
    SnapshotEntry,
    StateEntry,
    UpsertEntry,
)
from ..naming import is_identifier
from ..pysource import annotation, annotation_names
from ..runtime import _patch
from ..schema.ir import (
    ApiSurface,
    ArrayOf,
    Field,
    ObjectType,
    Ref,
    Scalar,
    UnionType,
    strip_nullable,
)
from .output import TEMPLATES, Module, format_source, header, runtime_module, template_environment

PATCH_TEMPLATES = TEMPLATES / "patches"
OTHER_ACTIVITY = "unconfirmed"
"""What a custom or future foreground state means (see ``[patches.activity]``)."""
UNCLASSIFIED = "returned by SessionState.apply and never stored"
"""What happens to an update the table does not classify (or cannot apply to this release)."""


def _members(cls: type) -> frozenset[str]:
    """Every name ``cls`` defines or inherits, and the instance attributes it annotates."""
    annotated = {name for klass in cls.__mro__ for name in vars(klass).get("__annotations__", {})}
    return frozenset(dir(cls)) | annotated


STORE_MEMBERS = _members(_patch.SessionStore)
"""Names SessionState already uses (from its runtime base class): a collection cannot take one of them."""
ERROR_NAMES = tuple(
    name
    for name in _patch.__all__
    if isinstance(found := getattr(_patch, name), type) and issubclass(found, _patch.PatchError)
)
EXPORTS = tuple(
    sorted(
        ("UNCHANGED", "Change", *ERROR_NAMES, "SessionState", "apply_patch", "merge_meta"),
        key=pysource.isort_key,
    )
)
"""What the package's ``__init__`` re-exports from ``patches.py``."""


# --- the plan: the table joined with the IR ---------------------------------------


@dataclass(frozen=True)
class UpsertPlan:
    tag: str
    update: str
    collection: str
    entity: str
    key: Field | None
    meta: Field | None
    patch_fields: tuple[Field, ...]
    keep_on_null: tuple[Field, ...]
    role: ClassVar[str] = "upsert"
    runtime: ClassVar[str] = "Upsert"
    """The class of ``codegen/runtime/_patch.py`` the rule is written as."""

    @property
    def names(self) -> frozenset[str]:
        """The names its rule writes that the module imports."""
        return frozenset({self.runtime, self.update, self.entity})


@dataclass(frozen=True)
class ChunkPlan:
    tag: str
    update: str
    of: UpsertPlan
    key: Field
    """The chunk's own field naming its entity (the key of ``of``)."""
    append: Field
    into: tuple[Field, ...]
    base64: bool
    creates: bool
    shared: tuple[Field, ...]
    role: ClassVar[str] = "chunk"
    runtime: ClassVar[str] = "Chunk"

    @property
    def collection(self) -> str:
        return self.of.collection

    @property
    def containers(self) -> tuple[str, ...]:
        """The class of each object ``into`` steps through (the planner checked they are objects)."""
        return tuple(annotation(strip_nullable(f.type)) for f in self.into[:-1])

    @property
    def names(self) -> frozenset[str]:
        containers = (annotation_names(strip_nullable(f.type)) for f in self.into[:-1])
        return frozenset({self.runtime, self.update}).union(*containers)


@dataclass(frozen=True)
class SnapshotPlan:
    tag: str
    update: str
    collection: str
    value: Field | None
    entity: str | None
    key: tuple[Field, ...]
    role: ClassVar[str] = "snapshot"
    runtime: ClassVar[str] = "Snapshot"

    @property
    def value_type(self) -> str:
        return annotation(self.value.type) if self.value else str(self.entity)

    @property
    def value_names(self) -> frozenset[str]:
        """The names :attr:`value_type` writes."""
        return annotation_names(self.value.type) if self.value else frozenset({str(self.entity)})

    @property
    def key_type(self) -> str | None:
        return annotation(self.key[-1].type) if self.key else None

    @property
    def names(self) -> frozenset[str]:
        return frozenset({self.runtime, self.update, *([] if self.value else [str(self.entity)])})


@dataclass(frozen=True)
class RemovalPlan:
    tag: str
    update: str
    collection: str
    key: Field
    role: ClassVar[str] = "removal"
    runtime: ClassVar[str] = "Removal"

    @property
    def names(self) -> frozenset[str]:
        return frozenset({self.runtime, self.update})


@dataclass(frozen=True)
class StatePlan:
    tag: str | None
    update: str
    entity: str
    activity: str
    role: ClassVar[str] = "state"
    runtime: ClassVar[str] = "State"

    @property
    def names(self) -> frozenset[str]:
        return frozenset({self.runtime, self.update, self.entity})


@dataclass(frozen=True)
class LivePlan:
    tag: str
    update: str
    role: ClassVar[str] = "live"
    runtime: ClassVar[str] = "Live"

    @property
    def names(self) -> frozenset[str]:
        return frozenset({self.runtime, self.update})


RulePlan = UpsertPlan | ChunkPlan | SnapshotPlan | RemovalPlan | LivePlan
"""What ``SessionPlan.rules`` holds; the state updates are in ``SessionPlan.states``."""
StoredPlan = UpsertPlan | ChunkPlan | SnapshotPlan | RemovalPlan
"""The rules that keep a collection of ``SessionState``."""


@dataclass(frozen=True)
class CollectionPlan:
    """One attribute of ``SessionState``."""

    name: str
    key: str | None
    """The key's wire path (``messageId``, ``plan.planId``); ``None`` for a single value."""
    key_type: str | None
    values: tuple[str, ...]
    rules: tuple[StoredPlan, ...]
    names: frozenset[str]
    """The names :attr:`annotation` writes that the module imports."""

    @property
    def annotation(self) -> str:
        value = " | ".join(self.values)
        return f"Mapping[{self.key_type}, {value}]" if self.key_type else f"{value} | None"


@dataclass(frozen=True)
class SessionPlan:
    """Everything ``patches.py`` says about one surface."""

    surface: ApiSurface
    union: UnionType
    notification: ObjectType
    session_field: Field
    update_field: Field
    other: str | None
    rules: tuple[RulePlan, ...]
    state_tag: str
    states: tuple[StatePlan, ...]
    state_types: tuple[str, ...]
    """The named union of the foreground states' classes, else those classes."""
    collections: tuple[CollectionPlan, ...]
    method: str
    """The notification's method (``[patches] method``)."""
    metadata: str
    """The field upserts patch by key (``[patches] metadata``)."""
    unclassified: tuple[str, ...] = ()
    """Update classes the table does not cover: like the catch-all, returned and never stored."""

    @property
    def state_type(self) -> str:
        """The annotation of ``SessionState.state`` (``None`` aside)."""
        return " | ".join(self.state_types)

    @property
    def others(self) -> tuple[str, ...]:
        """The catch-all and the unclassified classes."""
        return tuple(name for name in (self.other, *self.unclassified) if name is not None)

    @property
    def other_source(self) -> str:
        """The ``other`` argument of the generated rules: the catch-all and the unclassified classes."""
        others = self.others
        return others[0] if len(others) == 1 else f"({', '.join(others)},)"

    def of_role(self, role: str) -> tuple[RulePlan, ...]:
        return tuple(r for r in self.rules if r.role == role)

    @property
    def completions(self) -> tuple[str, ...]:
        """What ``Change.completion`` holds: the classes the states that end work are stored as."""
        done = tuple(dict.fromkeys(s.entity for s in self.states if s.activity == "done"))
        return done or ("AcpModel",)

    @property
    def completion_type(self) -> str:
        return " | ".join(self.completions)

    @property
    def entities(self) -> dict[str, tuple[str, ...]]:
        """Entity class -> the update classes ``apply_patch`` accepts for it (upserts, then chunks)."""
        out: dict[str, list[str]] = {}
        for rule in self.rules:
            if isinstance(rule, UpsertPlan):
                out.setdefault(rule.entity, [rule.entity])
        for rule in self.rules:
            if isinstance(rule, ChunkPlan):
                out[rule.of.entity].append(rule.update)
        return {entity: tuple(dict.fromkeys(updates)) for entity, updates in out.items()}


class _Planner:
    def __init__(self, surface: ApiSurface, known: Patches) -> None:
        self.surface = surface
        self.known = known

    # -- errors and lookups

    def section(self, name: str) -> str:
        """``[v<N>.patches.<name>]``: the table a gap of this surface's protocol version extends."""
        return f"[v{self.surface.protocol_version}.patches.{name}]"

    def schema_error(self, message: str, pointer: str = "") -> CodegenError:
        where = f"{self.surface.release} ({self.surface.stability})"
        return CodegenError(f"{where}: {message}", file=self.surface.schema_file, pointer=pointer or None)

    def table_error(self, tag: str, message: str) -> CodegenError:
        """The entry ``tag`` of the table and this release disagree: the error names the entry's line."""
        where = f"{self.surface.release} ({self.surface.stability})"
        entry = self.known.entry(tag)
        file = entry.where if entry is not None else self.known.where
        return CodegenError(f"{self.section('updates')} {tag}: {message} in {where}", file=file)

    def field(self, tag: str, owner: str, wire: str, *, required: bool = False) -> Field:
        found = next((f for f in self.surface.all_fields(owner) if f.wire_name == wire), None)
        if found is None:
            raise self.table_error(tag, f"{owner} has no field {wire!r}")
        if required and (not found.required or found.nullable):
            raise self.table_error(tag, f"{owner}.{wire} must be required and not nullable")
        return found

    def payload(self, variant: str, tag_wire: str) -> str:
        """The class an update's entity is stored as: the variant without its tag."""
        obj = self.surface.object(variant)
        if obj.base and all(f.wire_name != tag_wire for f in self.surface.all_fields(obj.base)):
            return obj.base
        return obj.name

    # -- the plan

    def plan(self) -> SessionPlan:
        surface = self.surface
        method = next((m for m in surface.methods if m.wire_name == self.known.method), None)
        if method is None:
            raise self.schema_error(f"no {self.known.method} notification")
        notification = surface.object(method.params)
        update_field, union = self.update_union(notification)
        others = [f for f in notification.fields if f is not update_field and f.required]
        if len(others) != 1:
            raise self.schema_error(f"{notification.name} should have one required field besides the update")
        where = f"{surface.release} ({surface.stability})"
        classified: list[tuple[PatchEntry, str]] = []
        unclassified: list[str] = []
        for variant in union.variants:
            if not isinstance(variant.type, Ref):
                raise self.schema_error(f"session update {variant.tag!r} is not a named type", union.pointer)
            entry = self.known.entry(str(variant.tag)) if variant.tag is not None else None
            if entry is not None:
                classified.append((entry, variant.type.name))
                continue
            gap(
                f"session update {variant.tag!r} of {where} is not classified",
                default=UNCLASSIFIED,
                section=self.section("updates"),
                file=self.known.where,
            )
            unclassified.extend(surface.classes_of(variant.type))
        upserts: dict[str, UpsertPlan] = {}
        states: tuple[StatePlan, ...] = ()
        state_tag = ""
        # upserts first: chunks refer to them
        ordered = sorted(classified, key=lambda item: not isinstance(item[0], UpsertEntry))
        planned: dict[str, RulePlan] = {}
        for entry, name in ordered:
            if isinstance(entry, StateEntry):
                state_tag, states = entry.tag, self.states(entry.tag, name, union)
                continue
            try:
                if not isinstance(surface.types[name], ObjectType):
                    raise self.table_error(
                        entry.tag, f"{name} is a union of several classes, which no rule can apply"
                    )
                rule = self.rule(entry, name, union, upserts)
            except CodegenError as error:
                # the table and this release disagree: treat the update like an unknown one
                gap(error.message, default=UNCLASSIFIED, section=self.section("updates"), file=error.file)
                unclassified.extend(surface.classes_of(Ref(name)))
                continue
            if isinstance(rule, UpsertPlan):
                upserts[entry.tag] = rule
            planned[entry.tag] = rule
        rules = [planned[entry.tag] for entry, _ in classified if entry.tag in planned]
        if not states:
            raise self.schema_error("no session update is classified as the foreground state")
        other = (
            union.catch_all.type.name if union.catch_all and isinstance(union.catch_all.type, Ref) else None
        )
        collections = self.collections(rules)
        return SessionPlan(
            surface,
            union,
            notification,
            others[0],
            update_field,
            other,
            tuple(rules),
            state_tag,
            states,
            self.union_name({s.entity for s in states}),
            collections,
            self.known.method,
            self.known.metadata,
            tuple(unclassified),
        )

    def rule(
        self,
        entry: UpsertEntry | ChunkEntry | SnapshotEntry | RemovalEntry | LiveEntry,
        name: str,
        union: UnionType,
        upserts: Mapping[str, UpsertPlan],
    ) -> RulePlan:
        """The plan of one classified update (the upserts it may refer to planned before it)."""
        match entry:
            case UpsertEntry():
                return self.upsert(entry, name, union)
            case ChunkEntry():
                return self.chunk(entry, name, union, upserts)
            case SnapshotEntry():
                return self.snapshot(entry, name, union)
            case RemovalEntry():
                return RemovalPlan(
                    entry.tag, name, entry.collection, self.field(entry.tag, name, entry.key, required=True)
                )
            case LiveEntry():
                return LivePlan(entry.tag, name)
            case _:
                assert_never(entry)

    def update_union(self, notification: ObjectType) -> tuple[Field, UnionType]:
        for candidate in notification.fields:
            target = self.surface.resolve(candidate.type)
            if isinstance(target, UnionType) and target.tagged:
                return candidate, target
        raise self.schema_error(f"{notification.name} has no tagged union of updates", notification.pointer)

    def upsert(self, entry: UpsertEntry, variant: str, union: UnionType) -> UpsertPlan:
        tag = entry.tag
        entity = self.payload(variant, str(union.tag_wire_name))
        key = self.field(tag, entity, entry.key, required=True) if entry.key is not None else None
        fields = self.surface.all_fields(entity)
        meta = next((f for f in fields if f.wire_name == self.known.metadata), None)
        patch_fields = tuple(f for f in fields if not f.required)
        # a field whose null is read as its default is cleared to that default
        not_nullable = [f.wire_name for f in patch_fields if not f.nullable and not f.default_on_null]
        if not_nullable:
            raise self.schema_error(f"patch fields {', '.join(not_nullable)} of {entity} cannot be cleared")
        keep = tuple(self.field(tag, entity, wire) for wire in entry.keep_on_null)
        if any(f not in patch_fields for f in keep):
            raise self.table_error(tag, "keep_on_null names a field that is not a patch field")
        defaulted = [f.wire_name for f in keep if f.default_on_null]
        if defaulted:
            raise self.table_error(
                tag,
                f"keep_on_null names {', '.join(defaulted)}, whose null the schema reads as the field's "
                "default (x-deserialize-default-on-null): it resets the stored value, it cannot keep it",
            )
        return UpsertPlan(tag, variant, entry.collection, entity, key, meta, patch_fields, keep)

    def chunk(
        self, entry: ChunkEntry, variant: str, union: UnionType, upserts: Mapping[str, UpsertPlan]
    ) -> ChunkPlan:
        tag = entry.tag
        of = upserts.get(entry.of)
        if of is None or of.key is None:
            raise self.table_error(tag, f"`of` must name a keyed upsert, not {entry.of!r}")
        key = self.field(tag, variant, of.key.wire_name, required=True)
        append = self.field(tag, variant, entry.append, required=True)
        into: list[Field] = []
        owner = of.entity
        for step in entry.into:
            if into:
                target = strip_nullable(into[-1].type)
                if not (
                    isinstance(target, Ref) and isinstance(self.surface.types.get(target.name), ObjectType)
                ):
                    raise self.table_error(
                        tag, f"`into` steps through {owner}.{into[-1].wire_name}, not an object"
                    )
                owner = target.name
            into.append(self.field(tag, owner, step))
        last = strip_nullable(into[-1].type)
        base64 = entry.join == "base64"
        if base64:
            string = Scalar("string")
            if strip_nullable(append.type) != string or last != string:
                raise self.table_error(tag, "join = 'base64' needs string fields at both ends")
        elif not (isinstance(last, ArrayOf) and last.item == append.type):
            raise self.table_error(tag, f"`into` must be an array of what `{append.wire_name}` holds")
        skip = {key.wire_name, append.wire_name, self.known.metadata, union.tag_wire_name}
        entity_fields = {f.wire_name: f for f in self.surface.all_fields(of.entity)}
        shared = tuple(
            f
            for f in self.surface.all_fields(variant)
            if f.wire_name not in skip
            and f.wire_name in entity_fields
            and entity_fields[f.wire_name].type == f.type
        )
        return ChunkPlan(tag, variant, of, key, append, tuple(into), base64, entry.creates, shared)

    def snapshot(self, entry: SnapshotEntry, variant: str, union: UnionType) -> SnapshotPlan:
        tag = entry.tag
        value = self.field(tag, variant, entry.value, required=True) if entry.value is not None else None
        entity = None if value else self.payload(variant, str(union.tag_wire_name))
        key: tuple[Field, ...] = ()
        if entry.key:
            first, *rest = entry.key
            key = (self.field(tag, variant, first, required=True),)
            if rest:
                key += (self.nested_key(tag, key[0], ".".join(rest)),)
        return SnapshotPlan(tag, variant, entry.collection, value, entity, key)

    def nested_key(self, tag: str, holder: Field, wire: str) -> Field:
        """The field ``wire`` of every class ``holder`` may hold (each must have it, alike)."""
        classes = self.surface.classes_of(strip_nullable(holder.type))
        if not classes:
            raise self.table_error(tag, f"`key` steps through {holder.wire_name}, which holds no object")
        found = {self.field(tag, c, wire, required=True) for c in classes}
        if len({(f.py_name, f.type) for f in found}) != 1:
            raise self.table_error(
                tag, f"the `{wire}` key differs between the classes {holder.wire_name} holds"
            )
        return found.pop()

    def states(self, tag: str, variant: str, union: UnionType) -> tuple[StatePlan, ...]:
        inner = self.surface.types.get(variant)
        if not isinstance(inner, UnionType) or not inner.tagged:
            raise self.schema_error(
                f"session update {tag!r} is not a union of foreground states", union.pointer
            )
        for unknown in [str(v.tag) for v in inner.variants if v.tag not in self.known.activity]:
            gap(
                f"foreground state {unknown!r} of {self.surface.release} ({self.surface.stability}) "
                "is not classified",
                default=f"treated as {OTHER_ACTIVITY!r}, like a custom state",
                section=self.section("activity"),
                file=self.known.where,
            )
        members = [(v.tag, v.type) for v in inner.variants]
        if inner.catch_all is not None:
            members.append((None, inner.catch_all.type))
        plans = []
        for state, expr in members:
            # a state may itself be a union (an idle state told apart by its stop reason): each class counts
            classes = self.surface.classes_of(expr)
            if not classes:
                raise self.schema_error(f"foreground state {state!r} is not a named type", inner.pointer)
            activity = (
                self.known.activity.get(str(state), OTHER_ACTIVITY) if state is not None else OTHER_ACTIVITY
            )
            for name in classes:
                entity = self.payload(name, str(union.tag_wire_name))
                plans.append(StatePlan(None if state is None else str(state), name, entity, activity))
        return tuple(plans)

    def collections(self, rules: Iterable[RulePlan]) -> tuple[CollectionPlan, ...]:
        grouped: dict[str, list[StoredPlan]] = {}
        for rule in rules:
            if isinstance(rule, (UpsertPlan, ChunkPlan, SnapshotPlan, RemovalPlan)):
                grouped.setdefault(rule.collection, []).append(rule)
        out = []
        for name, members in grouped.items():
            if name in STORE_MEMBERS or not is_identifier(name):
                raise self.table_error(
                    members[0].tag, f"collection name {name!r} cannot be a SessionState attribute"
                )
            keys: set[tuple[str | None, str | None]] = set()
            values: list[str] = []
            names: set[str] = set()
            for rule in members:
                if isinstance(rule, UpsertPlan):
                    keys.add((rule.key.wire_name, annotation(rule.key.type)) if rule.key else (None, None))
                    names |= annotation_names(rule.key.type) if rule.key else set()
                    values.append(rule.entity)
                    names.add(rule.entity)
                elif isinstance(rule, SnapshotPlan):
                    wire = ".".join(f.wire_name for f in rule.key) or None
                    keys.add((wire, rule.key_type))
                    names |= annotation_names(rule.key[-1].type) if rule.key else set()
                    values.append(rule.value_type)
                    names |= rule.value_names
                elif isinstance(rule, RemovalPlan):
                    keys.add((rule.key.wire_name, annotation(rule.key.type)))
                    names |= annotation_names(rule.key.type)
            if len({key_type for _, key_type in keys}) != 1:
                raise self.table_error(members[0].tag, f"the updates of {name!r} disagree on its key")
            key, key_type = max(sorted(keys, key=repr), key=lambda k: len(k[0] or ""))
            # the members agree on the key's annotation, so on the names it writes
            names |= {"Mapping"} if key_type else set()
            out.append(
                CollectionPlan(
                    name, key, key_type, tuple(dict.fromkeys(values)), tuple(members), frozenset(names)
                )
            )
        return tuple(out)

    def union_name(self, classes: set[str]) -> tuple[str, ...]:
        """The named union of exactly ``classes`` (a schema type first), else the classes, sorted."""
        found = sorted(
            (union.schema_name is None, union.name)
            for union in self.surface.unions()
            if set(self.surface.classes_of(Ref(union.name))) == classes
        )
        return (found[0][1],) if found else tuple(sorted(classes))


def session_plan(surface: ApiSurface, table: Patches | None = None) -> SessionPlan:
    """What each session update of ``surface`` does; refuses a release the table does not cover.

    ``table``: ``[v<N>.patches]`` of the knowledge file for the surface's protocol version.
    """
    known = table if table is not None else knowledge.needed(knowledge.patches(surface.protocol_version))
    return _Planner(surface, known).plan()


# --- rendering ------------------------------------------------------------------


def describe(rule: RulePlan) -> str:
    """What ``rule`` does, in one line of the module docstring."""
    if isinstance(rule, UpsertPlan):
        where = f"``{rule.collection}[{rule.key.wire_name}]``" if rule.key else f"``{rule.collection}``"
        fields = ", ".join(f"``{f.wire_name}``" for f in rule.patch_fields) or "none"
        keep = ", ".join(f"``{f.wire_name}``" for f in rule.keep_on_null)
        keep = f"; ``null`` keeps {keep}" if keep else ""
        reset = ", ".join(f"``{f.wire_name}``" for f in rule.patch_fields if f.default_on_null)
        reset = f"; ``null`` resets {reset} to its default" if reset else ""
        return f"creates or patches {where} (:class:`{rule.entity}`), patch fields {fields}{keep}{reset}"
    if isinstance(rule, ChunkPlan):
        into = ".".join(f.wire_name for f in rule.into)
        what = f"the bytes of ``{rule.append.wire_name}``" if rule.base64 else f"``{rule.append.wire_name}``"
        start = "starts the entry if it is new" if rule.creates else "the entry must exist"
        return f"appends {what} to ``{rule.collection}[{rule.key.wire_name}].{into}``; {start}"
    if isinstance(rule, SnapshotPlan):
        what = f"``{rule.value.wire_name}``" if rule.value else f"the update (:class:`{rule.entity}`)"
        key = ".".join(f.wire_name for f in rule.key)
        where = f"``{rule.collection}[{key}]``" if key else f"``{rule.collection}``"
        return f"replaces {where} with {what}"
    if isinstance(rule, RemovalPlan):
        return f"removes ``{rule.collection}[{rule.key.wire_name}]`` (nothing if it is gone)"
    if isinstance(rule, LivePlan):
        return "live only, outside session history: returned, never stored"
    assert_never(rule)


def patches_summary(surface: ApiSurface) -> str:
    """The first sentence of ``patches.py``'s docstring."""
    return f"Patch semantics of ACP {surface.release} session updates ({surface.stability} schema)."


def module_doc(plan: SessionPlan) -> str:
    surface = plan.surface
    items = [f"``{rule.tag}``: {describe(rule)}." for rule in plan.rules]
    states = ", ".join(f"``{s.tag}`` ({s.activity})" for s in plan.states if s.tag is not None)
    items.append(f"``{plan.state_tag}``: replaces ``state``, the foreground-state snapshot: {states}.")
    lines = [textwrap.fill(item, width=92, initial_indent="* ", subsequent_indent="  ") for item in items]
    other = f" (:class:`{plan.other}`)" if plan.other else ""
    return pysource.docstring(
        f"{patches_summary(surface)}\n\n"
        ":func:`apply_patch` applies one upsert or chunk to the stored state of its entity, and\n"
        f":class:`SessionState` keeps what a client needs from ``{plan.method}`` notifications.\n"
        "Both follow the protocol's rules: an omitted field leaves the stored value unchanged,\n"
        f"an explicit ``null`` clears it, and an upsert's top-level ``{plan.metadata}`` is patched key "
        "by key\n"
        "(:func:`merge_meta`); metadata on chunks and snapshots never patches an entity.\n\n"
        f"What each ``{plan.union.tag_wire_name}`` does:\n\n" + "\n".join(lines) + "\n\n"
        f"Updates with any other tag{other} are returned, never stored."
    )


def collection_doc(collection: CollectionPlan) -> str:
    tags = ", ".join(f"``{rule.tag}``" for rule in collection.rules)
    if collection.key:
        text = f"By ``{collection.key}``, in the order first seen. Kept by {tags}."
    else:
        text = f"Kept by {tags}; ``None`` until the first."
    return textwrap.fill(text, width=96)


_IMPORTED = {
    "Mapping": "collections.abc",
    "Any": "typing",  # Any and Literal may appear in a collection's type
    "Final": "typing",
    "Literal": "typing",
    "overload": "typing",
    "TypeAlias": "typing",
    "AcpModel": "._base",
}
"""Where the names the body may use come from, besides the runtime and the schema."""


_BODY = frozenset({"Final", "Rules", "AcpModel", "TypeAlias", "SessionStore"})
"""What ``templates/patches/body.py.jinja2`` writes of the imported names whatever the plan:
``RULES: Final = Rules(...)``, ``apply_patch``'s ``AcpModel``, ``Completion: TypeAlias``, the base of
``SessionState``."""


def body_names(plan: SessionPlan) -> frozenset[str]:
    """Every name the rendered body of ``patches.py`` uses that the module imports, from the plan."""
    names = set(_BODY)
    for part in (*plan.rules, *plan.states, *plan.collections):
        names |= part.names
    names |= {plan.union.name, plan.notification.name, *plan.others, *plan.completions, *plan.state_types}
    if len(plan.entities) > 1:  # one overload of apply_patch per entity
        names.add("overload")
        for entity, updates in plan.entities.items():
            names |= {entity, *updates}
    return frozenset(names)


def patch_imports(names: set[str], surface: ApiSurface) -> str:
    """The import block of ``patches.py``: the names its body uses, and the runtime names it re-exports."""
    return pysource.import_block(names | (set(EXPORTS) & set(_patch.__all__)), import_table(surface))


def import_table(surface: ApiSurface) -> dict[str, str]:
    """Where each name ``patches.py`` may import comes from: the schema, the runtime, the standard library."""
    return {
        **dict.fromkeys(surface.types, ".schema"),
        **dict.fromkeys(_patch.__all__, "._patch"),
        **_IMPORTED,
    }


def render_patches(surface: ApiSurface, table: Patches | None = None) -> str:
    """The complete, formatted ``patches.py`` of one surface (``table``: as for :func:`session_plan`)."""
    plan = session_plan(surface, table)
    env = template_environment(PATCH_TEMPLATES)
    body = env.get_template("body.py.jinja2").render(plan=plan, collection_doc=collection_doc)
    names = set(body_names(plan))
    module = env.get_template("module.py.jinja2").render(
        header=header(surface, "Patch semantics of session updates."),
        doc=module_doc(plan),
        imports=patch_imports(names, surface),
        exports=EXPORTS,
        body=body,
    )
    return format_source(module)


def emit_patches(surface: ApiSurface) -> dict[str, Module]:
    """The emitter (see :data:`codegen.emit.package.EMITTERS`): ``patches.py`` and the runtime it runs on.

    A schema without the session-update notification has nothing to patch and gets no module, nor
    does one of a protocol version whose ``[patches]`` is declared none (v1: its updates are events).
    """
    table = knowledge.optional(knowledge.patches(surface.protocol_version))
    if table is None or not any(m.wire_name == table.method for m in surface.methods):
        return {}
    return {
        "patches.py": Module(
            render_patches(surface, table), exports=EXPORTS, expose=True, summary=patches_summary(surface)
        ),
        "_patch.py": runtime_module(surface, "_patch.py"),
    }
