"""Messages a schema allows: generated from a ``$defs`` type, and made smaller.

Generation uses hypothesis-jsonschema, an optional dependency
(``pip install 'acp-codegen[evidence]'``) imported only when a search runs.
It implements JSON Schema drafts 4 to 7 without recursive ``$ref``, so a type
is first turned into a self-contained schema it can read
(:func:`generation_schema`): every ``$ref`` inlined (a recursive one becomes
``false``, a branch never taken), ``x-`` extensions and annotations dropped,
and ``allOf`` parts that only add properties merged.  What this loses only
widens the candidates: every candidate is then checked with the schema's own
Draft 2020-12 validator and dropped if it is refused.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import CodegenError
from ..files import write_atomic
from ..schema.store import default_cache_dir

INSTALL_HINT = "pip install 'acp-codegen[evidence]' (hypothesis and hypothesis-jsonschema)"
HYPOTHESIS_BEFORE = (6, 169)
"""The first hypothesis hypothesis-jsonschema 0.23 does not run on (it removed internals it drives)."""

_ONE_SCHEMA = ("items", "not", "additionalProperties", "contains", "propertyNames")
_SCHEMA_MAP = ("properties", "patternProperties", "dependentSchemas")
_SCHEMA_LIST = ("allOf", "anyOf", "oneOf")
_DROPPED = frozenset(
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
        "$ref",
    }
)
_PLAIN_OBJECT = frozenset({"type", "properties", "required"})
_FIXED_STRING = frozenset({"const", "enum", "pattern"})
"""A string schema with one of these takes chosen values only: probes are not tried there."""


class MissingGeneratorError(CodegenError):
    """hypothesis or hypothesis-jsonschema is not installed."""


def require_generator(cache: Path | None = None, load: bool = True) -> None:
    """Raise :class:`MissingGeneratorError` (naming what to install) unless the generator imports and
    its hypothesis is one it runs on.

    hypothesis-jsonschema builds Unicode tables when it is imported, which
    hypothesis keeps on disk: under :func:`storage_home` of ``cache`` (the
    default cache when ``None``), never in the current folder.  Without
    ``load`` the modules are looked for, not imported (a slow import): the
    first generation imports them (:func:`prepare`, while the models render).
    """
    try:
        if not load:
            for name in ("hypothesis", "hypothesis_jsonschema"):
                _find(name)
        else:
            import hypothesis  # noqa: F401

            with _storage(storage_home(cache)):
                import hypothesis_jsonschema  # noqa: F401
    except ImportError as error:
        raise MissingGeneratorError(f"evidence needs {error.name}: {INSTALL_HINT}") from None
    problem = incompatible(hypothesis_version())
    if problem is not None:
        raise MissingGeneratorError(problem)


def _find(name: str) -> None:
    """Raise ``ImportError`` unless the module ``name`` is imported or would be found to import."""
    import importlib.util

    if name in sys.modules:
        found = sys.modules[name] is not None  # None: an import of it is made to fail
    else:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
    if not found:
        raise ImportError(f"No module named {name!r}", name=name)


def hypothesis_version() -> str:
    """The version of the hypothesis installed."""
    from importlib import metadata

    return metadata.version("hypothesis")


def incompatible(version: str) -> str | None:
    """Why evidence cannot run with this version of hypothesis, in one line (``None``: it can)."""
    parts = [int(p) if p.isdigit() else 0 for p in version.split(".")[:2]]
    if tuple(parts) < HYPOTHESIS_BEFORE:
        return None
    below = ".".join(map(str, HYPOTHESIS_BEFORE))
    return (
        f"evidence needs hypothesis older than {below} (hypothesis-jsonschema does not run on {version}, "
        f"the one installed): pip install 'hypothesis<{below}'"
    )


def _def_name(ref: str) -> str:
    if not ref.startswith("#/$defs/"):
        raise ValueError(f"unsupported $ref {ref!r}")
    return ref[len("#/$defs/") :].replace("~1", "/").replace("~0", "~")


def generation_schema(defs: Mapping[str, Any], name: str, probes: tuple[str, ...] = ()) -> Any:
    """``$defs[name]`` as a self-contained draft-07 schema that hypothesis-jsonschema can generate from.

    ``probes`` are strings worth trying wherever the schema takes any string
    (the other release's tags and enum values): such a string becomes "one
    of the probes, or any string", the same values, the probes more often.
    """

    def convert(node: Any, stack: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key.startswith("x-") or key in _DROPPED:
                continue
            if key in _ONE_SCHEMA:
                out[key] = convert(value, stack)
            elif key in _SCHEMA_MAP and isinstance(value, dict):
                out[key] = {k: convert(v, stack) for k, v in value.items()}
            elif key in _SCHEMA_LIST and isinstance(value, list):
                out[key] = [convert(v, stack) for v in value]
            else:
                out[key] = value
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = _def_name(ref)
            inlined = False if target in stack else convert(defs[target], (*stack, target))
            return _merge_all_of({"allOf": [inlined, out]} if out else inlined)
        if probes and out.get("type") == "string" and not _FIXED_STRING & out.keys():
            return {"anyOf": [{"enum": list(probes)}, out]}
        return _merge_all_of(out)

    return convert(defs[name], (name,))


def _merge_all_of(node: Any) -> Any:
    """Merge in the ``allOf`` parts that only add properties (hypothesis-jsonschema is slow at merging)."""
    if not isinstance(node, dict) or not isinstance(node.get("allOf"), list):
        return node
    keep: list[Any] = []
    merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
    for part in node["allOf"]:
        part = _merge_all_of(part)
        plain = (
            isinstance(part, dict) and part.keys() <= _PLAIN_OBJECT and part.get("type", "object") == "object"
        )
        if not plain or (merged.keys() - _PLAIN_OBJECT - {"anyOf", "oneOf"}):
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


def with_tag(schema: Any, tag: str, value: Any) -> Any | None:
    """A generation schema of a union kept to its members whose ``tag`` is ``value`` (``None``: the
    schema is no ``anyOf`` or ``oneOf`` of such members).  The messages it allows are candidates: each
    is checked against the union's own schema, as every generated message is."""
    if not isinstance(schema, dict):
        return None
    for keyword in ("anyOf", "oneOf"):
        members = schema.get(keyword)
        if isinstance(members, list):
            kept = [m for m in members if value in _tag_values(m, tag)]
            return {**schema, keyword: kept} if kept and len(kept) < len(members) else None
    return None


def _tag_values(member: Any, tag: str) -> list[Any]:
    """The values a union member's schema fixes its ``tag`` property to (``const``, through ``allOf``)."""
    if not isinstance(member, dict):
        return []
    prop = member.get("properties", {}).get(tag) if isinstance(member.get("properties"), dict) else None
    nodes = [prop, *(prop.get("allOf", []) if isinstance(prop, dict) else [])]
    found = [node["const"] for node in nodes if isinstance(node, dict) and "const" in node]
    for part in member.get("allOf", []) if isinstance(member.get("allOf"), list) else []:
        found.extend(_tag_values(part, tag))
    return found


def through(node: Any, ref: str) -> Any | None:
    """A raw schema node kept to the values that hold a value of ``$ref`` ``ref`` (``None``: none does).

    The property, item or map value on the way is made required (``required``, ``minItems``,
    ``minProperties``) and each ``anyOf``/``oneOf`` kept to the branches on the way: the values it
    allows, ``node`` allows too but for a ``oneOf`` the narrowing made ambiguous, which the schema's own
    validator then refuses (every candidate is checked).  Used to wrap a message in the whole message
    a peer receives (:meth:`~.search.Pair.whole`).
    """
    if not isinstance(node, dict):
        return None
    if node.get("$ref") == ref:
        return node
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list):
            kept = [found for found in (through(b, ref) for b in branches) if found is not None]
            if kept:
                return {**node, key: kept}
    parts = node.get("allOf")
    if isinstance(parts, list):
        for index, part in enumerate(parts):
            found = through(part, ref)
            if found is not None:
                return {**node, "allOf": [*parts[:index], found, *parts[index + 1 :]]}
    properties = node.get("properties")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            found = through(sub, ref)
            if found is not None:
                required = sorted({*node.get("required", []), name})
                return {**node, "properties": {**properties, name: found}, "required": required}
    for key, least in (("items", "minItems"), ("additionalProperties", "minProperties")):
        sub = node.get(key)
        found = through(sub, ref) if isinstance(sub, dict) else None
        if found is not None:
            return {**node, key: found, least: max(1, node.get(least, 0))}
    return None


