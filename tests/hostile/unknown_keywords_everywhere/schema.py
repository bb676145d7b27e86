"""Every subschema carries ``x-`` keywords no acp-codegen knows, shaped like real keywords.

They sit next to nullable members (``{"type": "null"}``), enum constants,
catch-all ``not`` clauses and empty schemas, where an extra key once changed
how a shape was read; the output must be what it is without them.
"""

from typing import Any


def plain() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "anyOf": [],
        "$defs": {
            "Mode": {"anyOf": [{"const": "a", "type": "string"}, {"const": "b", "type": "string"}]},
            "Thing": {
                "type": "object",
                "properties": {
                    "name": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "anything": {},
                    "mode": {"anyOf": [{"$ref": "#/$defs/Mode"}, {"type": "null"}]},
                    "x-literal": {"type": "string", "description": "a property whose NAME starts with x-"},
                },
                "required": ["x-literal"],
            },
            "Shape": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"type": "string", "const": "dot"}},
                        "required": ["kind"],
                    },
                    {
                        "title": "other",
                        "type": "object",
                        "properties": {"kind": {"type": "string"}},
                        "required": ["kind"],
                        "not": {
                            "anyOf": [
                                {
                                    "type": "object",
                                    "properties": {"kind": {"const": "dot"}},
                                    "required": ["kind"],
                                }
                            ]
                        },
                    },
                ]
            },
        },
    }


def sprinkle(node: Any) -> Any:
    """``x-`` keywords in every schema object (not in property names, constants or enums)."""
    if isinstance(node, list):
        return [sprinkle(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("const", "enum", "default"):
            out[key] = value
        elif key in ("properties", "$defs"):
            out[key] = {name: sprinkle(item) for name, item in value.items()}
        else:
            out[key] = sprinkle(value)
    out["x-rust-type"] = {"type": "null", "anyOf": [{"$ref": "#/$defs/Nowhere"}]}
    out["x-nullable"] = True
    return out


def build() -> dict[str, Any]:
    return sprinkle(plain())
