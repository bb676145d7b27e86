"""The rule catalog (``codegen.diff.rules``): typed IDs, one entry each, the flow resolved to roles."""

from __future__ import annotations

import collections
import dataclasses
import itertools
import json
from typing import Any

import pytest

from codegen.diff import rules
from codegen.diff.rules import (
    BECAME,
    BREAKS_TEXT,
    CATALOG,
    MEMBER_ADDED,
    MEMBER_REMOVED,
    RULES,
    Flow,
    RuleId,
    Traffic,
    impact,
    openness,
)
from tests.support.diffkit import AGENT, BOTH, CLIENT, NOBODY, PYTHON

# --- the direction rule ---------------------------------------------------------------------


def flow(senders: list[str], receivers: list[str]) -> Flow:
    return Flow(frozenset(senders), frozenset(receivers))


def same(senders: list[str], receivers: list[str]) -> Traffic:
    """The same flow in both releases."""
    return Traffic(flow(senders, receivers), flow(senders, receivers))


@pytest.mark.parametrize(
    ("breaks", "data", "expected"),
    [
        ("senders", same(["client"], ["agent"]), ("breaking", CLIENT)),
        ("senders", same(["agent"], ["client"]), ("breaking", AGENT)),
        ("receivers", same(["client"], ["agent"]), ("breaking", AGENT)),
        ("receivers", same(["agent"], ["client"]), ("breaking", CLIENT)),
        ("both", same(["agent"], ["client"]), ("breaking", BOTH)),
        ("senders", same(["agent", "client"], ["agent", "client"]), ("breaking", BOTH)),
        ("senders", same([], []), ("info", NOBODY)),
        ("python", same([], []), ("breaking", PYTHON)),
        ("nobody", same(["agent"], ["client"]), ("breaking", NOBODY)),
        # a third side: the roles come from the flow, not from a fixed pair of peers
        ("receivers", same(["client"], ["proxy"]), ("breaking", ("old proxy",))),
        (
            "both",
            same(["proxy"], ["agent", "client"]),
            ("breaking", ("old agent", "old client", "old proxy")),
        ),
        # old senders are the old release's: a proxy only the new release has is no old proxy
        (
            "senders",
            Traffic(flow(["agent"], ["client"]), flow(["agent", "proxy"], ["client"])),
            ("breaking", AGENT),
        ),
        # old receivers are the old release's too, and are hurt only if the new release still sends the data
        (
            "receivers",
            Traffic(flow(["agent"], ["client"]), flow(["agent"], ["client", "conductor"])),
            ("breaking", CLIENT),
        ),
        ("receivers", Traffic(flow(["agent"], ["client"]), flow([], [])), ("info", NOBODY)),
        # old senders are hurt only if someone in the new release still receives the data
        ("senders", Traffic(flow(["client"], ["agent"]), flow(["client"], [])), ("info", NOBODY)),
        # a narrowing hurts old senders alone, whoever else took part before or after
        (
            "senders",
            Traffic(flow(["agent"], ["client"]), flow(["agent", "client"], ["client", "agent"])),
            ("breaking", AGENT),
        ),
    ],
)
def test_impact_resolves_the_traffic_to_roles(breaks: str, data: Traffic, expected: tuple[str, Any]) -> None:
    rule = dataclasses.replace(CATALOG[0], breaks=breaks, severity="breaking")  # type: ignore[arg-type]
    assert impact(rule, data) == expected


def test_the_traffic_of_an_answer_runs_the_other_way_in_both_releases() -> None:
    data = Traffic(flow(["client"], ["agent"]), flow(["client", "conductor"], ["agent", "proxy"]))
    assert data.reversed == Traffic(
        flow(["agent"], ["client"]), flow(["agent", "proxy"], ["client", "conductor"])
    )
    assert data.reversed.reversed == data


