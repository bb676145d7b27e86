"""Helpers for the differ's tests: small, named mutations of a real release, and the command line."""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen import cli
from codegen.diff import Change, diff_surfaces
from codegen.schema.builder import build_surface
from codegen.schema.ir import ApiSurface, Field, Method, NamedType, ObjectType, TypeExpr
from codegen.schema.load import RELEASE_FILES
from tests.support.releases import release_files

BASE = "2.0.0-alpha.7"
A3, A5, A7 = "2.0.0-alpha.3", "2.0.0-alpha.5", "2.0.0-alpha.7"
MESSAGE_ID = "6b53a23146a9d24d"  # field-added-required PromptResponse.messageId (alpha.3 -> alpha.5)

# the roles a change breaks, as Change.roles has them
CLIENT = ("old client",)
AGENT = ("old agent",)
BOTH = ("old agent", "old client")
PYTHON = ("python callers",)
NOBODY: tuple[str, ...] = ()

Defs = dict[str, Any]


@functools.cache
def _base_data() -> str:
    return json.dumps(release_files(BASE).schema(False).data)


def base_data() -> dict[str, Any]:
    """A fresh copy of the stable schema of the base release."""
    data: dict[str, Any] = json.loads(_base_data())
    return data


def surface_from(data: dict[str, Any]) -> ApiSurface:
    files = release_files(BASE)
    schema = dataclasses.replace(files.schema(False), data=data)
    return build_surface(schema, files.meta(False), "stable")


@functools.cache
def base_surface() -> ApiSurface:
    return surface_from(base_data())


def edited(edit: Callable[[Defs], Any]) -> ApiSurface:
    """The base release with ``edit`` applied to its ``$defs``."""
    data = base_data()
    edit(data["$defs"])
    return surface_from(data)