def with_field(schema: Any, name: str) -> Any | None:
    """A generation schema of an object that requires its optional property ``name`` (``None``: it has
    no such optional property).  Every message it allows, the object allows."""
    if not isinstance(schema, dict) or name not in schema.get("properties", {}):
        return None
    required = list(schema.get("required", []))
    return None if name in required else {**schema, "required": [*required, name]}


@contextlib.contextmanager
def _strategies_built_once() -> Iterator[None]:
    """While it lasts, hypothesis-jsonschema builds the strategy of each subschema once, not per draw.

    Its object strategy calls its (private) schema-to-strategy functions for
    every property of every message drawn, and building a strategy
    (resolving, canonicalising, merging, inspecting source) costs far more
    than drawing from it.  A strategy is a pure function of its schema, so
    the one built first is the same as the ones it replaces: the messages
    drawn are the same, several times faster (tests/evidence checks both).
    Without those functions (another version), nothing changes.
    """
    from hypothesis_jsonschema import _from_schema as module

    names = ("__from_schema", "merged_as_strategies")
    originals = {name: getattr(module, name, None) for name in names}
    if not all(callable(f) for f in originals.values()):
        yield
        return
    built: dict[tuple[str, str], Any] = {}

    def once(name: str) -> Callable[..., Any]:
        original = originals[name]
        assert original is not None

        def build(schema: Any, *, alphabet: Any, custom_formats: Any) -> Any:
            if custom_formats is not None:
                return original(schema, alphabet=alphabet, custom_formats=custom_formats)
            key = (name, json.dumps(schema, sort_keys=True, default=repr))
            if key not in built:
                built[key] = original(schema, alphabet=alphabet, custom_formats=None)
            return built[key]

        return build

    try:
        for name in names:
            setattr(module, name, once(name))
        yield
    finally:
        for name, original in originals.items():
            setattr(module, name, original)


