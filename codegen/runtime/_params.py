"""Expanded parameters: from keyword arguments to a params model and back.

This file is written once by hand and copied unchanged into every generated
package.  The generated methods call it with data derived from the schema:

* :func:`build` turns keyword arguments into a params model.  Keyword arguments
  that are not parameters carry the request's ``_meta``: each becomes a key
  of it, and ``_meta=...`` sets the whole object (``None`` sends ``null``).
* :class:`UnionParams` picks the branch of a union request: by its tag (an
  unknown tag goes to the open catch-all, which refuses the known tags), or,
  where the known branches have the same fields, by the branch whose types
  accept the values as they are; then by scope, where a branch is itself an
  untagged union whose members are told apart by the fields only they have.
* :func:`expand` turns a validated params model into handler keyword
  arguments: its fields, then any extra wire fields, then the ``_meta`` keys;
  nothing ever overwrites an earlier name.  ``_meta`` itself is passed as
  ``_meta`` when the message had it, so a handler can tell absent, ``null``
  and ``{}`` apart.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, ValidationError

__all__ = ["UNSET", "Scopes", "UnionParams", "Unset", "build", "expand", "omit", "wire_params"]

META: Final = "_meta"


class Unset(enum.Enum):
    """The default of a parameter for which ``None`` is a real value."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET


def omit(missing: Any, /, **values: Any) -> dict[str, Any]:
    """``values`` without those that are ``missing`` (``None`` or :data:`UNSET`)."""
    return {name: value for name, value in values.items() if value is not missing}


def _meta_field(model: type[BaseModel]) -> str | None:
    for name, info in model.model_fields.items():
        if info.validation_alias == META or info.alias == META:
            return name
    return None


def build(model: type[BaseModel], fields: dict[str, Any], meta: Mapping[str, Any]) -> BaseModel:
    """``model`` built from ``fields`` (Python names) plus ``meta`` as its ``_meta``."""
    if meta:
        extra = dict(meta)
        whole = extra.pop(META, None)
        if whole is not None and not isinstance(whole, Mapping):
            raise TypeError(f"_meta must be a mapping or None, not {type(whole).__name__}")
        value: dict[str, Any] | None = dict(whole) if whole is not None else None
        if extra:
            value = {**(value or {}), **extra}
        name = _meta_field(model)
        if name is None:
            raise TypeError(f"{model.__name__} has no _meta, so extra keyword arguments cannot be sent")
        fields = {**fields, name: value}
    return model(**fields)


@dataclass(frozen=True)
class Scopes:
    """An untagged union of models, each chosen by the fields only it has."""

    members: tuple[tuple[type[BaseModel], tuple[str, ...]], ...]

    def pick(self, fields: Mapping[str, Any], what: str) -> type[BaseModel]:
        chosen = [model for model, keys in self.members if all(k in fields for k in keys)]
        if len(chosen) == 1:
            return chosen[0]
        choices = " or ".join("+".join(keys) for _model, keys in self.members)
        if chosen:
            raise ValueError(f"{what}: pass only one of {choices}")
        raise ValueError(f"{what}: pass {choices}")


Branch = type[BaseModel] | Scopes


@dataclass(frozen=True)
class UnionParams:
    """The shape of a tagged union of params: tag, known branches, open branch."""

    tag: str
    known: Mapping[Any, Branch]
    other: Branch | None = None
    infer_tag: bool = False
    """The known branches have the same fields, so the values can pick one."""

    def build(self, fields: dict[str, Any], meta: Mapping[str, Any]) -> BaseModel:
        tag = fields.get(self.tag)
        if tag is None:
            fields.pop(self.tag, None)
            if not self.infer_tag:
                raise TypeError(f"missing the required argument {self.tag!r}")
            tag = self._infer(fields)
        if tag is None:  # the values fit the open branch, which has no tag
            assert self.other is not None
            branch: Branch = self.other
            what = f"no {self.tag}"
        else:
            found = self.known.get(tag)
            if found is None:
                if self.other is None:
                    raise ValueError(f"{self.tag}={tag!r} is not one of {', '.join(map(repr, self.known))}")
                found = self.other
                fields[self.tag] = tag
            branch, what = found, f"{self.tag}={tag!r}"
        model = branch.pick(fields, what) if isinstance(branch, Scopes) else branch
        accepted = set(model.model_fields)
        stray = sorted(set(fields) - accepted)
        if stray:
            raise ValueError(f"{what}: {', '.join(stray)} does not apply")
        needed = sorted(n for n, info in model.model_fields.items() if info.is_required() and n not in fields)
        if needed:
            raise ValueError(f"{what} needs {', '.join(needed)}")
        return build(model, fields, meta)

    def _infer(self, fields: Mapping[str, Any]) -> Any:
        """The first known branch that accepts the values as they are (strict types).

        ``None`` when none does but the open branch has no tag and accepts them
        (v1's ``value_id``: the default when ``type`` is absent); else the first
        known tag, whose validation then says what is wrong.
        """
        for tag, branch in self.known.items():
            if isinstance(branch, type):
                try:
                    branch.model_validate({**fields, self.tag: tag}, strict=True)
                except ValidationError:
                    continue
                return tag
        other = self.other
        if isinstance(other, type) and self.tag not in other.model_fields:
            try:
                other.model_validate(fields, strict=True)
            except ValidationError:
                pass
            else:
                return None
        return next(iter(self.known))


def wire_params(value: Any) -> Any:
    """A params or result value as wire JSON (omitted fields stay omitted)."""
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, exclude_unset=True, mode="json")
    if isinstance(value, Mapping):
        return dict(value)
    return value


_ARGUMENTS: dict[type[BaseModel], tuple[tuple[str, ...], str | None]] = {}
"""Per params model: the fields that become keyword arguments, and the ``_meta`` field (a cache)."""


def _arguments_of(model: type[BaseModel]) -> tuple[tuple[str, ...], str | None]:
    found = _ARGUMENTS.get(model)
    if found is None:
        meta_name = _meta_field(model)
        found = _ARGUMENTS[model] = (tuple(n for n in model.model_fields if n != meta_name), meta_name)
    return found


def expand(value: Any) -> dict[str, Any]:
    """Handler keyword arguments for a validated params model."""
    if not isinstance(value, BaseModel):
        return {}
    names, meta_name = _arguments_of(type(value))
    fields = value.__dict__
    arguments = {name: fields[name] for name in names}
    extra = value.model_extra
    if extra:
        for key, item in extra.items():
            arguments.setdefault(key, item)
    if meta_name is not None and meta_name in value.model_fields_set:
        meta = getattr(value, meta_name)
        arguments.setdefault(META, meta)
        for key, item in (meta or {}).items():
            arguments.setdefault(key, item)
    return arguments
