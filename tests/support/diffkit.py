"""Helpers for the differ's tests: small, named mutations of a real release."""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
from collections.abc import Callable
from typing import Any

from codegen.diff import Change, diff_surfaces
from codegen.schema.build import build_surface
from codegen.schema.ir import ApiSurface
from tests.support.releases import release_files

BASE = "2.0.0-alpha.7"

Defs = dict[str, Any]


@functools.cache
def _base_data() -> str:
    return json.dumps(release_files(BASE).schema(False).data)


def base_data() -> dict[str, Any]:
    """A fresh copy of the stable schema of the base release."""
    data: dict[str, Any] = json.loads(_base_data())
    return data


def surface_from(data: dict[str, Any]) -> ApiSurface:
    files = release_files(BASE)
    schema = dataclasses.replace(files.schema(False), data=data)
    return build_surface(schema, files.meta(False), "stable")


@functools.cache
def base_surface() -> ApiSurface:
    return surface_from(base_data())


def edited(edit: Callable[[Defs], Any]) -> ApiSurface:
    """The base release with ``edit`` applied to its ``$defs``."""
    data = base_data()
    edit(data["$defs"])
    return surface_from(data)


def renamed(data: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``data`` with the ``$defs`` entry ``old`` called ``new`` everywhere."""
    text = json.dumps(data).replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
    out: dict[str, Any] = json.loads(text)
    out["$defs"] = {new if k == old else k: v for k, v in out["$defs"].items()}
    return out


def changes(old: ApiSurface, new: ApiSurface) -> tuple[Change, ...]:
    return diff_surfaces(old, new).changes


def only(found: tuple[Change, ...], rule_id: str) -> Change:
    """The one change of ``rule_id`` (fails listing everything found otherwise)."""
    matches = [c for c in found if c.rule.id == rule_id]
    assert len(matches) == 1, [(c.rule.id, c.subject) for c in found]
    return matches[0]


def props(defs: Defs, name: str) -> dict[str, Any]:
    found: dict[str, Any] = defs[name]["properties"]
    return found


def deep(value: Any) -> Any:
    return copy.deepcopy(value)