SURROGATES = (0xD800, 0xDFFF)
"""The code points UTF-8 cannot encode: the surrogates (every other one encodes and decodes back)."""


@contextlib.contextmanager
def _utf8_known() -> Iterator[None]:
    """While it lasts, hypothesis knows which characters UTF-8 encodes without encoding each of them.

    hypothesis-jsonschema draws its strings from the characters UTF-8 can
    encode.  hypothesis finds those (``intervals_from_codec``) by encoding
    and decoding every code point, about a second and a half, and keeps the
    table under its home, which is the build cache (:func:`storage_home`): a
    search on an empty ``--cache`` paid it in the command and again in every
    worker that generated before the table was on disk.  The table is what
    UTF-8 is defined to be (every code point but the surrogates, each one
    decoding back to itself), so it is given as that: the same intervals,
    hence the same characters drawn (tests/evidence/test_speed.py compares
    the two).  Other codecs, and a hypothesis without that function, are
    left as they are.
    """
    from hypothesis.internal import charmap

    original = getattr(charmap, "intervals_from_codec", None)
    if not callable(original):
        yield
        return

    def intervals_from_codec(codec_name: str) -> Any:
        if codec_name != "utf-8":
            return original(codec_name)
        return _utf8_intervals()

    charmap.intervals_from_codec = intervals_from_codec  # type: ignore[assignment]
    try:
        yield
    finally:
        charmap.intervals_from_codec = original


