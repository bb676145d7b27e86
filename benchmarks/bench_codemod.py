"""Time the upgrade codemod against a bare libcst parse of the same code.

A synthetic user project is built from three kinds of modules written against
ACP 2.0.0-alpha.5 (unstable), each about a hundred lines and each importing
the vendored package ``acp``:

* handler modules: an agent with its handlers, calls back to the client;
* model modules: building and reading the models;
* MCP modules: the methods, classes and arguments that 2.0.0-alpha.7 removed
  or changed, which the codemod must resolve and report.

One module in ten is an MCP module: a project touches the changed corner of
an API in a few places, not everywhere.  The same run times a project where
every module is an MCP module, the codemod's worst case for findings, and,
since alpha.5 -> alpha.7 renames nothing, a project of handler and model
modules under :data:`RENAMES`, a migration made up for the benchmark that
renames classes, a model attribute, a handler method and a handler argument
used in every one of its modules: the worst case for rewrites.

For each project the script times (a) ``libcst.parse_module`` over every
file and (b) the full codemod over the same bytes (the text filter, parsing,
name resolution, the rewrites and the findings), and prints lines per second,
the codemod/parse ratio, and how the codemod's time grows from 5,000 to
50,000 lines, for the realistic mix and for the worst case.  Files are read
into memory first: disk time is in neither figure.  Each figure is the best
of ``--repeat`` rounds; a round times every project, parse and codemod in
turn.

    .venv/bin/python benchmarks/bench_codemod.py [--lines 50000] [--small 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codegen.schema.load import SchemaSource, read_lock
from codegen.vendoring.codemod import Codemod
from codegen.vendoring.migration import (
    ArgumentRename,
    AttributeRename,
    ClassRename,
    MethodRename,
    Migration,
    diff_for_migration,
    migration_from_diff,
)

OLD, NEW = "2.0.0-alpha.5", "2.0.0-alpha.7"

RENAMES = Migration(
    old_release=OLD,
    new_release="renames",
    stability="unstable",
    old_package="acp_2_0_0_alpha_5_unstable",
    new_package="acp_renames",
    class_renames=(
        ClassRename("Implementation", "ImplementationInfo"),
        ClassRename("TextContentBlock", "TextBlock"),
        ClassRename("PromptResponse", "PromptResult"),
    ),
    attribute_renames=(AttributeRename("PromptResponse", "message_id", "message_id_", "messageId"),),
    method_renames=(MethodRename("agent", "new_session", "create_session"),),
    argument_renames=(ArgumentRename("agent", "prompt", "session_id", "sid"),),
)
"""Renames a release could make, each used in every handler and model module of the templates."""

HANDLERS = '''\
"""Handlers of agent {n}: sessions, prompts and updates (unchanged between the releases)."""

from __future__ import annotations

from typing import Any

from acp import PROTOCOL_VERSION, Agent, AgentSideConnection, schema


class Agent{n}(Agent):
    """Echoes prompts back, word by word."""

    def __init__(self, connection: AgentSideConnection) -> None:
        self.connection = connection
        self.sessions: dict[str, list[str]] = {{}}

    async def initialize(
        self,
        *,
        protocol_version: schema.ProtocolVersion,
        info: schema.Implementation,
        capabilities: schema.ClientCapabilities | None = None,
        **kwargs: Any,
    ) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            info=schema.Implementation(name="agent-{n}", version="1.0"),
        )

    async def new_session(self, *, cwd: str, **kwargs: Any) -> schema.NewSessionResponse:
        session_id = f"{n}-{{len(self.sessions)}}"
        self.sessions[session_id] = []
        return schema.NewSessionResponse(session_id=session_id)

    async def prompt(
        self, *, session_id: schema.SessionId, prompt: list[schema.ContentBlock], **kwargs: Any
    ) -> schema.PromptResponse:
        words: list[str] = []
        for block in prompt:
            if isinstance(block, schema.TextContentBlock):
                words.extend(block.text.split())
        self.sessions.setdefault(session_id, []).extend(words)
        for index, word in enumerate(words):
            # each word goes back as its own chunk
            chunk = schema.TextContentBlock(text=word if index == 0 else " " + word)
            await self.connection.session_update(
                session_id=session_id,
                update=schema.AgentMessageChunkSessionUpdate(message_id=f"m{{index}}", content=chunk),
            )
        return schema.PromptResponse(message_id=f"{n}-{{len(words)}}")

    async def close_session(
        self, *, session_id: schema.SessionId, **kwargs: Any
    ) -> schema.CloseSessionResponse:
        self.sessions.pop(session_id, None)
        return schema.CloseSessionResponse()


def history_{n}(agent: Agent{n}, session_id: str) -> list[str]:
    """The words a session has seen."""
    return list(agent.sessions.get(session_id, []))


def count_{n}(agent: Agent{n}) -> int:
    total = 0
    for words in agent.sessions.values():
        total += len(words)
    return total


def longest_{n}(agent: Agent{n}) -> str:
    best = ""
    for words in agent.sessions.values():
        for word in words:
            if len(word) > len(best):
                best = word
    return best


def summary_{n}(agent: Agent{n}) -> dict[str, int]:
    return {{
        "sessions": len(agent.sessions),
        "words": count_{n}(agent),
        "longest": len(longest_{n}(agent)),
    }}


def reset_{n}(agent: Agent{n}) -> None:
    for session_id in list(agent.sessions):
        agent.sessions[session_id] = []


def busiest_{n}(agent: Agent{n}) -> str | None:
    ranked = sorted(agent.sessions.items(), key=lambda item: len(item[1]), reverse=True)
    return ranked[0][0] if ranked else None


def words_{n}(text: str) -> list[schema.ContentBlock]:
    return [schema.TextContentBlock(text=word) for word in text.split()]
'''

MODELS = '''\
"""Models of module {n}: building and reading responses (unchanged between the releases)."""

from __future__ import annotations

from acp import schema
from acp.schema import NewSessionResponse, PromptResponse


def new_session_{n}(session_id: str) -> NewSessionResponse:
    return NewSessionResponse(session_id=session_id)


def prompt_response_{n}(message_id: str) -> PromptResponse:
    return PromptResponse(message_id=message_id)


def text_{n}(text: str) -> schema.TextContentBlock:
    return schema.TextContentBlock(text=text)


def texts_{n}(texts: list[str]) -> list[schema.TextContentBlock]:
    return [text_{n}(text) for text in texts]


def joined_{n}(blocks: list[schema.ContentBlock]) -> str:
    parts = []
    for block in blocks:
        if isinstance(block, schema.TextContentBlock):
            parts.append(block.text)
    return " ".join(parts)


def implementation_{n}(name: str) -> schema.Implementation:
    return schema.Implementation(name=name, version="{n}.0")


def initialize_{n}() -> schema.InitializeResponse:
    return schema.InitializeResponse(
        protocol_version=2,
        info=implementation_{n}("module-{n}"),
    )


def session_id_of_{n}(response: NewSessionResponse) -> str:
    return response.session_id


def message_id_of_{n}(response: PromptResponse) -> str:
    return response.message_id


class Store{n}:
    """Keeps the responses it has seen."""

    def __init__(self) -> None:
        self.sessions: list[NewSessionResponse] = []
        self.prompts: list[PromptResponse] = []

    def add_session(self, response: NewSessionResponse) -> None:
        self.sessions.append(response)

    def add_prompt(self, response: PromptResponse) -> None:
        self.prompts.append(response)

    def session_ids(self) -> list[str]:
        return [response.session_id for response in self.sessions]

    def message_ids(self) -> list[str]:
        return [response.message_id for response in self.prompts]

    def last_session(self) -> NewSessionResponse | None:
        return self.sessions[-1] if self.sessions else None

    def last_prompt(self) -> PromptResponse | None:
        return self.prompts[-1] if self.prompts else None

    def clear(self) -> None:
        self.sessions.clear()
        self.prompts.clear()


def roundtrip_{n}(store: Store{n}) -> int:
    store.add_session(new_session_{n}("s-{n}"))
    store.add_prompt(prompt_response_{n}("m-{n}"))
    return len(store.session_ids()) + len(store.message_ids())


def describe_{n}(store: Store{n}) -> str:
    session = store.last_session()
    prompt = store.last_prompt()
    return f"{{session.session_id if session else '-'}} {{prompt.message_id if prompt else '-'}}"


def many_{n}(count: int) -> list[PromptResponse]:
    return [prompt_response_{n}(f"m-{{i}}") for i in range(count)]


def total_{n}(responses: list[PromptResponse]) -> int:
    return sum(len(response.message_id) for response in responses)
'''

MCP = '''\
"""MCP bridge {n}: the corner of the API that the next release changes."""

from __future__ import annotations

import asyncio
from typing import Any

from acp import Client, ClientSideConnection, connect_to_agent, schema
from acp.schema import ConnectMcpResponse, McpConnectionId


class Bridge{n}(Client):
    """Keeps one MCP connection per server."""

    def __init__(self) -> None:
        self.connections: dict[str, McpConnectionId] = {{}}

    async def connect_mcp(self, *, server_id: schema.McpServerAcpId, **kwargs: Any) -> ConnectMcpResponse:
        connection_id = f"mcp-{n}-{{server_id}}"
        self.connections[server_id] = connection_id
        return ConnectMcpResponse(connection_id=connection_id)

    async def disconnect_mcp(
        self, *, connection_id: McpConnectionId, **kwargs: Any
    ) -> schema.DisconnectMcpResponse:
        self.connections = {{k: v for k, v in self.connections.items() if v != connection_id}}
        return schema.DisconnectMcpResponse()

    async def message_mcp(
        self,
        *,
        connection_id: str,
        method: str,
        params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> schema.MessageMcpResponse:
        return {{"connection": connection_id, "method": method}}

    async def session_update(
        self, *, session_id: schema.SessionId, update: schema.SessionUpdate, **kwargs: Any
    ) -> None:
        print(session_id, update)


async def run_{n}(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    connection = connect_to_agent(Bridge{n}(), reader, writer)
    await connection.message_mcp(connection_id="mcp-{n}", method="tools/list")
    await connection.mcp_message(connection_id="mcp-{n}", method="notifications/initialized")
    await connection.new_session(cwd="/tmp")


async def forward_{n}(target: ClientSideConnection, name: str) -> None:
    await target.mcp_message(connection_id="mcp-{n}", method=name)


def request_{n}(connection: str) -> schema.MessageMcpRequest:
    return schema.MessageMcpRequest(connection_id=connection, method="tools/call")


def connection_of_{n}(request: schema.MessageMcpRequest) -> str:
    return request.connection_id


def connect_request_{n}(server: str) -> schema.ConnectMcpRequest:
    return schema.ConnectMcpRequest(server_id=server)


def servers_{n}(bridge: Bridge{n}) -> list[str]:
    return sorted(bridge.connections)


def connections_{n}(bridge: Bridge{n}) -> list[str]:
    return sorted(bridge.connections.values())


def has_{n}(bridge: Bridge{n}, server: str) -> bool:
    return server in bridge.connections


def drop_{n}(bridge: Bridge{n}, server: str) -> None:
    bridge.connections.pop(server, None)


def count_{n}(bridges: list[Bridge{n}]) -> int:
    total = 0
    for bridge in bridges:
        total += len(bridge.connections)
    return total


def busiest_{n}(bridges: list[Bridge{n}]) -> Bridge{n} | None:
    ranked = sorted(bridges, key=lambda bridge: len(bridge.connections), reverse=True)
    return ranked[0] if ranked else None


def describe_{n}(bridge: Bridge{n}) -> str:
    return ", ".join(f"{{k}}={{v}}" for k, v in sorted(bridge.connections.items()))


def merge_{n}(left: Bridge{n}, right: Bridge{n}) -> Bridge{n}:
    merged = Bridge{n}()
    merged.connections.update(left.connections)
    merged.connections.update(right.connections)
    return merged


def reset_{n}(bridge: Bridge{n}) -> None:
    bridge.connections.clear()
'''


@dataclass(frozen=True)
class Project:
    files: list[tuple[str, bytes]]
    lines: int
    mcp_files: int


def build_project(target_lines: int, mcp_every: int | None) -> Project:
    """Modules up to ``target_lines``: every ``mcp_every``-th an MCP one (None: none), the others
    handlers and models."""
    files: list[tuple[str, bytes]] = []
    lines = mcp = 0
    n = 0
    while lines < target_lines:
        if mcp_every is not None and n % mcp_every == mcp_every - 1:
            template, kind = MCP, "mcp"
            mcp += 1
        else:
            template, kind = (HANDLERS, "handlers") if n % 2 == 0 else (MODELS, "models")
        source = template.format(n=n)
        files.append((f"app/{kind}_{n}.py", source.encode()))
        lines += source.count("\n")
        n += 1
    return Project(files, lines, mcp)


def parse_all(project: Project) -> None:
    for _, source in project.files:
        cst.parse_module(source)


def codemod_all(project: Project, migration: Migration) -> tuple[int, int]:
    """The codemod over every file in memory; the number of findings and of files rewritten."""
    engine = Codemod(migration, "acp")
    findings = rewritten = 0
    for path, source in project.files:
        after, found, _ = engine.rewrite(source, path)
        findings += len(found)
        rewritten += after != source
    return findings, rewritten


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=50_000, help="the big project (default: %(default)s)")
    parser.add_argument("--small", type=int, default=5_000, help="the scaling check's (default: %(default)s)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="rounds; the best counts (default: %(default)s)"
    )
    args = parser.parse_args()

    source = SchemaSource(read_lock())
    migration = migration_from_diff(diff_for_migration(source.load(OLD), source.load(NEW), "unstable"))
    runs = {
        "small": ("1 module in 10 touches the change", build_project(args.small, 10), migration),
        "big": ("1 module in 10 touches the change", build_project(args.lines, 10), migration),
        "small worst": ("every module touches the change", build_project(args.small, 1), migration),
        "worst": ("every module touches the change", build_project(args.lines, 1), migration),
        # the ends the codemod follows are the old release's (the migration from the diff has them too)
        "renames": (
            "every module has renames",
            build_project(args.lines, None),
            dataclasses.replace(RENAMES, api=migration.api),
        ),
    }
    # every round times every project, parse and codemod in turn, so a change in the machine's
    # load between rounds hits all of them alike; the best of the rounds counts
    best = {key: [float("inf"), float("inf")] for key in runs}
    counts = dict.fromkeys(runs, (0, 0))
    for _ in range(args.repeat):
        for key, (_, project, run_migration) in runs.items():
            started = time.perf_counter()
            parse_all(project)
            best[key][0] = min(best[key][0], time.perf_counter() - started)
            started = time.perf_counter()
            counts[key] = codemod_all(project, run_migration)
            best[key][1] = min(best[key][1], time.perf_counter() - started)

    python = ".".join(map(str, sys.version_info[:3]))
    print(
        f"codemod for ACP {OLD} -> {NEW} (unstable) and for RENAMES on synthetic projects; "
        f"Python {python}, best of {args.repeat} rounds"
    )
    print(f"{'project':36} {'lines':>7} {'files':>6} {'parse l/s':>10} {'codemod l/s':>12} {'ratio':>6}")
    for key, (label, project, _) in runs.items():
        parse_time, codemod_time = best[key]
        found, rewritten = counts[key]
        print(
            f"{label:36} {project.lines:>7} {len(project.files):>6} {project.lines / parse_time:>10,.0f} "
            f"{project.lines / codemod_time:>12,.0f} {codemod_time / parse_time:>6.2f}"
            f"   ({project.mcp_files} MCP modules, {found} findings, {rewritten} files rewritten)"
        )
    for small_key, big_key in (("small", "big"), ("small worst", "worst")):
        small, big = runs[small_key][1], runs[big_key][1]
        per_line = (best[big_key][1] / big.lines) / (best[small_key][1] / small.lines)
        ratio = (best[big_key][1] / best[big_key][0]) / (best[small_key][1] / best[small_key][0])
        print(
            f"scaling {small.lines:,} -> {big.lines:,} lines, {runs[big_key][0]} (1.00 is linear): "
            f"codemod time per line x{per_line:.2f}; codemod/parse ratio x{ratio:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
