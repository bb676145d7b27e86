"""Python names: what code written against the generated bindings calls.

A generated name that stops being one class (it became a union, or the
reverse), an attribute's path, and a method's Python name and keyword-only
signature on each handler class (:func:`codegen.api.methods.method_spec`).
"""

from __future__ import annotations

from collections.abc import Iterator

from ...api.methods import MethodSpec
from ...schema.ir import AliasType, ApiSurface, NamedType, ObjectType, Ref, UnionType
from ..context import Context
from ..model import ArgumentPart, AttributePart, Change, HandlerPart, Path, TypePart
from ..payload import Name, Tag
from ..rules import RuleId
from ..senders import handler_sides
from .base import At


def python_kind(ctx: Context, old: NamedType, new: NamedType) -> Iterator[Change]:
    """A generated name that code could call to build a value and now cannot (a union of classes), or the
    reverse.

    A name is a class when it stands for one class (:func:`one_class`): an
    object type, or an alias or a one-member union of one, which the bindings
    name as that class (``AuthMethod = AuthMethodAgent``).
    """
    here: Path = (TypePart(new.name),)
    was_class, is_class = one_class(ctx.old, old), one_class(ctx.new, new)
    if was_class and not is_class and isinstance(new, UnionType):
        yield ctx.change(RuleId.PYTHON_CLASS_BECAME_UNION, here, where=new, new=Tag(new.tag_wire_name))
    elif is_class and not was_class and isinstance(old, UnionType):
        yield ctx.change(RuleId.PYTHON_UNION_BECAME_CLASS, here, where=new)


def one_class(surface: ApiSurface, named: NamedType, depth: int = 0) -> bool:
    """Whether a named type is one class in Python: an object type, or an alias or a union of just one
    member that is (a union of several members, or of a class and null, is not)."""
    match named:
        case ObjectType():
            return True
        case AliasType(target=Ref(name=name)) if depth < 32:
            return name in surface.types and one_class(surface, surface.types[name], depth + 1)
        case UnionType() if len(named.members) == 1 and not named.fields and depth < 32:
            (only,) = named.members
            found = surface.types.get(only.type.name) if isinstance(only.type, Ref) else None
            return found is not None and one_class(surface, found, depth + 1)
    return False


def attribute_path(at: At, py_name: str) -> Path:
    assert at.python is not None
    return (TypePart(at.python), AttributePart(py_name))


def python_paths(spec: MethodSpec, sides: tuple[str, ...]) -> list[Path]:
    """``<side>.<python name>`` for each handler class with the method (every peer's for protocol ones)."""
    return [(HandlerPart(side, spec.name),) for side in handler_sides(spec.method, sides)]


def compare_signature(ctx: Context, old: MethodSpec, new: MethodSpec, python: Path) -> Iterator[Change]:
    before = signature(ctx.old, old)
    after = signature(ctx.new, new)
    for wire, (py, required) in before.items():
        if wire not in after:
            yield ctx.change(RuleId.PYTHON_METHOD_ARGUMENT_REMOVED, (*python, ArgumentPart(py)))
            continue
        new_py, new_required = after[wire]
        if py != new_py:
            yield ctx.change(
                RuleId.PYTHON_METHOD_ARGUMENT_RENAMED,
                (*python, ArgumentPart(new_py)),
                old=Name(py),
                new=Name(new_py),
            )
        if new_required and not required:
            yield ctx.change(RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED, (*python, ArgumentPart(new_py)))
    for wire, (py, required) in after.items():
        if wire not in before:
            rule_id = (
                RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED if required else RuleId.PYTHON_METHOD_ARGUMENT_ADDED
            )
            yield ctx.change(rule_id, (*python, ArgumentPart(py)))


def signature(surface: ApiSurface, spec: MethodSpec) -> dict[str, tuple[str, bool]]:
    """The keyword-only arguments of a method's Python binding: wire name -> (python name, required).

    They are the bindings' own (:func:`codegen.api.methods.method_spec`): the
    params' fields but ``_meta``, for a union those of all its branches; an
    argument without a default is required.
    """
    classes = surface.classes_of(Ref(spec.method.params))
    wire = {f.py_name: f.wire_name for name in classes for f in surface.all_fields(name)}
    return {wire[p.name]: (p.name, p.default is None) for p in spec.params}
