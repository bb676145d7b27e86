"""Every requirement of the upstream ACP TCK's v2 registry, and how our tests judge it.

The ids, tiers and capability gates are facts taken from ``agentclientprotocol/acp-tck``,
``src/tck/v2/requirements.py`` (version 1314e0951863b03844fd530e0e14bd88843aabe7); the
wording of each ``what`` is ours.  A test judges a row by carrying ``@pytest.mark.tck("<id>")``
(``tests/tck/test_*.py``); a row no test judges says why in ``not_judged``.
``tests/tck/test_registry.py`` keeps the two in step, and ``python -m tests.tck.report`` prints
the table with each row's tests and their outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Tier = Literal["MANDATORY", "CAPABILITY", "ADVISORY", "INFORMATIONAL"]
TIERS: tuple[Tier, ...] = ("MANDATORY", "CAPABILITY", "ADVISORY", "INFORMATIONAL")

SESSION = "capabilities.session"


@dataclass(frozen=True)
class Row:
    id: str
    tier: Tier
    capability: str | None
    """The capability (or ``inferred:`` support) that makes the row apply, for ``CAPABILITY`` rows."""
    what: str
    needs: Literal["batches"] | None = None
    """A part of the schema the row is about: a release whose schema lacks it cannot be judged by it."""
    not_judged: str | None = None
    """Why no test judges the row, for the rows none does."""


def _rows(tier: Tier, capability: str | None, *rows: tuple[str, str] | tuple[str, str, str]) -> list[Row]:
    return [
        Row(row[0], tier, capability, row[1], not_judged=row[2] if len(row) > 2 else None) for row in rows
    ]


def _batch(tier: Tier, *rows: tuple[str, str] | tuple[str, str, str]) -> list[Row]:
    return [
        Row(r.id, r.tier, r.capability, r.what, needs="batches", not_judged=r.not_judged)
        for r in _rows(tier, None, *rows)
    ]


NOT_OBSERVABLE = "upstream records it and never judges it: no client can observe it on the wire"

ROWS: tuple[Row, ...] = (
    *_rows(
        "MANDATORY",
        None,
        ("ACP-INIT-001", "initialize gets a result, whatever version is negotiated"),
        ("ACP-INIT-201", "the negotiated version is the one asked for, or else the agent's latest"),
        ("ACP-INIT-003", "asking for 65535 still succeeds, with the agent's latest version (no echo)"),
        ("ACP-INIT-202", "asking for version 1 succeeds, answered with 1 or 2, never an error"),
        ("ACP-INIT-203", "the v2 initialize result names the agent: info.name and info.version"),
        ("ACP-INIT-204", "every capability marker of the result is an object or null, never a boolean"),
        ("ACP-SCHEMA-001", "what the agent writes during initialize (and a first turn) matches the schema"),
        ("ACP-TRANSPORT-201", "each stdout line is one JSON-RPC object or a non-empty array of them"),
        ("ACP-TRANSPORT-002", "stdout is UTF-8"),
        ("ACP-TRANSPORT-203", "one message per line: no newline inside a message, a batch on one line"),
        ("ACP-JSONRPC-001", "a response carries the request's id exactly, in a batch reply too"),
        ("ACP-JSONRPC-002", "a response has result or error, not both; an error has a code and a message"),
        ("ACP-JSONRPC-003", "a notification is never answered, in a batch neither"),
        ("ACP-AUTH-202", "no terminal auth method unless the client advertised capabilities.auth.terminal"),
        ("ACP-AUTH-206", "each auth method type is agent, terminal or begins with _"),
        ("ACP-AUTH-207", "a terminal auth method has string args and unique, well formed env entries"),
        ("ACP-EXT-001", "a request for a _-prefixed method gets a response"),
        ("ACP-BATCH-201", "an empty array gets one -32600 object with id null, not an array"),
    ),
    *_batch("MANDATORY", ("ACP-BATCH-202", "a batch of notifications gets no reply at all")),
    *_rows(
        "CAPABILITY",
        SESSION,
        ("ACP-SESSION-001", "session/new with an absolute cwd gives a non-empty sessionId"),
        ("ACP-SESSION-002", "two session/new give two sessionIds"),
        ("ACP-SESSION-203", "session/new takes mcpServers left out and mcpServers: [] alike"),
        ("ACP-PROMPT-201", "session/prompt answers with a non-empty messageId"),
        ("ACP-PROMPT-203", "the user message is reported with the messageId of the response"),
        ("ACP-PROMPT-205", "each update of a turn matches the schema and names the prompted session"),
        ("ACP-STATE-201", "a turn-ending idle follows a running of the same turn"),
        ("ACP-STATE-202", "after running, an idle comes"),
        ("ACP-STATE-203", "the idle that ends a turn has a defined or _-prefixed stopReason"),
        ("ACP-PERM-201", "a permission request is well formed and, once answered, the turn reaches idle"),
        ("ACP-CLIENTCAP-201", "no elicitation/create to a client that advertised no elicitation"),
        ("ACP-CLIENTCAP-202", "the agent calls only client and protocol methods (or _-prefixed ones)"),
        ("ACP-CANCEL-201", "session/cancel during work ends the turn with an idle stopReason cancelled"),
        ("ACP-CANCEL-202", "no further state_update after the cancelled idle"),
        ("ACP-CANCEL-203", "a cancelled turn is no error response and no other stop reason"),
        ("ACP-CANCEL-205", "session/cancel is never answered"),
        ("ACP-CANCEL-206", "session/cancel is taken with sessionId alone and with _meta"),
        ("ACP-CANCEL-207", "the stop reason of cancelled work is cancelled, no substitute"),
        ("ACP-CANCEL-208", "session/close during work cancels it as session/cancel does"),
        ("ACP-RESUME-201", "session/resume of a resumable session succeeds and matches the schema"),
        ("ACP-RESUME-202", "replayFrom start: the replay arrives before the response, nothing after it"),
        ("ACP-RESUME-203", "no replayFrom: no history is replayed"),
        ("ACP-RESUME-204", "a replayed user message keeps the messageId its prompt got"),
        ("ACP-RESUME-205", "a replayed chunk follows the whole-message update of its message"),
        ("ACP-LIST-201", "session/list with {} gives a sessions array matching the schema"),
        ("ACP-LIST-202", "session/list for a cwd no session has gives sessions: []"),
        ("ACP-LIST-203", "session/list for a cwd lists only sessions of that cwd"),
        ("ACP-LIST-204", "every listed cwd is absolute"),
        ("ACP-CLOSE-201", "session/close of an idle session gives an empty result"),
        ("ACP-CLOSE-202", "session/close during work ends it with an idle stopReason cancelled"),
        ("ACP-PATCH-201", "every message update and chunk carries a messageId"),
        ("ACP-PATCH-203", "two prompts get two messageIds"),
        ("ACP-PATCH-204", "every tool call update and tool call content chunk carries a toolCallId"),
        ("ACP-PATCH-205", "every plan update carries a planId", "the reference agent sends no plan_update"),
        (
            "ACP-PATCH-206",
            "a terminal's cwd is absolute and never changes",
            "the reference agent runs no terminal, so it sends no terminal_update",
        ),
        (
            "ACP-PATCH-207",
            "terminal output chunks are standalone base64",
            "the reference agent runs no terminal, so it sends no terminal output",
        ),
        ("ACP-ENUM-201", "tool call kind and status, plan priority and status: defined values or _-prefixed"),
    ),
    *_rows(
        "CAPABILITY",
        "capabilities.session.prompt.image",
        ("ACP-PROMPTCAP-001", "a prompt with an image block is accepted and its turn reaches idle"),
    ),
    *_rows(
        "CAPABILITY",
        "capabilities.session.prompt.audio",
        ("ACP-PROMPTCAP-002", "a prompt with an audio block is accepted and its turn reaches idle"),
    ),
    *_rows(
        "CAPABILITY",
        "capabilities.session.prompt.embeddedContext",
        ("ACP-PROMPTCAP-003", "a prompt with an embedded resource is accepted and its turn reaches idle"),
    ),
    *_rows(
        "CAPABILITY",
        "capabilities.session.delete",
        ("ACP-DELETE-201", "session/delete of a session gives an empty result"),
        ("ACP-DELETE-202", "a deleted session is no longer listed"),
    ),
    *_rows(
        "CAPABILITY",
        "capabilities.session.additionalDirectories",
        ("ACP-ADDDIRS-201", "session/new takes an absolute additional directory"),
        ("ACP-ADDDIRS-202", "session/resume takes an absolute additional directory"),
    ),
    *_rows(
        "CAPABILITY",
        "inferred:configOptions",
        ("ACP-CONFIG-201", "the configOptions of session/new are well formed"),
        ("ACP-CONFIG-202", "session/set_config_option answers with every option"),
        ("ACP-CONFIG-203", "the configOptions of session/resume are well formed"),
        ("ACP-CONFIG-204", "a select option's currentValue is one of its options"),
        (
            "ACP-CONFIG-206",
            "a config_option_update carries every option",
            "the reference agent sends no config_option_update: its one option changes only by "
            "session/set_config_option, whose response carries the full list (ACP-CONFIG-202)",
        ),
    ),
    *_rows(
        "CAPABILITY",
        "inferred:authMethods",
        (
            "ACP-AUTH-203",
            "auth/logout succeeds",
            "no agent of ours advertises authMethods, so auth/logout is not one of its methods",
        ),
        (
            "ACP-AUTH-204",
            "auth/login with an advertised method is found, and session/new then works",
            "no agent of ours advertises authMethods, so auth/login is not one of its methods",
        ),
    ),
    *_rows(
        "ADVISORY",
        None,
        ("ACP-PROMPT-003", "a prompt of text and a resource_link is accepted and its turn reaches idle"),
        ("ACP-JSONRPC-004", "an unknown method gets -32601"),
        ("ACP-JSONRPC-005", "the connection goes on after an erroneous request or batch"),
        ("ACP-DELETE-203", "deleting an unknown or deleted session succeeds"),
        ("ACP-AUTH-201", "authMethods have distinct methodIds"),
        ("ACP-AUTH-205", "with no authMethods, session/new never answers -32000"),
        ("ACP-PATCH-208", "a tool call's first update has a title, and its name never changes"),
        ("ACP-PATCH-209", "requires_action while a permission is pending, running once it resumes"),
        ("ACP-ENUM-202", "sessionUpdate, state and tool call content types: defined values or _-prefixed"),
        ("ACP-ENUM-203", "a _-prefixed permission outcome does not crash the agent nor fail the prompt"),
        ("ACP-META-001", "a prompt with _meta is accepted and its turn reaches idle"),
        ("ACP-META-201", "every _meta the agent writes is an object or null"),
        ("ACP-EXT-201", "a _-prefixed notification is ignored: no reply, no crash"),
        ("ACP-EXT-202", "extensions are advertised under capabilities._meta, not as new capability keys"),
        ("ACP-ERROR-001", "an error message is a non-empty single line, its data JSON"),
        ("ACP-SHUTDOWN-001", "the agent exits on its own when stdin closes"),
        ("ACP-SCHEMA-002", "no params or result of the agent has a key its type does not define"),
    ),
    *_batch(
        "ADVISORY",
        ("ACP-BATCH-203", "each invalid entry of a batch gets its own -32600, the rest still run"),
        ("ACP-BATCH-204", "a batch with requests gets one array of their responses"),
        ("ACP-BATCH-205", "the responses of a batch are matched by id"),
    ),
    *_rows(
        "INFORMATIONAL",
        None,
        ("ACP-INFO-CONCURRENT-201", "what a second prompt during a turn gets (ours: -32602, session busy)"),
        ("ACP-INFO-UNKNOWNSESSION-001", "what a prompt for an unknown session gets (ours: -32002)"),
        ("ACP-CANCEL-204", "work stops as soon as possible after session/cancel", NOT_OBSERVABLE),
        ("ACP-INFO-CANCEL-201", "what session/cancel with no work or no session does (ours: nothing)"),
        ("ACP-INFO-CANCEL-202", "whether a pending permission request is cancelled (ours: $/cancel_request)"),
        (
            "ACP-MCP-201",
            "whether session/new takes a stdio MCP server once capabilities.session.mcp.stdio is advertised",
            "the reference agent connects to no MCP server and advertises no capabilities.session.mcp; "
            "it refuses a server with -32602 (tests/tck/test_session.py)",
        ),
        (
            "ACP-MCP-202",
            "whether session/new takes an http MCP server once capabilities.session.mcp.http is advertised",
            "the reference agent connects to no MCP server and advertises no capabilities.session.mcp; "
            "it refuses a server with -32602 (tests/tck/test_session.py)",
        ),
        ("ACP-EXT-203", "what an unknown $/ notification gets (ours: nothing)"),
        ("ACP-STDERR-001", "what the agent writes to stderr (ours: nothing, in every test)"),
        ("ACP-INFO-PARSE-001", "what a line that is not JSON gets (ours: -32700 with id null)"),
        ("ACP-INFO-INVALIDREQ-001", "what JSON that is no JSON-RPC message gets (ours: -32600)"),
        ("ACP-INFO-BATCH-201", "what a batch line that is not JSON gets (ours: one -32700 with id null)"),
        ("ACP-INFO-BATCH-202", "what a batch mixing calls and responses gets (ours: one -32600)"),
    ),
    *_batch(
        "INFORMATIONAL",
        (
            "ACP-BATCH-206",
            "batch entries may run concurrently, in any order",
            NOT_OBSERVABLE + " (a MAY of the receiver)",
        ),
        (
            "ACP-BATCH-207",
            "an agent may batch its own notifications",
            "a MAY of the sender, which a client cannot make happen; our runtime sends no batches",
        ),
        (
            "ACP-BATCH-208",
            "lifecycle messages should not be batched",
            "a rule for the sender of a batch, not for the agent receiving one",
        ),
    ),
)

BY_ID: dict[str, Row] = {row.id: row for row in ROWS}
