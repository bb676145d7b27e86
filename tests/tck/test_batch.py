"""The batch rows, on a release whose schema has JSON-RPC batches, and what a release without them does.

The newest releases' schemas (v2-sdk-2.2.0 on) define no batch message, and their packages
refuse every JSON array with one ``-32600``; the schemas of 2.0.0-alpha.1 to v2-sdk-2.1.0
define ``ClientBatchCall`` and ``ClientBatchResponse``, and theirs take batches as JSON-RPC
2.0 says.  The rows about batches are judged on the careful user's agent on v2-sdk-2.1.0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.tck.harness import (
    CAREFUL_WITH_BATCHES,
    EVERY_AGENT,
    QUIET,
    Line,
    Peer,
    Subject,
    initialized,
    on,
    run,
    running,
    tck,
)
from tests.tck.schema_checks import release_schema

BATCHES = (CAREFUL_WITH_BATCHES,)


async def _batch(subject: Subject, batch: Any, *, then: str | None = None) -> tuple[list[Line], Peer]:
    """Send ``batch`` (a value, or a raw line) after ``initialize``; the lines written within a while."""
    async with running(subject) as peer:
        await initialized(peer)
        start = len(peer.lines)
        await peer.send_raw(batch if isinstance(batch, str) else json.dumps(batch))
        written = await peer.replies_within(QUIET, start=start)
        if then is not None:  # the connection goes on
            assert "result" in await peer.call(then, {"cwd": "/"})
    return written, peer


def test_the_batch_subject_is_the_newest_release_with_batches() -> None:
    assert release_schema(CAREFUL_WITH_BATCHES.release).has_batches()
    assert not release_schema("v2-sdk-2.2.0").has_batches()
    assert not release_schema("v2-sdk-2.3.0").has_batches()


@tck("ACP-BATCH-201")
@on(*EVERY_AGENT, *BATCHES)
def test_an_empty_batch_gets_one_invalid_request_object(subject: Subject) -> None:
    written, _ = run(_batch(subject, []))
    (line,) = written
    assert isinstance(line.value, dict)  # one object, never an array
    assert (line.value["id"], line.value["error"]["code"]) == (None, -32600)


@tck("ACP-BATCH-202", "ACP-JSONRPC-003")
@on(*BATCHES)
def test_a_batch_of_notifications_gets_no_reply(subject: Subject) -> None:
    notes = [
        {"jsonrpc": "2.0", "method": "_tck/notify_only"},
        {"jsonrpc": "2.0", "method": "$/x", "params": {}},
    ]
    written, _ = run(_batch(subject, notes, then="session/new"))
    assert written == []  # not even an empty array


@tck("ACP-BATCH-203", "ACP-JSONRPC-005")
@on(*BATCHES)
def test_invalid_entries_get_one_invalid_request_each_and_the_connection_goes_on(subject: Subject) -> None:
    written, _ = run(_batch(subject, [17, True, None], then="session/new"))
    (line,) = written
    assert [(r["id"], r["error"]["code"]) for r in line.value] == [(None, -32600)] * 3


@tck("ACP-BATCH-204", "ACP-BATCH-205", "ACP-JSONRPC-001", "ACP-JSONRPC-003")
@on(*BATCHES)
def test_a_batch_with_requests_gets_one_array_of_their_responses(subject: Subject, tmp_path: Path) -> None:
    batch = [
        {"jsonrpc": "2.0", "id": "tck-batch-a", "method": "session/new", "params": {"cwd": str(tmp_path)}},
        {"jsonrpc": "2.0", "method": "_tck/note"},
        {"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": {"cwd": "/"}},
    ]
    written, _ = run(_batch(subject, batch))
    (line,) = written
    assert isinstance(line.value, list) and len(line.value) == 2  # the notification has none
    by_id = {reply["id"]: reply for reply in line.value}  # matched by id, never by position
    assert set(by_id) == {"tck-batch-a", 7} and all("result" in r for r in by_id.values())
    assert type(by_id[7]["id"]) is int


@tck("ACP-INFO-BATCH-201")
@on(*EVERY_AGENT, *BATCHES)
def test_a_batch_line_that_is_no_json_gets_one_parse_error(subject: Subject) -> None:
    written, _ = run(_batch(subject, '[{"jsonrpc": "2.0", "id": 1, "method": '))
    (line,) = written
    assert (line.value["id"], line.value["error"]["code"]) == (None, -32700)


@tck("ACP-INFO-BATCH-202")
@on(*EVERY_AGENT, *BATCHES)
def test_a_batch_mixing_calls_and_responses_gets_one_invalid_request(subject: Subject) -> None:
    mixed = [
        {"jsonrpc": "2.0", "id": "tck-mixed-call", "method": "_tck/does_not_exist"},
        {"jsonrpc": "2.0", "id": "tck-mixed-response", "result": {}},
    ]
    written, _ = run(_batch(subject, mixed))
    (line,) = written
    assert (line.value["id"], line.value["error"]["code"]) == (None, -32600)


@on(*EVERY_AGENT)
def test_a_release_without_batches_refuses_every_batch_with_one_invalid_request(subject: Subject) -> None:
    """Where the schema has no batch message (v2-sdk-2.3.0), a batch of notifications is refused too."""
    assert not release_schema(subject.release).has_batches()
    notes = [{"jsonrpc": "2.0", "method": "_tck/notify_only"}]
    written, _ = run(_batch(subject, notes, then="session/new"))
    (line,) = written
    assert line.value["error"] == {
        "code": -32600,
        "message": "Invalid request",
        "data": {"reason": "a batch is not accepted here"},
    }
