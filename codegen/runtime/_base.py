"""Runtime support for the generated ACP models.

This file is written once by hand and copied unchanged into every generated
package, so that a package needs nothing but pydantic and the standard library.

It gives the generated classes three behaviours that plain pydantic lacks:

* **pinned tags** - a field typed ``Literal[X]`` whose default is ``X`` is a
  union tag.  It is required when data is validated (a JSON object without
  its tag is rejected) and filled in when a model is built in Python.
* **lenient fields** - fields annotated with :data:`DefaultOnError` fall back
  to their default when their value is invalid, exactly as if the key had been
  omitted (so a bad patch value never turns into an explicit ``null``);
  :data:`SkipInvalidItems` drops invalid items from a list.
* **tagged unions** - :class:`TaggedUnion` dispatches on the tag in one step.
  An unknown tag goes to the union's catch-all variant, whose tag field is
  annotated with :class:`Reserved` so that it refuses the known tags.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Hashable, Mapping
from typing import Annotated, Any, ClassVar, Final, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import InitErrorDetails, PydanticCustomError, core_schema

__all__ = ["AcpModel", "DefaultOnError", "Reserved", "SkipInvalidItems", "TaggedUnion"]


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


DefaultOnError: Final = _Marker("DefaultOnError")
"""An invalid value is treated as if the field had been omitted."""

SkipInvalidItems: Final = _Marker("SkipInvalidItems")
"""Invalid items of a list are dropped instead of failing the whole value."""

_UNTAGGED: Final = "<no tag>"
_OTHER: Final = "<any other string>"
_MISSING: Final = object()


class Reserved:
    """Annotates the tag of a catch-all variant: it must not be one of ``values``."""

    __slots__ = ("values",)

    def __init__(self, *values: Hashable) -> None:
        self.values = frozenset(values)

    def __repr__(self) -> str:
        return f"Reserved({', '.join(map(repr, sorted(self.values, key=repr)))})"

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        reserved = self.values

        def refuse(value: Any) -> Any:
            if isinstance(value, Hashable) and value in reserved:
                raise PydanticCustomError(
                    "reserved_tag",
                    "'{tag}' is a known tag, so it cannot be used for the catch-all variant",
                    {"tag": value},
                )
            return value

        return core_schema.no_info_after_validator_function(refuse, handler(source))


class _Lenient(typing.NamedTuple):
    name: str
    default_on_error: bool
    skip_invalid_items: bool
    required: bool
    empty: Callable[[], Any] | None
    """For a required field: the empty value that replaces an invalid one."""


class AcpModel(BaseModel):
    """Base class of every generated model."""

    model_config = ConfigDict(
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        defer_build=True,
    )

    __acp_pins__: ClassVar[Mapping[str, tuple[str, Any]]] = {}
    __acp_reserved__: ClassVar[Mapping[str, frozenset[Hashable]]] = {}
    __acp_lenient__: ClassVar[Mapping[str, _Lenient]] = {}

    def __init__(self, /, **data: Any) -> None:
        for wire, (name, value) in type(self).__acp_pins__.items():
            if wire not in data and name not in data:
                data[name] = value
        super().__init__(**data)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        pins: dict[str, tuple[str, Any]] = {}
        reserved: dict[str, frozenset[Hashable]] = {}
        lenient: dict[str, _Lenient] = {}
        for name, info in cls.model_fields.items():
            wire = _wire_name(name, info)
            pinned = _pinned_value(info)
            if pinned is not _MISSING:
                pins[wire] = (name, pinned)
            for meta in info.metadata:
                if isinstance(meta, Reserved):
                    reserved[wire] = meta.values
            flags = (DefaultOnError in info.metadata, SkipInvalidItems in info.metadata)
            if any(flags):
                entry = _Lenient(name, flags[0], flags[1], info.is_required(), _empty_value(info))
                lenient[wire] = entry
                lenient[name] = entry
        cls.__acp_pins__ = pins
        cls.__acp_reserved__ = reserved
        cls.__acp_lenient__ = lenient

    @model_validator(mode="wrap")
    @classmethod
    def _acp_validate(cls, data: Any, handler: Callable[[Any], Any]) -> Any:
        if not isinstance(data, dict):
            return handler(data)
        missing = [
            wire for wire, (name, _) in cls.__acp_pins__.items() if wire not in data and name not in data
        ]
        if missing:
            raise ValidationError.from_exception_data(
                cls.__name__,
                [InitErrorDetails(type="missing", loc=(wire,), input=data) for wire in missing],
            )
        if not cls.__acp_lenient__:
            return handler(data)
        try:
            return handler(data)
        except ValidationError as error:
            repaired = _repair(cls.__acp_lenient__, data, error)
            if repaired is None:
                raise
            return handler(repaired)


def _wire_name(name: str, info: FieldInfo) -> str:
    alias = info.validation_alias
    return alias if isinstance(alias, str) else (info.alias or name)


def _pinned_value(info: FieldInfo) -> Any:
    """The value of a ``Literal[X]`` field whose default is ``X``.

    A lenient field is never a tag: its value may always be left out.
    """
    if get_origin(info.annotation) is not Literal or DefaultOnError in info.metadata:
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


def _repair(lenient: Mapping[str, _Lenient], data: dict[str, Any], error: ValidationError) -> dict[str, Any] | None:
    """Drop invalid lenient values and items; ``None`` if some error is not lenient."""
    drop: set[str] = set()
    items: dict[str, set[int]] = {}
    for detail in error.errors(include_url=False, include_context=False, include_input=False):
        loc = detail["loc"]
        key = loc[0] if loc else None
        if not isinstance(key, str) or key not in lenient:
            return None
        if len(loc) == 1 and detail["type"] == "missing":
            return None  # an absent required field is not an invalid value
        rule = lenient[key]
        if rule.skip_invalid_items and len(loc) > 1 and isinstance(loc[1], int) and isinstance(data.get(key), list):
            items.setdefault(key, set()).add(loc[1])
        elif rule.default_on_error:
            drop.add(key)
        else:
            return None
    repaired = dict(data)
    for key, bad in items.items():
        if key not in drop:
            repaired[key] = [item for index, item in enumerate(data[key]) if index not in bad]
    for key in drop:
        rule = lenient[key]
        if not rule.required:
            del repaired[key]
        elif rule.empty is not None:
            repaired[key] = rule.empty()
        else:
            return None
    return repaired


class TaggedUnion:
    """Dispatch a union on its tag property in one step.

    Used as ``Annotated[A | B | Other, TaggedUnion("type")]``.  Each member
    pins its tag with a ``Literal`` field; a member whose tag field is
    :class:`Reserved` receives every other tag; members without the tag field
    receive objects that carry no tag at all.
    """

    __slots__ = ("wire",)

    def __init__(self, wire: str) -> None:
        self.wire = wire

    def __repr__(self) -> str:
        return f"TaggedUnion({self.wire!r})"

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        groups: dict[Hashable, list[Any]] = {}
        for member in _union_members(source):
            groups.setdefault(_member_tag(member, self.wire), []).append(member)
        choices: dict[Hashable, core_schema.CoreSchema] = {}
        for tag, members in groups.items():
            choice = members[0] if len(members) == 1 else typing.Union[tuple(members)]  # noqa: UP007
            choices[tag] = handler.generate_schema(choice)
        known = frozenset(tag for tag in choices if tag not in (_OTHER, _UNTAGGED))
        return core_schema.tagged_union_schema(
            choices=choices,
            discriminator=_Discriminator(self.wire, known, _OTHER in choices, _UNTAGGED in choices),
        )


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
        else:
            found.add(_UNTAGGED)
    if len(found) != 1:
        raise TypeError(f"{member!r} does not pin one value for {wire!r}")
    return found.pop()


class _Discriminator:
    """Reads the tag of a dict or a model; its repr is what pydantic's errors show."""

    __slots__ = ("__name__", "known", "other", "untagged", "wire")

    def __init__(self, wire: str, known: frozenset[Hashable], other: bool, untagged: bool) -> None:
        self.__name__ = wire
        self.wire = wire
        self.known = known
        self.other = other
        self.untagged = untagged

    def __repr__(self) -> str:
        return repr(self.wire)

    def __call__(self, value: Any) -> Any:
        if isinstance(value, dict):
            tag = value.get(self.wire, _MISSING)
        elif isinstance(value, AcpModel):
            pin = value.__acp_pins__.get(self.wire)
            tag = getattr(value, pin[0]) if pin else _wire_attribute(value, self.wire)
        else:
            return None
        if tag is _MISSING:
            return _UNTAGGED if self.untagged else None
        if isinstance(tag, Hashable) and tag in self.known:
            return tag
        if self.other and isinstance(tag, str):
            return _OTHER
        return tag if isinstance(tag, (str, int)) else None


def _wire_attribute(model: AcpModel, wire: str) -> Any:
    for name, info in type(model).model_fields.items():
        if _wire_name(name, info) == wire:
            return getattr(model, name)
    extra = model.model_extra or {}
    return extra.get(wire, _MISSING)