@functools.cache
def _utf8_intervals() -> tuple[Any, Any]:
    """(the code points UTF-8 encodes, those of them that do not decode back: none), as hypothesis's
    ``IntervalSet`` objects."""
    from hypothesis.internal.intervalsets import IntervalSet

    low, high = SURROGATES
    return IntervalSet([(0, low - 1), (high + 1, sys.maxunicode)]), IntervalSet([])


_CANONICAL: dict[tuple[str, str], str | None] = {}
"""The generator's canonical form of each schema it has read in this process, and what merging a list
of schemas gave: JSON text by the JSON text of the argument (:func:`_canonical_forms_once`)."""


@contextlib.contextmanager
def _canonical_forms_once() -> Iterator[None]:
    """While it lasts, hypothesis-jsonschema canonicalises (and merges) each schema once per process.

    Building a strategy, it turns every subschema into a canonical form
    (``canonicalish``), the subschemas of it again at each level, and merges
    ``allOf`` parts (``merged``), which canonicalises them once more; on a
    large union (a ``SessionUpdate``, whose members repeat the same content
    types) that was most of the time of a search.  Both are functions of
    the schema's JSON alone, so the result of the first call is kept, as
    JSON text, and each later call with the same schema gets a fresh copy of
    it (the generator edits what they return): the same forms, hence the
    same messages (tests/evidence/test_speed.py compares them).  Without
    those functions (another version), nothing changes.
    """
    from hypothesis_jsonschema import _canonicalise as canonical
    from hypothesis_jsonschema import _from_schema as strategies

    names = ("canonicalish", "merged")
    originals = {name: getattr(canonical, name, None) for name in names}
    if not all(callable(f) for f in originals.values()):
        yield
        return
    encoder = getattr(canonical, "encode_canonical_json", None)

    def once(name: str) -> Callable[[Any], Any]:
        original = originals[name]
        assert original is not None

        def kept(argument: Any) -> Any:
            try:
                key = (name, json.dumps(argument, sort_keys=True, allow_nan=False))
            except (TypeError, ValueError):  # not plain JSON: not kept
                return original(argument)
            if key in _CANONICAL:
                text = _CANONICAL[key]
                return None if text is None else json.loads(text)
            found = original(argument)
            try:
                text = None if found is None else json.dumps(found, allow_nan=False)
            except (TypeError, ValueError):
                return found
            if text is not None and json.loads(text) != found:  # something JSON would not give back
                return found
            _CANONICAL[key] = text
            return found

        return kept

    replaced = [module for module in (canonical, strategies) if all(hasattr(module, n) for n in names)]
    encoding = [m for m in (canonical, strategies) if getattr(m, "encode_canonical_json", None) is encoder]
    swapped = "encode_canonical_json"  # not declared by the module: set by name
    try:
        for module in replaced:
            for name in names:
                setattr(module, name, once(name))
        if callable(encoder):
            for module in encoding:
                setattr(module, swapped, _fast_canonical_json(encoder))
        yield
    finally:
        for module in replaced:
            for name, original in originals.items():
                setattr(module, name, original)
        for module in encoding:
            setattr(module, swapped, encoder)


_FLOAT_LIKE = re.compile(r"[0-9][.eE]")
"""Where the C encoder's text may hold a float (a digit then a point or an exponent): the only values
hypothesis-jsonschema's canonical encoder writes otherwise (an integral float as an integer)."""


def _fast_canonical_json(original: Callable[[Any], str]) -> Callable[[Any], str]:
    """hypothesis-jsonschema's canonical JSON encoding (sorted keys, an integral float written as an
    integer), by the C encoder where the value holds no float.

    Its own encoder is the pure-Python one (it replaces how floats are
    written), and canonicalising a schema encodes each subschema again at
    each level, which on a large union was a large part of a search on an
    empty cache.  Without a float, both write the same text: the C encoder's is
    kept unless it has a digit followed by a point or an exponent, which a
    float always has (and a string sometimes: then the original encodes
    it), so the text, hence the forms and the messages, are the same.
    """

    def encode(value: Any) -> str:
        try:
            text = json.dumps(value, sort_keys=True)
        except (TypeError, ValueError):
            return original(value)
        return original(value) if _FLOAT_LIKE.search(text) else text

    return encode


