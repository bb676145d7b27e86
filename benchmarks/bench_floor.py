"""The generated models beside "the floor": a minimal hand-written pydantic model of each message.

For about ten hot messages of one release (``session/update`` variants, among them one with
lenient fields set and one with an invalid lenient value, ``session/prompt``, ``initialize``)
it times, side by side in one run and taking turns:

* ``json.loads`` of the message text (the cost of reading JSON at all);
* the floor: a plain ``BaseModel`` with only the fields the message has (no union, no
  leniency, pydantic's defaults), written by hand below;
* the generated model of the message (the params class of its method).

Each figure is the best of 5 rounds (``--rounds``: more on a loaded machine).  It prints
microseconds per message and the ratios ``x json.loads`` and ``x floor``, in JSON mode
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
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

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


# --- the messages -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    generated: str
    """The params class of the message's method in the generated package."""
    floor: type[BaseModel]
    message: dict[str, Any]


def update(body: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": "sess-1", "update": body}


CASES = [
    Case(
        "update agent_message_chunk",
        "UpdateSessionNotification",
        FMessageChunkNotification,
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
        update({"sessionUpdate": "tool_call_update", "toolCallId": "tool-1", "status": "completed"}),
    ),
    Case(
        "update tool_call_update, lenient fields set",
        "UpdateSessionNotification",
        FToolCallFullNotification,
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
        update({"sessionUpdate": "tool_call_update", "toolCallId": "tool-1", "kind": 7, "status": "failed"}),
    ),
    Case(
        "update plan_update",
        "UpdateSessionNotification",
        FPlanNotification,
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
        update({"sessionUpdate": "_vendor/telemetry", "payload": {"a": [1, 2, 3]}}),
    ),
    Case(
        "session/prompt",
        "PromptRequest",
        FPrompt,
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
            rule = "| --- | ---: | ---: | ---: |"
            for label, _ in sides:
                header += f" {label} us | x loads | x floor |"
                rule += " ---: | ---: | ---: |"
            print(header)
            print(rule)
            for case in CASES:
                text = json.dumps(case.message)
                data = case.message
                floor = case.floor
                models = [getattr(module, case.generated) for _, module in sides]
                for model in models:  # every side accepts the message
                    model.model_validate_json(text)
                    model.model_validate(data)
                floor.model_validate_json(text)
                functions: list[Callable[[], Any]] = [lambda text=text: json.loads(text)]
                if mode == "json":
                    functions.append(lambda f=floor, t=text: f.model_validate_json(t))
                    functions += [lambda m=m, t=text: m.model_validate_json(t) for m in models]
                else:
                    functions.append(lambda f=floor, d=data: f.model_validate(d))
                    functions += [lambda m=m, d=data: m.model_validate(d) for m in models]
                loads, floor_s, *model_s = best_of(functions, args.number, args.rounds)
                row = f"| {case.name} | {loads * 1e6:.2f} | {floor_s * 1e6:.2f} | {floor_s / loads:.2f} |"
                for seconds in model_s:
                    row += f" {seconds * 1e6:.2f} | {seconds / loads:.2f} | {seconds / floor_s:.2f} |"
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
