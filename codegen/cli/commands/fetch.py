"""``acp-codegen fetch``: import releases into the schema store (the only command that uses the network)."""

from __future__ import annotations

import argparse

from rich.console import Console

from ...errors import CodegenError
from ...schema.load import fetch_release
from ..common import Command, source_of, writable_store
from ..options import force_option


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "release",
        nargs="?",
        metavar="RELEASE",
        help="a locked release (optional with --from npm:...: then every release the package ships)",
    )
    p.add_argument(
        "--from",
        dest="origin",
        default=None,
        metavar="ORIGIN",
        help="a folder or base URL laid out as v<major>/<release>/<file>, or npm:PACKAGE@VERSION "
        "(default: where the lock says the release came from)",
    )
    force_option(p, "fetch")


def run(args: argparse.Namespace, console: Console) -> int:
    from ...schema import npm

    source = writable_store(source_of(args, creating=True), "fetch")
    if npm.is_npm(args.origin):
        locked = None  # RELEASE may name one release the package ships, locked or not
    elif args.release is None:
        raise CodegenError(
            "fetch needs RELEASE, or --from npm:PACKAGE@VERSION to import a package's releases"
        )
    else:
        locked = source.check_locked(args.release)
    origin = args.origin if locked is None or locked.npm is None or args.origin else locked.npm.spec
    if npm.is_npm(origin):
        fetched, notices = npm.fetch_npm(
            origin, source.lock, source.target, only=args.release, force=args.force
        )
        for notice in notices:
            console.print(f"notice: {notice}", highlight=False)
        for item in fetched:
            what = {
                "locked": f"new, locked in {source.lock.path}",
                "identical": f"{item.version} ships the same content as the locked release {item.release}",
                "verified": "every sha256 matches the lock",
                "tag": f"{item.version} ships the same schema files as the tag release {item.release}, "
                "whose meta tables are upstream's; nothing written",
            }[item.status]
            where = f"; files in {item.folder}" if item.folder is not None else ""
            console.print(f"{item.release}: {what}{where}", highlight=False)
            if item.folder is not None:
                print(item.release)
        return 0
    assert locked is not None
    target = fetch_release(locked, args.origin, source.target, force=args.force)
    console.print(
        f"fetched {locked.name} into {target} (all {len(locked.files)} sha256 sums match the lock)",
        highlight=False,
    )
    print(locked.name)
    return 0


COMMAND = Command(
    "fetch",
    help="import releases into the schema store (the only command that uses the network)",
    description="Copy or download the four files of a locked release into the schema store "
    "(--schemas DIR, else the bundled schemas/), refusing any whose sha256 differs from the lock; "
    "or, with --from npm:PACKAGE@VERSION, import every protocol major version that version of the "
    "TypeScript SDK package ships (schema/v<major>/), through the machine's npm and its "
    "configuration. npm ships no meta tables: they are derived from the schema's x-method and "
    "x-side. New content is locked as v<major>-<package>-<version> (v2-sdk-2.3.0); content "
    "equal to a locked release is written under that release's name. Prints each release written.",
    arguments=arguments,
    run=run,
)
