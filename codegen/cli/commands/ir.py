"""``acp-codegen ir``: print the intermediate representation of a release."""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console

from ..common import Command, source_of
from ..options import strict_option


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", metavar="RELEASE")
    p.add_argument("--unstable", action="store_true", help="the unstable schema instead of the stable one")
    p.add_argument("--json", action="store_true", help="the whole IR as JSON")
    p.add_argument("--verbose", "-v", action="store_true", help="list every object type too")
    strict_option(p)


def run(args: argparse.Namespace, console: Console) -> int:
    from ...schema.builder import build_release
    from ...schema.ir import ObjectType, UnionType, to_json

    stable, unstable = build_release(source_of(args).load(args.release))
    surface = unstable if args.unstable else stable
    if args.json:
        json.dump(to_json(surface), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    console.print(
        f"ACP {surface.release} ({surface.stability}), protocol version {surface.protocol_version}: "
        f"{len(surface.types)} types, {len(surface.methods)} methods",
        highlight=False,
    )
    for method in surface.methods:
        result = f" -> {method.result}" if method.result else ""
        flag = " [unstable]" if method.unstable else ""
        console.print(
            f"  {method.side:8} {method.kind:12} {method.wire_name}({method.params}){result}{flag}",
            highlight=False,
        )
    for type_ in surface.types.values():
        if isinstance(type_, UnionType) and type_.tagged:
            state = "open" if type_.open else "closed"
            console.print(
                f"  union {type_.name} on {type_.tag_wire_name!r} ({state}, {len(type_.variants)} variants)",
                highlight=False,
            )
        elif isinstance(type_, ObjectType) and args.verbose:
            console.print(f"  object {type_.name} ({len(type_.fields)} fields)", highlight=False)
    return 0


COMMAND = Command(
    "ir",
    help="print the intermediate representation of a release",
    description="Print the IR that every emitter reads.",
    arguments=arguments,
    run=run,
)