@contextlib.contextmanager
def _no_local_constants() -> Iterator[None]:
    """While it lasts, hypothesis draws no constants of the modules the process has loaded.

    hypothesis sometimes draws a string or a number from the constants it
    reads out of the source of every loaded module it calls local (any file
    outside site-packages and the standard library): this package when it
    runs from a checkout but not when pip installed it, the model modules
    rendered under the build cache, and any module of the program that calls
    it.  The messages of a schema then depended on how the tool was installed
    and what else was loaded, which the cache key of a generation
    (:func:`instances`) does not name; and reading those constants (parsing
    every module's source) was paid by every search on an empty cache.
    Without them the messages are a function of the schema and the
    generator's versions alone.  hypothesis's own constants are kept.
    Without that function (another version), nothing changes.
    """
    from hypothesis.internal.conjecture import providers

    original = getattr(providers, "_get_local_constants", None)
    cached = getattr(providers, "CONSTANTS_CACHE", None)
    empty = getattr(providers, "Constants", None)
    if not (callable(original) and callable(empty) and hasattr(cached, "cache")):
        yield
        return
    none = empty()
    assert cached is not None
    cached.cache.clear()  # the pools drawn from, as built with the modules' constants
    providers._get_local_constants = lambda: none
    try:
        yield
    finally:
        providers._get_local_constants = original
        cached.cache.clear()


class _Enough(Exception):  # noqa: N818 (not an error: the search found what it wanted)
    """Raised by the test function to end a generation early."""


@contextlib.contextmanager
def _storage(home: Path) -> Iterator[None]:
    """While it lasts, hypothesis keeps what it stores under ``home``, and then where it did before.

    hypothesis writes caches of its own (Unicode tables, the constants of the
    modules it sees) into ``.hypothesis`` of the current folder, which is the
    user's: the search runs from their project.  ``database=None`` does not
    stop those; its home folder does.
    """
    from hypothesis import configuration

    before = getattr(configuration, "__hypothesis_home_directory", None)
    configuration.set_hypothesis_home_dir(home)
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(before)


def storage_home(cache: Path | None) -> Path:
    """Where the generator keeps its own files: ``hypothesis/`` of the build cache (``--cache``)."""
    return (cache if cache is not None else default_cache_dir()) / "hypothesis"


def generate(
    schema: Any, examples: int, accept: Callable[[Any], bool], home: Path | None = None
) -> tuple[int, bool]:
    """Pass up to ``examples`` instances of ``schema`` (deterministically) to ``accept``.

    Generation stops early once ``accept`` returns ``True``.  Returns how many
    instances were passed and whether ``accept`` stopped it.  Raises
    :class:`MissingGeneratorError` without the optional dependency, and
    ``ValueError`` with the generator's own words when it cannot read ``schema``.
    The generator's own files go under ``home`` (:func:`storage_home` of the
    default cache when ``None``), never into the current folder.
    """
    home = home or storage_home(None)
    require_generator(home.parent)
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.reporting import with_reporter
    from hypothesis_jsonschema import from_schema

    count = 0
    done = False

    def one(instance: Any) -> None:
        nonlocal count, done
        if not done:
            count += 1
            done = accept(instance)
        if done:
            raise _Enough

    # from_schema and the generation read and write the Unicode tables too
    with _storage(home), _utf8_known(), _canonical_forms_once(), _no_local_constants():
        test = settings(
            max_examples=examples,
            database=None,
            deadline=None,
            derandomize=True,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
            print_blob=False,
        )(given(from_schema(schema))(one))
        try:
            with with_reporter(lambda _text: None), _strategies_built_once():
                test()
        except _Enough:
            pass
        except Exception as error:  # the generator is a dependency: its failure is a reason, not a crash
            text = f"{type(error).__name__}: {error}".splitlines()[0][:200]
            raise ValueError(text) from None
    return count, done


