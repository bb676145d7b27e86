"""Enums: their base type and their values, compared value by value (with each value's description)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from ...schema.ir import EnumType, Ref
from ..context import Context
from ..model import ABSENT, Change, Path, SetProof, ValuePart
from ..payload import Kind
from ..rules import RuleId
from .base import At, normative_change
from .members import compare_members


def compare_enum(ctx: Context, old: EnumType, new: EnumType, at: At) -> Iterator[Change]:
    if old.base != new.base:
        yield ctx.change(
            RuleId.TYPE_CHANGED,
            at.path,
            at.traffic,
            at.where,
            old=Kind(f"{old.base} enum"),
            new=Kind(f"{new.base} enum"),
        )
        return
    old_values: list[Path] = [(*at.path, ValuePart(v.value)) for v in old.values]
    new_values: list[Path] = [(*at.path, ValuePart(v.value)) for v in new.values]
    proofs: dict[Path, SetProof] = {}
    gone = [p for p in old_values if p not in new_values]
    arrived = [p for p in new_values if p not in old_values]
    if gone or arrived or old.open != new.open:
        whole = ctx.sets.relate(("old", Ref(old.name)), ("new", Ref(new.name)), ABSENT, ABSENT)
        proofs[at.path] = whole
        for path in gone:  # a value only the old enum takes, unless the new one is open to it
            value = ABSENT if new.open else _value_of(path)
            proofs[path] = dataclasses.replace(whole, only_old=value, only_new=ABSENT)
        for path in arrived:
            value = ABSENT if old.open else _value_of(path)
            proofs[path] = dataclasses.replace(whole, only_old=ABSENT, only_new=value)
    yield from compare_members(ctx, "enum", old.open, new, old_values, new_values, at, proofs=proofs)
    docs = {v.value: v.doc for v in old.values}
    for value in new.values:
        if value.value in docs:
            yield from normative_change(ctx, docs[value.value], value.doc, at.down(ValuePart(value.value)))


def _value_of(path: Path) -> Any:
    last = path[-1]
    return last.value if isinstance(last, ValuePart) else ABSENT
