"""The report as one self-contained HTML page: a summary, one row per change, filters that need no server.

The page is rendered by jinja2 from ``templates/reports/diff.html.jinja2``
with autoescaping on: this module builds plain data (a :class:`Page` of
:class:`Row`), the template lays it out, and nothing here writes markup.
The page loads nothing from the network: its style and its script are inline.
Each schema location links to its JSON pointer in the schema file: a relative
file (the committed ``reports/`` name files relative to the project) under
``link_base``; a file elsewhere (an installed tool's bundled store) only where
the link survives the page being shared, the release's file on GitHub at the
pointer's line (:func:`.locate.public_url`), never a ``file:`` address.
A row's proof (its witness, its set proof, or why it is unproven) is the
sentence the other formats give; unproven rows are listed apart too.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import jinja2

from .. import resources
from . import semver
from .locate import public_url
from .model import Change, DiffResult
from .rules import SEVERITIES, Severity
from .standing import standing
from .summary import (
    breaks_text,
    counts_by_level,
    proof_line,
    proof_summary,
    rule_link,
    steps_by_level,
    unproven_rows,
    whom,
)

TEMPLATE = "diff.html.jinja2"
NOBODY = "nobody"
"""The value of the side filter for a change that breaks no one."""


@dataclass(frozen=True)
class Row:
    """One change as the page shows it."""

    severity: Severity
    layer: str
    rule: str
    rule_summary: str
    rule_url: str | None
    subject: str
    detail: str
    breaks: str
    sides: tuple[str, ...]
    stabilities: tuple[str, ...]
    fingerprint: str
    pointer: str
    pointer_url: str | None
    waiver: str
    evidence: str
    """What the row rests on, in one sentence: its witness, its set proof, or why it is unproven (empty:
    it needs no proof, or none was searched for)."""
    standing: str
    """:class:`~.standing.Standing` of the row (empty: it needs no proof)."""


@dataclass(frozen=True)
class Count:
    label: str
    breaking: int
    warning: int
    info: int
    wire: str
    python: str


@dataclass(frozen=True)
class Page:
    old: str
    new: str
    steps: semver.SemverSteps
    counts: tuple[Count, ...]
    whom: tuple[tuple[str, int], ...]
    rows: tuple[Row, ...]
    severities: tuple[Severity, ...]
    sides: tuple[str, ...]
    stabilities: tuple[str, ...]
    expired: tuple[str, ...]
    unmatched: tuple[str, ...]
    proofs: str = ""
    """What the rows rest on, in one line (:func:`~.summary.proof_summary`)."""
    unproven: tuple[Row, ...] = ()
    """The rows listed apart: unproven verdicts, to check by hand."""


def pointer_url(file: str, pointer: str, link_base: str = "") -> str | None:
    """The address of a JSON pointer in a schema file: ``<file>#<pointer>``, the pointer percent-encoded."""
    if not file or not pointer:
        return None
    fragment = urllib.parse.quote(pointer, safe="/$~-_.")
    path = Path(file)
    if path.is_absolute():
        return public_url(file, pointer)
    return f"{link_base}{urllib.parse.quote(path.as_posix())}#{fragment}"


def _row(change: Change, rules_url: str | None, link_base: str) -> Row:
    waiver = change.waiver
    return Row(
        severity=change.severity,
        layer=change.layer,
        rule=change.rule.id,
        rule_summary=change.rule.summary,
        rule_url=rule_link(change.rule.id, rules_url),
        subject=change.subject,
        detail=change.detail,
        breaks=breaks_text(change),
        sides=change.roles or (NOBODY,),
        stabilities=change.appears_in,
        fingerprint=change.fingerprint,
        pointer=change.pointer,
        pointer_url=pointer_url(change.file, change.pointer, link_base),
        waiver=f"waived until {waiver.expires}: {waiver.reason}" if waiver else "",
        evidence=proof_line(change),
        standing=str(standing(change) or ""),
    )


def page(
    result: DiffResult, rules_url: str | None = None, judged: DiffResult | None = None, link_base: str = ""
) -> Page:
    """The data of the page: ``judged`` (default ``result``) decides the version steps."""
    judged = judged or result
    levels = " and ".join(result.stabilities)
    steps = steps_by_level(judged)
    counts = tuple(
        Count(
            f"{levels}, distinct" if level == "distinct" else level,
            found["breaking"],
            found["warning"],
            found["info"],
            steps[level].wire.step,
            steps[level].python.step,
        )
        for level, found in counts_by_level(result).items()
    )
    rows = tuple(_row(c, rules_url, link_base) for c in result.changes)
    sides = sorted({side for row in rows for side in row.sides} - {NOBODY})
    return Page(
        old=result.old,
        new=result.new,
        steps=semver.step(judged),
        counts=counts,
        whom=tuple(whom(result).items()),
        rows=rows,
        severities=SEVERITIES,
        sides=(*sides, NOBODY) if any(NOBODY in r.sides for r in rows) else tuple(sides),
        stabilities=result.stabilities,
        expired=tuple(f"{w.fingerprint} (expired {w.expires}): {w.reason}" for w in result.expired),
        unmatched=tuple(f"{w.fingerprint}: {w.reason}" for w in result.unmatched),
        proofs=proof_summary(result),
        unproven=tuple(_row(c, rules_url, link_base) for c in unproven_rows(result)),
    )


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(resources.TEMPLATES / "reports"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_page(
    result: DiffResult, rules_url: str | None = None, judged: DiffResult | None = None, link_base: str = ""
) -> str:
    """The page as HTML: deterministic, self-contained, every value escaped by the template."""
    return _environment().get_template(TEMPLATE).render(page=page(result, rules_url, judged, link_base))
