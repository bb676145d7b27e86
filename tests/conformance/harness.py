"""Differential conformance: the generated models against the upstream JSON Schema.

For one ``$defs`` type of one schema file the harness

* turns the type into a schema hypothesis-jsonschema can generate from
  (:func:`generation_schema`), so that hypothesis produces instances;
* checks a *valid* instance (one the JSON Schema accepts, Draft 2020-12 as the
  ``jsonschema`` library implements it): the model must accept it, and its
  dump (``by_alias=True, exclude_unset=True``) must equal the input and
  validate again (:meth:`Target.check_valid`);
* derives *mutants* from a valid instance (:func:`near_misses`): a missing
  required property, a wrong tag or const, a value outside a closed set, and,
  on every property and on the first item of every list, one value of every
  class of JSON value the current one is not (:func:`probes`: a string, a
  numeric string, ``"true"``, an integer, an integral float, a fractional
  float, a boolean, ``null``, an object, an array).  Each one the schema
  rejects (a *near miss*) must be rejected by the model, unless the schema
  marks a property on the way lenient (``x-deserialize-default-on-error``:
  the value is treated as omitted; ``x-deserialize-default-on-null``: a
  ``null`` is; ``x-deserialize-skip-invalid-items``: the item is dropped):
  then the model must accept it and dump exactly the repaired instance
  (:meth:`Target.check_near_miss`).  A mutant the schema still accepts (``2.0``
  for an integer, any value for an untyped property, an unknown tag landing
  in an open union) is checked like a valid instance.  An object in a union is also moved to
  the other members (:func:`_moved`): its tag set to every value a member pins or a catch-all
  refuses, and its tag removed, which a default (untagged) member may take.

Every instance is checked twice, in both of pydantic's input modes: as Python
data (``validate_python``) and as JSON text (``validate_json``).  Every check
returns the disagreements it found; :mod:`exceptions.toml` lists the ones
accepted on purpose, each with its reason.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import math
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
from pydantic import TypeAdapter, ValidationError

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent

from codegen.schema.ir import ApiSurface  # noqa: E402
from tests.support.releases import package_of, release_files, surface_of  # noqa: E402

EXCEPTIONS_FILE = HERE / "exceptions.toml"
DUMP = {"by_alias": True, "exclude_unset": True, "mode": "json"}
DEFAULT_ON_ERROR = "x-deserialize-default-on-error"
DEFAULT_ON_NULL = "x-deserialize-default-on-null"
SKIP_INVALID_ITEMS = "x-deserialize-skip-invalid-items"
MODES = ("python", "json")
"""pydantic's two input modes; every instance is validated in both."""

# Keywords whose value is one schema, a map of schemas or a list of schemas.
_ONE_SCHEMA = ("items", "not", "additionalProperties", "unevaluatedProperties", "contains", "propertyNames")
_SCHEMA_MAP = ("properties", "patternProperties", "dependentSchemas")
_SCHEMA_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
# Dropped before generation: annotations, and keywords hypothesis-jsonschema
# does not implement (the instances are filtered through jsonschema anyway).
_NOT_FOR_GENERATION = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "$comment",
        "format",
        "contentEncoding",
        "contentMediaType",
        "deprecated",
        "readOnly",
        "writeOnly",
        "unevaluatedProperties",
        "$schema",
    }
)


# --- schemas ------------------------------------------------------------------


def _resolve_ref(defs: Mapping[str, Any], ref: str) -> tuple[str, Any]:
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise ValueError(f"unsupported $ref {ref!r}")
    name = ref[len(prefix) :].replace("~1", "/").replace("~0", "~")
    return name, defs[name]


