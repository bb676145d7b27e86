"""An example remote ACP client (v2): prompt an agent over Streamable HTTP or WebSocket.

    PYTHONPATH=generated python examples/remote_client.py http://127.0.0.1:8000/acp
    PYTHONPATH=generated python examples/remote_client.py ws://127.0.0.1:8000/acp

It initializes, creates a session in ``/``, prompts ``hello`` (or the words
after the URL), allows what the agent asks permission for, prints every
``session/update`` as one JSON line, and exits 0 once the turn's idle state
arrives.  ``--token`` sends ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

import acp_v2_sdk_2_3_0 as acp

schema = acp.schema


class PrintingClient(acp.Client):
    def __init__(self) -> None:
        self.idle = asyncio.Event()

    async def session_update(self, *, session_id: str, update: schema.SessionUpdate, **kwargs: Any) -> None:
        wire = update.model_dump(by_alias=True, exclude_unset=True, mode="json")
        print(json.dumps({"sessionId": session_id, "update": wire}), flush=True)
        if wire.get("sessionUpdate") == "state_update" and wire.get("state") == "idle":
            self.idle.set()

    async def request_permission(
        self, *, options: list[schema.PermissionOption], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        allow = next((o for o in options if o.kind.startswith("allow")), options[0])
        return schema.RequestPermissionResponse(
            outcome=schema.SelectedRequestPermissionOutcome(option_id=allow.option_id)
        )


async def main() -> int:
    parser = argparse.ArgumentParser(description="Prompt a remote ACP agent and print its updates.")
    parser.add_argument("url", help="http://HOST:PORT/acp or ws://HOST:PORT/acp")
    parser.add_argument("words", nargs="*", default=["hello"])
    parser.add_argument("--token")
    args = parser.parse_args()
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else None
    client = PrintingClient()
    if args.url.startswith(("ws://", "wss://")):
        connection = await acp.connect_websocket(client, args.url, headers=headers)
    else:
        connection = await acp.connect_http(client, args.url, headers=headers)
    try:
        await connection.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            info=schema.Implementation(name="remote-client", version="1"),
        )
        session = await connection.new_session(cwd="/")
        await connection.prompt(
            session_id=session.session_id, prompt=[schema.TextContentBlock(text=" ".join(args.words))]
        )
        await asyncio.wait_for(client.idle.wait(), 30)
    finally:
        await connection.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