def prepare(cache: Path | None = None) -> None:
    """Make this process ready to generate, once: what the first generation of a process builds
    (hypothesis's modules imported, its table of Unicode categories, which it keeps under
    :func:`storage_home`) is built here, so that the workers forked after it have it instead of each
    building it again.  It changes nothing generated, and needs no model loaded: a generation reads
    no module's constants (:func:`_no_local_constants`), so it can run while the models render."""
    generate({"type": "string"}, 1, lambda _instance: True, storage_home(cache))


@functools.cache
def _versions() -> str:
    """What the messages of a schema depend on besides it: the generator's versions, and this module's
    text (with ``derandomize`` hypothesis seeds a generation from the test function's source, so an
    edit to :func:`generate` changes the messages: a cache from before it is not read)."""
    from importlib import metadata

    tools = ",".join(f"{d}=={metadata.version(d)}" for d in ("hypothesis", "hypothesis-jsonschema"))
    return f"{tools},{hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]}"


def instances(schema: Any, examples: int, accept: Callable[[Any], bool], cache: Path | None = None) -> int:
    """:func:`generate`, remembered: the instances generated are kept under ``cache``.

    The instances a schema gives are the same every time (the generation is
    deterministic), so a later search, by this run or another, reads them
    back instead of generating them again: all of them (``KEY.json``), or,
    when ``accept`` stopped the generation early, its beginning
    (``KEY.partial.json``), which a later search that wants more reads before
    it generates again from the start and goes on where the beginning ends.
    Returns how many instances ``accept`` saw.
    """
    if cache is None:
        return generate(schema, examples, accept)[0]
    home = storage_home(cache)
    key = hashlib.sha256(f"{canonical(schema)}\0{examples}\0{_versions()}".encode()).hexdigest()[:24]
    whole = cache / "evidence-instances" / f"{key}.json"
    beginning = whole.with_suffix(".partial.json")
    complete = _read_list(whole)
    known = complete if complete is not None else _read_list(beginning) or []
    for count, instance in enumerate(known, 1):
        if accept(instance):
            return count
    if complete is not None:
        return len(known)
    generated: list[Any] = []

    def remember(instance: Any) -> bool:
        generated.append(instance)
        return len(generated) > len(known) and accept(instance)  # the first ones were seen above

    count, stopped = generate(schema, examples, remember, home)
    if not stopped:
        write_atomic(whole, json.dumps(generated, ensure_ascii=False).encode("utf-8"))
    elif len(generated) > len(known):
        write_atomic(beginning, json.dumps(generated, ensure_ascii=False).encode("utf-8"))
    return count


def _read_list(path: Path) -> list[Any] | None:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, list) else None


def size(instance: Any) -> int:
    """How big a message is: the length of its compact JSON."""
    return len(canonical(instance))


