"""The options more than one command takes, each added by one function so that its help reads the same."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..schema.load import DEFAULT_LOCK, default_cache_dir


def global_options(parser: argparse.ArgumentParser, cache: object) -> None:
    """``--lock``, ``--schemas`` and ``--cache``, before the command or after it.

    A command's parser gets them with ``argparse.SUPPRESS`` as ``cache``: left
    unset unless given there, so they do not hide the ones given before it.
    """
    unset = argparse.SUPPRESS if cache is argparse.SUPPRESS else None
    parser.add_argument(
        "--lock",
        type=Path,
        default=unset,
        help="use this release lock alone (default: the bundled schemas/lock.json, "
        "with the --schemas folder's lock.json over it)",
    )
    parser.add_argument(
        "--schemas",
        type=Path,
        default=unset,
        metavar="DIR",
        help="a schema store searched before the bundled one: v<major>/<release>/ files and an optional "
        "lock.json that adds or overrides releases; fetch writes here "
        f"(default: $ACP_SCHEMAS; the bundled store is {DEFAULT_LOCK.parent})",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=cache,
        help="where the build cache lives, and the evidence search's generated messages and generator "
        f"files (default: {default_cache_dir()})",
    )


def force_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--force",
        action="store_true",
        help=f"replace what is in the way at a path {what} writes and that acp-codegen did not write "
        "(refused otherwise); nothing else is touched",
    )


def strict_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strict",
        action="store_true",
        help="fail (exit 2) on anything the release uses that codegen/knowledge.toml does not cover, "
        "instead of warning and applying the documented default",
    )


def out_help(default: Path | None) -> str:
    where = (
        f"default: {default}" if default is not None else "required: an installed acp-codegen has no default"
    )
    return f"the output folder, created if absent; never a file ({where})"


def min_severity_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--min-severity",
        choices=("breaking", "warning", "info"),
        default="info",
        help="leave the changes below this severity out of the API report, in every format (the version "
        "step and the exit status still weigh them all) (default: %(default)s, every change)",
    )


def rules_url_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rules-url",
        default=None,
        metavar="URL",
        help="the public page of the rule catalog that rule links point to (default: $ACP_CODEGEN_RULES_URL; "
        "without one, each report explains its rules inline)",
    )


def evidence_options(parser: argparse.ArgumentParser) -> None:
    """``--no-evidence`` and ``--evidence-examples``, of ``diff`` and ``bump``."""
    parser.add_argument(
        "--no-evidence",
        dest="evidence",
        action="store_false",
        help="skip the search for evidence: by default, for every breaking or warning change on the wire, "
        "messages generated from one schema are tried on the other release's generated models, and the "
        "smallest refused one is shown (needs the 'evidence' extra: hypothesis-jsonschema)",
    )
    parser.add_argument(
        "--evidence-examples",
        type=int,
        default=25,  # codegen.evidence.DEFAULT_EXAMPLES (not imported: the evidence stage loads lazily)
        metavar="N",
        help="messages generated per schema type and direction in the search for evidence "
        "(default: %(default)s)",
    )


def codemod_operands(parser: argparse.ArgumentParser, name: str, optional: bool = False) -> None:
    """The vendored package and the code to rewrite, of ``upgrade`` and ``bump``."""
    parser.add_argument(
        "path",
        nargs="?" if optional else None,
        type=Path,
        metavar=name,
        help="the vendored package (the folder with VENDORED.json)",
    )
    parser.add_argument(
        "sources",
        nargs="*",
        type=Path,
        metavar="SOURCES",
        help="files and folders of code to rewrite (default: the project holding the vendored package, "
        "the nearest folder above it with a .git or a pyproject.toml, never its siblings; the package "
        "itself, nested git repositories and files importing another copy of the package are skipped)",
    )


def path_prefix_option(parser: argparse.ArgumentParser, holding: str = "the current folder") -> None:
    """``--path-prefix``; paths are named from the git repository holding ``holding``."""
    parser.add_argument(
        "--path-prefix",
        default="",
        metavar="PREFIX",
        help="github and sarif: put PREFIX before each file's path, which is relative to the root of the git "
        f"repository holding {holding} (the nearest folder above it with a .git; without one, the current "
        "folder), as GitHub names files; for a checkout in a subfolder of the workspace",
    )


def write_option(parser: argparse.ArgumentParser) -> None:
    """``--write`` of ``upgrade`` and ``bump``: without it, a dry run."""
    parser.add_argument(
        "--write",
        action="store_true",
        help="apply the rewrites (each file replaced atomically) and swap the vendored package",
    )


def report_option(parser: argparse.ArgumentParser) -> None:
    """``--report`` of ``upgrade`` and ``bump``."""
    parser.add_argument(
        "--report",
        action="store_true",
        help="print the whole API diff after the findings, the rewrites and its one-line summary",
    )