def test_rule_ids_are_unique_kebab_case_and_explained_in_one_line() -> None:
    assert len(RULES) == len(CATALOG)
    for rule in CATALOG:
        assert rule.id == rule.id.lower() and " " not in rule.id and "_" not in rule.id
        assert rule.summary and "\n" not in rule.summary and rule.summary.endswith(".")
        if rule.layer == "wire":
            assert rule.breaks != "python"
        else:
            assert rule.breaks in ("python", "nobody")


def test_every_rule_id_has_exactly_one_catalog_entry_and_every_entry_an_id() -> None:
    counts = collections.Counter(r.id for r in CATALOG)
    assert {rule_id: counts[rule_id] for rule_id in RuleId} == dict.fromkeys(RuleId, 1)
    assert all(isinstance(r.id, RuleId) for r in CATALOG)
    assert set(RULES) == set(RuleId) and all(RULES[r.id] is r for r in CATALOG)


def test_rule_ids_are_declared_in_the_catalog_order() -> None:
    """The catalog's order is the order of docs/rules.md and of the reports; the enum follows it."""
    assert [r.id for r in CATALOG] == list(RuleId)


def test_a_rule_id_is_its_kebab_case_string() -> None:
    """Reports, fingerprints and waivers show the value, so it must read as the plain string."""
    for rule_id in RuleId:
        assert rule_id == rule_id.value == str(rule_id) == f"{rule_id}"
        assert rule_id.name == rule_id.value.upper().replace("-", "_")


@pytest.mark.parametrize(
    ("table", "pattern"),
    [
        (BECAME, "{kind}-became-{state}"),
        (MEMBER_ADDED, "{kind}-{noun}-added-{state}"),
        (MEMBER_REMOVED, "{kind}-{noun}-removed-{state}"),
    ],
    ids=["became", "added", "removed"],
)
def test_the_rules_picked_by_kind_and_state_are_the_ids_they_spell(table: Any, pattern: str) -> None:
    """The typed lookups replace ids built as f-strings: each key gives the id the f-string gave."""
    nouns = {"union": "variant", "enum": "value"}
    assert set(table) == set(itertools.product(("union", "enum"), ("open", "closed")))
    for (kind, state), rule_id in table.items():
        assert rule_id == pattern.format(kind=kind, noun=nouns[kind], state=state)


def test_rule_finds_the_catalog_entry_of_an_id() -> None:
    found = rules.rule(RuleId.FIELD_ADDED_REQUIRED)
    assert (found.id, found.layer, found.severity, found.breaks) == (
        "field-added-required",
        "wire",
        "breaking",
        "senders",
    )


def test_openness_names_the_state() -> None:
    assert (openness(True), openness(False)) == ("open", "closed")


# --- each rule explains itself ---------------------------------------------------------------


def test_a_rule_explains_itself_as_text() -> None:
    found = rules.rule(RuleId.ENUM_BECAME_OPEN)
    assert found.explain("text", width=20) == (
        "enum-became-open      wire    breaking  old receivers of the data\n"
        "                      An enum accepts any value: new senders may send values old receivers reject."
    )
    assert found.explain().splitlines()[0].startswith("enum-became-open  wire ")


def test_a_rule_explains_itself_as_a_markdown_section() -> None:
    assert rules.rule(RuleId.PYTHON_CLASS_ADDED).explain("markdown") == (
        "### python-class-added\n"
        "\n"
        "A new class in the generated bindings.\n"
        "\n"
        "- layer: `python`; default severity: `info`; breaks: nobody"
    )


@pytest.mark.parametrize("found", CATALOG, ids=lambda r: str(r.id))
def test_a_rule_explains_itself_as_json(found: Any) -> None:
    data = json.loads(found.explain("json"))
    assert data == found.facts()
    assert list(data) == ["id", "layer", "category", "severity", "breaks", "summary"]
    assert data["id"] == found.id.value and data["breaks"] == BREAKS_TEXT[found.breaks]
