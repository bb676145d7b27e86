"""Methods on the wire (added, removed, moved to the other side, params and result) and in Python.

The Python layer compares the methods as the generated bindings have them
(:func:`codegen.api.methods.method_spec`): their names and keyword-only
signatures, on each handler class (``agent``, ``client``) that has them.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..api.methods import MethodSpec, method_spec
from ..schema.ir import ApiSurface, Method, Ref
from .compare import compare_expr
from .context import Context
from .model import Change
from .rules import RuleId
from .senders import callers_of, handlers_of


def compare_methods(ctx: Context) -> Iterator[Change]:
    """Every method, matched by wire name and kind, then by the side that handles it."""

    def index(surface: ApiSurface) -> dict[tuple[str, str], dict[str, Method]]:
        out: dict[tuple[str, str], dict[str, Method]] = {}
        for m in surface.methods:
            out.setdefault((m.wire_name, m.kind), {})[m.side] = m
        return out

    # the methods as the generated bindings have them: their Python names and parameters
    old_specs = {m: method_spec(ctx.old, m) for m in ctx.old.methods}
    new_specs = {m: method_spec(ctx.new, m) for m in ctx.new.methods}
    before, after = index(ctx.old), index(ctx.new)
    for key in sorted(before.keys() | after.keys()):
        olds, news = before.get(key, {}), after.get(key, {})
        if len(olds) == 1 and len(news) == 1 and olds.keys() != news.keys():
            (old_m,), (new_m,) = olds.values(), news.values()
            callers = set(callers_of(old_m)) | set(callers_of(new_m))
            detail = f"handled by the {old_m.side} -> by the {new_m.side}"
            yield ctx.change(RuleId.METHOD_MOVED_SIDE, method_subject(new_m), detail, callers, None)
            now = python_subjects(new_specs[new_m])
            for python in python_subjects(old_specs[old_m]):
                if python not in now:
                    yield ctx.change(RuleId.PYTHON_METHOD_REMOVED, python, detail, (), None)
            yield from compare_method(ctx, old_specs[old_m], new_specs[new_m])
            continue
        for side, old_m in olds.items():
            if side not in news:
                yield ctx.change(RuleId.METHOD_REMOVED, method_subject(old_m), "", callers_of(old_m), None)
                for python in python_subjects(old_specs[old_m]):
                    yield ctx.change(RuleId.PYTHON_METHOD_REMOVED, python, "", (), None)
            else:
                yield from compare_method(ctx, old_specs[old_m], new_specs[news[side]])
        for side, new_m in news.items():
            if side not in olds:
                yield ctx.change(RuleId.METHOD_ADDED, method_subject(new_m), "", callers_of(new_m), None)


def method_subject(m: Method) -> str:
    return f"{m.kind} {m.wire_name} (handled by the {m.side})"


def python_subjects(spec: MethodSpec) -> list[str]:
    """``<side>.<python name>`` for each handler class that has the method (both for the protocol's)."""
    return [f"{side}.{spec.name}" for side in handlers_of(spec.method)]


def compare_method(ctx: Context, old_spec: MethodSpec, new_spec: MethodSpec) -> Iterator[Change]:
    """One method handled by the same side in both releases (or moved), on the wire and in Python."""
    old, new = old_spec.method, new_spec.method
    subject = method_subject(new)
    callers = set(callers_of(old)) | set(callers_of(new))
    if old.unstable != new.unstable:
        rule_id = RuleId.METHOD_BECAME_UNSTABLE if new.unstable else RuleId.METHOD_BECAME_STABLE
        yield ctx.change(rule_id, subject, "", callers, None)
    for label, before, after in (("params", old.params, new.params), ("result", old.result, new.result)):
        if before is None or after is None:
            if before != after:
                yield ctx.change(
                    RuleId.TYPE_CHANGED, f"{subject} {label}", f"{before} -> {after}", callers, None
                )
        elif ctx.renames.get(before, before) != after:
            senders = callers if label == "params" else set(handlers_of(new))
            yield from compare_expr(
                ctx, Ref(before), Ref(after), f"{subject} {label}", frozenset(senders), None
            )
    for python in python_subjects(new_spec):
        if old_spec.name != new_spec.name:
            detail = f"{old_spec.name} -> {new_spec.name}"
            yield ctx.change(RuleId.PYTHON_METHOD_RENAMED, python, detail, (), None)
        yield from compare_signature(ctx, old_spec, new_spec, python)


def compare_signature(ctx: Context, old: MethodSpec, new: MethodSpec, subject: str) -> Iterator[Change]:
    before = signature(ctx.old, old)
    after = signature(ctx.new, new)
    for wire, (py, required) in before.items():
        if wire not in after:
            yield ctx.change(RuleId.PYTHON_METHOD_ARGUMENT_REMOVED, f"{subject}({py})", "", (), None)
            continue
        new_py, new_required = after[wire]
        if py != new_py:
            yield ctx.change(
                RuleId.PYTHON_METHOD_ARGUMENT_RENAMED, f"{subject}({new_py})", f"{py} -> {new_py}", (), None
            )
        if new_required and not required:
            yield ctx.change(RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED, f"{subject}({new_py})", "", (), None)
    for wire, (py, required) in after.items():
        if wire not in before:
            rule_id = (
                RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED if required else RuleId.PYTHON_METHOD_ARGUMENT_ADDED
            )
            yield ctx.change(rule_id, f"{subject}({py})", "", (), None)


def signature(surface: ApiSurface, spec: MethodSpec) -> dict[str, tuple[str, bool]]:
    """The keyword-only arguments of a method's Python binding: wire name -> (python name, required).

    They are the bindings' own (:func:`codegen.api.methods.method_spec`): the
    params' fields but ``_meta``, for a union those of all its branches; an
    argument without a default is required.
    """
    classes = surface.classes_of(Ref(spec.method.params))
    wire = {f.py_name: f.wire_name for name in classes for f in surface.all_fields(name)}
    return {wire[p.name]: (p.name, p.default is None) for p in spec.params}
