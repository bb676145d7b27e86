"""Patch semantics of ACP session updates: ``apply_patch`` and ``SessionState``.

This file is written once by hand and copied unchanged into every generated
package.  It is pure: nothing here does I/O.  Each package's ``patches.py``
describes the updates of its release with the rule classes below and gives
them typed entry points; this module holds the behaviour:

* **upserts** create or patch one entity.  An omitted field leaves the stored
  value unchanged, an explicit ``null`` clears it, any other value replaces
  it whole.  The update's top-level ``_meta`` is patched by key
  (:func:`merge_meta`).  Fields the schema says keep their value on ``null``
  treat ``null`` like omission.  A field whose ``null`` the schema reads as
  its default (``x-deserialize-default-on-null``) arrives holding that default
  and still given, so ``null`` resets it to the default and omission keeps it.
* **chunks** append one item to a field of their entity (or, for base64
  text, the decoded bytes).  Their own ``_meta`` is chunk-scoped and never
  touches the entity.
* **snapshots** replace what they describe; **removals** delete it (removing
  something already gone does nothing, so replay is safe).
* **state updates** are aggregate snapshots.  Applying the same one again
  changes nothing, and work ends (a *completion*) at most once per
  transition to idle.
* **live** updates (notices) and updates of unknown kinds are returned, never
  stored.

Every error is a :class:`PatchError`, raised before anything changes.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Final, Generic, Literal, TypeVar, cast

from pydantic import TypeAdapter, ValidationError

from ._base import AcpModel, wire_name

__all__ = [
    "UNCHANGED",
    "Change",
    "Chunk",
    "EntityMismatchError",
    "InvalidUpdateError",
    "Live",
    "PatchError",
    "Removal",
    "Rules",
    "SessionStore",
    "Snapshot",
    "State",
    "UnknownEntityError",
    "Upsert",
    "merge_meta",
]

Activity = Literal["working", "done", "unconfirmed"]
Role = Literal["upsert", "chunk", "snapshot", "removal", "state", "live", "other"]
M = TypeVar("M", bound=AcpModel)
C = TypeVar("C", bound=AcpModel)
"""What a completion is in a release: the union of its idle-state classes (see ``SessionState``)."""


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


UNCHANGED: Final = _Marker("UNCHANGED")
"""What :func:`merge_meta` returns for a patch that changes nothing: keep the stored value."""
_UNSET: Final = _Marker("UNSET")
"""A field that was never set (as opposed to one set to ``None``)."""


class PatchError(ValueError):
    """An update that cannot be applied.  Nothing was changed."""


class UnknownEntityError(PatchError):
    """A chunk for an entity that does not exist, of a kind that cannot start one."""


class EntityMismatchError(PatchError):
    """An update for another entity: another id, or another kind under the same id."""


class InvalidUpdateError(PatchError):
    """Not a valid update: it fails validation, names another session or carries bad base64."""


# --- rules: what each update does (generated per release) --------------------------------


@dataclass(frozen=True)
class Upsert:
    """``update`` creates or patches one entity of ``collection``, stored as ``entity``.

    Each attribute the update was given replaces the stored one (``None`` clears it) and the
    others stay, except as ``meta`` and ``keep_on_null`` say.
    """

    tag: str
    update: type[AcpModel]
    collection: str
    entity: type[AcpModel]
    key: str | None
    """Attribute naming the entity; ``None`` when the session has one such entity."""
    meta: str | None = None
    """The attribute patched key by key (the wire ``_meta``)."""
    keep_on_null: frozenset[str] = frozenset()
    """Attributes for which ``None`` means "unchanged" rather than "clear"."""
    role: ClassVar[Role] = "upsert"


@dataclass(frozen=True)
class Chunk:
    """``update`` appends its ``append`` attribute to the ``into`` path of the entity ``of`` keeps."""

    tag: str
    update: type[AcpModel]
    of: str
    """Tag of the upsert that keeps the entity (always a keyed one)."""
    append: str
    into: tuple[str, ...]
    containers: tuple[type[AcpModel], ...] = ()
    """Class of each object on ``into`` before its last step, created when missing."""
    base64: bool = False
    """Whether both ends are base64 text whose decoded bytes are concatenated."""
    creates: bool = False
    """Whether a chunk for an unknown entity starts it (otherwise :class:`UnknownEntityError`)."""
    shared: tuple[str, ...] = ()
    """Attributes the chunk shares with its entity, which patch the entity like an upsert."""
    role: ClassVar[Role] = "chunk"


@dataclass(frozen=True)
class Snapshot:
    """``update`` replaces an entry of ``collection`` (by ``key``) or the whole of it."""

    tag: str
    update: type[AcpModel]
    collection: str
    value: str | None = None
    """Attribute holding the snapshot; ``None`` stores the update itself as ``entity``."""
    entity: type[AcpModel] | None = None
    """The class the update is stored as; set exactly when ``value`` is ``None``."""
    key: tuple[str, ...] = ()
    """Attribute path to the entry's id inside the update; empty for the whole collection."""
    role: ClassVar[Role] = "snapshot"


