"""Fuzz the loader, the IR builder and the normaliser.

Random bytes, random JSON documents and random mutations of a real release
go through the same steps ``acp-codegen generate`` takes before the engine
runs: parse, build the IR of the stable and the unstable schema, normalise.
Every input must either work or raise :class:`codegen.errors.CodegenError`;
any other exception is a bug.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.emit.normalise import normalise
from codegen.errors import CodegenError
from codegen.schema.builder import build_surface
from codegen.schema.load import (
    LockedFile,
    LockedRelease,
    SchemaDocument,
    load_release_folder,
    parse_json,
    sha256_bytes,
)
from tests.support.releases import RELEASES, release_files

EXAMPLES = int(os.environ.get("ACP_FUZZ_EXAMPLES", "100"))  # raise it for a longer hunt
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
BASE = release_files(RELEASES[0])  # the smallest release
SCHEMA = BASE.schema(False).data
META = BASE.meta(False).data

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
# words the builder reacts to, so that random documents reach deep into it
keywords = st.sampled_from(
    [
        "$defs",
        "$ref",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "properties",
        "required",
        "items",
        "type",
        "const",
        "enum",
        "default",
        "title",
        "description",
        "additionalProperties",
        "x-method",
        "x-side",
        "x-deserialize-default-on-error",
        "x-deserialize-skip-invalid-items",
        "object",
        "string",
        "array",
        "#/$defs/A",
        "#/$defs/B",
        "A",
        "B",
        "params",
        "result",
        "version",
        "agentMethods",
        "null",
    ]
)
schemaish = st.recursive(
    json_scalars | keywords,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(keywords | st.text(max_size=4), inner, max_size=5),
    max_leaves=30,
)


def document(data: Any, name: str = "schema.json") -> SchemaDocument:
    return SchemaDocument("0.0.0-fuzz", name, Path(name), "0" * 64, data)


def build_and_normalise(schema: Any, meta: Any) -> None:
    """What generate does before the engine; only CodegenError may escape."""
    try:
        stable = build_surface(document(schema), document(meta, "meta.json"), "stable")
        unstable = build_surface(document(schema), document(meta, "meta.json"), "unstable", baseline=stable)
        normalise(stable)
        normalise(unstable)
    except CodegenError as error:
        assert error.one_line() and "\n" not in error.one_line()


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes_parse_or_fail_cleanly(data: bytes) -> None:
    try:
        parse_json(data, "random.json")
    except CodegenError as error:
        assert error.file == "random.json"


@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
def test_python_only_numbers_are_not_json(constant: bytes) -> None:
    with pytest.raises(CodegenError, match="is not a JSON number"):
        parse_json(b'{"minimum": ' + constant + b"}", "nan.json")


def test_deeply_nested_json_fails_cleanly() -> None:
    with pytest.raises(CodegenError, match="nested too deeply") as raised:
        parse_json(b"[" * 100_000 + b"]" * 100_000, "deep.json")
    assert "deep.json" in raised.value.one_line()


@FUZZ
@given(json_values, json_values)
def test_random_json_documents(schema: Any, meta: Any) -> None:
    build_and_normalise(schema, meta)


@FUZZ
@given(schemaish)
def test_random_schema_shaped_documents(defs: Any) -> None:
    build_and_normalise({"anyOf": [], "$defs": defs}, META)
    if isinstance(defs, dict):
        build_and_normalise({"anyOf": [], "$defs": {"A": defs, "B": {"type": "object"}}}, META)


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_paths(value, (*path, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_paths(value, (*path, index)))
    return found


SCHEMA_PATHS = _paths(SCHEMA)
META_PATHS = _paths(META)

mutation = st.tuples(
    st.sampled_from(["replace", "delete", "rename", "wrap"]),
    st.floats(min_value=0, max_value=1, exclude_max=True),
    json_values | keywords,
)


def mutate(root: Any, kind: str, where: float, value: Any) -> Any:
    paths = SCHEMA_PATHS if root is SCHEMA else META_PATHS if root is META else _paths(root)
    path = paths[int(where * len(paths))]
    root = copy.deepcopy(root)
    if not path:
        return value
    parent = root
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if kind == "replace":
        parent[last] = value
    elif kind == "delete":
        del parent[last]
    elif kind == "wrap":
        parent[last] = {"anyOf": [parent[last], value]}
    elif isinstance(parent, dict):
        parent[str(value)] = parent.pop(last)
    return root


@FUZZ
@given(st.lists(mutation, min_size=1, max_size=3), st.booleans())
def test_mutated_real_release(mutations: list[tuple[str, float, Any]], on_meta: bool) -> None:
    schema, meta = SCHEMA, META
    for kind, where, value in mutations:
        if on_meta:
            meta = mutate(meta, kind, where, value)
        else:
            schema = mutate(schema, kind, where, value)
    build_and_normalise(schema, meta)


@settings(FUZZ, max_examples=max(1, EXAMPLES // 5))
@given(st.sampled_from(["schema.json", "meta.json"]), st.binary(max_size=64))
def test_loader_with_random_files(tmp_path_factory: Any, target: str, junk: bytes) -> None:
    folder = tmp_path_factory.mktemp("release")
    files = {}
    for name, document_ in BASE.documents.items():
        raw = json.dumps(document_.data).encode()
        files[name] = junk if name == target else raw
        (folder / name).write_bytes(files[name])
    locked = LockedRelease(
        "0.0.0-fuzz", "t", {n: LockedFile(n, sha256_bytes(raw), "") for n, raw in files.items()}
    )
    try:
        build_and_normalise(
            *(
                d.data
                for d in (
                    load_release_folder(locked, folder).schema(False),
                    load_release_folder(locked, folder).meta(False),
                )
            )
        )
    except CodegenError as error:
        assert target in error.one_line()
