"""The wire and Python comparison of two surfaces, as generators of :class:`~codegen.diff.model.Change`.

Every change is reported once, at its **schema location**, named as the
schema names it: a ``$defs`` type, a field of it, a member of a union (by its
tag, or untagged by its type or title), a field written in that member, the
items or values of a field's type, a constraint keyword, a method, a side, a
root message kind.  Types are matched by name (through the renames,
:mod:`codegen.diff.renames`); objects field by field, tagged unions variant by tag value
(never by position), untagged unions member by member (by the member's type
without its constraints, so that a member's own constraints are compared),
enums value by value, aliases and fields by their type expressions; methods
by wire name.

One module per construct, each importing only those above it:

* :mod:`.base`: where a comparison is (:class:`.base.At`), what every module
  shares, and the :class:`.base.Walk` the modules below recurse through;
* :mod:`.constraints`: constraint keywords (bounds, ``pattern``, ``format``);
* :mod:`.python`: Python names (a class that became a union, attributes,
  method names and keyword-only signatures);
* :mod:`.members`: members of unions and enums that arrive or leave, open or closed;
* :mod:`.fields`: the fields of an object, presence, defaults, leniency;
* :mod:`.enums` and :mod:`.unions`;
* :mod:`.named`: named types and type expressions, compared by shape (the walk);
* :mod:`.envelope`: sides and root message kinds (envelopes, batches);
* :mod:`.methods`: methods on the wire and their Python bindings.

The classes and unions the builder derives from a union's members (their
:attr:`~codegen.schema.ir.ObjectType.origin` is set) are not schema
locations: they are compared where their member is, inside the union, and
only for what the member itself writes (the union's shared fields are
compared once, at the union; what a member builds on with a ``$ref`` is
compared at that type).  A derived union that repeats another union
(:attr:`~codegen.schema.ir.UnionType.mirrors`) is that union: its members
are compared there, once.

Two named types in the same place (a field whose ``$ref`` moved to another
type, a method's result replaced) are compared by shape, as the wire sees
them: the differences are reported at that place, and nothing when the
shapes are equal; the Python class changing is a ``python-class-replaced``.
Where the alternatives of a type expression change, the type is *widened*
when every old value is still taken, *narrowed* when every new value was
taken before, and *changed* otherwise.  A member that takes any JSON value
(``{}`` in the schema, ``Scalar("any")`` in the IR) makes its union open; it
is not a variant.  A field, class or attribute that changes its Python name
is reported here too, beside the wire change it comes with.
"""

from __future__ import annotations

from .methods import compare_methods
from .named import compare_types

__all__ = ["compare_methods", "compare_types"]
