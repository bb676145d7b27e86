"""Normative text compared as requirements: sentences normalised, clauses matched, moves paired.

A description's requirements are its sentences that say MUST, SHOULD, MAY
(:func:`~codegen.schema.ir.normative`).  Two wordings state the same
requirement when they are the same words once the spelling of names is set
aside (:func:`words`):

* a Rust doc link or path names a member by its type (``[`ContentBlock::Text`]``,
  ``[`SubagentUpdate::session_id`]``), the wire by its name (``text`` content
  blocks, ``sessionId``): a path is its last segment, and the words of the
  type it names are read nowhere in either wording;
* case, ``_`` inside names, plurals, articles and punctuation are not words
  of a requirement; the requirement keywords keep their case (``MUST`` is one,
  ``must`` is not, RFC 8174).

A sentence is kept when each of its clauses (split at ``;``) is a clause of
the other description, so a sentence split in two, or two joined, is no
change.  A sentence dropped from one location and added, reworded a little
(:data:`MOVED_SIMILARITY`), at a location of the same type (a field and its
type, a union member and its union) moved: :func:`pair_moved` reports it as
one ``normative-text-moved`` row.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
from collections.abc import Iterable, Sequence

from ..schema.ir import NORMATIVE_WORDS, normative, sentences
from .model import Change, Path
from .payload import MovedSentence, Payload, Sentence, Sentences
from .rules import RULES, RuleId

_LINK = re.compile(r"\[`?([^\]`]+?)`?\](?:\([^)]*\))?")
"""A Markdown or Rust doc link: its text (``[`ContentBlock::Text`]``, ``[Cancellation](https://...)``)."""
_PATH = re.compile(r"\b((?:[A-Za-z_]\w*::)+)([A-Za-z_]\w*)")
"""A Rust path: ``Type::member`` (any number of leading segments)."""
_DOTTED = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)`")
"""A dotted name in backticks: ``session.compaction`` (the wire's path to a property)."""
_WORD = re.compile(r"-?\d+|[A-Za-z_][\w]*")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_KEYWORDS = frozenset({*NORMATIVE_WORDS, "NOT"})
_ARTICLES = frozenset({"a", "an", "the"})
MOVED_SIMILARITY = 0.8
"""How alike (difflib's ratio of their words) a dropped and an added sentence are to be one moved."""


def _key(word: str) -> str:
    """A word as a requirement reads it: a keyword as written, any other word lower case, ``_`` and a
    plural ending dropped."""
    if word in _KEYWORDS:
        return word
    key = word.lower().replace("_", "")
    if len(key) > 4 and key.endswith("ies"):
        return key[:-3] + "y"
    if len(key) > 3 and key.endswith("s") and not key.endswith("ss"):
        return key[:-1]
    return key


def _unlinked(sentence: str) -> str:
    return _LINK.sub(lambda m: m.group(1), sentence)


def qualifiers(texts: Iterable[str]) -> frozenset[str]:
    """The words of the types that Rust paths and dotted names in ``texts`` qualify a member with."""
    found: set[str] = set()
    for text in texts:
        plain = _unlinked(text)
        prefixes = [m.group(1) for m in _PATH.finditer(plain)]
        prefixes += [m.group(1).rpartition(".")[0] for m in _DOTTED.finditer(plain)]
        for prefix in prefixes:
            for segment in re.split(r"::|\.", prefix):
                found |= {_key(w) for w in _CAMEL.findall(segment)} | {_key(segment)}
    return frozenset(found - {""})


def words(text: str, qualifier: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The words of a sentence or clause as a requirement reads them (see the module's docstring)."""
    plain = _unlinked(text)
    plain = _PATH.sub(lambda m: m.group(2), plain)
    plain = _DOTTED.sub(lambda m: m.group(1).rpartition(".")[2], plain)
    keys = (_key(w) for w in _WORD.findall(plain))
    return tuple(k for k in keys if k not in _ARTICLES and k not in qualifier)


@functools.lru_cache(maxsize=8192)
def _clauses(sentence: str, qualifier: frozenset[str]) -> tuple[tuple[str, ...], ...]:
    found = (words(part, qualifier) for part in sentence.split(";"))
    return tuple(c for c in found if c)


@functools.lru_cache(maxsize=8192)  # upstream copies one description into many places
def normative_edit(old_doc: str, new_doc: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(dropped, added)``: the requirement sentences of each description the other does not state.

    A sentence is stated by the other description when every clause of it is
    a clause of that description (any sentence of it: a clause split off into
    a sentence of its own is still there).
    """
    if old_doc == new_doc:
        return (), ()
    before, after = normative(old_doc), normative(new_doc)
    gone = [s for s in before if s not in after]  # the sentences not kept word for word
    came = [s for s in after if s not in before]
    if not gone and not came:
        return (), ()
    qualifier = qualifiers((*before, *after))
    dropped: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    if gone:
        new_clauses = {c for s in sentences(new_doc) for c in _clauses(s, qualifier)}
        dropped = tuple(s for s in gone if not set(_clauses(s, qualifier)) <= new_clauses)
    if came:
        old_clauses = {c for s in sentences(old_doc) for c in _clauses(s, qualifier)}
        added = tuple(s for s in came if not set(_clauses(s, qualifier)) <= old_clauses)
    return dropped, added


@functools.lru_cache(maxsize=4096)
def _similarity(old: str, new: str) -> float:
    qualifier = qualifiers((old, new))
    return difflib.SequenceMatcher(None, words(old, qualifier), words(new, qualifier), autojunk=False).ratio()


def _related(a: Path, b: Path) -> bool:
    """Two locations of the same type: a sentence moves between them (a field and its type...)."""
    return a != b and bool(a) and bool(b) and a[0] == b[0]


def _sentences(value: Payload | None) -> tuple[str, ...]:
    """The sentences a ``normative-text-changed`` row drops or adds."""
    return value.sentences if isinstance(value, Sentences) else ()


def pair_moved(changes: Sequence[Change]) -> list[Change]:
    """``changes`` with each sentence that moved between two related locations as one row.

    A sentence a ``normative-text-changed`` row drops is paired with the most
    alike sentence another row of a related location adds (at least
    :data:`MOVED_SIMILARITY`); both leave their rows (a row left with nothing
    is gone) and a ``normative-text-moved`` row at the new location takes them.
    """
    rows = [c for c in changes if c.rule.id == RuleId.NORMATIVE_TEXT_CHANGED]
    if len(rows) < 2:
        return list(changes)
    dropped = {i: list(_sentences(c.old)) for i, c in enumerate(rows)}
    added = {i: list(_sentences(c.new)) for i, c in enumerate(rows)}
    by_type: dict[object, list[int]] = {}  # the rows that add a sentence, by the location's type
    for j, target in enumerate(rows):
        if added[j] and target.path:
            by_type.setdefault(target.path[0], []).append(j)
    candidates: list[tuple[float, int, str, int, str]] = []
    for i, source in enumerate(rows):
        if not dropped[i] or not source.path:
            continue
        for j in by_type.get(source.path[0], ()):
            target = rows[j]
            if not _related(source.path, target.path) or source.stability != target.stability:
                continue
            for old in _sentences(source.old):
                for new in _sentences(target.new):
                    score = _similarity(old, new)
                    if score >= MOVED_SIMILARITY:
                        candidates.append((score, i, old, j, new))
    moved: list[Change] = []
    for _, i, old, j, new in sorted(candidates, key=lambda c: -c[0]):
        if old in dropped[i] and new in added[j]:
            dropped[i].remove(old)
            added[j].remove(new)
            source, target = rows[i], rows[j]
            moved.append(
                dataclasses.replace(
                    target,
                    rule=RULES[RuleId.NORMATIVE_TEXT_MOVED],
                    old=MovedSentence(source.path, old),
                    new=Sentence(new),
                )
            )
    if not moved:
        return list(changes)
    out: list[Change] = []
    index = {id(c): i for i, c in enumerate(rows)}
    for change in changes:
        row = index.get(id(change))
        if row is None:
            out.append(change)
        elif dropped[row] or added[row]:
            edit = Sentences(tuple(dropped[row])), Sentences(tuple(added[row]))
            out.append(dataclasses.replace(change, old=edit[0], new=edit[1]))
    return [*out, *moved]
