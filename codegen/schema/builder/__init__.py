"""Build the IR (:mod:`codegen.schema.ir`) from one schema file and its meta table.

The builder knows the few shapes upstream's generator emits and nothing about
any particular release.  It is split along the schema's seams:

* :mod:`.node`: a JSON value of the schema with its pointer (:class:`~.node.Node`);
* :mod:`.context`: the state every part shares (documents, names, stability);
* :mod:`.types`: ``$defs`` entries, objects, fields, enums, aliases, type expressions;
* :mod:`.unions`: unions of objects, their tags, catch-alls and nesting;
* :mod:`.methods`: the JSON-RPC methods, from the message envelopes at the root.
"""

from __future__ import annotations

from typing import assert_never

from ...errors import CodegenError
from ..ir import AliasType, ApiSurface, EnumType, ObjectType, Stability, UnionType, find_cycle, references_of
from ..load import ReleaseFiles, SchemaDocument
from .context import BuildContext
from .methods import MethodBuilder
from .node import Pointer
from .types import TypeBuilder
from .unions import UnionBuilder

__all__ = ["build_release", "build_surface"]


def build_release(files: ReleaseFiles) -> tuple[ApiSurface, ApiSurface]:
    """The stable and the unstable surface of one release."""
    stable = build_surface(files.schema(False), files.meta(False), "stable")
    unstable = build_surface(files.schema(True), files.meta(True), "unstable", baseline=stable)
    return stable, unstable


def build_surface(
    schema: SchemaDocument,
    meta: SchemaDocument,
    stability: Stability,
    baseline: ApiSurface | None = None,
) -> ApiSurface:
    """Build one surface.  ``baseline`` (the stable surface) marks what is unstable."""
    try:
        return _build(BuildContext(schema, meta, stability, baseline))
    except RecursionError:
        raise CodegenError("schema nests too deeply to be typed", file=schema.path) from None


def _build(ctx: BuildContext) -> ApiSurface:
    types = TypeBuilder(ctx, UnionBuilder)
    types.build_all()
    _check_alias_cycles(ctx)
    method_builder = MethodBuilder(ctx)
    methods, batches, extensions = method_builder.build_methods()
    envelopes = method_builder.envelope_senders()
    message_fields = method_builder.message_fields(types)
    meta = ctx.meta
    version = meta.data.get("version") if isinstance(meta.data, dict) else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise CodegenError("meta table has no integer 'version'", file=meta.path, pointer="/version")
    return ApiSurface(
        release=ctx.doc.release,
        stability=ctx.stability,
        schema_file=ctx.doc.file_name,
        schema_sha256=ctx.doc.sha256,
        meta_file=meta.file_name,
        meta_sha256=meta.sha256,
        protocol_version=version,
        types={name: ctx.types[name] for name in sorted(ctx.types)},
        methods=methods,
        batches=batches,
        extension_types=extensions,
        envelopes=envelopes,
        message_fields=message_fields,
    )


def _check_alias_cycles(ctx: BuildContext) -> None:
    """Aliases, enums and unions are evaluated at import time: they must not loop."""
    edges: dict[str, set[str]] = {}
    for type_ in ctx.types.values():
        match type_:
            case AliasType() | UnionType():
                edges[type_.name] = references_of(type_)
            case ObjectType() | EnumType():
                pass  # a class refers to others lazily, an enum to none
            case _:
                assert_never(type_)
    cycle = find_cycle(edges)
    if cycle is not None:
        chain = " -> ".join(cycle)
        raise ctx.error(f"$ref cycle cannot be typed: {chain}", Pointer.parse(ctx.types[cycle[0]].pointer))