@dataclass(frozen=True)
class Removal:
    """``update`` removes the entry of ``collection`` its ``key`` attribute names."""

    tag: str
    update: type[AcpModel]
    collection: str
    key: str
    role: ClassVar[Role] = "removal"


@dataclass(frozen=True)
class State:
    """``update`` is a foreground-state snapshot, stored as ``entity``."""

    tag: str | None
    """The ``state`` value; ``None`` for custom and future states."""
    update: type[AcpModel]
    entity: type[AcpModel]
    activity: Activity
    role: ClassVar[Role] = "state"


@dataclass(frozen=True)
class Live:
    """``update`` is live-only (outside session history): returned, never stored."""

    tag: str
    update: type[AcpModel]
    role: ClassVar[Role] = "live"


Rule = Upsert | Chunk | Snapshot | Removal | State | Live


class Rules:
    """Every rule of one release, and how to read its ``session/update`` notifications."""

    def __init__(
        self,
        rules: Iterable[Rule],
        *,
        union: Any,
        other: type[AcpModel] | tuple[type[AcpModel], ...],
        notification: type[AcpModel],
        session_field: str,
        update_field: str,
    ) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.other = other
        self.notification = notification
        self.session_field = session_field
        self.update_field = update_field
        self._union = union
        self._adapter: TypeAdapter[Any] | None = None
        self.by_class: dict[type[AcpModel], Rule] = {rule.update: rule for rule in self.rules}
        self.upserts: dict[str, Upsert] = {r.tag: r for r in self.rules if isinstance(r, Upsert)}
        entities = [r.entity for r in self.upserts.values()]
        for upsert in self.upserts.values():
            # an update built from the payload class, without its tag, is that upsert too
            if entities.count(upsert.entity) == 1:
                self.by_class.setdefault(upsert.entity, upsert)
        stored = [r for r in self.rules if isinstance(r, (Upsert, Snapshot, Removal))]
        self.keyed: tuple[str, ...] = tuple(dict.fromkeys(r.collection for r in stored if _keyed(r)))
        self.single: tuple[str, ...] = tuple(dict.fromkeys(r.collection for r in stored if not _keyed(r)))

    def rule_for(self, update: AcpModel) -> Rule | None:
        for cls in type(update).__mro__:
            rule = self.by_class.get(cls)
            if rule is not None:
                return rule
        return None

    def upsert_of(self, chunk: Chunk) -> Upsert:
        return self.upserts[chunk.of]

    def parse(self, update: AcpModel | Mapping[str, Any]) -> AcpModel:
        """A session update from its model or its JSON object."""
        if isinstance(update, AcpModel):
            return update
        if not isinstance(update, Mapping):
            raise TypeError(
                f"{type(update).__name__} is not a session update of this release or a JSON object"
            )
        if self._adapter is None:
            self._adapter = TypeAdapter(self._union)
        try:
            return cast(AcpModel, self._adapter.validate_python(dict(update)))
        except ValidationError as error:
            raise InvalidUpdateError(f"not a valid session update: {error}") from error

    def apply_patch(self, current: AcpModel | None, update: AcpModel) -> AcpModel:
        """The state of ``update``'s entity after applying it to ``current`` (``None``: unknown)."""
        rule = self.rule_for(update)
        if isinstance(rule, Upsert):
            return patch_entity(rule, current, update)
        if isinstance(rule, Chunk):
            return append_chunk(rule, self.upsert_of(rule), current, update)
        raise TypeError(f"{type(update).__name__} is not an upsert or a chunk of an entity")


