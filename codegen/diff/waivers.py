"""Waivers: accepted changes, by fingerprint, with a reason and an expiry date."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable
from pathlib import Path

from ..errors import CodegenError
from ..schema.load import read_toml
from .model import DiffResult, Waiver


def read_waivers(path: Path) -> tuple[Waiver, ...]:
    """Waivers from a TOML file of ``[[waiver]]`` tables (fingerprint, reason, expires)."""
    data = read_toml(path)
    entries = data.get("waiver", [])
    unknown = sorted(data.keys() - {"waiver"})
    if unknown:
        raise CodegenError(
            f"unknown key {unknown[0]!r}; a waiver file holds [[waiver]] tables",
            file=path,
            pointer=f"/{unknown[0]}",
        )
    if not isinstance(entries, list):
        raise CodegenError("'waiver' must be an array of tables ([[waiver]])", file=path, pointer="/waiver")
    waivers: list[Waiver] = []
    for index, entry in enumerate(entries):
        pointer = f"/waiver/{index}"
        if not isinstance(entry, dict):
            raise CodegenError("a waiver must be a table", file=path, pointer=pointer)
        extra = sorted(entry.keys() - {"fingerprint", "reason", "expires"})
        if extra:
            raise CodegenError(f"unknown key {extra[0]!r}", file=path, pointer=f"{pointer}/{extra[0]}")
        fingerprint, reason, expires = entry.get("fingerprint"), entry.get("reason"), entry.get("expires")
        if not isinstance(fingerprint, str) or not fingerprint.strip():
            raise CodegenError(
                "'fingerprint' must be a non-empty string", file=path, pointer=f"{pointer}/fingerprint"
            )
        if not isinstance(reason, str) or not reason.strip():
            raise CodegenError(
                "'reason' must say why the change is accepted", file=path, pointer=f"{pointer}/reason"
            )
        if not isinstance(expires, datetime.date) or isinstance(expires, datetime.datetime):
            raise CodegenError(
                "'expires' must be a TOML date such as 2026-12-31", file=path, pointer=f"{pointer}/expires"
            )
        waivers.append(Waiver(fingerprint.strip(), reason.strip(), expires))
    return tuple(waivers)


def apply_waivers(result: DiffResult, waivers: Iterable[Waiver], today: datetime.date) -> DiffResult:
    """Mark waived changes; collect expired waivers and the ones that match nothing."""
    active: dict[str, Waiver] = {}
    expired: list[Waiver] = []
    for waiver in waivers:
        if waiver.expires < today:
            expired.append(waiver)
        else:
            active[waiver.fingerprint] = waiver
    used: set[str] = set()
    surfaces = []
    for surface in result.surfaces:
        changes = []
        for change in surface.changes:
            match = active.get(change.fingerprint)
            if match is not None:
                used.add(match.fingerprint)
                change = dataclasses.replace(change, waiver=match)
            changes.append(change)
        surfaces.append(dataclasses.replace(surface, changes=tuple(changes)))
    unmatched = tuple(w for w in active.values() if w.fingerprint not in used)
    return dataclasses.replace(result, surfaces=tuple(surfaces), expired=tuple(expired), unmatched=unmatched)
