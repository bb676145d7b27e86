"""``acp-codegen lock``: record a new release's sha256 sums in the lock."""

from __future__ import annotations

import argparse

from rich.console import Console

from ...errors import CodegenError
from ...schema.load import add_to_lock, protocol_major
from ..common import Command, source_of, writable_store
from ..options import force_option


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", metavar="RELEASE")
    force_option(p, "lock")


def run(args: argparse.Namespace, console: Console) -> int:
    source = writable_store(source_of(args), "lock")
    protocol_major(args.release)  # a name that says no protocol major is refused first, with the pattern
    folder = source.find_folder(args.release)
    if folder is None:
        looked = ", ".join(f"{folder}/" for folder in source.folders(args.release))
        raise CodegenError(
            f"release {args.release!r} is in no schema store: none of {looked} holds schema.json; "
            "a store keeps a release's four files in v<major>/<release>/ (schemas/README.md), "
            "or fetch them first"
        )
    add_to_lock(args.release, folder, source.lock.path, force=args.force)
    console.print(f"recorded {args.release} from {folder} in {source.lock.path}", highlight=False)
    return 0


COMMAND = Command(
    "lock",
    help="record a new release's sha256 sums in the lock",
    description="Add a release found in a schema store (v<major>/<release>/ with all four files) to "
    "the lock: the --schemas folder's lock.json if --schemas is given, else the bundled lock. Each "
    "schema file must be a JSON Schema object with $defs, each meta file a JSON object. A release's "
    "name starts with its protocol major version (2.0.0-alpha.9, or v2-<package>-<version>).",
    arguments=arguments,
    run=run,
)
