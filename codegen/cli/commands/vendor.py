"""``acp-codegen vendor``: write one generated package into the user's tree, or check a vendored copy."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.console import Console

from ...errors import CodegenError
from ..common import EXIT_CHECK_FAILED, Command, source_of


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", nargs="?", metavar="RELEASE", help="a locked release (2.0.0-alpha.7)")
    p.add_argument("dir", nargs="?", type=Path, metavar="DIR", help="the folder to write the package into")
    p.add_argument("--unstable", action="store_true", help="the unstable schema instead of the stable one")
    p.add_argument(
        "--name",
        default="acp",
        metavar="PKG",
        help="the package's folder and import name (default: %(default)s, so imports survive upgrades)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="vendor over a copy with local edits, of another protocol major or stability, or into a "
        "folder acp-codegen did not write (the files of the package are replaced; others are kept)",
    )
    p.add_argument(
        "--transports",
        default=None,
        metavar="stdio[,http,ws]",
        help="the transports the copy carries: stdio (always: the connections, run_agent, the v1/v2 "
        "router), http (connect_http, needs httpx; asgi_app, an ASGI server) and ws (connect_websocket, "
        "needs websockets; asgi_app). Default: stdio for a new copy; a copy already there keeps its own. "
        "A name of a transport left out raises an ImportError naming the command that adds it",
    )
    p.add_argument(
        "--check",
        type=Path,
        default=None,
        metavar="PATH",
        help="write nothing; compare the vendored package at PATH with its manifest (exit 1 on any edit)",
    )


def run(args: argparse.Namespace, console: Console) -> int:
    from ...emit import transports
    from ...vendoring import manifest, vendoring

    def regenerate(found: manifest.Manifest) -> dict[str, str]:
        # the lock is read only when an edit is to be shown: a check needs no schemas otherwise
        return dict(vendoring.regenerate_from(source_of(args))(found))

    if args.check is not None:
        if args.release is not None or args.transports is not None:
            raise CodegenError(
                "--check takes the vendored package's path alone, not RELEASE, DIR or --transports"
            )
        report = vendoring.check(args.check, regenerate)
        for line in report.lines:
            print(line)
        found = report.manifest
        if report.clean:
            console.print(
                f"{report.folder} matches its manifest ({found.release}, {found.stability}, "
                f"{transports.option(found.transports)}, {len(found.files)} files).",
                highlight=False,
            )
            return 0
        console.print(
            f"[bold red]{report.folder} differs from its manifest[/] ({report.summary()}): "
            f"revert the edits, or drop them with `{_vendor_again(report.folder, found)}`.",
            highlight=False,
        )
        return EXIT_CHECK_FAILED
    if args.release is None or args.dir is None:
        raise CodegenError("vendor needs RELEASE and DIR (or --check PATH)")
    manifest.check_package_name(args.name)
    carried = None if args.transports is None else transports.parse(args.transports)
    files = source_of(args).load(args.release)
    try:
        done = vendoring.vendor(
            files,
            args.unstable,
            args.dir,
            args.name,
            force=args.force,
            regenerate=regenerate,
            carried=carried,
        )
    except vendoring.LocalEditsError as error:
        for line in error.report.lines:
            print(line)
        raise
    verb = "vendored" if done.written else "kept (already up to date)"
    console.print(
        f"{verb} ACP {done.manifest.release} ({done.manifest.stability}) as {done.folder} with "
        f"--transports {transports.option(done.manifest.transports)}: {len(done.manifest.files)} files; "
        f"`acp-codegen vendor --check {done.folder}` verifies it.",
        highlight=False,
    )
    return 0


def _vendor_again(folder: Path, found: Any) -> str:
    """The ``acp-codegen vendor`` command that writes the copy at ``folder`` again, over its edits."""
    from ...vendoring.source import vendor_command

    absolute = Path(os.path.abspath(folder))
    parent = str(absolute.parent) if folder.is_absolute() else os.path.relpath(absolute.parent)
    return vendor_command(found.release, found.unstable, absolute.name, parent, True, found.transports)


COMMAND = Command(
    "vendor",
    usage="%(prog)s RELEASE DIR [--unstable] [--name PKG] [--transports stdio[,http,ws]] [--force]\n"
    "       %(prog)s --check PATH",
    help="write one generated package into your tree, or check a vendored copy",
    description="Write the package of RELEASE into DIR/PKG (default DIR/acp) with a VENDORED.json "
    "manifest: the release, the sha256 of the schema it came from and of every file. The old copy "
    "is replaced in one step, never left half written. With --check, compare a vendored copy with "
    "its manifest instead and print every local edit. The copy carries the transports --transports "
    "names and the runtime they need: stdio alone leaves out the ASGI server and the HTTP and "
    "WebSocket clients, and needs nothing but pydantic to install and to type-check. Vendoring over "
    "a copy, upgrade and bump keep its transports.",
    epilog="Exit status: 0 written or clean, 1 --check found local edits, missing or extra files, "
    "2 bad input (no or invalid manifest, unknown release, a copy with local edits without --force).",
    arguments=arguments,
    run=run,
)
