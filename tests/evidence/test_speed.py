"""What makes the evidence search fast changes nothing it finds: the same characters, the same messages.

The speed itself is measured side by side by ``benchmarks/bench_diff.py`` (``make bench-diff``), never
asserted here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen.evidence import instances as gen
from codegen.evidence.walk import carried_leniently
from tests.support.releases import release_files, surface_of


def keeping(found: list[Any]) -> Callable[[Any], bool]:
    """An ``accept`` that keeps every message and never stops the generation."""

    def accept(instance: Any) -> bool:
        found.append(instance)
        return False

    return accept


def test_the_utf8_table_is_the_one_hypothesis_builds_by_encoding_every_code_point(tmp_path: Path) -> None:
    """:func:`~codegen.evidence.instances._utf8_known` answers what hypothesis computes (once per
    storage home, a second or two) with the definition of UTF-8: the same intervals, so the same
    characters are drawn."""
    from hypothesis.internal import charmap

    gen.require_generator(tmp_path)
    with gen._storage(tmp_path / "hypothesis"):
        built = charmap.intervals_from_codec.__wrapped__("utf-8")  # not hypothesis's in-memory copy
        with gen._utf8_known():
            given = charmap.intervals_from_codec("utf-8")
            other = charmap.intervals_from_codec("ascii")
    assert [s.intervals for s in given] == [s.intervals for s in built]
    assert given[0].intervals == ((0, 0xD7FF), (0xE000, 0x10FFFF)) and not given[1].intervals
    assert other[0].intervals == ((0, 127),)  # other codecs are hypothesis's own
    assert charmap.intervals_from_codec.__name__ == "intervals_from_codec" and hasattr(
        charmap.intervals_from_codec, "cache_info"
    )  # put back


@pytest.mark.parametrize(
    ("release", "name"), [("v2-sdk-2.2.0", "ContentBlock"), ("v2-sdk-2.1.0", "AgentResponse")]
)
def test_canonical_forms_kept_draw_the_same_messages(
    release: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With each schema canonicalised once (:func:`~codegen.evidence.instances._canonical_forms_once`)
    the messages are the same, in the same order, as with the generator's own canonicalisation; and
    the forms were kept (the speed-up is in use)."""
    defs = release_files(release).schema(True).data["$defs"]
    schema = gen.generation_schema(defs, name, ("x", "y"))
    gen._CANONICAL.clear()
    fast: list[Any] = []
    gen.generate(schema, 10, keeping(fast))
    assert gen._CANONICAL
    monkeypatch.setattr(gen, "_canonical_forms_once", contextlib.nullcontext)
    slow: list[Any] = []
    gen.generate(schema, 10, keeping(slow))
    assert fast == slow and len(fast) == 10


def test_a_kept_form_is_a_fresh_copy_each_time() -> None:
    """The generator edits the forms it gets back: a kept one is handed out as a new object."""
    from hypothesis_jsonschema import _canonicalise as canonical

    schema = {"type": "object", "properties": {"a": {"type": "integer", "minimum": 1.0}}}
    with gen._canonical_forms_once():
        first = canonical.canonicalish(schema)
        first["properties"]["a"]["edited"] = True
        second = canonical.canonicalish(schema)
    assert "edited" not in second["properties"]["a"]
    assert second == canonical.canonicalish(schema)


