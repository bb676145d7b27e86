"""The agent a careful user writes from the README and docs/runtime.md, served on stdio.

Usage: python careful_agent.py <generated v2 package>

It is the documents' ``MyAgent`` as it stands there: an ``initialize`` answering with the
package's ``PROTOCOL_VERSION`` and an ``info``, a ``session/new``, and a ``session/prompt`` that
echoes the user message and answers with its id.  It advertises no capability, so of the
upstream TCK's rows only the mandatory ones judge it: what they need from it, the runtime gives.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any

acp = importlib.import_module(sys.argv[1])
schema = acp.schema


class MyAgent(acp.Agent):  # type: ignore[misc,name-defined]
    def __init__(self, connection: Any) -> None:  # a factory: given its connection
        self.connection = connection

    async def initialize(self, **kwargs: Any) -> Any:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION, info=schema.Implementation(name="me", version="1")
        )

    async def new_session(self, *, cwd: str, **kwargs: Any) -> Any:
        return schema.NewSessionResponse(session_id="s-1")

    async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        message_id = await self.connection.echo_user_message(session_id=session_id, prompt=prompt)
        return schema.PromptResponse(message_id=message_id)


if __name__ == "__main__":
    asyncio.run(acp.run_agent(MyAgent))
