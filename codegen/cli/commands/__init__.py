"""The commands of ``acp-codegen``, one module each: its arguments beside what it does.

A new command is a new module here with a ``COMMAND`` (:class:`codegen.cli.common.Command`),
named in :data:`COMMANDS`, whose order is the order ``acp-codegen --help`` lists them in.
"""

from __future__ import annotations

from ..common import Command
from . import bump, diff, fetch, generate, ir, lock, releases, reports, rules, upgrade, vendor

COMMANDS: tuple[Command, ...] = (
    generate.COMMAND,
    fetch.COMMAND,
    lock.COMMAND,
    ir.COMMAND,
    diff.COMMAND,
    rules.COMMAND,
    reports.COMMAND,
    releases.COMMAND,
    vendor.COMMAND,
    upgrade.COMMAND,
    bump.COMMAND,
)