@pytest.mark.parametrize(
    ("top", "root", "lenient"),
    [
        # configOptions skips an invalid item: a SessionConfigSelectOptions refused inside is dropped
        ("NewSessionResponse", "SessionConfigSelectOptions", True),
        ("SetSessionConfigOptionResponse", "SessionConfigSelectOptions", True),
        # UsageUpdate.cost reads a refused Cost as omitted (the shape of issue 32's finding 9)
        ("UpdateSessionNotification", "Cost", True),
        # the prompt's content blocks are read strictly
        ("PromptRequest", "ContentBlock", False),
        ("PromptRequest", "TextContent", False),
        # an envelope's result (params) is a union without a tag that has a member of any value
        # (ExtResponse, ExtRequest): whatever is there, that member takes it
        ("AgentResponse", "PromptResponse", True),
        ("ClientRequest", "PromptRequest", True),
    ],
)
def test_what_the_reading_side_reads_leniently_is_not_generated_for(
    top: str, root: str, lenient: bool
) -> None:
    """A whole message is not generated when the refusing side's models read every place it can hold
    the searched type leniently (:func:`~codegen.evidence.walk.carried_leniently`): no message of it is
    refused there.  Read strictly anywhere, it is generated as before."""
    old, new = surface_of("v2-sdk-2.1.0", False), surface_of("v2-sdk-2.2.0", False)
    mine, theirs = old.by_schema_name(top), new.by_schema_name(top)
    assert (
        mine is not None
        and theirs is not None
        and root in release_files("v2-sdk-2.2.0").schema(False).data["$defs"]
    )
    assert carried_leniently(old, new, mine, theirs, root) is lenient


def test_an_envelope_whose_result_union_has_a_member_of_any_value_refuses_nothing_inside_it() -> None:
    """The premise of the last rows above, on the real models: a result that ``PromptResponse`` refuses
    alone is in an ``AgentResponse`` the 2.2.0 models accept (its union tries each member, and
    ``ExtResponse`` takes any value); so no whole ``AgentResponse`` is generated to carry a refusal."""
    from acp_v2_sdk_2_2_0 import schema
    from pydantic import TypeAdapter, ValidationError

    result = {"stopReason": 5}
    with pytest.raises(ValidationError):
        schema.PromptResponse.model_validate(result)
    TypeAdapter(schema.AgentResponse).validate_python({"jsonrpc": "2.0", "id": 0, "result": result})


def test_a_reading_side_of_another_shape_counts_as_strict() -> None:
    """Where the refusing side's type is not known to read the message the same way (here: a type of
    another shape altogether), every place counts as read strictly: the whole message is generated."""
    old, new = surface_of("v2-sdk-2.1.0", False), surface_of("v2-sdk-2.2.0", False)
    mine, unrelated = old.by_schema_name("NewSessionResponse"), new.by_schema_name("PromptRequest")
    assert mine is not None and unrelated is not None
    assert not carried_leniently(old, new, mine, unrelated, "SessionConfigSelectOptions")
    assert carried_leniently(
        old, new, mine, new.by_schema_name("NewSessionResponse"), "SessionConfigSelectOptions"
    )