def _keyed(rule: Upsert | Snapshot | Removal) -> bool:
    if isinstance(rule, Upsert):
        return rule.key is not None
    if isinstance(rule, Snapshot):
        return bool(rule.key)
    return True


# --- the pure functions ----------------------------------------------------------------------


def merge_meta(current: Any, patch: Mapping[str, Any] | None) -> Any:
    """Stored ``_meta`` after an upsert's top-level ``_meta`` patch.

    ``None`` clears it.  Otherwise each key of ``patch`` whose value is ``None``
    is removed and every other key is replaced whole (no nested merge).  A
    patch that changes nothing, such as ``{}``, returns :data:`UNCHANGED`: the
    stored value stays as it was, even when it is unset or ``None``.
    """
    if patch is None:
        return None
    base: Mapping[str, Any] = current if isinstance(current, dict) else {}
    merged = dict(base)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return UNCHANGED if merged == base else merged


def _get(model: AcpModel | None, name: str) -> Any:
    """An attribute's stored value, or ``_UNSET`` if it was never set."""
    if model is None or name not in model.model_fields_set:
        return _UNSET
    extra = model.model_extra
    if extra is not None and name in extra:
        return extra[name]
    return getattr(model, name)


def _set_values(model: AcpModel) -> dict[str, Any]:
    """The attributes ``model`` was given (fields in class order, then extra keys)."""
    given = model.model_fields_set
    values = {name: getattr(model, name) for name in type(model).model_fields if name in given}
    values.update(model.model_extra or {})
    return values


def _build(entity: type[M], current: M | None, values: Mapping[str, Any]) -> M:
    """``current`` with ``values`` set, or a new ``entity`` holding only ``values``."""
    if current is None:
        return entity.model_construct(_fields_set=set(values), **values)
    if not values:
        return current
    return current.model_copy(update=dict(values))


def as_entity(entity: type[M], model: AcpModel) -> M:
    """``model`` (an update, or a tagged variant) as an ``entity``: the same values, no tag."""
    if type(model) is entity:
        return model
    fields = entity.model_fields
    extra = model.model_extra or {}
    values = {name: value for name, value in _set_values(model).items() if name in fields or name in extra}
    return entity.model_construct(_fields_set=set(values), **values)


def _check_current(entity: type[M], key: str | None, current: AcpModel | None, update: AcpModel) -> M | None:
    if current is None:
        return None
    if not isinstance(current, entity):
        raise EntityMismatchError(
            f"{type(update).__name__} applies to a {entity.__name__}, not to a {type(current).__name__}"
        )
    if key is not None and getattr(current, key) != getattr(update, key):
        raise EntityMismatchError(
            f"{type(update).__name__} is for {key} {getattr(update, key)!r}, not {getattr(current, key)!r}"
        )
    return as_entity(entity, current)


def patch_entity(rule: Upsert, current: AcpModel | None, update: AcpModel) -> AcpModel:
    """Apply one upsert to its entity's stored state (``None``: a new entity)."""
    entity = _check_current(rule.entity, rule.key, current, update)
    fields = rule.entity.model_fields
    extra = update.model_extra or {}
    values: dict[str, Any] = {}
    for name, value in _set_values(update).items():
        if name not in fields and name not in extra:
            continue  # the variant's tag
        if name == rule.meta:
            value = merge_meta(_get(entity, name), value)
            if value is UNCHANGED:
                continue
        elif value is None and name in rule.keep_on_null:
            continue
        values[name] = value
    return _build(rule.entity, entity, values)


def append_chunk(rule: Chunk, upsert: Upsert, current: AcpModel | None, chunk: AcpModel) -> AcpModel:
    """Append one chunk to its entity's stored state (``None``: no such entity yet)."""
    assert upsert.key is not None, "a chunk's entity is keyed"
    entity = _check_current(upsert.entity, upsert.key, current, chunk)
    values: dict[str, Any] = {}
    if entity is None:
        key = getattr(chunk, upsert.key)
        if not rule.creates:
            raise UnknownEntityError(f"{rule.tag} for unknown {upsert.collection} entry {key!r}")
        values[upsert.key] = key
    values[rule.into[0]] = _appended(rule, entity, 0, getattr(chunk, rule.append))
    for name in rule.shared:
        value = _get(chunk, name)
        if value is _UNSET or (value is None and name in upsert.keep_on_null):
            continue
        values[name] = value
    return _build(upsert.entity, entity, values)


