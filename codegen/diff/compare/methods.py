"""Methods on the wire (added, removed, moved to the other side, params and result) and in Python.

The Python layer compares the methods as the generated bindings have them
(:func:`codegen.api.methods.method_spec`): their names and keyword-only
signatures, on each handler class (``agent``, ``client``) that has them.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...api.methods import MethodSpec, method_spec
from ...schema.ir import ApiSurface, Method, Ref
from ..context import Context
from ..model import Change, HandlerPart, MessagePart, MethodPart, Path
from ..payload import Handler, MethodKindValue, Name
from ..rules import Flow, RuleId, Traffic
from ..senders import handler_sides, method_flow
from .base import At, normative_change
from .envelope import compare_envelopes, compare_sides
from .named import SHAPES, compare_expr
from .python import compare_signature, python_paths


def compare_methods(ctx: Context) -> Iterator[Change]:
    """Every side, root message kind and method.

    Methods are matched by wire name: the same kind handled by the same side
    is one method; one handled by the other side now moved; a notification
    that became a request (or the reverse) changed its kind.
    """
    yield from compare_sides(ctx)
    yield from compare_envelopes(ctx)

    def index(surface: ApiSurface) -> dict[str, dict[tuple[str, str], Method]]:
        out: dict[str, dict[tuple[str, str], Method]] = {}
        for m in surface.methods:
            out.setdefault(m.wire_name, {})[(m.kind, m.side)] = m
        return out

    # the methods as the generated bindings have them: their Python names and parameters
    old_specs = {m: method_spec(ctx.old, m) for m in ctx.old.methods}
    new_specs = {m: method_spec(ctx.new, m) for m in ctx.new.methods}
    before, after = index(ctx.old), index(ctx.new)
    for wire in sorted(before.keys() | after.keys()):
        olds, news = dict(before.get(wire, {})), dict(after.get(wire, {}))
        for key in sorted(olds.keys() & news.keys()):
            yield from compare_method(ctx, old_specs[olds.pop(key)], new_specs[news.pop(key)])
        if len(olds) == 1 and len(news) == 1:
            (old_m,), (new_m,) = olds.values(), news.values()
            yield from moved(ctx, old_specs[old_m], new_specs[new_m])
            continue
        for old_m in olds.values():
            rule_id = RuleId.METHOD_REMOVED if old_m.kind == "request" else RuleId.NOTIFICATION_REMOVED
            yield ctx.change(rule_id, (method_part(old_m),), _gone(ctx, old_m))
            for python in python_paths(old_specs[old_m], ctx.old_sides):
                yield ctx.change(RuleId.PYTHON_METHOD_REMOVED, python)
        for new_m in news.values():
            rule_id = RuleId.METHOD_ADDED if new_m.kind == "request" else RuleId.NOTIFICATION_ADDED
            yield ctx.change(rule_id, (method_part(new_m),), Traffic(new=method_flow(new_m, ctx.new_peers)))


def _gone(ctx: Context, old: Method) -> Traffic:
    """The traffic of a method that is gone (or moved): its old callers and handlers, as far as the new
    release has them.

    Old callers still call it, and the peers in the handlers' roles answer them in the new release.
    """
    flow = method_flow(old, ctx.old_peers)
    present = set(ctx.new_peers.names)
    return Traffic(flow, Flow(flow.senders & present, flow.receivers & present))


def moved(ctx: Context, old_spec: MethodSpec, new_spec: MethodSpec) -> Iterator[Change]:
    """One method handled by the other side now, or of the other kind (a notification became a request)."""
    old_m, new_m = old_spec.method, new_spec.method
    traffic = _gone(ctx, old_m)  # what the old callers and handlers did is what breaks
    if old_m.kind != new_m.kind:
        yield ctx.change(
            RuleId.METHOD_KIND_CHANGED,
            (method_part(new_m),),
            traffic,
            old=MethodKindValue(old_m.kind),
            new=MethodKindValue(new_m.kind),
        )
    if old_m.side != new_m.side:
        was, now = old_m.side, new_m.side
        yield ctx.change(
            RuleId.METHOD_MOVED_SIDE, (method_part(new_m),), traffic, old=Handler(was), new=Handler(now)
        )
    # a handler class that keeps the method under another name has it renamed (compare_method): one row
    kept = handler_sides(new_m, ctx.new_sides)
    for side in handler_sides(old_m, ctx.old_sides):
        if side not in kept:
            python: Path = (HandlerPart(side, old_spec.name),)
            yield ctx.change(
                RuleId.PYTHON_METHOD_REMOVED, python, old=Handler(old_m.side), new=Handler(new_m.side)
            )
    yield from compare_method(ctx, old_spec, new_spec)


def method_part(m: Method) -> MethodPart:
    return MethodPart(m.wire_name, m.kind, m.side)


def compare_method(ctx: Context, old_spec: MethodSpec, new_spec: MethodSpec) -> Iterator[Change]:
    """One method handled by the same side in both releases (or moved), on the wire and in Python."""
    old, new = old_spec.method, new_spec.method
    here = method_part(new)
    traffic = Traffic(method_flow(old, ctx.old_peers), method_flow(new, ctx.new_peers))
    if old.unstable != new.unstable:
        rule_id = RuleId.METHOD_BECAME_UNSTABLE if new.unstable else RuleId.METHOD_BECAME_STABLE
        yield ctx.change(rule_id, (here,), traffic)
    yield from method_contract(ctx, old, new, traffic)
    for label, before, after in (("params", old.params, new.params), ("result", old.result, new.result)):
        path: Path = (here, MessagePart("params" if label == "params" else "result"))
        data = traffic if label == "params" else traffic.reversed
        if before is None or after is None:
            # a result that comes or goes with the method's kind is that change (method-kind-changed)
            if before != after and old.kind == new.kind:
                was, now = Name(before) if before else None, Name(after) if after else None
                yield ctx.change(RuleId.TYPE_CHANGED, path, data, old=was, new=now)
        elif ctx.renames.get(before, before) != after:
            constructed = label == "result"  # params are passed as the method's keyword arguments
            at = At(path, data, ctx.new.types.get(after), after, constructed, walk=SHAPES)
            yield from compare_expr(ctx, Ref(before), Ref(after), at)
    had = handler_sides(old, ctx.old_sides)  # a handler class new to the method renames nothing
    for side in handler_sides(new, ctx.new_sides):
        python: Path = (HandlerPart(side, new_spec.name),)
        if old_spec.name != new_spec.name and side in had:
            yield ctx.change(
                RuleId.PYTHON_METHOD_RENAMED, python, old=Name(old_spec.name), new=Name(new_spec.name)
            )
        yield from compare_signature(ctx, old_spec, new_spec, python)


def method_contract(ctx: Context, old: Method, new: Method, traffic: Traffic) -> Iterator[Change]:
    """The requirements a method's descriptions state: the ones the root message kinds write on the members
    that carry its params and its result (the params and result types' own are compared at those types)."""
    here = method_part(new)
    params = ctx.new.types.get(new.params)
    yield from normative_change(
        ctx, old.envelope_doc, new.envelope_doc, At((here,), traffic, params, walk=SHAPES)
    )
    result = ctx.new.types.get(new.result) if new.result else None
    at = At((here, MessagePart("result")), traffic.reversed, result, walk=SHAPES)
    yield from normative_change(ctx, old.result_envelope_doc, new.result_envelope_doc, at)
