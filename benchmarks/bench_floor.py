"""The generated models beside "the floor": a minimal hand-written pydantic model of each message.

For about ten hot messages of one release (``session/update`` variants, among them one with
lenient fields set and one with an invalid lenient value, ``session/prompt``, ``initialize``)
it times, side by side in one run and taking turns:

* ``json.loads`` of the message text (the cost of reading JSON at all);
* the floor: a plain ``BaseModel`` with only the fields the message has (no union, no
  leniency, pydantic's defaults), written by hand below;
* the declared floor: a plain ``BaseModel`` of each message that declares every field the
  schema declares (same nesting, plain types, each union a closed tagged union), written by
  hand below; what it costs beyond the floor is the schema's shape, what the generated model
  costs beyond it is the generated model's own work (leniency, tags, patch bookkeeping);
* the generated model of the message (the params class of its method).

Each figure is the best of 5 rounds (``--rounds``: more on a loaded machine).  It prints
microseconds per message and the ratios ``x json.loads``, ``x floor`` and ``x declared`` (the
declared floor), and ``declared x floor``, in JSON mode
(``model_validate_json`` of the text) and in Python mode (``model_validate`` of the parsed
dict).  With ``--against REF`` it also times the generated package as committed at ``REF``
(``git archive``), beside the current one, and the cold import of both (fresh processes,
taking turns, median): a before/after in one run.

It asserts nothing (the machine is shared and noisy).  Run it with ``make bench`` or
``python benchmarks/bench_floor.py``.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, create_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_models import PRELOADS, import_seconds

ROOT = Path(__file__).resolve().parent.parent
RELEASE_PACKAGE = "acp_v2_sdk_2_3_0"


# --- the floor: minimal hand-written models, only the fields each message has ------------------


class FText(BaseModel):
    type: Literal["text"]
    text: str


class FResourceLink(BaseModel):
    type: Literal["resource_link"]
    name: str
    uri: str
    mime_type: str = Field(alias="mimeType")


class FMessageChunk(BaseModel):
    session_update: Literal["agent_message_chunk"] = Field(alias="sessionUpdate")
    message_id: str = Field(alias="messageId")
    content: FText


class FMessageChunkNotification(BaseModel):
    session_id: str = Field(alias="sessionId")
    update: FMessageChunk


class FLocation(BaseModel):
    path: str
    line: int


class FToolContent(BaseModel):
    type: Literal["content"]
    content: FText


class FToolCallFull(BaseModel):
    session_update: Literal["tool_call_update"] = Field(alias="sessionUpdate")
    tool_call_id: str = Field(alias="toolCallId")
    title: str
    kind: str
    status: str
    content: list[FToolContent]
    locations: list[FLocation]
    raw_input: dict[str, Any] = Field(alias="rawInput")


class FToolCallFullNotification(BaseModel):
    session_id: str = Field(alias="sessionId")
    update: FToolCallFull


class FToolCallStatus(BaseModel):
    session_update: Literal["tool_call_update"] = Field(alias="sessionUpdate")
    tool_call_id: str = Field(alias="toolCallId")
    status: str


class FToolCallStatusNotification(BaseModel):
    session_id: str = Field(alias="sessionId")
    update: FToolCallStatus


class FToolCallBadKind(BaseModel):
    """The invalid ``kind`` is not a field here: the floor ignores it, as the models drop it."""

    session_update: Literal["tool_call_update"] = Field(alias="sessionUpdate")
    tool_call_id: str = Field(alias="toolCallId")
    status: str


class FToolCallBadKindNotification(BaseModel):
    session_id: str = Field(alias="sessionId")
    update: FToolCallBadKind


class FPlanEntry(BaseModel):
    content: str
    priority: str
    status: str


class FPlanItems(BaseModel):
    type: Literal["items"]
    plan_id: str = Field(alias="planId")
    entries: list[FPlanEntry]


class FPlan(BaseModel):
    session_update: Literal["plan_update"] = Field(alias="sessionUpdate")
    plan: FPlanItems


class FPlanNotification(BaseModel):
    session_id: str = Field(alias="sessionId")
    update: FPlan


class FCost(BaseModel):
    amount: float
    currency: str


class FUsage(BaseModel):
    session_update: Literal["usage_update"] = Field(alias="sessionUpdate")
    used: int
    size: int
    cost: FCost


class FUsageNotification(BaseModel):
    session_id: str = Field(alias="sessionId")
    update: FUsage


class FError(BaseModel):
    code: int
    message: str


class FIdleError(BaseModel):
    session_update: Literal["state_update"] = Field(alias="sessionUpdate")
    state: Literal["idle"]
    stop_reason: Literal["error"] = Field(alias="stopReason")
    error: FError


class FIdleErrorNotification(BaseModel):
    session_id: str = Field(alias="sessionId")
    update: FIdleError


class FCustom(BaseModel):
    session_update: str = Field(alias="sessionUpdate")
    payload: dict[str, Any]


class FCustomNotification(BaseModel):
    session_id: str = Field(alias="sessionId")
    update: FCustom


class FPrompt(BaseModel):
    session_id: str = Field(alias="sessionId")
    prompt: list[Annotated[FText | FResourceLink, Field(discriminator="type")]]


class FInfo(BaseModel):
    name: str
    title: str
    version: str


class FTerminalAuth(BaseModel):
    pass


class FAuthCapabilities(BaseModel):
    terminal: FTerminalAuth


class FCapabilities(BaseModel):
    auth: FAuthCapabilities


class FInitialize(BaseModel):
    protocol_version: int = Field(alias="protocolVersion")
    info: FInfo
    capabilities: FCapabilities


# --- the declared floor: every field the schema declares, plain pydantic ----------------------
#
# Written by hand from the v2-sdk-2.3.0 schema (not from the emitter): each model a message
# reaches declares every property its schema object declares, with the same wire names
# (aliases), plain types (an open enum is ``str``, a JSON integer ``int``, ``Any`` is ``Any``),
# the schema's bounds, ``None`` defaults for optional properties, the same nesting, and each
# union as a closed tagged union (``Field(discriminator=...)``) of its tagged members.  No
# leniency, no catch-all member, no strict mode, ``extra`` as pydantic's default ("ignore").
# What is left between this and the generated models is the generated models' own work.
#
# Two stand-ins, which cost nothing here: a type reached only through a property no message
# carries is ``dict[str, Any]`` (pydantic-core never validates it for these messages), and a
# union member no message selects declares its tag alone (a tagged union finds its member by
# one lookup, whatever the others declare).  A union with one tagged member besides its
# catch-all is that member.


def tag_only(name: str, tag: str) -> type[BaseModel]:
    """A ``session/update`` member no message selects: its tag alone (see above)."""
    return create_model(name, session_update=(Literal[tag], Field(alias="sessionUpdate")))


class DMeta(BaseModel):
    """``_meta``: declared by nearly every schema object."""

    field_meta: dict[str, Any] | None = Field(None, alias="_meta")


class DAnnotations(DMeta):
    audience: list[str] | None = None
    last_modified: str | None = Field(None, alias="lastModified")
    priority: float | None = Field(None, ge=0, le=1)


class DText(DMeta):
    type: Literal["text"]
    text: str
    annotations: DAnnotations | None = None


class DImage(DMeta):
    type: Literal["image"]
    data: str
    mime_type: str = Field(alias="mimeType")
    uri: str | None = None
    annotations: DAnnotations | None = None


class DAudio(DMeta):
    type: Literal["audio"]
    data: str
    mime_type: str = Field(alias="mimeType")
    annotations: DAnnotations | None = None


class DResourceLink(DMeta):
    type: Literal["resource_link"]
    name: str
    uri: str
    title: str | None = None
    description: str | None = None
    icons: list[dict[str, Any]] | None = None
    mime_type: str | None = Field(None, alias="mimeType")
    size: int | None = Field(None, ge=0)
    annotations: DAnnotations | None = None


class DResource(DMeta):
    type: Literal["resource"]
    resource: dict[str, Any]
    annotations: DAnnotations | None = None


DContentBlock = Annotated[DText | DImage | DAudio | DResourceLink | DResource, Field(discriminator="type")]


class DMessageChunk(DMeta):
    session_update: Literal["agent_message_chunk"] = Field(alias="sessionUpdate")
    message_id: str = Field(alias="messageId")
    content: DContentBlock


class DToolContent(DMeta):
    type: Literal["content"]
    content: DContentBlock


class DTerminalContent(DMeta):
    type: Literal["terminal"]
    terminal_id: str = Field(alias="terminalId")


class DDiffContent(DMeta):
    type: Literal["diff"]
    changes: list[dict[str, Any]]
    patch: dict[str, Any] | None = None


DToolCallContent = Annotated[DToolContent | DDiffContent | DTerminalContent, Field(discriminator="type")]


class DLocation(DMeta):
    path: str
    line: int | None = Field(None, ge=1)


class DCancelCapabilities(DMeta):
    pass


class DToolCallCapabilities(DMeta):
    cancel: DCancelCapabilities | None = None


class DToolCallUpdate(DMeta):
    session_update: Literal["tool_call_update"] = Field(alias="sessionUpdate")
    tool_call_id: str = Field(alias="toolCallId")
    name: str | None = None
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    content: list[DToolCallContent] | None = None
    locations: list[DLocation] | None = None
    raw_input: Any = Field(None, alias="rawInput")
    raw_output: Any = Field(None, alias="rawOutput")
    capabilities: DToolCallCapabilities | None = None


class DPlanEntry(DMeta):
    content: str
    priority: str
    status: str


class DPlanItems(DMeta):
    type: Literal["items"]
    plan_id: str = Field(alias="planId")
    entries: list[DPlanEntry]


class DPlan(DMeta):
    session_update: Literal["plan_update"] = Field(alias="sessionUpdate")
    plan: DPlanItems  # the union of "items" and its catch-all, closed: one member


class DCost(DMeta):
    amount: float
    currency: str


class DUsage(DMeta):
    session_update: Literal["usage_update"] = Field(alias="sessionUpdate")
    used: int = Field(ge=0)
    size: int = Field(ge=0)
    cost: DCost | None = None


class DError(BaseModel):
    code: int
    message: str
    data: Any = None


class DState(DMeta):
    session_update: Literal["state_update"] = Field(alias="sessionUpdate")
    background: list[dict[str, Any]] | None = None


class DRunning(DState):
    state: Literal["running"]


class DRequiresAction(DState):
    state: Literal["requires_action"]


class DIdle(DState):
    state: Literal["idle"]


class DIdleEndTurn(DIdle):
    stop_reason: Literal["end_turn"] = Field(alias="stopReason")


class DIdleMaxTokens(DIdle):
    stop_reason: Literal["max_tokens"] = Field(alias="stopReason")


class DIdleMaxTurnRequests(DIdle):
    stop_reason: Literal["max_turn_requests"] = Field(alias="stopReason")


class DIdleRefusal(DIdle):
    stop_reason: Literal["refusal"] = Field(alias="stopReason")


class DIdleCancelled(DIdle):
    stop_reason: Literal["cancelled"] = Field(alias="stopReason")


class DIdleError(DIdle):
    stop_reason: Literal["error"] = Field(alias="stopReason")
    error: DError | None = None


DIdleUpdate = Annotated[
    DIdleEndTurn | DIdleMaxTokens | DIdleMaxTurnRequests | DIdleRefusal | DIdleCancelled | DIdleError,
    Field(discriminator="stop_reason"),
]
DStateUpdate = Annotated[DRunning | DIdleUpdate | DRequiresAction, Field(discriminator="state")]

_UNSELECTED_UPDATES = [
    tag_only(f"D{tag.title().replace('_', '')}", tag)
    for tag in (
        "user_message_chunk",
        "user_message",
        "agent_message",
        "agent_thought_chunk",
        "agent_thought",
        "tool_call_content_chunk",
        "terminal_update",
        "terminal_output_chunk",
        "available_commands_update",
        "config_option_update",
        "session_info_update",
        "notice",
        "compaction_update",
        "compaction_summary_chunk",
    )
]

DSessionUpdate = Annotated[
    Union[  # built from a list: the unselected members
        (DMessageChunk, DToolCallUpdate, DPlan, DUsage, DStateUpdate, *_UNSELECTED_UPDATES)
    ],
    Field(discriminator="session_update"),
]


class DUpdateNotification(DMeta):
    session_id: str = Field(alias="sessionId")
    update: DSessionUpdate


class DOtherUpdate(BaseModel):
    session_update: str = Field(alias="sessionUpdate")


class DOpenUpdateNotification(DMeta):
    """For an unknown tag: the closed union, else the catch-all member (plain pydantic: left to right)."""

    session_id: str = Field(alias="sessionId")
    update: Annotated[DSessionUpdate | DOtherUpdate, Field(union_mode="left_to_right")]


class DPrompt(DMeta):
    session_id: str = Field(alias="sessionId")
    prompt: list[DContentBlock] = Field(min_length=1)


class DImplementation(DMeta):
    name: str
    title: str | None = None
    version: str


class DTerminalAuth(DMeta):
    pass


class DClientAuth(DMeta):
    terminal: DTerminalAuth | None = None


class DElicitationForm(DMeta):
    pass


class DElicitationUrl(DMeta):
    pass


class DElicitation(DMeta):
    form: DElicitationForm | None = None
    url: DElicitationUrl | None = None


class DClientCapabilities(DMeta):
    auth: DClientAuth | None = None
    elicitation: DElicitation | None = None


class DInitialize(DMeta):
    protocol_version: int = Field(alias="protocolVersion", ge=0, le=65535)
    info: DImplementation
    capabilities: DClientCapabilities = Field(default_factory=DClientCapabilities)


# --- the messages -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    generated: str
    """The params class of the message's method in the generated package."""
    floor: type[BaseModel]
    declared: type[BaseModel] | None
    """The declared floor; ``None`` for a message only leniency accepts (no declared floor takes it)."""
    message: dict[str, Any]


