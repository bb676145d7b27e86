"""A witness under a lenient carrier: a whole message both sides accept, which the receiver reads otherwise.

Where the receiver's models read a place leniently (a list that skips its
invalid items, a field read as its default when its value is invalid), a
message its strict models would refuse there is accepted as a whole, and the
value is lost: the item is dropped, the field replaced.  The search's refusal
cannot show such a change, but the receiver's own reading can: the message is
validated by the receiver's models and dumped back to JSON (by alias), and the
dump is compared with what was sent (:func:`losses`).  A lost value is a
witness of a change when it is at the change's anchor (:mod:`.walk`): the place
itself (a field of the type the change is about, read as its default), or the
value as the receiver's model of its type refuses it alone (an item dropped
because it lacks the field the change made required).

Nothing here names a release or a type; :meth:`~.search.Pair.reading` supplies
the two sides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..diff.path import ABSENT
from ..diff.reading import LenientRead, Reading
from ..schema.ir import ApiSurface, NamedType
from .walk import Anchor, Located, at, places

__all__ = ["losses", "lost_at"]

Path = tuple[str | int, ...]


def losses(sent: Any, read: Any, path: Path = ()) -> Iterator[LenientRead]:
    """Every value of ``sent`` that ``read`` (the receiver's models' dump of it) does not hold: an item a
    list lost, a key an object lost (``null`` aside: a dump may leave out what is ``null``), a value
    read as another.  Values the receiver adds (defaults of omitted fields) are not losses."""
    if isinstance(sent, dict):
        if not isinstance(read, dict):
            yield LenientRead(Reading.REPLACED, path, read)
            return
        for key, value in sent.items():
            if key in read:
                yield from losses(value, read[key], (*path, key))
            elif value is not None:
                yield LenientRead(Reading.DROPPED, (*path, key))
        return
    if isinstance(sent, list):
        if not isinstance(read, list):
            yield LenientRead(Reading.REPLACED, path, read)
            return
        spare = len(sent) - len(read)  # items the receiver left out, matched in order
        j = 0
        for i, item in enumerate(sent):
            faithful = j < len(read) and not any(losses(item, read[j]))
            if spare > 0 and not faithful:
                spare -= 1
                yield LenientRead(Reading.DROPPED, (*path, i))
                continue
            if j < len(read):
                yield from losses(item, read[j], (*path, i))
            j += 1
        return
    if sent != read or (type(sent) is not type(read) and not _same_number(sent, read)):
        yield LenientRead(Reading.REPLACED, path, read)


def _same_number(a: Any, b: Any) -> bool:
    numbers = (int, float)
    return isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and a == b


def value_at(message: Any, path: Path) -> Any:
    """The value at ``path`` in ``message`` (:data:`ABSENT` if it is not there)."""
    current = message
    for step in path:
        in_object = isinstance(current, dict) and isinstance(step, str) and step in current
        in_array = isinstance(current, list) and isinstance(step, int) and 0 <= step < len(current)
        if not (in_object or in_array):
            return ABSENT
        current = current[step]
    return current


def lost_at(
    surface: ApiSurface,
    root: NamedType,
    sent: Any,
    read: Any,
    anchor: Anchor,
    refused: Callable[[NamedType, Any], tuple[Located, ...]],
) -> tuple[LenientRead, str] | None:
    """The first value of ``sent`` (a message of ``root``, on ``surface``, the sending side) that the
    receiver's reading ``read`` loses at ``anchor``, and the error that says why (``None``: none).

    A loss is at the anchor when its place is (:func:`~.walk.at`, on the way from ``root``), or when
    the receiver's model of a named type the lost value is, given that value alone, refuses it at the
    anchor (``refused(named, value)``: its located errors, none when it accepts the value).
    """
    for lost in losses(sent, read):
        value = value_at(sent, lost.at)
        found = places(surface, root, sent, list(lost.at), None)
        if at(anchor, found):
            how = "dropped" if lost.how is Reading.DROPPED else f"read as {_json(lost.read)}"
            return lost, f"{lost.where}: {how}"
        for place in sorted(found, key=repr):
            named = surface.types.get(place.type)
            if not place.end or place.field is not None or named is None:
                continue
            hit = next((e for e in refused(named, value) if at(anchor, e.places, e.type)), None)
            if hit is not None:
                where = ".".join(str(step) for step in (*lost.at, *hit.loc)) or "(root)"
                return lost, f"{where}: {hit.message}"[:200]
    return None


def _json(value: Any) -> str:
    import json

    return "omitted" if value is ABSENT else json.dumps(value, ensure_ascii=False, sort_keys=True)
