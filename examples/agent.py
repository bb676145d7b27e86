"""A reference ACP agent on the newest v2 release: it echoes each prompt back, word by word.

It advertises what it implements and nothing more: the baseline session methods
(new, prompt, cancel, list, resume, close), `session/delete`, `additionalDirectories`,
and image, audio and embedded-resource prompts.  Each reply is a pretend tool call that
asks the client's permission first while the session's `approval` option is `ask` (the
default); `auto` replies without asking.  Every step the protocol demands is marked
"MUST" below.  Run it as a subprocess of a client (`examples/client.py` does); it talks ACP
on stdin/stdout:

    PYTHONPATH=generated python examples/agent.py
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

from acp_v2_sdk_2_3_0 import PROTOCOL_VERSION, Agent, AgentSideConnection, RequestError, run_agent, schema

WORD_DELAY = 0.01
"""Seconds between two words of a reply: the time a model would take."""
APPROVAL = "approval"
"""The id of the session's one config option: ask before replying, or not."""
RESOURCE_NOT_FOUND = -32002
"""ACP's error code for an unknown session."""


@dataclass
class Session:
    session_id: str
    cwd: str
    additional_directories: list[str]
    approval: str = "ask"
    history: list[schema.SessionUpdate] = field(default_factory=list)
    """Whole user and agent messages, in order: what a resume replays."""
    turn: asyncio.Task[None] | None = None
    cancelling: bool = False

    async def stop(self) -> None:
        """Cancel the foreground work, if any, and wait until its idle update has been sent."""
        if self.turn is not None and not self.turn.done():
            self.cancelling = True
            self.turn.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.turn


