"""Properties of the patch semantics on every release, checked with hypothesis.

Each property runs once per release and stability with the ``acp-patches``
profile: 500 examples, no deadline (the machine is shared and noisy). ``make
test`` runs them on the oldest and the newest release of each protocol major,
``make test-all`` on every release (the ``sweep`` marker).

* a random stream of updates gives the same state as :mod:`tests.support.patch_reference`,
  a reference model written with plain dicts, and bad updates raise the error it
  predicts without changing anything;
* replaying a stream the state already holds is a no-op, however often, and a
  replay into a fresh state gives the state the live stream gave;
* an upsert dumped with ``exclude_unset`` and validated again keeps every patch
  field omitted, ``null`` or set exactly as it was.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from codegen.emit.patches import UpsertPlan, session_plan
from tests.support.patch_reference import (
    PredictedError,
    Reference,
    camel,
    spec_of,
    update_strategy,
    upsert_strategy,
    variant_strategies,
)
from tests.support.releases import package_of, surface_of, surfaces_with, sweep

settings.register_profile(
    "acp-patches",
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
PROFILE = settings.get_profile("acp-patches")

PATCHED = surfaces_with("patches")
every_surface = pytest.mark.parametrize("release, unstable", sweep(PATCHED))


def streams(release: str, unstable: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(update_strategy(surface_of(release, unstable)), min_size=4, max_size=32)


def wire(model: Any) -> Any:
    return model.model_dump(by_alias=True, exclude_unset=True, mode="json")


def state_json(state: Any) -> dict[str, Any]:
    out: dict[str, Any] = state.dump()
    assert out.pop("sessionId") == "sess"
    return out


def assert_matches(state: Any, reference: Reference) -> None:
    got, expected = state_json(state), reference.dump()
    assert got == expected
    for name in map(camel, reference.keyed):
        assert list(got[name]) == list(expected[name]), f"order of {name}"
    assert (state.completions, state.work_in_progress) == (reference.completions, reference.working)


def valid_part(reference: Reference, stream: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The updates of ``stream`` the reference accepts in order (it is left holding their state)."""
    kept = []
    for update in stream:
        try:
            reference.apply(update)
        except PredictedError:
            continue
        kept.append(update)
    return kept


@every_surface
def test_random_streams_match_the_reference_model(release: str, unstable: bool) -> None:
    package = package_of(release, unstable)
    spec = spec_of(surface_of(release, unstable))

    @PROFILE
    @given(streams(release, unstable))
    def check(stream: list[dict[str, Any]]) -> None:
        state = package.SessionState("sess")
        reference = Reference(spec)
        for index, update in enumerate(stream):
            try:
                reference.apply(update)
            except PredictedError as error:
                before = state.dump()
                with pytest.raises(getattr(package, error.kind)):
                    state.apply_update(update)
                assert state.dump() == before
                continue
            if index % 2:
                state.apply({"sessionId": "sess", "update": update})
            else:
                state.apply_update(update)
        assert_matches(state, reference)

    check()


@every_surface
def test_replaying_a_stream_is_a_no_op(release: str, unstable: bool) -> None:
    package = package_of(release, unstable)
    spec = spec_of(surface_of(release, unstable))

    @PROFILE
    @given(streams(release, unstable))
    def check(stream: list[dict[str, Any]]) -> None:
        history = valid_part(Reference(spec), stream)
        live = package.SessionState("sess")
        for update in history:
            live.apply_update(update)
        expected, completions = live.dump(), live.completions
        for _ in range(2):
            with live.replay():
                for update in history:
                    live.apply_update(update)
            assert live.dump() == expected
            assert live.completions == completions
        fresh = package.SessionState("sess")
        with fresh.replay():
            for update in history:
                fresh.apply_update(update)
        assert fresh.dump() == expected

    check()


@every_surface
def test_applying_an_upsert_again_changes_nothing(release: str, unstable: bool) -> None:
    package = package_of(release, unstable)
    surface = surface_of(release, unstable)
    spec = spec_of(surface)
    adapter: TypeAdapter[Any] = TypeAdapter(package.schema.SessionUpdate)

    @PROFILE
    @given(st.data())
    def check(data: st.DataObject) -> None:
        update = data.draw(upsert_strategy(surface), "update")
        rule = spec.rules[update["sessionUpdate"]]
        current = None
        if data.draw(st.booleans(), "known entity"):
            earlier = data.draw(variant_strategies(surface)[rule.variant], "earlier update")
            earlier.update((key, update[key]) for key in rule.key)
            current = package.apply_patch(None, adapter.validate_python(earlier))
        before = None if current is None else wire(current)
        once = package.apply_patch(current, adapter.validate_python(update))
        twice = package.apply_patch(once, adapter.validate_python(update))
        assert type(once) is getattr(package.schema, str(rule.entity))
        assert wire(twice) == wire(once)
        assert (None if current is None else wire(current)) == before, "apply_patch changed its input"

    check()


@every_surface
def test_exclude_unset_keeps_omitted_and_null_patch_fields_apart(release: str, unstable: bool) -> None:
    package: ModuleType = package_of(release, unstable)
    surface = surface_of(release, unstable)
    adapter: TypeAdapter[Any] = TypeAdapter(package.schema.SessionUpdate)
    # the oracle comes from the reference and the IR, not the planner: an upsert's patch
    # fields are the optional fields of its entity
    patch_fields = {
        rule.variant: [f for f in surface.all_fields(str(rule.entity)) if not f.required]
        for rule in spec_of(surface).rules.values()
        if rule.role == "upsert"
    }
    upserts = [r for r in session_plan(surface).rules if isinstance(r, UpsertPlan)]
    assert {r.update: list(r.patch_fields) for r in upserts} == patch_fields

    @PROFILE
    @given(upsert_strategy(surface))
    def check(update: dict[str, Any]) -> None:
        model = adapter.validate_python(update)
        dumped = model.model_dump(by_alias=True, exclude_unset=True)
        again = adapter.validate_python(dumped)
        assert wire(again) == wire(model) == update
        assert again.model_fields_set == model.model_fields_set
        for field in patch_fields[type(model).__name__]:
            if field.wire_name not in update:
                assert field.wire_name not in dumped
                assert field.py_name not in again.model_fields_set
            elif update[field.wire_name] is None:
                assert dumped[field.wire_name] is None
                assert field.py_name in again.model_fields_set
                assert getattr(again, field.py_name) is None
            else:
                assert field.py_name in again.model_fields_set
                assert getattr(again, field.py_name) is not None

    check()
