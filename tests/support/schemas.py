"""Small hand-written schemas: surfaces and generated packages built from a few ``$defs``."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from codegen.emit.package import build_package
from codegen.schema.builder import build_surface
from codegen.schema.ir import ApiSurface, Stability
from codegen.schema.load import SchemaDocument, sha256_bytes

META: dict[str, Any] = {"version": 2, "agentMethods": {}, "clientMethods": {}, "protocolMethods": {}}


def document(data: Any, file_name: str = "schema.json", release: str = "9.9.9-test") -> SchemaDocument:
    raw = json.dumps(data).encode()
    return SchemaDocument(release, file_name, Path(file_name), sha256_bytes(raw), data)


def surface(
    defs: dict[str, Any],
    *,
    roots: list[Any] | None = None,
    meta: dict[str, Any] | None = None,
    stability: Stability = "stable",
) -> ApiSurface:
    """The surface of a schema holding ``defs`` (and, for methods, the root message kinds ``roots``)."""
    data = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs, "anyOf": roots or []}
    return build_surface(document(data), document(meta or META, "meta.json"), stability)


def package(built: ApiSurface, folder: Path, name: str) -> ModuleType:
    """Generate ``built`` into ``folder/name`` and import it (as a fresh module)."""
    for rel, text in build_package(built).files().items():
        path = folder / name / rel.split("/", 1)[1]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]
    return importlib.import_module(name)


def tagged(tag: str, value: str, *, ref: str | None = None, **extra: Any) -> dict[str, Any]:
    """A union member that pins ``tag`` to ``value`` (and builds on ``ref``, if given)."""
    member: dict[str, Any] = {
        "type": "object",
        "properties": {tag: {"type": "string", "const": value}},
        "required": [tag],
        **extra,
    }
    if ref is not None:
        member["allOf"] = [{"$ref": f"#/$defs/{ref}"}]
    return member


def catch_all(tag: str, known: list[str], **extra: Any) -> dict[str, Any]:
    """The open member of a union on ``tag``: any string but the ``known`` tags."""
    return {
        "title": "other",
        "type": "object",
        "properties": {tag: {"type": "string"}},
        "required": [tag],
        "not": {"anyOf": [tagged(tag, value) for value in known]},
        "additionalProperties": True,
        **extra,
    }


def obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or [], **extra}


def nested_defs() -> dict[str, Any]:
    """Three levels of tagged unions, shaped like ACP 2.0.0-alpha.8's session updates."""
    return {
        "Error": obj({"code": {"type": "integer"}, "message": {"type": "string"}}, ["code", "message"]),
        "ErrorStopReason": obj(
            {
                "error": {
                    "anyOf": [{"$ref": "#/$defs/Error"}, {"type": "null"}],
                    "x-deserialize-default-on-error": True,
                }
            }
        ),
        "Running": obj({"since": {"type": ["string", "null"]}}),
        "Idle": {
            "description": "Ready for a new prompt.",
            "type": "object",
            "properties": {
                "stopReason": {
                    "description": "Why work stopped.",
                    "type": ["string", "null"],
                    "x-deserialize-default-on-error": True,
                },
                "note": {"type": "string"},
            },
            "anyOf": [
                tagged("stopReason", "end_turn", description="Ended."),
                tagged("stopReason", "error", ref="ErrorStopReason", description="Failed."),
                catch_all("stopReason", ["end_turn", "error"]),
                {"title": "none", "type": "object", "properties": {"stopReason": {"type": "null"}}},
            ],
        },
        "State": {
            "anyOf": [
                tagged("state", "running", ref="Running"),
                tagged("state", "idle", ref="Idle"),
                catch_all("state", ["running", "idle"]),
            ]
        },
        "Update": {
            "anyOf": [
                {
                    **tagged("kind", "message"),
                    "properties": {"kind": {"const": "message"}, "text": {"type": "string"}},
                },
                tagged("kind", "state", ref="State"),
                catch_all("kind", ["message", "state"]),
            ]
        },
    }
