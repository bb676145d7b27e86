"""``acp-codegen releases``: the locked releases, where each comes from, and which are identical."""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console

from ...schema.load import UPSTREAM_REPOSITORY
from ..common import Command, source_of


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: %(default)s)"
    )


def run(args: argparse.Namespace, console: Console) -> int:
    from ...schema.releases import release_table

    table = release_table(source_of(args))
    if args.format == "json":
        json.dump([row.to_json() for row in table], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    rows = [
        ("release", "protocol", "origin", "lock", "files", "same content as"),
        *(r.cells() for r in table),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[-1]]))
    print(f"git tags are of {UPSTREAM_REPOSITORY}; bundled: the lock and store acp-codegen carries.")
    return 0


COMMAND = Command(
    "releases",
    help="list the locked releases, where each comes from, and which are identical in content",
    description="List every locked release (the bundled lock, and the lock of --schemas DIR or --lock "
    "FILE over it): its protocol major, its origin (a git tag, or an npm package version and the later "
    "versions that ship the same content), which lock records it, the store folder that holds its "
    "files, and the other locked releases with the same schema files.",
    arguments=arguments,
    run=run,
)