def canonical(instance: Any) -> str:
    return json.dumps(instance, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def smaller(instance: Any) -> Iterator[Any]:
    """Instances one step smaller than ``instance``: a key or an item left out, a value made simpler."""
    if isinstance(instance, dict):
        for key in sorted(instance):
            yield {k: v for k, v in instance.items() if k != key}
        for key in sorted(instance):
            for value in smaller(instance[key]):
                yield {**instance, key: value}
    elif isinstance(instance, list):
        for index in range(len(instance)):
            yield instance[:index] + instance[index + 1 :]
        for index, item in enumerate(instance):
            for value in smaller(item):
                yield [*instance[:index], value, *instance[index + 1 :]]
    elif isinstance(instance, str):
        if instance:
            yield ""
            if len(instance) > 1:
                yield instance[:1]
    elif isinstance(instance, (int, float)) and not isinstance(instance, bool) and instance != 0:
        yield 0
        if isinstance(instance, float) and instance != int(instance):
            yield int(instance)


def shrink(instance: Any, keeps: Callable[[Any], bool], budget: int = 300) -> Any:
    """The smallest instance reached by one-step reductions that ``keeps`` still holds for.

    ``keeps`` is called at most ``budget`` times; the instance it last held
    for is returned (``instance`` itself if no reduction keeps it).
    """
    best = instance
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for candidate in smaller(best):
            if size(candidate) >= size(best):
                continue
            tries += 1
            if keeps(candidate):
                best = candidate
                improved = True
                break
            if tries >= budget:
                break
    return best


BUILT = 8
"""The most instances :func:`built` gives of one schema (and of each node inside it)."""


def built(schema: Any, limit: int = BUILT) -> list[Any]:
    """Up to ``limit`` of the smallest instances of a generation schema (:func:`generation_schema`),
    built from it rather than generated, deterministically: an object with its required properties
    only, an array with as few items as it allows, a string as short as it allows, a number at its
    lower bound, each ``const`` and the first ``enum`` value; one instance per branch of an
    ``anyOf``/``oneOf`` (in order), and per type of a list of types.

    What the rule and its proof predict is usually a small message (a tag and the fields its member
    requires, an empty list, an empty string), which random generation spends many messages
    reaching.  The instances are candidates: what a keyword here does not read (a ``pattern``, a
    ``not``, an ``allOf`` it cannot merge) may make one invalid, and every one is checked against the
    schema's own validator by its caller, as every generated message is.
    """
    return _dedupe(_built(schema, limit, 0), limit)


_BUILT_DEPTH = 24
"""How deep :func:`built` goes before it gives up on a branch (a schema nested deeper gives none)."""


def _dedupe(found: list[Any], limit: int) -> list[Any]:
    kept: dict[str, Any] = {}
    for value in found:
        kept.setdefault(canonical(value), value)
        if len(kept) >= limit:
            break
    return list(kept.values())


def _built(node: Any, limit: int, depth: int) -> list[Any]:
    if node is True or node == {}:
        return [None]
    if not isinstance(node, dict) or depth > _BUILT_DEPTH:
        return []
    if "const" in node:
        return [node["const"]]
    if isinstance(node.get("enum"), list):
        return list(node["enum"][:1])
    if isinstance(node.get("allOf"), list):
        merged = _merged(node)
        return [] if merged is None else _built(merged, limit, depth + 1)
    for keyword in ("anyOf", "oneOf"):
        branches = node.get(keyword)
        if isinstance(branches, list):
            rest = {k: v for k, v in node.items() if k != keyword}
            found: list[Any] = []
            for branch in branches:
                part = _merged({"allOf": [rest, branch]}) if rest else branch
                found.extend(_built(part, limit, depth + 1) if part is not None else [])
                if len(found) >= limit:
                    break
            return _dedupe(found, limit)
    kinds = node.get("type")
    if kinds is None:
        kinds = (
            "object" if "properties" in node or "required" in node else "array" if "items" in node else None
        )
    if isinstance(kinds, list):
        found = []
        for kind in kinds:
            found.extend(_built({**node, "type": kind}, limit, depth + 1))
        return _dedupe(found, limit)
    match kinds:
        case "null" | None:
            return [None]
        case "boolean":
            return [False]
        case "integer" | "number":
            return [_lowest(node)]
        case "string":
            return ["0" * int(node.get("minLength", 0))]
        case "array":
            return _array(node, limit, depth)
        case "object":
            return _object(node, limit, depth)
    return []


def _lowest(node: Mapping[str, Any]) -> int | float:
    """The number a numeric schema allows nearest 0 from above its lower bound (its multiple aside)."""
    low = node.get("minimum")
    above = node.get("exclusiveMinimum")
    value: int | float = 0
    if isinstance(low, (int, float)) and low > value:
        value = low
    if isinstance(above, (int, float)) and above >= value:
        value = above + 1 if node.get("type") == "integer" or isinstance(above, int) else above + 0.5
    high = node.get("maximum")
    if isinstance(high, (int, float)) and value > high:
        value = high
    return int(value) if node.get("type") == "integer" else value


def _array(node: Mapping[str, Any], limit: int, depth: int) -> list[Any]:
    least = int(node.get("minItems", 0))
    items = node.get("items", True)
    if least == 0:
        return [[]]
    if isinstance(items, list):  # a tuple form: each position its own schema
        firsts = [_built(item, 1, depth + 1) for item in items[:least]]
        return [[f[0] for f in firsts]] if all(firsts) and len(firsts) == least else []
    options = _built(items, limit, depth + 1)
    if not options:
        return []
    if node.get("uniqueItems") and least > 1:
        return [options[:least]] if len(options) >= least else []
    return [[option] * least for option in options]


def _object(node: Mapping[str, Any], limit: int, depth: int) -> list[Any]:
    found_properties = node.get("properties")
    properties: Mapping[str, Any] = found_properties if isinstance(found_properties, dict) else {}
    required = [name for name in node.get("required", []) if isinstance(name, str)]
    least = int(node.get("minProperties", 0))
    names = list(dict.fromkeys([*required, *(n for n in properties if n not in required)]))
    names = names[: max(len(required), least)]
    choices: list[list[Any]] = []
    for name in names:
        options = _built(properties.get(name, True), limit, depth + 1)
        if not options:
            return []
        choices.append(options)
    first = {name: options[0] for name, options in sorted(zip(names, choices, strict=True))}
    found = [first]
    for name, options in zip(names, choices, strict=True):  # one property at a time varied
        for option in options[1:]:
            found.append(dict(sorted({**first, name: option}.items())))
            if len(found) >= limit:
                return found
    return found


def _merged(node: Mapping[str, Any]) -> dict[str, Any] | None:
    """An ``allOf`` node's parts merged into one node, as far as :func:`built` reads them: properties
    (a property in two parts: both, as an ``allOf``), ``required``, the strictest bounds, the type
    both allow, a part's ``anyOf`` kept (one only: a second makes it ``None``, no instance)."""
    out: dict[str, Any] = {}
    parts = [{k: v for k, v in node.items() if k != "allOf"}, *node.get("allOf", [])]
    for part in parts:
        if part is False:
            return None
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("allOf"), list):
            part = _merged(part)
            if part is None:
                return None
        for key, value in part.items():
            if key == "properties" and isinstance(value, dict):
                present = out.setdefault("properties", {})
                for name, sub in value.items():
                    present[name] = {"allOf": [present[name], sub]} if name in present else sub
            elif key == "required":
                out["required"] = list(dict.fromkeys([*out.get("required", []), *value]))
            elif key in ("minItems", "minLength", "minProperties", "minimum", "exclusiveMinimum"):
                out[key] = max(out.get(key, value), value)
            elif key in ("maxItems", "maxLength", "maximum"):
                out[key] = min(out.get(key, value), value)
            elif key == "type" and "type" in out:
                mine = set(out["type"]) if isinstance(out["type"], list) else {out["type"]}
                theirs = set(value) if isinstance(value, list) else {value}
                if "number" in mine and "integer" in theirs:
                    mine.add("integer")
                if "number" in theirs and "integer" in mine:
                    theirs.add("integer")
                both = sorted(mine & theirs)
                if not both:
                    return None
                out["type"] = both[0] if len(both) == 1 else both
            elif _clashes(out, key, value):
                return None
            else:
                out.setdefault(key, value)
    return out


def _clashes(merged: Mapping[str, Any], key: str, value: Any) -> bool:
    """Whether a part's ``key: value`` is one :func:`_merged` cannot add to what it merged: a second
    ``anyOf``/``oneOf``, or another ``const``."""
    if key in ("anyOf", "oneOf"):
        return "anyOf" in merged or "oneOf" in merged
    return key == "const" and "const" in merged and merged["const"] != value