def generation_schema(defs: Mapping[str, Any], name: str) -> Any:
    """``$defs[name]`` as a self-contained draft-07 schema for hypothesis-jsonschema.

    hypothesis-jsonschema implements drafts 4 to 7 and no recursive ``$ref``.
    So every ``$ref`` is inlined (a recursive one becomes ``false``: the
    generator never takes that branch), ``x-`` extensions, annotations,
    ``format`` and ``unevaluatedProperties`` are dropped, and an ``allOf`` of
    one schema is replaced by that schema.  What this loses only widens the
    candidates; the harness keeps the ones Draft 2020-12 accepts.
    """

    def convert(node: Any, stack: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key.startswith("x-") or key in _NOT_FOR_GENERATION or key == "$ref":
                continue
            if key in _ONE_SCHEMA:
                out[key] = convert(value, stack)
            elif key in _SCHEMA_MAP and isinstance(value, dict):
                out[key] = {k: convert(v, stack) for k, v in value.items()}
            elif key in _SCHEMA_LIST and isinstance(value, list):
                out[key] = [convert(v, stack) for v in value]
            else:
                out[key] = value
        if isinstance(node.get("$ref"), str):
            target_name, target = _resolve_ref(defs, node["$ref"])
            inlined = False if target_name in stack else convert(target, (*stack, target_name))
            out = {"allOf": [inlined, out]} if out else inlined
        return _flatten_all_of(out)

    return convert(defs[name], (name,))


_PLAIN_OBJECT_KEYS = frozenset({"type", "properties", "required"})


def _flatten_all_of(node: Any) -> Any:
    """Merge the plain object schemas of an ``allOf`` into the node itself.

    hypothesis-jsonschema can merge any ``allOf`` but takes seconds to do so
    on the large unions of ACP; the shapes merged here (properties, required
    and ``type: object``) combine by simple union.
    """
    if not isinstance(node, dict) or not isinstance(node.get("allOf"), list):
        return node
    keep: list[Any] = []
    merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
    for part in node["allOf"]:
        part = _flatten_all_of(part)
        plain = (
            isinstance(part, dict)
            and part.keys() <= _PLAIN_OBJECT_KEYS
            and part.get("type", "object") == "object"
        )
        if not plain or (merged.keys() - _PLAIN_OBJECT_KEYS - {"anyOf", "oneOf"}):
            keep.append(part)
            continue
        for key, prop in part.get("properties", {}).items():
            present = merged.setdefault("properties", {})
            present[key] = {"allOf": [present[key], prop]} if key in present else prop
        if part.get("required"):
            merged["required"] = sorted(set(merged.get("required", [])) | set(part["required"]))
        if "type" in part:
            merged["type"] = "object"
    if keep:
        merged["allOf"] = keep
    if list(merged) == ["allOf"] and len(merged["allOf"]) == 1:
        return merged["allOf"][0]
    return merged


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: ``1 == 1.0`` but ``true != 1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


# --- near misses ------------------------------------------------------------------


@dataclass(frozen=True)
class Edge:
    """One step into an instance, and whether the schema marks it lenient."""

    key: str | int
    default_on_error: bool = False
    skip_invalid_items: bool = False
    required: bool = False
    default_on_null: bool = False
    null_default: str | None = None
    """The value a ``null`` is read as on a default-on-null property, as JSON text (``None``: unknown)."""


@dataclass
class Location:
    """An object inside an instance and what the schema says about its properties."""

    path: tuple[Edge, ...]
    properties: dict[str, list[Any]] = field(default_factory=dict)
    required: set[str] = field(default_factory=set)
    in_union: set[str] = field(default_factory=set)
    tags: dict[str, list[Any]] = field(default_factory=dict)
    """Per property: every value a member of a union the object is in pins it to (``const``),
    and every value a catch-all member refuses (``not`` of consts).  Both the members the object
    is in and the ones it is not count, so a mutant can move the object to another member."""
    lenient_at: dict[tuple[str, str], dict[str, list[Any]]] = field(default_factory=dict)
    """Per pinned ``(property, value as JSON)``: the default-on-error properties of the member that
    pins it (its ``$ref`` and ``allOf`` parts included), which read a value their schema refuses as
    omitted once an object moves there."""

    def edge(self, key: str) -> Edge:
        """The step into property ``key``, with its lenient markers."""
        props = [p for p in self.properties.get(key, []) if isinstance(p, dict)]
        return Edge(
            key,
            any(p.get(DEFAULT_ON_ERROR) for p in props),
            any(p.get(SKIP_INVALID_ITEMS) for p in props),
            key in self.required,
            any(p.get(DEFAULT_ON_NULL) for p in props),
            _null_default(props) if any(p.get(DEFAULT_ON_NULL) for p in props) else None,
        )


# What a type's default is where the schema gives none, as the TypeScript and Rust SDKs read a null.
_EMPTY: dict[str, Any] = {
    "array": [],
    "object": {},
    "string": "",
    "boolean": False,
    "integer": 0,
    "number": 0,
}


def _null_default(props: list[dict[str, Any]]) -> str | None:
    """The default of a property: its ``default``, else the empty value of its one JSON type."""
    for prop in props:
        if "default" in prop:
            return json.dumps(prop["default"])
    types = {p["type"] for p in props if isinstance(p.get("type"), str)}
    return json.dumps(_EMPTY[types.pop()]) if len(types) == 1 and next(iter(types)) in _EMPTY else None


@dataclass(frozen=True)
class NearMiss:
    kind: str  # missing-required | wrong-tag | wrong-const | wrong-value | moved-tag | removed-tag
    # | type/<probe> | item-type/<probe>
    where: str  # JSON pointer of the property
    instance: Any
    path: tuple[Edge, ...]  # edges down to (and including) the changed property
    changed_value: bool  # False: a property was removed from the object at path[:-1]
    original: Any = None
    lenient_siblings: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    """A moved object's properties that the member it moved to reads leniently, with their schemas."""


def pointer(path: tuple[Edge, ...]) -> str:
    return "".join("/" + str(e.key).replace("~", "~0").replace("/", "~1") for e in path)


def _get(instance: Any, path: tuple[Edge, ...]) -> Any:
    for edge in path:
        instance = instance[edge.key]
    return instance


def json_class(value: Any) -> str:
    """The class of a JSON value, as :func:`probes` names them (a float tells integral from fractional)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integral-float" if value.is_integer() else "fractional-float"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


PROBES = (
    "string",
    "numeric-string",
    "boolean-string",
    "integer",
    "integral-float",
    "fractional-float",
    "boolean",
    "null",
    "object",
    "array",
)
"""The classes of replacement value :func:`probes` tries on every property and list item."""

_STRING_PROBES = frozenset({"string", "numeric-string", "boolean-string"})


def probes(value: Any) -> Iterator[tuple[str, Any]]:
    """One replacement of every class of JSON value that ``value`` is not: ``(class, replacement)``.

    The replacements are the ones a lax reader would take: the number or boolean
    itself spelled as a string, ``1``/``0`` and ``1.0``/``0.0`` for a boolean, ``2.0`` for ``2``.
    Whether the schema accepts a replacement is not decided here (``2.0`` is an
    integer in JSON Schema; anything is valid for an untyped property).
    """
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    own = json_class(value)
    candidates: dict[str, Any] = {
        "string": "wrong type",
        "numeric-string": json.dumps(value) if number else "7",
        "boolean-string": json.dumps(value) if isinstance(value, bool) else "true",
        "integer": int(value) if isinstance(value, bool) else 7,
        "integral-float": float(value) if isinstance(value, int) and abs(value) < 2**53 else 7.0,
        "fractional-float": value + 0.5 if number and own != "fractional-float" else 1.5,
        "boolean": True,
        "null": None,
        "object": {"wrong": "type"},
        "array": ["wrong type"],
    }
    for probe in PROBES:
        if probe == own or (own == "string" and probe in _STRING_PROBES):
            continue  # the same class: a different value of it is a wrong-value, not a wrong type
        yield probe, candidates[probe]


class Target:
    """One schema file and its generated package."""

    def __init__(
        self,
        release: str,
        unstable: bool,
        *,
        surface: ApiSurface | None = None,
        package: ModuleType | None = None,
        root: dict[str, Any] | None = None,
    ) -> None:
        """A locked release's schema file and package, or (for a schema of one's own) the three given."""
        self.release = release
        self.unstable = unstable
        self.surface: ApiSurface = surface or surface_of(release, unstable)
        self.package: ModuleType = package or package_of(release, unstable)
        self.root: dict[str, Any] = root or release_files(release).schema(unstable).data
        self.defs: dict[str, Any] = self.root["$defs"]
        self._root_validator = jsonschema.Draft202012Validator(self.root)
        self._validators: dict[int, jsonschema.Draft202012Validator] = {}
        self._keep: list[Any] = []  # the nodes whose id() keys _validators
        self._adapters: dict[str, TypeAdapter[Any]] = {}

    def type_names(self) -> list[str]:
        return list(self.defs)

    # -- the two sides ---------------------------------------------------------------

    def schema_for(self, node: Any) -> jsonschema.Draft202012Validator:
        """A Draft 2020-12 validator for ``node``, a part of this schema file."""
        key = id(node)
        found = self._validators.get(key)
        if found is None:
            found = self._root_validator.evolve(schema=node)
            self._validators[key] = found
            self._keep.append(node)
        return found

    def def_validator(self, name: str) -> jsonschema.Draft202012Validator:
        return self.schema_for(self.defs[name])

    def adapter(self, name: str) -> TypeAdapter[Any]:
        """The generated model of ``$defs[name]``, found through the IR."""
        if name not in self._adapters:
            found = self.surface.by_schema_name(name)
            if found is None:
                raise LookupError(f"{name} has no type in the IR")
            self._adapters[name] = TypeAdapter(getattr(self.package.schema, found.name))
        return self._adapters[name]

    # -- checks ------------------------------------------------------------------------

    def validate(self, name: str, instance: Any, mode: str) -> Any:
        """The model of ``$defs[name]`` validating ``instance``: as Python data, or as JSON text."""
        adapter = self.adapter(name)
        if mode == "python":
            return adapter.validate_python(copy.deepcopy(instance))
        return adapter.validate_json(json.dumps(instance))

    def dump(self, name: str, value: Any) -> Any:
        return self.adapter(name).dump_python(value, **DUMP)

    def check_valid(self, name: str, instance: Any, kind: str = "valid") -> list[Disagreement]:
        """A schema-valid instance, in each mode: accepted, dumped unchanged, dump valid."""
        return [d for mode in MODES for d in self._check_valid(name, instance, kind, mode)]

    def _check_valid(self, name: str, instance: Any, kind: str, mode: str) -> list[Disagreement]:
        try:
            value = self.validate(name, instance, mode)
        except ValidationError as error:
            return [self.disagreement(name, kind, "rejected", instance, _first_error(error), mode)]
        dumped = self.dump(name, value)
        found = []
        if not json_equal(dumped, instance):
            found.append(self.disagreement(name, kind, "changed", instance, f"dumped {dumped!r}", mode))
        if not self.def_validator(name).is_valid(dumped):
            found.append(self.disagreement(name, kind, "dump-invalid", instance, f"dumped {dumped!r}", mode))
        return found

    def check_accepted_mutant(self, name: str, miss: NearMiss) -> list[Disagreement]:
        """A mutant the schema still accepts: kept as it is, or read the lenient way upstream reads it.

        When the change sits under a lenient property, upstream's deserializer
        repairs it in place (``x-deserialize-default-on-error``) even where
        another member of a union would take the changed object as it is
        (v1's ``AuthMethod``: a ``terminal`` with bad ``args`` is also a valid
        ``agent``); either reading agrees.
        """
        lenient = repaired(miss, self.def_validator(name).is_valid)
        found: list[Disagreement] = []
        for mode in MODES:
            here = self._check_valid(name, miss.instance, miss.kind, mode)
            read = [d.outcome for d in here] == ["changed"] and lenient is not None
            if read and json_equal(self.dump(name, self.validate(name, miss.instance, mode)), lenient):
                continue  # read the lenient way
            found.extend(here)
        return found

    def check_near_miss(self, name: str, miss: NearMiss) -> list[Disagreement]:
        """A near miss the schema rejects, in each mode: rejected, or repaired as its lenient marker says."""
        expected = repaired(miss, self.def_validator(name).is_valid)
        if expected is None and miss.lenient_siblings:
            expected = self._read_moved(name, miss)
        return [d for mode in MODES for d in self._check_near_miss(name, miss, expected, mode)]

    def _read_moved(self, name: str, miss: NearMiss) -> Any:
        """A moved object as the member it moved to reads it: each property that member reads
        leniently and whose value its schema refuses, omitted (``None``: still refused)."""
        fixed = copy.deepcopy(miss.instance)
        obj = _get(fixed, miss.path[:-1])
        for key, props in miss.lenient_siblings:
            check = self.schema_for(props[0] if len(props) == 1 else {"allOf": list(props)})
            if not check.is_valid(obj[key]):
                del obj[key]
        return fixed if self.def_validator(name).is_valid(fixed) else None

    def _check_near_miss(self, name: str, miss: NearMiss, expected: Any, mode: str) -> list[Disagreement]:
        try:
            value = self.validate(name, miss.instance, mode)
        except ValidationError:
            if expected is None:
                return []
            detail = f"at {miss.where}"
            return [self.disagreement(name, miss.kind, "lenient-rejected", miss.instance, detail, mode)]
        if expected is None:
            return [self.disagreement(name, miss.kind, "accepted", miss.instance, f"at {miss.where}", mode)]
        dumped = self.dump(name, value)
        if not json_equal(dumped, expected):
            detail = f"at {miss.where}: dumped {dumped!r}"
            return [self.disagreement(name, miss.kind, "lenient-changed", miss.instance, detail, mode)]
        return []

    def disagreement(
        self, name: str, kind: str, outcome: str, instance: Any, detail: str, mode: str = "python"
    ) -> Disagreement:
        return Disagreement(self.release, self.unstable, name, kind, outcome, instance, detail, mode)

    # -- walking an instance with its schema --------------------------------------------

    def locations(self, name: str, instance: Any) -> list[Location]:
        """Every object inside ``instance`` with the property schemas that apply to it."""
        found: list[Location] = []
        self._walk([{"$ref": "#/$defs/" + name}], instance, (), found)
        return found

    def _expand(
        self,
        schemas: list[Any],
        instance: Any,
        in_union: bool = False,
        tags: dict[str, list[Any]] | None = None,
        lenient_at: dict[tuple[str, str], dict[str, list[Any]]] | None = None,
    ) -> Iterator[tuple[dict[str, Any], bool]]:
        for schema in schemas:
            if not isinstance(schema, dict):
                continue
            yield schema, in_union
            if isinstance(schema.get("$ref"), str):
                target = _resolve_ref(self.defs, schema["$ref"])[1]
                yield from self._expand([target], instance, in_union, tags, lenient_at)
            for member in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
                yield from self._expand([member], instance, in_union, tags, lenient_at)
            for key in ("anyOf", "oneOf"):
                members = schema.get(key)
                if isinstance(members, list):
                    for member in members:
                        if tags is not None:
                            self._union_tags(member, tags, set())
                        if lenient_at is not None:
                            self._member_lenient(member, lenient_at)
                        if self.schema_for(member).is_valid(instance):
                            yield from self._expand([member], instance, True, tags, lenient_at)

    def _member_lenient(self, member: Any, lenient_at: dict[tuple[str, str], dict[str, list[Any]]]) -> None:
        """The default-on-error properties of ``member``, under each value it pins a property to."""
        props: dict[str, list[Any]] = {}
        self._member_properties(member, props, set())
        lenient = {
            k: v for k, v in props.items() if any(isinstance(p, dict) and p.get(DEFAULT_ON_ERROR) for p in v)
        }
        for key, schemas in props.items():
            for prop in schemas:
                if isinstance(prop, dict) and "const" in prop:
                    pinned = (key, json.dumps(prop["const"], sort_keys=True))
                    lenient_at.setdefault(pinned, {}).update(lenient)

    def _member_properties(self, member: Any, props: dict[str, list[Any]], seen: set[str]) -> None:
        """Every property schema of ``member``, through its ``$ref`` and ``allOf`` parts."""
        if not isinstance(member, dict):
            return
        for key, prop in (member.get("properties") or {}).items():
            props.setdefault(key, []).append(prop)
        ref = member.get("$ref")
        if isinstance(ref, str) and ref not in seen:
            seen.add(ref)
            self._member_properties(_resolve_ref(self.defs, ref)[1], props, seen)
        for part in member.get("allOf", []) if isinstance(member.get("allOf"), list) else []:
            self._member_properties(part, props, seen)

    def _union_tags(self, member: Any, tags: dict[str, list[Any]], seen: set[str]) -> None:
        """The values ``member`` of a union pins a property to, or refuses as a catch-all, into ``tags``."""
        if not isinstance(member, dict):
            return
        for key, prop in (member.get("properties") or {}).items():
            if isinstance(prop, dict) and "const" in prop:
                _add_tag(tags, key, prop["const"])
        refused = member.get("not")
        if isinstance(refused, dict):
            for part in refused.get("anyOf", []) if isinstance(refused.get("anyOf"), list) else [refused]:
                self._union_tags(part, tags, seen)
        ref = member.get("$ref")
        if isinstance(ref, str) and ref not in seen:
            seen.add(ref)
            self._union_tags(_resolve_ref(self.defs, ref)[1], tags, seen)
        for part in member.get("allOf", []) if isinstance(member.get("allOf"), list) else []:
            self._union_tags(part, tags, seen)

    def _walk(self, schemas: list[Any], instance: Any, path: tuple[Edge, ...], found: list[Location]) -> None:
        tags: dict[str, list[Any]] = {}
        lenient_at: dict[tuple[str, str], dict[str, list[Any]]] = {}
        expanded = list(self._expand(schemas, instance, tags=tags, lenient_at=lenient_at))
        if isinstance(instance, dict):
            here = Location(path, tags=tags, lenient_at=lenient_at)
            extra: list[Any] = []
            for schema, in_union in expanded:
                for key, prop in (schema.get("properties") or {}).items():
                    here.properties.setdefault(key, []).append(prop)
                    if in_union:
                        here.in_union.add(key)
                here.required.update(r for r in schema.get("required", []) if isinstance(r, str))
                if isinstance(schema.get("additionalProperties"), dict):
                    extra.append(schema["additionalProperties"])
            found.append(here)
            for key, value in instance.items():
                props = here.properties.get(key, extra)
                self._walk(props, value, (*path, here.edge(key)), found)
        elif isinstance(instance, list):
            items = [s["items"] for s, _ in expanded if isinstance(s.get("items"), dict)]
            for index, value in enumerate(instance):
                self._walk(items, value, (*path, Edge(index)), found)


def _add_tag(tags: dict[str, list[Any]], key: str, value: Any) -> None:
    values = tags.setdefault(key, [])
    if not any(json_equal(value, v) for v in values):
        values.append(value)


def _first_error(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"


def near_misses(target: Target, name: str, instance: Any) -> Iterator[NearMiss]:
    """Mutants one step away from ``instance`` (which the schema accepts).

    Most are near misses (the schema rejects them); a probe the schema accepts
    (``2.0`` for an integer) is yielded too, and checked as a valid instance.
    The instance itself is probed first (a type may be a bare scalar).
    """
    for probe, candidate in probes(instance):
        yield NearMiss("type/" + probe, "", candidate, (), True, instance)
    for location in target.locations(name, instance):
        obj = _get(instance, location.path)
        for key in sorted(location.required & obj.keys()):
            mutated = copy.deepcopy(instance)
            del _get(mutated, location.path)[key]
            edge = location.edge(key)
            yield NearMiss(
                "missing-required",
                pointer((*location.path, edge)),
                mutated,
                (*location.path, edge),
                False,
                instance,
            )
        for key in sorted(obj.keys() & location.properties.keys()):
            props = location.properties[key]
            check = target.schema_for(props[0] if len(props) == 1 else {"allOf": props})
            value = obj[key]
            edge = location.edge(key)
            path = (*location.path, edge)
            for kind, candidate in _candidates(props, value, key in location.in_union):
                if check.is_valid(candidate):
                    continue  # another valid value of the same class
                yield _replaced(instance, path, kind, candidate)
            for probe, candidate in probes(value):
                yield _replaced(instance, path, "type/" + probe, candidate)
            if isinstance(value, list) and value:
                item = (*path, Edge(0))
                for probe, candidate in probes(value[0]):
                    yield _replaced(instance, item, "item-type/" + probe, candidate)
        yield from _moved(instance, location, obj)


def _moved(instance: Any, location: Location, obj: dict[str, Any]) -> Iterator[NearMiss]:
    """The object moved to another member of its union: its tag set to each value another member
    pins (or a catch-all refuses), and its tag removed.

    In a union with a default (untagged) member, which member takes the moved object, or whether
    any does, depends on the default member's schema: the schema decides, the model must agree.
    """
    for key in sorted(location.tags):
        if key not in obj:
            continue
        edge = location.edge(key)
        path = (*location.path, edge)
        for value in location.tags[key]:
            if not json_equal(value, obj[key]):
                miss = _replaced(instance, path, "moved-tag", value)
                lenient = location.lenient_at.get((key, json.dumps(value, sort_keys=True)), {})
                siblings = tuple((k, tuple(v)) for k, v in sorted(lenient.items()) if k != key and k in obj)
                yield dataclasses.replace(miss, lenient_siblings=siblings)
        if key in location.in_union and key not in location.required:  # else: missing-required
            removed = copy.deepcopy(instance)
            del _get(removed, location.path)[key]
            yield NearMiss("removed-tag", pointer(path), removed, path, False, instance)


def _replaced(instance: Any, path: tuple[Edge, ...], kind: str, candidate: Any) -> NearMiss:
    """``instance`` with the value at ``path`` replaced by ``candidate``."""
    mutated = copy.deepcopy(instance)
    _get(mutated, path[:-1])[path[-1].key] = candidate
    return NearMiss(kind, pointer(path), mutated, path, True, instance)


def _candidates(props: list[Any], value: Any, in_union: bool) -> Iterator[tuple[str, Any]]:
    """Other values of the same class: a wrong tag or const, an empty or odd string, out-of-range integers."""
    consts = [p["const"] for p in props if isinstance(p, dict) and "const" in p]
    if consts:
        kind = "wrong-tag" if in_union else "wrong-const"
        if isinstance(value, str):
            yield kind, value + "-x"
        elif isinstance(value, int) and not isinstance(value, bool):
            yield kind, value + 1
    if isinstance(value, str):
        yield "wrong-value", value + "\u2063"
        yield "wrong-value", ""
    elif isinstance(value, int) and not isinstance(value, bool):
        yield "wrong-value", -1
        yield "wrong-value", 2**64


def repaired(miss: NearMiss, valid: Callable[[Any], bool] = lambda _instance: False) -> Any:
    """What a model must make of a near miss the schema rejects: ``None`` to reject it.

    The innermost lenient property on the way to the change takes the error:
    ``x-deserialize-default-on-error`` removes that property (a required list
    or map becomes empty); ``x-deserialize-default-on-null`` gives a property
    set to ``null`` its default, which then counts as given (its ``default``,
    else the empty value of its type; removed if neither is known);
    ``x-deserialize-skip-invalid-items`` removes the list item that holds the
    change.  A property that one member of a union
    requires is still removed when the instance without it is ``valid`` (another
    member takes it: an idle state update without a stop reason).
    """
    path = miss.path
    # path[:depth] leads to an invalid value for every depth up to `last`
    last = len(path) if miss.changed_value else len(path) - 1
    for depth in range(last, 0, -1):
        edge = path[depth - 1]
        if isinstance(edge.key, int):
            continue  # a list item: its list's property decides
        fixed = copy.deepcopy(miss.instance)
        if edge.skip_invalid_items and depth < last and isinstance(path[depth].key, int):
            del _get(fixed, path[:depth])[path[depth].key]
            return fixed
        if edge.skip_invalid_items and miss.changed_value and depth == len(path):
            kept = _valid_items(fixed, path, valid)  # the new value is a list holding invalid items
            if kept is not None:
                return kept
        null_here = edge.default_on_null and miss.changed_value and depth == len(path)
        null_here = null_here and _get(miss.instance, path) is None
        if null_here and edge.null_default is not None:
            _get(fixed, path[: depth - 1])[edge.key] = json.loads(edge.null_default)
            return fixed
        if edge.default_on_error or null_here:
            parent = _get(fixed, path[: depth - 1])
            before = _get(miss.original, path[:depth])
            if edge.required and isinstance(before, (list, dict)):
                parent[edge.key] = type(before)()  # a required list or map falls back to empty
                return fixed
            del parent[edge.key]
            if not edge.required or valid(fixed):
                return fixed
    return None


def _valid_items(instance: Any, path: tuple[Edge, ...], valid: Callable[[Any], bool]) -> Any:
    """``instance`` with the items of the list at ``path`` that are invalid on their own dropped.

    ``None`` when there is no list there, no item is invalid, or dropping them does not help.
    """
    items = _get(instance, path)
    if not isinstance(items, list):
        return None
    parent = _get(instance, path[:-1])

    def holding(value: list[Any]) -> Any:
        parent[path[-1].key] = value
        return copy.deepcopy(instance)

    kept = [item for item in items if valid(holding([item]))]
    fixed = holding(kept)
    parent[path[-1].key] = items
    return fixed if len(kept) < len(items) and valid(fixed) else None


# --- results -------------------------------------------------------------------------


@dataclass(frozen=True)
class Disagreement:
    release: str
    unstable: bool
    type_name: str
    kind: str
    outcome: str
    instance: Any
    detail: str
    mode: str = "python"

    @property
    def key(self) -> tuple[str, str, str]:
        return self.type_name, self.kind, self.outcome

    def describe(self) -> str:
        where = self.release + (" unstable" if self.unstable else "")
        what = f"{self.kind} -> {self.outcome} in {self.mode} mode ({self.detail})"
        return f"{where} {self.type_name}: {what}; instance {self.instance!r}"


@dataclass(frozen=True)
class Excuse:
    type_name: str
    kind: str
    outcome: str
    reason: str

    def covers(self, found: Disagreement) -> bool:
        return (
            (self.type_name in ("*", found.type_name))
            and self.kind in ("*", found.kind)
            and self.outcome == found.outcome
        )


def load_exceptions(path: Path = EXCEPTIONS_FILE) -> list[Excuse]:
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    entries = data.get("exception", [])
    return [Excuse(e["type"], e["kind"], e["outcome"], e["reason"]) for e in entries]


def unexplained(found: list[Disagreement], exceptions: list[Excuse]) -> list[Disagreement]:
    return [d for d in found if not any(e.covers(d) for e in exceptions)]


# --- one surface ---------------------------------------------------------------------------


@dataclass
class SurfaceResult:
    """The figures of one schema file: what was tried and what disagreed."""

    release: str
    unstable: bool
    types: int = 0
    examples: int = 0
    discarded: int = 0
    near_misses: int = 0
    schema_accepted_mutants: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)
    mutant_kinds: Counter[str] = field(default_factory=Counter)
    """Mutants by kind (``type/`` and ``item-type/`` kinds by the class of value tried)."""

    @property
    def instances(self) -> int:
        return self.examples + self.near_misses + self.schema_accepted_mutants

    @property
    def checks(self) -> int:
        """One check per instance and input mode."""
        return self.instances * len(MODES)

    @property
    def label(self) -> str:
        return self.release + (" unstable" if self.unstable else "")


def check_type(
    target: Target, name: str, examples: int, result: SurfaceResult, seed: int | None = None
) -> None:
    """Generate up to ``examples`` valid instances of ``$defs[name]`` and run every check on them."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis_jsonschema import from_schema

    validator = target.def_validator(name)
    strategy = from_schema(generation_schema(target.defs, name))

    def one(instance: Any) -> None:
        if not validator.is_valid(instance):
            result.discarded += 1
            return
        result.examples += 1
        result.disagreements.extend(target.check_valid(name, instance))
        for miss in near_misses(target, name, instance):
            result.mutant_kinds[miss.kind] += 1
            if validator.is_valid(miss.instance):
                result.schema_accepted_mutants += 1
                result.disagreements.extend(target.check_accepted_mutant(name, miss))
            else:
                result.near_misses += 1
                result.disagreements.extend(target.check_near_miss(name, miss))

    test = given(strategy)(one)
    test = settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=seed is None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )(test)
    if seed is not None:
        test = hypothesis_seed(seed)(test)
    before = result.examples
    try:
        test()
    except Exception as error:  # a type hypothesis-jsonschema cannot handle is a finding too
        detail = f"{type(error).__name__}: {error}"[:300]
        result.disagreements.append(target.disagreement(name, "generate", "failed", None, detail))
        return
    if result.examples == before:
        detail = "no generated instance was valid for the schema"
        result.disagreements.append(target.disagreement(name, "generate", "no-valid-instance", None, detail))


def check_surface(
    release: str,
    unstable: bool,
    examples: int,
    seed: int | None = None,
    names: list[str] | None = None,
    target: Target | None = None,
) -> SurfaceResult:
    """Check every type of one schema file (or only ``names``)."""
    target = target or Target(release, unstable)
    result = SurfaceResult(release, unstable)
    for name in target.type_names() if names is None else names:
        result.types += 1
        check_type(target, name, examples, result, seed)
    return result


def closure_key(defs: Mapping[str, Any], name: str) -> str:
    """A hash of ``$defs[name]`` and every type it reaches: equal keys, equal types."""
    seen: dict[str, Any] = {}
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen or current not in defs:
            continue
        seen[current] = defs[current]
        todo.extend(_refs(defs[current]))
    text = json.dumps([name, seen], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            yield ref[len("#/$defs/") :].replace("~1", "/").replace("~0", "~")
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)