class EchoAgent(Agent):
    """The sessions of one client connection."""

    name = "echo-agent"
    session_prefix = "session-"

    def __init__(self, connection: AgentSideConnection) -> None:
        self.connection = connection
        self.sessions: dict[str, Session] = {}
        self.created = 0

    async def initialize(self, *, protocol_version: int, **kwargs: Any) -> schema.InitializeResponse:
        # Whatever version the client asks for, the answer names ours (MUST); the client decides.
        session = schema.SessionCapabilities(
            prompt=schema.PromptCapabilities(
                image=schema.PromptImageCapabilities(),
                audio=schema.PromptAudioCapabilities(),
                embedded_context=schema.PromptEmbeddedContextCapabilities(),
            ),
            delete=schema.SessionDeleteCapabilities(),
            additional_directories=schema.SessionAdditionalDirectoriesCapabilities(),
        )
        return schema.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            info=schema.Implementation(name=self.name, version="1.0.0"),
            capabilities=schema.AgentCapabilities(session=session),
        )

    async def new_session(
        self, *, cwd: str, additional_directories: list[str] | None = None, **kwargs: Any
    ) -> schema.NewSessionResponse:
        check_setup(cwd, additional_directories, kwargs.get("mcp_servers"))
        self.created += 1
        session = Session(f"{self.session_prefix}{self.created}", cwd, list(additional_directories or []))
        self.sessions[session.session_id] = session
        return schema.NewSessionResponse(session_id=session.session_id, config_options=options(session))

    async def prompt(
        self, *, session_id: str, prompt: list[schema.ContentBlock], **kwargs: Any
    ) -> schema.PromptResponse:
        session = self.session(session_id)
        if session.turn is not None:
            raise RequestError.invalid_params({"reason": "the session is busy: wait for idle or cancel"})
        if any(isinstance(block, schema.OtherContentBlock) for block in prompt):
            # MUST: a content block type the agent does not support is refused with -32602
            raise RequestError.invalid_params({"reason": "unsupported content block type"})
        # The prompt is inserted as a user message; its work runs as a task of its own, and the
        # answer comes at once (MUST: without waiting for the work), after the message is echoed
        # with the id the answer carries.
        message_id = str(uuid.uuid4())
        session.history.append(schema.UserMessageSessionUpdate(message_id=message_id, content=prompt))
        session.cancelling = False
        session.turn = asyncio.create_task(self.turn(session, prompt))
        await self.connection.echo_user_message(session_id=session_id, prompt=prompt, message_id=message_id)
        return schema.PromptResponse(message_id=message_id)

    async def turn(self, session: Session, prompt: list[schema.ContentBlock]) -> None:
        """One prompt's foreground work: MUST report `running`, then `idle` with its stop reason."""
        idle: schema.SessionUpdate
        try:
            await self.update(session, schema.RunningStateSessionUpdate())
            await self.reply(session, prompt)
            idle = schema.EndTurnIdleStateSessionUpdate()
        except asyncio.CancelledError:
            if not session.cancelling:  # not session/cancel: this process is shutting down
                raise
            # MUST: cancelled work ends with `cancelled`, never `error`
            idle = schema.CancelledIdleStateSessionUpdate()
        except ConnectionError:
            return  # the client is gone: nobody left to tell
        except Exception as failure:  # MUST: once inserted, a failure ends the work, never the request
            logging.exception("the turn of %s failed", session.session_id)
            error = schema.Error(code=-32603, message=str(failure) or "Internal error")
            idle = schema.ErrorIdleStateSessionUpdate(error=error)
        finally:
            session.turn = None
        with contextlib.suppress(ConnectionError):
            await self.update(session, idle)

    async def reply(self, session: Session, prompt: list[schema.ContentBlock]) -> None:
        """The pretend tool call: echo the prompt, with the user's permission while `approval` is `ask`."""
        tool = schema.ToolCallSessionUpdate(
            tool_call_id=str(uuid.uuid4()), title="Echo the prompt", kind="other", status="pending"
        )
        await self.update(session, tool)
        message_id, said = str(uuid.uuid4()), ""
        try:
            if session.approval == "ask" and not await self.allowed(session, tool):
                await self.update(session, tool_status(tool, "cancelled"))  # not approved: never run
                return
            await self.update(session, tool_status(tool, "in_progress"))
            for word in words_of(prompt):
                await asyncio.sleep(WORD_DELAY)
                chunk = schema.TextContentBlock(text=word if not said else " " + word)
                await self.update(
                    session, schema.AgentMessageChunkSessionUpdate(message_id=message_id, content=chunk)
                )
                said += chunk.text
        except asyncio.CancelledError:
            if session.cancelling:  # MUST: updates of cancelled work precede its idle
                with contextlib.suppress(ConnectionError):
                    await self.update(session, tool_status(tool, "cancelled"))
            raise
        finally:
            if said:  # what was said is history, even when cut short
                reply: list[schema.ContentBlock] = [schema.TextContentBlock(text=said)]
                session.history.append(schema.AgentMessageSessionUpdate(message_id=message_id, content=reply))
        await self.update(session, tool_status(tool, "completed"))

    async def allowed(self, session: Session, tool: schema.ToolCallSessionUpdate) -> bool:
        """Ask the client; a refusal, a failed request or any outcome but "allow" is no."""
        await self.update(session, schema.RequiresActionStateSessionUpdate())  # blocked on the user
        options = [
            schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ]
        try:
            answer = await self.connection.request_permission(
                session_id=session.session_id,
                title=tool.title or "",
                options=options,
                subject=schema.ToolCallRequestPermissionSubject(tool_call=tool),
            )
        except RequestError:  # no permission handler (-32601), or it failed: not approved
            return False
        outcome = answer.outcome
        if isinstance(outcome, schema.SelectedRequestPermissionOutcome) and outcome.option_id == "allow":
            await self.update(session, schema.RunningStateSessionUpdate())  # MUST: progress resumes
            return True
        return False

    async def session_cancel(self, *, session_id: str, **kwargs: Any) -> None:
        # MUST: stop waiting for permission (the runtime sends $/cancel_request for it) and end
        # the work with `cancelled`; with no work running there is nothing to report.
        session = self.sessions.get(session_id)
        if session is not None:
            await session.stop()

    async def list_sessions(
        self, *, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> schema.ListSessionsResponse:
        if cursor is not None:
            raise RequestError.invalid_params({"reason": "every session is on the first page: no cursor"})
        found = [
            schema.SessionInfo(
                session_id=s.session_id, cwd=s.cwd, additional_directories=s.additional_directories
            )
            for s in self.sessions.values()
            if cwd is None or s.cwd == cwd
        ]
        return schema.ListSessionsResponse(sessions=found)

    async def resume_session(
        self,
        *,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        replay_from: schema.ReplayFrom | None = None,
        **kwargs: Any,
    ) -> schema.ResumeSessionResponse:
        session = self.session(session_id)
        check_setup(cwd, additional_directories, kwargs.get("mcp_servers"))
        if cwd != session.cwd:
            raise RequestError.invalid_params({"reason": f"the session's cwd is {session.cwd}"})
        if replay_from is not None and not isinstance(replay_from, schema.StartReplayFrom):
            raise RequestError.invalid_params({"reason": "unsupported replay cursor"})  # MUST
        session.additional_directories = list(additional_directories or [])  # the complete new list
        if replay_from is not None:  # history before the response, whole messages with their ids
            for update in list(session.history):
                await self.update(session, update)
        # MUST: the current state after any replay and before the response
        state = schema.RunningStateSessionUpdate() if session.turn else schema.NoneIdleStateSessionUpdate()
        await self.update(session, state)
        return schema.ResumeSessionResponse(config_options=options(session))

    async def close_session(self, *, session_id: str, **kwargs: Any) -> schema.CloseSessionResponse:
        session = self.session(session_id)
        await session.stop()  # MUST: as if session/cancel had been sent (it holds nothing else)
        return schema.CloseSessionResponse()

    async def delete_session(self, *, session_id: str, **kwargs: Any) -> schema.DeleteSessionResponse:
        session = self.sessions.pop(session_id, None)  # an unknown id is deleted already
        if session is not None:
            await session.stop()
        return schema.DeleteSessionResponse()

    async def set_config_option(
        self, *, session_id: str, config_id: str, value: Any, type: str | None = None, **kwargs: Any
    ) -> schema.SetSessionConfigOptionResponse:
        session = self.session(session_id)
        if config_id != APPROVAL or type != "id" or value not in ("ask", "auto"):
            raise RequestError.invalid_params({"reason": f"{APPROVAL} takes the ids ask and auto"})
        session.approval = value
        return schema.SetSessionConfigOptionResponse(config_options=options(session))  # all of them

    def session(self, session_id: str) -> Session:
        found = self.sessions.get(session_id)
        if found is None:
            raise RequestError(RESOURCE_NOT_FOUND, "Resource not found", {"sessionId": session_id})
        return found

    async def update(self, session: Session, update: schema.SessionUpdate) -> None:
        await self.connection.session_update(session_id=session.session_id, update=update)


def options(session: Session) -> list[schema.SessionConfigOption]:
    choices = [
        schema.SessionConfigSelectOption(value="ask", name="Ask before replying"),
        schema.SessionConfigSelectOption(value="auto", name="Reply without asking"),
    ]
    approval = schema.SelectSessionConfigOption(
        config_id=APPROVAL, name="Approval", category="mode", current_value=session.approval, options=choices
    )
    return [approval]


def check_setup(cwd: str, directories: list[str] | None, mcp_servers: list[Any] | None) -> None:
    """Paths MUST be absolute; this agent connects to no MCP server (it advertises no transport)."""
    for path in [cwd, *(directories or [])]:
        if not PurePath(path).is_absolute():
            raise RequestError.invalid_params({"reason": f"not an absolute path: {path}"})
    if mcp_servers:
        raise RequestError.invalid_params({"reason": "this agent connects to no MCP servers"})


def tool_status(tool: schema.ToolCallSessionUpdate, status: str) -> schema.ToolCallSessionUpdate:
    return schema.ToolCallSessionUpdate(tool_call_id=tool.tool_call_id, status=status)  # a patch


def words_of(prompt: list[schema.ContentBlock]) -> list[str]:
    words: list[str] = []
    for block in prompt:
        if isinstance(block, schema.TextContentBlock):
            words += block.text.split()
        elif isinstance(block, schema.ResourceLinkContentBlock):
            words.append(f"<{block.uri}>")
        elif isinstance(block, schema.ResourceContentBlock):
            words.append(f"<{block.resource.uri}>")
        elif isinstance(block, (schema.ImageContentBlock, schema.AudioContentBlock)):
            words.append(f"[{block.mime_type}]")
    return words


if __name__ == "__main__":
    asyncio.run(run_agent(EchoAgent))
