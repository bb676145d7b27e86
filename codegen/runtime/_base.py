"""Runtime support for the generated ACP models.

This file is written once by hand and copied unchanged into every generated
package, so that a package needs nothing but pydantic and the standard library.

It gives the generated classes four behaviours that plain pydantic lacks:

* **exact types** - :class:`AcpModel` validates strictly, so no value is
  converted (``"2"`` is no integer, ``1`` no boolean), and :data:`JsonInt` is
  a JSON Schema integer (``2.0`` is ``2``); :data:`NotNull` keeps ``None`` a
  Python default only, where the schema does not allow ``null``.

* **union tags** - a field annotated with :data:`UnionTag` (typed
  ``Literal[X]``, default ``X``) is the tag a union variant pins.  It is
  required when data is validated (a JSON object without its tag is rejected)
  and filled in when a model is built in Python.
* **lenient fields** - fields annotated with :data:`DefaultOnError` fall back
  to their default when their value is invalid, exactly as if the key had been
  omitted (so a bad patch value never turns into an explicit ``null``);
  :data:`SkipInvalidItems` drops invalid items from a list;
  :data:`DefaultOnNull` reads ``null`` as the field's default, and the field
  still counts as given (so a dump writes the default, not nothing).
* **tagged unions** - :class:`TaggedUnion` dispatches on the tag in one step.
  An unknown tag goes to the union's catch-all variant, whose tag field is
  annotated with :class:`Reserved` so that it refuses the known tags.

Valid input never leaves pydantic-core for the leniency or the dispatch: a
lenient fallback and the one-step dispatch in Python run only for what the
fast path refuses, and give the same values and the same errors.
"""

from __future__ import annotations

import json as _json
import types
import typing
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Final, Literal, TypeAlias, get_args, get_origin

from pydantic import VERSION as _PYDANTIC_VERSION
from pydantic import AliasGenerator, BaseModel, ConfigDict, GetCoreSchemaHandler
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

OLDEST_PYDANTIC: Final = (2, 12)
"""The oldest pydantic the models are exact on.  A lenient field's fallback omits the field (it is
then out of ``model_fields_set``, as if the key were absent); pydantic 2.11 counts such a field as
given, so a dump with ``exclude_unset`` would write a value nobody sent."""

if tuple(int(part) for part in _PYDANTIC_VERSION.split(".")[:2]) < OLDEST_PYDANTIC:
    raise ImportError(
        f"the ACP models need pydantic 2.12 or later, not {_PYDANTIC_VERSION}: "
        "pip install 'pydantic>=2.12,<3'"
    )

if TYPE_CHECKING:
    from pydantic_core import core_schema

__all__ = [
    "AcpModel",
    "DefaultOnError",
    "DefaultOnNull",
    "JsonInt",
    "NotNull",
    "Reserved",
    "SkipInvalidItems",
    "TaggedUnion",
    "UnionTag",
    "wire_name",
]


_UNTAGGED: Final = "<no tag>"
_OTHER: Final = "<any other string>"
_NULL: Final = "<null or absent>"
_MISSING: Final = object()