def _appended(rule: Chunk, owner: AcpModel | None, depth: int, item: Any) -> Any:
    """The new value of ``rule.into[depth]`` of ``owner`` once ``item`` is appended."""
    old = _get(owner, rule.into[depth])
    if depth == len(rule.into) - 1:
        if rule.base64:
            joined = _decode(old, "stored") + _decode(item, "chunk")
            return base64.b64encode(joined).decode("ascii")
        return [*(old if isinstance(old, list) else ()), item]
    container = rule.containers[depth]
    inner = old if isinstance(old, container) else None
    return _build(container, inner, {rule.into[depth + 1]: _appended(rule, inner, depth + 1, item)})


def _decode(text: Any, what: str) -> bytes:
    if not isinstance(text, str):
        return b""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise InvalidUpdateError(f"{what} data is not valid base64: {error}") from None


# --- the store ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Change(Generic[C]):
    """What one update did to a :class:`SessionStore`."""

    update: AcpModel
    role: Role
    collection: str | None = None
    key: Any = None
    completion: C | None = None
    """The idle state that ended foreground work, if this update ended it (typed per release)."""


@dataclass
class _Replay:
    touched: set[tuple[str, Any]]
    state: tuple[State, AcpModel] | None = None


class SessionStore(Generic[C]):
    """Base class of each package's ``SessionState``: see there (``C``: its completions' type)."""

    rules: ClassVar[Rules]

    session_id: Final[str]
    state: Any
    """The latest foreground-state snapshot, or ``None`` before the first one."""
    work_in_progress: bool
    """Whether foreground work has started (running or requires action) and not yet ended."""
    completions: int
    """How many times foreground work has ended (transitions to idle after work)."""
    _keyed: dict[str, dict[Any, Any]]
    _replay: _Replay | None

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._keyed = {}
        for name in self.rules.keyed:
            self._keyed[name] = {}
            setattr(self, name, MappingProxyType(self._keyed[name]))
        for name in self.rules.single:
            setattr(self, name, None)
        self.state = None
        self.work_in_progress = False
        self.completions = 0
        self._replay = None

    # -- applying updates

    def apply(
        self,
        notification: AcpModel | Mapping[str, Any] | None = None,
        /,
        *,
        session_id: str | None = None,
        update: AcpModel | Mapping[str, Any] | None = None,
        **meta: Any,
    ) -> Change[C]:
        """Apply one ``session/update`` notification.

        Pass the notification (its model or its JSON ``params``), or what a
        ``Client.session_update`` handler receives, as it receives it:
        ``state.apply(session_id=session_id, update=update, **kwargs)`` (the
        ``_meta`` keywords are accepted and ignored).
        """
        rules = self.rules
        if notification is None:
            if session_id is None or update is None:
                raise TypeError("apply() takes a notification, or session_id=... and update=...")
            if session_id != self.session_id:
                raise InvalidUpdateError(f"update for session {session_id!r}, not {self.session_id!r}")
            return self.apply_update(update)
        if session_id is not None or update is not None:
            raise TypeError("apply() takes a notification or session_id and update, not both")
        if not isinstance(notification, rules.notification):
            if not isinstance(notification, Mapping):
                raise TypeError(f"expected a {rules.notification.__name__} or its JSON object")
            try:
                notification = rules.notification.model_validate(dict(notification))
            except ValidationError as error:
                raise InvalidUpdateError(f"not a valid session/update notification: {error}") from error
        found = getattr(notification, rules.session_field)
        if found != self.session_id:
            raise InvalidUpdateError(f"update for session {found!r}, not {self.session_id!r}")
        parsed: AcpModel = getattr(notification, rules.update_field)
        return self.apply_update(parsed)

    def apply_update(self, update: AcpModel | Mapping[str, Any]) -> Change[C]:
        """Apply one session update (the ``update`` of a notification)."""
        update = self.rules.parse(update)
        rule = self.rules.rule_for(update)
        if isinstance(rule, Upsert):
            key = getattr(update, rule.key) if rule.key else None
            self._put(rule.collection, key, patch_entity(rule, self._current(rule.collection, key), update))
        elif isinstance(rule, Chunk):
            upsert = self.rules.upsert_of(rule)
            key = getattr(update, upsert.key) if upsert.key else None
            current = self._current(upsert.collection, key)
            self._put(upsert.collection, key, append_chunk(rule, upsert, current, update))
            return Change(update, rule.role, upsert.collection, key)
        elif isinstance(rule, Snapshot):
            key = _follow(update, rule.key) if rule.key else None
            if rule.value is not None:
                value = getattr(update, rule.value)
            else:
                assert rule.entity is not None, "a snapshot without a value stores the update as its entity"
                value = as_entity(rule.entity, update)
            self._put(rule.collection, key, value)
        elif isinstance(rule, Removal):
            key = getattr(update, rule.key)
            self._keyed[rule.collection].pop(key, None)
        elif isinstance(rule, State):
            if self._replay is not None:
                self._replay.state = (rule, update)
                return Change(update, rule.role)
            return self._set_state(rule, update)
        elif isinstance(rule, Live):
            return Change(update, rule.role)
        elif isinstance(update, self.rules.other):
            return Change(update, "other")
        else:
            raise TypeError(f"{type(update).__name__} is not a session update of this release")
        return Change(update, rule.role, rule.collection, key)

    def _current(self, collection: str, key: Any) -> Any:
        if self._replay is not None and (collection, key) not in self._replay.touched:
            return None  # replay re-sends the entity's history: rebuild it from there
        if collection in self._keyed:
            return self._keyed[collection].get(key)
        return getattr(self, collection)

    def _put(self, collection: str, key: Any, value: Any) -> None:
        if collection in self._keyed:
            self._keyed[collection][key] = value
        else:
            setattr(self, collection, value)
        if self._replay is not None:
            self._replay.touched.add((collection, key))

    def _set_state(self, rule: State, update: AcpModel) -> Change[C]:
        self.state = as_entity(rule.entity, update)
        completion: C | None = None
        if rule.activity == "working":
            self.work_in_progress = True
        elif rule.activity == "done":
            if self.work_in_progress:
                completion = cast(C, self.state)
                self.completions += 1
            self.work_in_progress = False
        return Change(update, rule.role, completion=completion)

    # -- replay after session/resume

    @property
    def replaying(self) -> bool:
        """Whether :meth:`begin_replay` was called and :meth:`end_replay` not yet."""
        return self._replay is not None

    def begin_replay(self) -> None:
        """Start applying replayed history (call before ``session/resume``).

        Each entity the replay mentions is rebuilt from its replayed updates,
        so that applying history the state already holds changes nothing;
        entities the replay leaves out are kept.  State snapshots are held
        back until :meth:`end_replay`, so replayed history reports no
        completions.
        """
        if self._replay is not None:
            raise RuntimeError("begin_replay() called twice")
        self._replay = _Replay(set())

    def end_replay(self) -> Change[C] | None:
        """Finish a replay (call when ``session/resume`` has answered).

        Applies the last state snapshot received since :meth:`begin_replay`,
        the current one every successful resume sends, and returns its change.
        """
        replay = self._replay
        if replay is None:
            raise RuntimeError("end_replay() without begin_replay()")
        self._replay = None
        return self._set_state(*replay.state) if replay.state is not None else None

    @contextmanager
    def replay(self) -> Iterator[None]:
        """``begin_replay()`` on entry, ``end_replay()`` on a normal exit.

        If the block raises, replay mode ends without applying the held-back
        state snapshot.
        """
        self.begin_replay()
        try:
            yield
        except BaseException:
            self._replay = None
            raise
        self.end_replay()

    # -- reading

    def dump(self) -> dict[str, Any]:
        """Everything the store holds as JSON with wire names (``toolCalls``); unset fields stay omitted."""
        out: dict[str, Any] = {"sessionId": self.session_id}
        for name in self.rules.keyed:
            out[wire_name(name)] = {key: _jsonable(value) for key, value in self._keyed[name].items()}
        for name in self.rules.single:
            out[wire_name(name)] = _jsonable(getattr(self, name))
        out["state"] = _jsonable(self.state)
        return out


def _follow(model: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        model = getattr(model, name)
    return model


def _jsonable(value: Any) -> Any:
    if isinstance(value, AcpModel):
        return value.model_dump(by_alias=True, exclude_unset=True, mode="json")
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    return value
