"""What the agent wrote, judged against the JSON Schema of its release (the TCK's schema rows).

The schema is read through ``codegen.schema.load`` (the locked files, checked against their
sha256) and applied with ``jsonschema``, independently of the generated models that wrote the
messages.
"""

from __future__ import annotations

import functools
from typing import Any

from jsonschema import Draft202012Validator

from tests.support.releases import release_files


class ReleaseSchema:
    """The stable JSON Schema of one release, as the checks of the TCK rows need it."""

    def __init__(self, release: str) -> None:
        self.release = release
        self.data: dict[str, Any] = release_files(release).schema(False).data
        self.defs: dict[str, Any] = self.data["$defs"]
        agent = next(branch for branch in self.data["anyOf"] if branch.get("title") == "Agent")
        self._agent = self._validator(agent)
        self._results = {
            (definition["x-method"]): name
            for name, definition in self.defs.items()
            if isinstance(definition, dict)
            and definition.get("x-side") == "agent"
            and name.endswith("Response")
            and "x-method" in definition
        }
        self._params = {
            definition["x-method"]: name
            for name, definition in self.defs.items()
            if isinstance(definition, dict) and "x-method" in definition and not name.endswith("Response")
        }

    def _validator(self, schema: dict[str, Any]) -> Draft202012Validator:
        return Draft202012Validator({**schema, "$defs": self.defs})

    def issues(self, message: dict[str, Any], method: str | None = None) -> list[str]:
        """Why ``message`` (one the agent wrote) does not match the schema; ``method``: what it answers."""
        found = [f"{list(e.absolute_path)}: {e.message}" for e in self._agent.iter_errors(message)]
        if method is not None and "result" in message and method in self._results:
            found += self.result_issues(method, message["result"])
        return found

    def result_issues(self, method: str, result: Any) -> list[str]:
        validator = self._validator({"$ref": f"#/$defs/{self._results[method]}"})
        return [
            f"{method} result {list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(result)
        ]

    def unknown_keys(self, method: str, value: Any, *, result: bool) -> list[str]:
        """Top-level keys of a params or result object that its type does not define."""
        name = self._results.get(method) if result else self._params.get(method)
        if name is None or not isinstance(value, dict):
            return []
        known = self._properties(self.defs[name])
        return sorted(key for key in value if key not in known)

    def _properties(self, definition: dict[str, Any]) -> set[str]:
        """The properties a type defines, its ``allOf`` and ``$ref`` included (not its open branches)."""
        names = set(definition.get("properties", {}))
        for part in definition.get("allOf", []):
            names |= self._properties(self._resolved(part))
        if "$ref" in definition:
            names |= self._properties(self._resolved(definition))
        return names

    def _resolved(self, schema: dict[str, Any]) -> dict[str, Any]:
        ref = schema.get("$ref")
        return self.defs[ref.rsplit("/", 1)[1]] if isinstance(ref, str) else schema

    def values(self, name: str, tag: str | None = None) -> set[str]:
        """The defined values of an open enum (``tag`` ``None``) or the tags of a tagged union."""
        found = set()
        for branch in self.defs[name]["anyOf"]:
            value = (
                branch.get("const") if tag is None else branch.get("properties", {}).get(tag, {}).get("const")
            )
            if isinstance(value, str):
                found.add(value)
        return found

    def defined_or_extension(self, name: str, value: Any, tag: str | None = None) -> bool:
        """Whether ``value`` is a value the schema defines at ``name``, or a ``_``-prefixed extension."""
        return isinstance(value, str) and (value in self.values(name, tag) or value.startswith("_"))

    def client_methods(self) -> set[str]:
        """What an agent may call: the client's methods and the protocol's (the release's meta table)."""
        meta = release_files(self.release).meta(False).data
        return {*meta["clientMethods"].values(), *meta.get("protocolMethods", {}).values()}

    def has_batches(self, sender: str = "Client") -> bool:
        """Whether the schema lets ``sender`` send JSON-RPC batches (a ``<Sender>BatchCall``)."""
        return any(branch.get("title") == f"{sender}BatchCall" for branch in self.data["anyOf"])


@functools.cache
def release_schema(release: str) -> ReleaseSchema:
    return ReleaseSchema(release)