class _Dropped:
    """What an unbound :data:`DefaultOnError` gives for an invalid value (outside an :class:`AcpModel`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<invalid value dropped>"


_DROPPED: Final = _Dropped()


class _Nulled:
    """What an unbound :data:`DefaultOnNull` gives for ``null`` (outside an :class:`AcpModel`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<null, read as the default>"


_NULLED: Final = _Nulled()


_JSON_INT: Final = "acp_json_int"
"""The core-schema metadata key that marks the schema of :data:`JsonInt` (see ``_fold_bounds``)."""

_LENIENT: Final = "acp_lenient"
"""The core-schema metadata key that marks the fallback of a lenient field (see ``AcpModel``)."""


def _drop(value: Any) -> Any:
    """The fallback of a :data:`DefaultOnError` value that its type refuses."""
    return _DROPPED


def _default_on_null(value: Any, validate: core_schema.ValidatorFunctionWrapHandler) -> Any:
    return _NULLED if value is None else validate(value)


class _DefaultOnError:
    """An invalid value is treated as if the field had been omitted."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DefaultOnError"

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        from pydantic_core import core_schema  # only needed once a schema is built

        schema = handler(source)
        if schema["type"] == "any":
            return schema  # it refuses nothing, so there is nothing to fall back from
        # A valid value is taken by the first member and never leaves pydantic-core; only a value
        # the type refuses reaches the fallback (Python).  The fallback never fails, so the
        # union never reports an error of its own.
        return core_schema.union_schema(
            [schema, core_schema.no_info_plain_validator_function(_drop)],
            mode="left_to_right",
            metadata={_LENIENT: "error"},
        )


class _DefaultOnNull:
    """``null`` is read as the field's default (the field counts as given)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DefaultOnNull"

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        from pydantic_core import core_schema  # only needed once a schema is built

        return core_schema.no_info_wrap_validator_function(
            _default_on_null, handler(source), metadata={_LENIENT: "null"}
        )


class _SkipInvalidItems:
    """Invalid items of a list are dropped instead of failing the whole value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SkipInvalidItems"

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        from pydantic_core import core_schema  # only needed once a schema is built

        schema = handler(source)
        inner: Any = schema["schema"] if schema["type"] == "nullable" else schema
        if inner["type"] != "list":
            raise TypeError(f"SkipInvalidItems needs a list type, not {source!r}")
        # pydantic-core drops an item whose validation fails when the item schema says so
        # (its errors are never seen, so only what decides acceptance is checked)
        inner["items_schema"] = core_schema.with_default_schema(
            _only_acceptance(inner["items_schema"]), on_error="omit"
        )
        return schema


def _integral(value: float) -> int:
    """A float with no fractional part as the integer it is (JSON Schema: ``2.0`` is an integer)."""
    if value.is_integer():
        return int(value)
    raise PydanticCustomError(
        "int_from_float", "Input should be a valid integer, got a number with a fractional part"
    )


class _JsonInteger:
    """An integer as JSON Schema reads one: ``2`` and ``2.0``, never ``"2"``, ``true`` or ``2.5``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "JsonInteger"

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        from pydantic_core import core_schema  # only needed once a schema is built

        # Both branches are strict whatever the model or the call asks for: an integer first
        # (pure pydantic-core, the common case), then a number without a fractional part.
        return core_schema.union_schema(
            [
                core_schema.int_schema(strict=True),
                core_schema.chain_schema(
                    [
                        core_schema.float_schema(strict=True, allow_inf_nan=False),
                        core_schema.no_info_plain_validator_function(_integral),
                    ]
                ),
            ],
            mode="left_to_right",
            custom_error_type="int_type",
            metadata={_JSON_INT: True},
        )


class _NotNull:
    """A field typed ``X | None`` only so that ``None`` can be its default: validation refuses ``null``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NotNull"

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        schema = handler(source)
        if schema["type"] != "nullable":
            raise TypeError(f"NotNull needs an optional type, not {source!r}")
        inner: core_schema.CoreSchema = schema["schema"]
        return inner


class _UnionTag:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UnionTag"


UnionTag: Final = _UnionTag()
"""Marks the tag field a union variant pins (``Literal[X]`` with default ``X``)."""

DefaultOnError: Final = _DefaultOnError()
"""Marks a lenient field: an invalid value is treated as if it had been omitted
(a required list or map becomes empty instead)."""

SkipInvalidItems: Final = _SkipInvalidItems()
"""Marks a lenient list: invalid items are dropped."""

DefaultOnNull: Final = _DefaultOnNull()
"""Marks a field whose ``null`` is read as its default (a required list or map becomes empty).
Unlike :data:`DefaultOnError` the field stays given: ``null`` is a value, not an omission."""

NotNull: Final = _NotNull()
"""Marks an optional field whose schema does not allow ``null``: its default ``None`` means
omitted, and a ``null`` is an invalid value (with :data:`DefaultOnError`, treated as omitted)."""

JsonInt: TypeAlias = Annotated[int, _JsonInteger()]
"""A JSON Schema ``integer``: an ``int``, or a float with no fractional part (``2.0`` becomes ``2``).

Strings, booleans and fractional numbers are refused, in Python and in JSON mode."""


class Reserved:
    """Annotates the tag of a catch-all variant: it must not be one of ``values``."""

    __slots__ = ("values",)

    def __init__(self, *values: Hashable) -> None:
        self.values = frozenset(values)

    def __repr__(self) -> str:
        return f"Reserved({', '.join(map(repr, sorted(self.values, key=repr)))})"

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        from pydantic_core import core_schema  # only needed once a schema is built

        reserved = self.values

        def refuse(value: Any) -> Any:
            # a tag is a string: checked without the ABC's Python-level isinstance
            if (type(value) is str or isinstance(value, Hashable)) and value in reserved:
                raise PydanticCustomError(
                    "reserved_tag",
                    "'{tag}' is a known tag, so it cannot be used for the catch-all variant",
                    {"tag": value},
                )
            return value

        return core_schema.no_info_after_validator_function(refuse, handler(source))


def wire_name(attribute: str) -> str:
    """The JSON name of an attribute: camelCase, with ``field_`` standing for a leading ``_``.

    ``tool_call_id`` -> ``toolCallId``, ``field_meta`` -> ``_meta``.  A field whose wire name
    does not follow this rule carries its own alias.
    """
    prefix = ""
    if attribute.startswith("field_"):
        prefix, attribute = "_", attribute[len("field_") :]
    head, *rest = attribute.split("_")
    return prefix + head + "".join(word[:1].upper() + word[1:] for word in rest)


class AcpModel(BaseModel):
    """Base class of every generated model."""

    model_config = ConfigDict(
        extra="allow",
        alias_generator=AliasGenerator(validation_alias=wire_name, serialization_alias=wire_name),
        validate_by_name=True,
        validate_by_alias=True,
        strict=True,
        defer_build=True,
    )

    # Declared for type checkers only: pydantic evaluates every annotation of
    # every base class again for each subclass, which made these three cost a
    # third of the import time of a models module.
    if TYPE_CHECKING:
        __acp_pins__: ClassVar[Mapping[str, tuple[str, Any]]]
        __acp_reserved__: ClassVar[Mapping[str, frozenset[Hashable]]]
        __acp_lenient__: ClassVar[tuple[str, ...]]
    # Pinned tags by wire name: (attribute name, value).
    __acp_pins__ = {}
    # Tags a catch-all refuses, by wire name.
    __acp_reserved__ = {}
    # Attribute names of the fields marked DefaultOnError or DefaultOnNull.
    __acp_lenient__ = ()

    def __init__(self, /, **data: Any) -> None:
        for wire, (name, value) in type(self).__acp_pins__.items():
            if wire not in data and name not in data:
                data[name] = value
        super().__init__(**data)

    # Tell pydantic this is its own __init__: validation (model_validate, JSON,
    # nested models) must not call it, so only Python construction fills tags in.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:

        schema = handler(source)
        if schema["type"] == "model" and schema["schema"]["type"] == "model-fields":
            fields = schema["schema"]["fields"]
            for name, _ in cls.__acp_pins__.values():
                field = fields.get(name)
                if field is not None and field["schema"]["type"] == "default":
                    # the default is for type checkers and for building in Python;
                    # validated data must carry its tag
                    field["schema"] = field["schema"]["schema"]
            for name, field in fields.items():
                field["schema"] = _bind_fallbacks(_fold_bounds(field["schema"]), cls, name)
                if field.get("validation_alias") == name:
                    # the wire name is the attribute name: looked up once, not once by alias and
                    # again by name (pydantic-core does not tell the two apart, and scans a JSON
                    # object's keys for each lookup of a field the message does not carry)
                    del field["validation_alias"]
        return schema

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        pins: dict[str, tuple[str, Any]] = {}
        reserved: dict[str, frozenset[Hashable]] = {}
        for base in reversed(cls.__mro__[1:]):
            if issubclass(base, AcpModel):
                pins.update(base.__acp_pins__)
                reserved.update(base.__acp_reserved__)
        lenient: list[str] = []
        for name, info in cls.__pydantic_fields__.items():
            wire = _wire_name(name, info)
            pinned = _pinned_value(info)
            if pinned is not _MISSING:
                pins[wire] = (name, pinned)
            reserved.update((wire, meta.values) for meta in info.metadata if isinstance(meta, Reserved))
            if DefaultOnError in info.metadata or DefaultOnNull in info.metadata:
                lenient.append(name)
        cls.__acp_pins__ = pins
        cls.__acp_reserved__ = reserved
        cls.__acp_lenient__ = tuple(lenient)


_BOUNDS: Final = ("gt", "ge", "lt", "le", "multiple_of")


def _fold_bounds(schema: Any) -> Any:
    """A field's core schema with the bounds of its :data:`JsonInt` values checked in pydantic-core.

    pydantic applies ``Field(ge=0)`` to a :data:`JsonInt` (a union, which takes no bounds) as a
    Python after-validator per bound.  The same bounds on a strict ``int`` schema after the union
    give the same errors (type, message and context) without leaving pydantic-core.
    """
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind == "function-after":
        bounds: dict[str, Any] = {}
        inner: Any = schema
        while isinstance(inner, dict) and inner.get("type") == "function-after":
            bound = _bound_of(inner["function"].get("function"))
            if bound is None:
                break
            bounds.update(bound)
            inner = inner["schema"]
        if bounds and isinstance(inner, dict) and (inner.get("metadata") or {}).get(_JSON_INT):
            from pydantic_core import core_schema  # only needed once a schema is built

            return core_schema.chain_schema([inner, core_schema.int_schema(strict=True, **bounds)])
    if kind in ("default", "nullable", "function-wrap", "function-after", "function-before"):
        return {**schema, "schema": _fold_bounds(schema["schema"])}
    if kind == "list":
        return {**schema, "items_schema": _fold_bounds(schema["items_schema"])}
    if kind == "union":
        return {**schema, "choices": [_map_choice(_fold_bounds, c) for c in schema["choices"]]}
    return schema


def _map_choice(function: Callable[[Any], Any], choice: Any) -> Any:
    """``function`` applied to the schema of a union choice (a schema, or a schema and its label)."""
    return (function(choice[0]), choice[1]) if isinstance(choice, tuple) else function(choice)


def _bound_of(function: Any) -> dict[str, Any] | None:
    """``{"ge": 0}`` for pydantic's after-validator of ``Field(ge=0)``, else ``None``."""
    import functools

    try:  # pydantic's own validators, to recognise them (left as they are if they move)
        from pydantic._internal._validators import NUMERIC_VALIDATOR_LOOKUP
    except ImportError:  # pragma: no cover
        return None
    if not isinstance(function, functools.partial) or function.args or len(function.keywords) != 1:
        return None
    ((name, value),) = function.keywords.items()
    if name in _BOUNDS and NUMERIC_VALIDATOR_LOOKUP.get(name) is function.func:
        return {name: value}
    return None


def _bind_fallbacks(schema: Any, cls: type[AcpModel], name: str) -> Any:
    """Field ``name``'s core schema with its lenient fallbacks bound to the field.

    Bound, a fallback gives the field its final value itself, so that no model needs a
    post-init: an invalid value dropped puts the default into the instance's ``__dict__`` and
    omits the field (so it does not count as set), a ``null`` read as the default returns the
    default (the field counts as set).  Valid values never reach a fallback.  The schema is
    copied where it changes: pydantic may share parts of it with other classes.
    """
    if not isinstance(schema, dict):
        return schema
    schema = dict(schema)
    kind = (schema.get("metadata") or {}).get(_LENIENT)
    if kind == "error" and schema["type"] == "union":
        schema["choices"] = [_only_acceptance(schema["choices"][0]), _bound_drop(cls, name)]
    elif kind == "null" and schema["type"] == "function-wrap":
        schema["function"] = _bound_null(cls, name)
    if schema["type"] in ("default", "nullable", "function-wrap", "function-after", "function-before"):
        schema["schema"] = _bind_fallbacks(schema.get("schema"), cls, name)
    elif schema["type"] == "union":
        bind = lambda inner: _bind_fallbacks(inner, cls, name)  # noqa: E731
        schema["choices"] = [_map_choice(bind, choice) for choice in schema["choices"]]
    return schema


def _only_acceptance(schema: Any) -> Any:
    """The schema a lenient fallback guards, reduced to what decides acceptance.

    Its errors are never seen (an invalid value falls back), so an open enum (known string
    literals, or any string) is checked as one string schema: it takes the same values and
    gives the same value back, and refuses in one step instead of building an error per member.
    """
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind in ("nullable", "default"):
        return {**schema, "schema": _only_acceptance(schema["schema"])}
    if kind == "union":
        choices = [c[0] if isinstance(c, tuple) else c for c in schema["choices"]]
        strings = [
            c
            for c in choices
            if isinstance(c, dict) and c.get("type") == "str" and c.keys() <= {"type", "strict"}
        ]
        literals = [
            c
            for c in choices
            if isinstance(c, dict) and c.get("type") == "literal" and c.keys() <= {"type", "expected"}
        ]
        texts = all(isinstance(v, str) for c in literals for v in c["expected"])
        if strings and texts and len(strings) + len(literals) == len(choices):
            return strings[0]
    return schema


def _bound_drop(cls: type[AcpModel], name: str) -> Any:
    """The fallback of :data:`DefaultOnError` field ``name`` of ``cls``: as if the key were absent."""
    from pydantic_core import PydanticOmit, core_schema  # only needed once a schema is built

    info = cls.__pydantic_fields__[name]
    if info.is_required():
        empty = _required_empty(cls, name, "invalid value")

        def drop_required(value: Any) -> Any:
            return empty()  # a required list or map becomes empty, and stays given

        return core_schema.no_info_plain_validator_function(drop_required)

    def drop(value: Any, validation: core_schema.ValidationInfo) -> Any:
        data = validation.data
        if data is None or validation.field_name != name:
            return _field_default(info, {})
        # the default goes into the model's __dict__ (pydantic-core builds the instance from this
        # very dict, in field order), and the field is omitted: it is not in model_fields_set
        data[name] = _field_default(info, data)
        raise PydanticOmit

    return core_schema.with_info_plain_validator_function(drop)


def _bound_null(cls: type[AcpModel], name: str) -> dict[str, Any]:
    """The wrap validator of :data:`DefaultOnNull` field ``name`` of ``cls``: null is the default, given.

    It takes the validation info only if the field's default factory reads the other fields.
    """
    info = cls.__pydantic_fields__[name]
    empty = _required_empty(cls, name, "null") if info.is_required() else None
    if empty is None and info.default_factory_takes_validated_data:

        def default_from_data(value: Any, validate: Callable[[Any], Any], validation: Any) -> Any:
            return validate(value) if value is not None else _field_default(info, validation.data or {})

        return {"type": "with-info", "function": default_from_data}
    default: Callable[[], Any] = empty if empty is not None else lambda: _field_default(info, {})

    def default_on_null(value: Any, validate: Callable[[Any], Any]) -> Any:
        return validate(value) if value is not None else default()

    return {"type": "no-info", "function": default_on_null}


def _required_empty(cls: type[AcpModel], name: str, what: str) -> Callable[[], Any]:
    """``list`` or ``dict`` for a required lenient field, which has no default to fall back to."""
    empty = _empty_value(cls.__pydantic_fields__[name])
    if empty is not None:
        return empty

    def refuse() -> Any:
        raise ValueError(f"{cls.__name__}.{name}: {what} and no default to fall back to")

    return refuse


def _field_default(info: FieldInfo, data: dict[str, Any]) -> Any:
    """The default of an optional field, as pydantic would fill it in."""
    if info.default is None and info.default_factory is None:
        return None  # the common case, without pydantic's copy of the default
    return info.get_default(call_default_factory=True, validated_data=data)


def _wire_name(name: str, info: FieldInfo) -> str:
    alias = info.validation_alias
    return alias if isinstance(alias, str) else (info.alias or name)


def _pinned_value(info: FieldInfo) -> Any:
    """The value of a :data:`UnionTag` field (``Literal[X]`` with default ``X``)."""
    if UnionTag not in info.metadata or get_origin(info.annotation) is not Literal:
        return _MISSING
    values = get_args(info.annotation)
    if len(values) == 1 and info.default == values[0]:
        return values[0]
    return _MISSING


def _empty_value(info: FieldInfo) -> Callable[[], Any] | None:
    """``list`` or ``dict`` for a list- or dict-typed field, else ``None``."""
    origin = get_origin(info.annotation)
    if origin in (list, dict):
        return typing.cast(Callable[[], Any], origin)
    return None


class TaggedUnion:
    """Dispatch a union on its tag property in one step.

    Used as ``Annotated[A | B | Other, TaggedUnion("type")]``.  Each member
    pins its tag with a ``Literal`` field; a member whose tag field is
    :class:`Reserved` receives every other tag; a member whose tag field is
    typed ``None`` receives objects whose tag is null or absent (and, if that
    field is :data:`DefaultOnError`, any tag that is not valid: it is treated
    as absent); a member without the tag field receives objects that carry no
    tag, any tag no other member takes, and, as a fallback, objects whose
    tagged member rejects them (it does not constrain the tag).  A member may
    itself be such a union, dispatching on its own tag in turn.
    """

    __slots__ = ("_slow", "wire")

    def __init__(self, wire: str) -> None:
        self.wire = wire
        self._slow: dict[Any, Any] = {}

    def __repr__(self) -> str:
        return f"TaggedUnion({self.wire!r})"

    def _finish(self, source: Any) -> Callable[[Any], Any]:
        """What the fast dispatch's result becomes: itself, or the one-step dispatch's verdict."""

        def finish(value: Any) -> Any:
            # called after every fast dispatch: no ValidationInfo for it, the fall-through keeps its own
            if type(value) is not _Unmatched:
                return value
            # what the fast dispatch could not take, the full dispatch (with the Python
            # discriminator) validates again: its result, or its errors exactly as they were
            adapter = self._slow.get(source)
            if adapter is None:
                from pydantic import TypeAdapter  # only needed once a message falls through

                adapter = self._slow[source] = TypeAdapter(Annotated[source, _OneStep(self.wire)])
            if value.mode == "json":
                return adapter.validate_json(_json.dumps(value.raw), context=value.context)
            return adapter.validate_python(value.raw, context=value.context)

        return finish

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        from pydantic_core import core_schema  # only needed once a schema is built

        groups: dict[Hashable, list[Any]] = {}
        for member in _union_members(source):
            groups.setdefault(_member_tag(member, self.wire), []).append(member)
        choices: dict[Hashable, core_schema.CoreSchema] = {}
        labels: dict[Hashable, Hashable] = {}
        for tag, members in groups.items():
            names = [getattr(m, "__name__", repr(m)) for m in members]
            # the catch-all, null-tag and untagged members are named by their classes in error locations
            special = tag in (_OTHER, _UNTAGGED, _NULL)
            key = "|".join(names) if special and "|".join(names) not in groups else tag
            labels[tag] = key
            if len(members) == 1:
                choices[key] = handler.generate_schema(self._member(members[0], _UNTAGGED in groups))
            else:
                choices[key] = core_schema.union_schema(
                    [(handler.generate_schema(m), name) for m, name in zip(members, names, strict=True)]
                )
        known = frozenset(tag for tag in groups if tag not in (_OTHER, _UNTAGGED, _NULL))
        if _UNTAGGED in groups:
            # a member without the tag property takes any object its own schema accepts: it is
            # tried when the member a known tag picks fails (JSON Schema's ``anyOf``)
            fallback = (choices[labels[_UNTAGGED]], str(labels[_UNTAGGED]))
            for tag in known:
                choices[tag] = core_schema.union_schema(
                    [(choices[tag], str(tag)), fallback], mode="left_to_right"
                )
            # so is it when the catch-all or the null-tag member refuses: a tag the catch-all
            # reserves may belong to no member any more (a member moved into the default one)
            for selected in (_OTHER, _NULL):
                if selected in groups:
                    key = labels[selected]
                    choices[key] = core_schema.union_schema(
                        [(choices[key], str(key)), fallback], mode="left_to_right"
                    )
        lenient = any(_null_tag(m, self.wire) == "lenient" for m in groups.get(_NULL, ()))
        if isinstance(self, _OneStep) or not known:
            return core_schema.tagged_union_schema(
                choices=choices,
                discriminator=_Discriminator(
                    self.wire, known, labels.get(_OTHER), labels.get(_UNTAGGED), labels.get(_NULL), lenient
                ),
            )
        # The fast dispatch stays in pydantic-core: a known tag found by name (its member, or the
        # member without the tag when that one refuses), then the catch-all, which refuses the
        # known tags.  Whatever none of them takes goes through the one-step dispatch again,
        # so that what it accepts, and the errors it reports, stay exactly the same.
        by_tag = core_schema.tagged_union_schema(
            choices={tag: choices[tag] for tag in known},
            discriminator=self.wire,
            custom_error_type="acp_fall_through",
            custom_error_message="no known tag",
        )
        fast: list[core_schema.CoreSchema | tuple[core_schema.CoreSchema, str]] = [by_tag]
        if _OTHER in groups:
            fast.append(choices[labels[_OTHER]])
        if isinstance(self, _Nested):
            # what this union refuses, the union it is a member of validates again in one step
            return core_schema.union_schema(fast, mode="left_to_right") if len(fast) > 1 else by_tag
        fast.append(core_schema.with_info_plain_validator_function(_Unmatched))
        return core_schema.no_info_after_validator_function(
            self._finish(source), core_schema.union_schema(fast, mode="left_to_right")
        )

    def _member(self, member: Any, untagged: bool) -> Any:
        """``member``, or, if it is a tagged union itself, that union without its own fall-through.

        A member that is a tagged union (``Annotated[A | B, TaggedUnion("state")]``) needs no
        Python step of its own after its fast dispatch: what it refuses, this union's fall-through
        validates again in one step, the member included, with the same result and the same
        errors.  So valid input pays one Python call for the whole nest instead of one per level.
        Not where another member may take what the member refuses (a member without the tag):
        there, the member's own result decides.  The one-step dispatch keeps its members as they are.
        """
        if isinstance(self, _OneStep) or untagged or get_origin(member) is not Annotated:
            return member
        inner, *metadata = get_args(member)
        if not any(type(meta) is TaggedUnion for meta in metadata):
            return member
        nested = [_Nested(meta.wire) if type(meta) is TaggedUnion else meta for meta in metadata]
        return Annotated[(inner, *nested)]


class _Nested(TaggedUnion):
    """The fast dispatch alone, without a fall-through: a tagged union that is a member of another."""

    __slots__ = ()


class _OneStep(TaggedUnion):
    """The one-step dispatch alone (Python discriminator): what the fast dispatch falls back to."""

    __slots__ = ()


class _Unmatched:
    """A value the fast dispatch of a :class:`TaggedUnion` did not take, as it was given."""

    __slots__ = ("context", "mode", "raw")

    def __init__(self, raw: Any, info: core_schema.ValidationInfo) -> None:
        self.raw = raw
        self.mode = info.mode
        self.context = info.context


def _union_members(source: Any) -> list[Any]:
    if get_origin(source) is Annotated:
        source = get_args(source)[0]
    if get_origin(source) in (typing.Union, types.UnionType):
        return list(get_args(source))
    return [source]


def _member_tag(member: Any, wire: str) -> Hashable:
    """The tag value every class of ``member`` pins, ``_OTHER`` or ``_UNTAGGED``."""
    classes = _union_members(member) if get_origin(member) is not None else [member]
    found: set[Hashable] = set()
    for cls in classes:
        if get_origin(cls) is Annotated:
            found.update(_member_tag(m, wire) for m in _union_members(cls))
            continue
        if not (isinstance(cls, type) and issubclass(cls, AcpModel)):
            found.add(_UNTAGGED)
        elif wire in cls.__acp_pins__:
            found.add(cls.__acp_pins__[wire][1])
        elif wire in cls.__acp_reserved__:
            found.add(_OTHER)
        elif _null_tag(cls, wire):
            found.add(_NULL)
        else:
            found.add(_UNTAGGED)
    if len(found) != 1:
        raise TypeError(f"{member!r} does not pin one value for {wire!r}")
    return found.pop()


def _null_tag(cls: Any, wire: str) -> Literal["strict", "lenient"] | None:
    """Whether ``cls`` takes a null or absent tag: its tag field is typed ``None`` (lenient: any bad tag)."""
    if not (isinstance(cls, type) and issubclass(cls, AcpModel)):
        return None
    for name, info in cls.__pydantic_fields__.items():
        if _wire_name(name, info) == wire:
            if info.annotation is not type(None):
                return None
            return "lenient" if DefaultOnError in info.metadata else "strict"
    return None


class _Discriminator:
    """Reads the tag of a dict or a model; its name is what pydantic's errors show."""

    __slots__ = ("__name__", "known", "lenient", "null", "other", "untagged", "wire")

    def __init__(
        self,
        wire: str,
        known: frozenset[Hashable],
        other: Hashable,
        untagged: Hashable,
        null: Hashable = None,
        lenient: bool = False,
    ) -> None:
        self.__name__ = wire
        self.wire = wire
        self.known = known
        self.other = other
        self.untagged = untagged
        self.null = null
        self.lenient = lenient

    def __call__(self, value: Any) -> Any:
        if isinstance(value, dict):
            tag = value.get(self.wire, _MISSING)
        elif isinstance(value, AcpModel):
            pin = value.__acp_pins__.get(self.wire)
            tag = getattr(value, pin[0]) if pin else _wire_attribute(value, self.wire)
        else:
            return self.untagged  # not an object: only a member without the tag may take it
        if (tag is _MISSING or tag is None) and self.null is not None:
            return self.null
        if tag is _MISSING:
            return self.untagged
        if isinstance(tag, Hashable) and tag in self.known:
            return tag
        if self.other is not None and isinstance(tag, str):
            return self.other
        if self.lenient:
            return self.null  # a tag that is not valid is treated as absent
        if self.untagged is not None:
            return self.untagged  # the member without the tag property takes any other value
        return tag if isinstance(tag, (str, int)) else None


def _wire_attribute(model: AcpModel, wire: str) -> Any:
    for name, info in type(model).model_fields.items():
        if _wire_name(name, info) == wire:
            return getattr(model, name)
    extra = model.model_extra or {}
    return extra.get(wire, _MISSING)