def test_the_changes_weighed_on_every_core_give_what_one_after_the_other_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2.0.0-alpha.5 → 2.0.0-alpha.7, unstable: :class:`~codegen.evidence.search.Weighing` on two
    workers (a cold cache), each job running its own searches (the changes that need a search in
    common in one job), gives each change the
    evidence :meth:`~codegen.evidence.search.Pair.evidence` gives in one process, and its pair keeps
    the same searches (one a job ran in a worker too: a search on past its first refusals), so the
    same first hits.  On a warm cache it weighs them in the process, with the same evidence."""
    from codegen.diff import Evidence, diff_surfaces
    from codegen.evidence.search import (
        Planner,
        Weighing,
        evidence_all,
        pairs_of,
        search_all,
        wants_evidence,
    )
    from codegen.schema.releases import surfaces_of

    old, new = release_files("2.0.0-alpha.5"), release_files("2.0.0-alpha.7")
    built = (surfaces_of(old, ["unstable"]), surfaces_of(new, ["unstable"]))
    before, after = built[0]["unstable"], built[1]["unstable"]
    changes = [c for c in diff_surfaces(before, after).changes if wants_evidence(c)]
    only = {"unstable": Planner(before, after).types(changes)}

    def fresh() -> Any:
        [found] = pairs_of(old, new, ["unstable"], tmp_path, built=built, only=only)  # type: ignore[arg-type]
        return found

    monkeypatch.setenv("ACP_CODEGEN_JOBS", "1")
    alone = fresh()
    expected = alone.evidence(changes)
    monkeypatch.setenv("ACP_CODEGEN_JOBS", "2")
    warm = fresh()  # its models were rendered above: weighed here, one change after the other
    assert not warm.fresh and not Weighing([(warm, changes)]).early()
    assert evidence_all([(warm, changes)]) == [expected]
    spread = fresh()
    spread.fresh = True  # as on a cold cache: weighed on every core
    weighing = Weighing([(spread, changes)])
    wheres = [weighing._wheres(job) for job in weighing.jobs]
    assert sum(map(len, wheres)) == len(set().union(*wheres))  # no search needed by two jobs
    beside = weighing.early()
    assert len(beside) == len(weighing.jobs) < len(changes)  # some changes share a job
    weighing.take(search_all([], also=beside))
    assert spread._searches  # run in the workers by the jobs, kept here
    weighing.rest()
    [found] = weighing.evidence()
    assert found == expected
    assert sum(isinstance(e, Evidence) for e in found.values()) >= 5
    assert spread._searches.keys() == alone._searches.keys()
    assert [spread.first_hit(c) for c in changes] == [alone.first_hit(c) for c in changes]


def _json_values() -> Any:
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    texts = st.text(alphabet='0123456789.eE-abc"\\é', max_size=6)
    return st.recursive(
        scalars | texts,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
        max_leaves=12,
    )


def test_the_canonical_encoding_by_the_c_encoder_is_the_generators_own() -> None:
    """:func:`~codegen.evidence.instances._fast_canonical_json` writes the text hypothesis-jsonschema's
    own encoder writes (integral floats as integers, sorted keys), for any JSON value: floats, strings
    that look like numbers, nested keys; so the canonical forms, and the messages, are the same."""
    from hypothesis import given, settings
    from hypothesis_jsonschema._encode import encode_canonical_json

    fast = gen._fast_canonical_json(encode_canonical_json)
    assert fast({"b": [1.0, 2.5], "a": "x1.0"}) == encode_canonical_json({"b": [1.0, 2.5], "a": "x1.0"})

    @settings(max_examples=300, deadline=None, database=None)
    @given(_json_values())
    def same(value: Any) -> None:
        assert fast(value) == encode_canonical_json(value)

    same()


def test_the_messages_of_a_schema_do_not_depend_on_the_modules_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hypothesis draws constants from the source of every module it calls local (not in
    site-packages), which made the messages depend on how acp-codegen was installed and on what the
    process had imported.  A generation reads none (:func:`~codegen.evidence.instances._no_local_constants`):
    loading a module full of new constants changes no message, and none of its constants is drawn."""
    import importlib
    import sys

    schema = {"type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer"}}}
    before: list[Any] = []
    gen.generate(schema, 300, keeping(before), tmp_path / "home")
    words = [f"local-constant-{i}" for i in range(400)]
    (tmp_path / "many_constants.py").write_text(
        "WORDS = [\n"
        + "".join(f"    {w!r},\n" for w in words)
        + "]\nNUMBERS = ["
        + ", ".join(str(1000003 + i) for i in range(400))
        + "]\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("many_constants")
    try:
        after: list[Any] = []
        gen.generate(schema, 300, keeping(after), tmp_path / "home")
    finally:
        sys.modules.pop("many_constants", None)
    assert after == before
    drawn = {m.get("a") for m in after} | {m.get("n") for m in after}
    assert not drawn & (set(words) | {1000003 + i for i in range(400)})


def test_the_generator_is_looked_for_without_being_imported_before_the_models_render(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``diff`` checks for the generator before anything else, without importing it (half a second,
    paid later beside the render jobs); a module made not to import is missing either way."""
    import subprocess
    import sys

    code = (
        "import sys; from pathlib import Path; from codegen.evidence.instances import require_generator;"
        f"require_generator(Path({str(tmp_path)!r}), load=False);"
        "print(sorted(m for m in ('hypothesis', 'hypothesis_jsonschema') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    monkeypatch.setitem(sys.modules, "hypothesis_jsonschema", None)
    for load in (False, True):
        with pytest.raises(gen.MissingGeneratorError, match="evidence needs hypothesis_jsonschema"):
            gen.require_generator(tmp_path, load=load)
