"""A Python agent on the generated bindings, driven over stdio by the TypeScript client (client.mjs).

Usage: python py_agent.py <generated package name> [states] [--updates=FILE]

On a prompt it asks for permission, then runs four elicitations (form and URL
mode, each in session and in request scope) and reports what came back in one
agent message chunk.  A prompt whose text is ``wait`` runs until it is cancelled;
one whose text is ``states`` streams nested idle states (2.0.0-alpha.8 and later);
with ``--updates=FILE``, one whose text is ``updates`` streams every session update
of that JSON list, then an idle state whose ``error.data`` is a string.  A new
session's response says, in ``_meta.received``, which MCP servers the request held.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))
acp = importlib.import_module(sys.argv[1])
schema = acp.schema
UPDATES_FLAG = "--updates="
UPDATES_FILES = [Path(f[len(UPDATES_FLAG) :]) for f in sys.argv[2:] if f.startswith(UPDATES_FLAG)]
UPDATES: list[Any] = json.loads(UPDATES_FILES[0].read_text()) if UPDATES_FILES else []


class InteropAgent(acp.Agent):
    def __init__(self, connection: Any) -> None:
        self.connection = connection

    async def initialize(self, *, protocol_version: int, info: Any, **kwargs: Any) -> Any:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            info=schema.Implementation(name="py-interop-agent", version="1.0.0"),
            capabilities=schema.AgentCapabilities(session=schema.SessionCapabilities()),
        )

    async def new_session(self, *, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> Any:
        servers = [s.model_dump(by_alias=True, exclude_unset=True, mode="json") for s in mcp_servers or []]
        received = {"mcpServers": servers} if UPDATES else {}
        return schema.NewSessionResponse(
            session_id=f"py-session-{cwd}", **({"field_meta": {"received": received}} if received else {})
        )

    async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        text = "".join(getattr(block, "text", "") for block in prompt)
        if text == "wait":
            await asyncio.sleep(60)
        message_id = await self.connection.echo_user_message(session_id=session_id, prompt=prompt)
        if text == "updates" and UPDATES:
            adapter: Any = TypeAdapter(schema.SessionUpdate)
            for wire in UPDATES:
                update = adapter.validate_python(wire)
                await self.connection.session_update(session_id=session_id, update=update)
            error = schema.Error(code=-32603, message="model unavailable", data="quota exceeded")
            await self.connection.session_update(
                session_id=session_id, update=schema.ErrorIdleStateSessionUpdate(error=error)
            )
            return schema.PromptResponse(message_id=message_id)
        if text == "states":  # 2.0.0-alpha.8 and later: idle states told apart by their stop reason
            for update in (
                schema.RunningStateSessionUpdate(),
                schema.ErrorIdleStateSessionUpdate(
                    error=schema.Error(code=-32603, message="model unavailable")
                ),
                schema.RunningStateSessionUpdate(),
                schema.OtherIdleStateSessionUpdate(stop_reason="_vendor/paused", reason="quota"),
                schema.RunningStateSessionUpdate(),
                schema.NoneIdleStateSessionUpdate(),
            ):
                await self.connection.session_update(session_id=session_id, update=update)
            return schema.PromptResponse(message_id=message_id)
        report: dict[str, Any] = {}
        permission = await self.connection.request_permission(
            session_id=session_id,
            title="Run the tool?",
            options=[schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once")],
        )
        report["permission"] = permission.outcome.model_dump(by_alias=True, exclude_unset=True, mode="json")
        request_id = acp.current_request_id()
        required = {"type": "object"} if "type" in schema.ElicitationSchema.model_fields else {}  # 2.3.0 on
        form_schema = schema.ElicitationSchema(
            properties={"name": {"type": "string", "title": "Name"}}, **required
        )
        url_a, url_b = "https://example.com/a", "https://example.com/b"
        calls: dict[str, dict[str, Any]] = {
            "form-session": {"mode": "form", "session_id": session_id, "requested_schema": form_schema},
            "form-request": {"mode": "form", "request_id": request_id, "requested_schema": form_schema},
            "url-session": {"mode": "url", "session_id": session_id, "elicitation_id": "e-1", "url": url_a},
            "url-request": {"mode": "url", "request_id": request_id, "elicitation_id": "e-2", "url": url_b},
        }
        for name, arguments in calls.items():
            answer = await self.connection.create_elicitation(message=f"elicit {name}", **arguments)
            report[name] = answer.model_dump(by_alias=True, exclude_unset=True, mode="json")
        await self.connection.session_update(
            session_id=session_id,
            update=schema.AgentMessageChunkSessionUpdate(
                message_id="report", content=schema.TextContentBlock(text=json.dumps(report))
            ),
        )
        return schema.PromptResponse(message_id=message_id)


if __name__ == "__main__":
    asyncio.run(acp.run_agent(InteropAgent))