def update(body: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": "sess-1", "update": body}


CASES = [
    Case(
        "update agent_message_chunk",
        "UpdateSessionNotification",
        FMessageChunkNotification,
        DUpdateNotification,
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "msg-1",
                "content": {"type": "text", "text": "Hello, world"},
            }
        ),
    ),
    Case(
        "update tool_call_update, status",
        "UpdateSessionNotification",
        FToolCallStatusNotification,
        DUpdateNotification,
        update({"sessionUpdate": "tool_call_update", "toolCallId": "tool-1", "status": "completed"}),
    ),
    Case(
        "update tool_call_update, lenient fields set",
        "UpdateSessionNotification",
        FToolCallFullNotification,
        DUpdateNotification,
        update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "tool-1",
                "title": "Read file",
                "kind": "read",
                "status": "in_progress",
                "content": [{"type": "content", "content": {"type": "text", "text": "print(1)"}}],
                "locations": [{"path": "/workspace/a.py", "line": 3}],
                "rawInput": {"path": "/workspace/a.py"},
            }
        ),
    ),
    Case(
        "update tool_call_update, invalid kind",
        "UpdateSessionNotification",
        FToolCallBadKindNotification,
        None,
        update({"sessionUpdate": "tool_call_update", "toolCallId": "tool-1", "kind": 7, "status": "failed"}),
    ),
    Case(
        "update plan_update",
        "UpdateSessionNotification",
        FPlanNotification,
        DUpdateNotification,
        update(
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "plan-1",
                    "entries": [
                        {"content": "Read the code", "priority": "high", "status": "completed"},
                        {"content": "Fix the bug", "priority": "high", "status": "in_progress"},
                        {"content": "Write a test", "priority": "medium", "status": "pending"},
                    ],
                },
            }
        ),
    ),
    Case(
        "update usage_update",
        "UpdateSessionNotification",
        FUsageNotification,
        DUpdateNotification,
        update(
            {
                "sessionUpdate": "usage_update",
                "used": 53000,
                "size": 200000,
                "cost": {"amount": 0.045, "currency": "USD"},
            }
        ),
    ),
    Case(
        "update state_update idle, error",
        "UpdateSessionNotification",
        FIdleErrorNotification,
        DUpdateNotification,
        update(
            {
                "sessionUpdate": "state_update",
                "state": "idle",
                "stopReason": "error",
                "error": {"code": -32603, "message": "model unavailable"},
            }
        ),
    ),
    Case(
        "update unknown tag (catch-all)",
        "UpdateSessionNotification",
        FCustomNotification,
        DOpenUpdateNotification,
        update({"sessionUpdate": "_vendor/telemetry", "payload": {"a": [1, 2, 3]}}),
    ),
    Case(
        "session/prompt",
        "PromptRequest",
        FPrompt,
        DPrompt,
        {
            "sessionId": "sess-1",
            "prompt": [
                {"type": "text", "text": "Why does this test fail?"},
                {
                    "type": "resource_link",
                    "name": "test_a.py",
                    "uri": "file:///workspace/test_a.py",
                    "mimeType": "text/x-python",
                },
            ],
        },
    ),
    Case(
        "initialize",
        "InitializeRequest",
        FInitialize,
        DInitialize,
        {
            "protocolVersion": 2,
            "info": {"name": "zed", "title": "Zed", "version": "0.200.0"},
            "capabilities": {"auth": {"terminal": {}}},
        },
    ),
]