def renamed(data: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``data`` with the ``$defs`` entry ``old`` called ``new`` everywhere."""
    text = json.dumps(data).replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
    out: dict[str, Any] = json.loads(text)
    out["$defs"] = {new if k == old else k: v for k, v in out["$defs"].items()}
    return out


def changes(old: ApiSurface, new: ApiSurface) -> tuple[Change, ...]:
    return diff_surfaces(old, new).changes


def only(found: tuple[Change, ...], rule_id: str) -> Change:
    """The one change of ``rule_id`` (fails listing everything found otherwise)."""
    matches = [c for c in found if c.rule.id == rule_id]
    assert len(matches) == 1, [(c.rule.id, c.subject) for c in found]
    return matches[0]


def props(defs: Defs, name: str) -> dict[str, Any]:
    found: dict[str, Any] = defs[name]["properties"]
    return found


def deep(value: Any) -> Any:
    return copy.deepcopy(value)


# --- schema edits used by several test modules ------------------------------------------


def drop_field(name: str, wire: str) -> Callable[[Defs], None]:
    def edit(defs: Defs) -> None:
        del props(defs, name)[wire]
        if wire in defs[name].get("required", []):
            defs[name]["required"].remove(wire)

    return edit


def rename(old: str, new: str) -> Callable[[Defs], None]:
    def edit(defs: Defs) -> None:
        defs.update(renamed({"$defs": defs}, old, new)["$defs"])
        del defs[old]

    return edit


def add_unused_type(defs: Defs) -> None:
    defs["Unused"] = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}


# --- IR edits (the method table) -------------------------------------------------------


def methods_edit(edit: Callable[[Method], Method | None]) -> Callable[[ApiSurface], ApiSurface]:
    def apply(surface: ApiSurface) -> ApiSurface:
        kept = [m for m in (edit(m) for m in surface.methods) if m is not None]
        return dataclasses.replace(surface, methods=tuple(kept))

    return apply


def cancel_to_client(m: Method) -> Method:
    return dataclasses.replace(m, side="client") if m.wire_name == "session/cancel" else m


# --- the command line -------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def folder_of(tmp_path: Path, release: str, name: str = "side") -> Path:
    """A copy of a release's four files in a folder of its own."""
    target = tmp_path / name
    target.mkdir()
    for file_name in RELEASE_FILES:
        shutil.copy(release_files(release).folder / file_name, target / file_name)
    return target


def waiver_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "waivers.toml"
    path.write_text(text, encoding="utf-8")
    return path


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("acp-codegen: error: ")
    return lines[0]


# --- hand-made surfaces ------------------------------------------------------------------


PEER_ENVELOPES = {"AgentMessage": "agent", "ClientMessage": "client"}
"""The root message kinds of a hand-made surface: its peers are an agent and a client (no type is one)."""


def tiny(*types: NamedType, methods: tuple[Method, ...] = ()) -> ApiSurface:
    """A stable surface of only ``types`` and ``methods`` (no message carries a type unless a method does)."""
    return ApiSurface(
        release="tiny",
        stability="stable",
        schema_file="schema.json",
        schema_sha256="",
        meta_file="meta.json",
        meta_sha256="",
        protocol_version=2,
        types={t.name: t for t in types},
        methods=methods,
        envelopes=PEER_ENVELOPES,
    )


def obj(name: str, *fields: tuple[str, TypeExpr], base: str | None = None) -> ObjectType:
    """An object type of required, non-nullable fields named the same on the wire and in Python."""
    return ObjectType(name, tuple(Field(wire, wire, expr, True, False) for wire, expr in fields), base=base)


# --- a small hand-written protocol ---------------------------------------------------------


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def _payloads(*names: str) -> dict[str, Any]:
    return {"anyOf": [{"title": n, "allOf": [_ref(n)]} for n in names]}


def _call(*payloads: str) -> dict[str, Any]:
    params = {"anyOf": [_payloads(*payloads), {"type": "null"}]}
    return {
        "type": "object",
        "properties": {"method": {"type": "string"}, "params": params},
        "required": ["method"],
        "x-docs-ignore": True,
    }


def _response(*payloads: str) -> dict[str, Any]:
    result = {
        "title": "Result",
        "type": "object",
        "properties": {"id": {"type": "integer"}, "result": _payloads(*payloads)},
        "required": ["id", "result"],
    }
    error = {
        "title": "Error",
        "type": "object",
        "properties": {"id": {"type": "integer"}, "error": {"type": "string"}},
        "required": ["id", "error"],
    }
    return {"anyOf": [result, error], "x-docs-ignore": True}


def _kind(sender: str) -> dict[str, Any]:
    roles = ("Request", "Response", "Notification")
    return {
        "title": sender,
        "type": "object",
        "anyOf": [{"title": r, "allOf": [_ref(sender + r)]} for r in roles],
    }


def batch(sender: str) -> dict[str, Any]:
    """The root member of a JSON-RPC batch ``sender`` may send (``AgentBatchCall``)."""
    items = {"anyOf": [{"title": r, "allOf": [_ref(sender + r)]} for r in ("Request", "Notification")]}
    return {"title": f"{sender}BatchCall", "type": "array", "items": items, "minItems": 1}


@dataclasses.dataclass
class Mini:
    """A small hand-written release: clients call ``session/prompt``, agents send ``session/update``.

    ``PromptRequest`` (sent by clients) has a ``value``, an untagged union of a
    string and a list of strings, and ``data`` of any value;
    ``UpdateNotification`` (sent by agents) an ``update`` tagged on ``kind``.
    Tests edit ``defs`` and ``roots``, then :meth:`surface` builds it.
    """

    defs: Defs
    roots: list[Any]
    meta: dict[str, Any]

    def surface(self) -> ApiSurface:
        """The IR of the release (a shape the models cannot enforce yet is a warning, not an error)."""
        from codegen.diagnostics import collecting
        from tests.support.schemas import surface

        with collecting(strict=False):
            return surface(self.defs, roots=self.roots, meta=self.meta)


def mini() -> Mini:
    method = {"x-method": "session/prompt", "x-side": "agent"}
    defs: Defs = {
        "PromptRequest": {
            "type": "object",
            "properties": {
                "sessionId": {"type": "string"},
                "value": _ref("Value"),
                "data": {"description": "Anything."},
            },
            "required": ["sessionId", "value"],
            **method,
        },
        "PromptResponse": {"type": "object", "properties": {"stopReason": {"type": "string"}}, **method},
        "Value": {
            "anyOf": [
                {"title": "Text", "type": "string"},
                {"title": "Lines", "type": "array", "items": {"type": "string"}},
            ]
        },
        "UpdateNotification": {
            "type": "object",
            "properties": {"update": _ref("Update")},
            "required": ["update"],
            "x-method": "session/update",
            "x-side": "client",
        },
        "Update": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "const": "message"},
                        "text": {"type": "string"},
                    },
                    "required": ["kind"],
                },
                {
                    "type": "object",
                    "properties": {"kind": {"type": "string", "const": "plan"}},
                    "required": ["kind"],
                },
            ]
        },
        "ExtRequest": {"description": "Any extension request."},
        "ExtResponse": {"description": "Any extension response."},
        "ExtNotification": {"description": "Any extension notification."},
        "ClientRequest": _call("PromptRequest", "ExtRequest"),
        "ClientResponse": _response("ExtResponse"),
        "ClientNotification": _call("ExtNotification"),
        "AgentRequest": _call("ExtRequest"),
        "AgentResponse": _response("PromptResponse", "ExtResponse"),
        "AgentNotification": _call("UpdateNotification", "ExtNotification"),
    }
    meta = {
        "version": 2,
        "agentMethods": {"session_prompt": "session/prompt"},
        "clientMethods": {"session_update": "session/update"},
        "protocolMethods": {},
    }
    return Mini(defs, [_kind("Agent"), _kind("Client")], meta)