# --- timing -----------------------------------------------------------------------------------


def best_of(functions: list[Callable[[], Any]], number: int, rounds: int = 5) -> list[float]:
    """Best time per call of each function over ``rounds``; the functions take turns."""
    for function in functions:
        function()
    best = [float("inf")] * len(functions)
    for _ in range(rounds):
        for index, function in enumerate(functions):
            best[index] = min(best[index], timeit.timeit(function, number=number))
    return [b / number for b in best]


def extract(ref: str, folder: Path, name: str) -> Path:
    """The generated package as committed at ``ref``, as package ``name`` under ``folder``."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref, f"generated/{RELEASE_PACKAGE}"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder / "extracted", filter="data")
    (folder / "extracted" / "generated" / RELEASE_PACKAGE).rename(folder / name)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--number", type=int, default=2000, help="calls per round (%(default)s)")
    parser.add_argument("--against", metavar="REF", help="also time generated/ as committed at REF")
    parser.add_argument("--repeat", type=int, default=11, help="import measurements per side")
    parser.add_argument(
        "--rounds", type=int, default=5, help="rounds per figure, the best one kept (%(default)s)"
    )
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "generated"))
    ours = importlib.import_module(f"{RELEASE_PACKAGE}.schema")
    sides: list[tuple[str, Any]] = [("generated", ours)]
    with tempfile.TemporaryDirectory() as tmp:
        old_folder: Path | None = None
        if args.against:
            old_folder = extract(args.against, Path(tmp), "before_" + RELEASE_PACKAGE)
            sys.path.insert(0, str(old_folder))
            before = importlib.import_module(f"before_{RELEASE_PACKAGE}.schema")
            sides.append((f"at {args.against}", before))

        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"release {RELEASE_PACKAGE}; best of {args.rounds} rounds of {args.number} calls;", end=" ")
        print("us per message\n")
        for mode in ("json", "python"):
            header = f"| {mode} mode | json.loads us | floor us | floor x loads |"
            header += " declared us | declared x floor |"
            rule = "| --- | ---: | ---: | ---: | ---: | ---: |"
            for label, _ in sides:
                header += f" {label} us | x loads | x floor | x declared |"
                rule += " ---: | ---: | ---: | ---: |"
            print(header)
            print(rule)
            for case in CASES:
                text = json.dumps(case.message)
                data = case.message
                floors = [case.floor] if case.declared is None else [case.floor, case.declared]
                models = [getattr(module, case.generated) for _, module in sides]
                for model in [*floors, *models]:  # every side accepts the message
                    model.model_validate_json(text)
                    model.model_validate(data)
                functions: list[Callable[[], Any]] = [lambda text=text: json.loads(text)]
                if mode == "json":
                    functions += [lambda m=m, t=text: m.model_validate_json(t) for m in [*floors, *models]]
                else:
                    functions += [lambda m=m, d=data: m.model_validate(d) for m in [*floors, *models]]
                loads, floor_s, *rest = best_of(functions, args.number, args.rounds)
                declared_s = rest.pop(0) if case.declared is not None else None
                row = f"| {case.name} | {loads * 1e6:.2f} | {floor_s * 1e6:.2f} | {floor_s / loads:.2f} |"
                if declared_s is None:
                    row += " - | - |"
                else:
                    row += f" {declared_s * 1e6:.2f} | {declared_s / floor_s:.2f} |"
                for seconds in rest:
                    row += f" {seconds * 1e6:.2f} | {seconds / loads:.2f} | {seconds / floor_s:.2f} |"
                    row += " - |" if declared_s is None else f" {seconds / declared_s:.2f} |"
                print(row)
            print()

        import_sides = [(ROOT / "generated", f"{RELEASE_PACKAGE}.schema")]
        if old_folder is not None:
            import_sides.append((old_folder, f"before_{RELEASE_PACKAGE}.schema"))
        times = import_seconds(import_sides, PRELOADS["models only"], args.repeat)
        print(f"cold import of {RELEASE_PACKAGE}.schema, pydantic preloaded (median of {args.repeat}):")
        for (label, _), seconds in zip(sides, times, strict=True):
            print(f"  {label:20} {seconds * 1000:7.1f} ms   x generated {seconds / times[0]:.2f}")


if __name__ == "__main__":
    main()
