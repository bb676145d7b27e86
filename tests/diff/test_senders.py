"""Who sends what (``codegen.diff.senders``), and how that decides whom a change breaks."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from codegen.diff.senders import callers_of, handlers_of, senders_by_type
from codegen.schema.ir import ApiSurface, Method, Ref, Scalar, Side
from tests.support.diffkit import (
    AGENT,
    BOTH,
    CLIENT,
    Defs,
    add_unused_type,
    base_surface,
    changes,
    edited,
    obj,
    only,
    props,
    tiny,
)


@pytest.mark.parametrize(
    ("side", "callers", "handlers"),
    [
        ("agent", ("client",), ("agent",)),
        ("client", ("agent",), ("client",)),
        ("protocol", ("agent", "client"), ("agent", "client")),
    ],
)
def test_callers_send_the_params_and_handlers_the_result(
    side: Side, callers: tuple[str, ...], handlers: tuple[str, ...]
) -> None:
    method = Method("x/y", "x_y", side, "request", "Params", "Result")
    peers = ("agent", "client")
    assert (callers_of(method, peers), handlers_of(method, peers)) == (callers, handlers)


def test_a_type_is_sent_by_whoever_sends_a_message_that_reaches_it() -> None:
    """Params reach their fields' types, results theirs; a type no message reaches has no senders."""
    surface = tiny(
        obj("Params", ("item", Ref("Item"))),
        obj("Item", ("name", Scalar("string"))),
        obj("Result", ("ok", Scalar("boolean"))),
        obj("Unused", ("x", Scalar("string"))),
        methods=(Method("x/y", "x_y", "agent", "request", "Params", "Result"),),
    )
    assert senders_by_type(surface) == {
        "Params": frozenset({"client"}),
        "Item": frozenset({"client"}),
        "Result": frozenset({"agent"}),
    }


def test_the_same_change_is_mirrored_by_who_sends_the_type() -> None:
    """A new required field breaks its senders: clients for PromptRequest, agents for PromptResponse."""

    def add_to(name: str) -> Callable[[Defs], None]:
        def edit(defs: Defs) -> None:
            props(defs, name)["extra"] = {"type": "string"}
            defs[name].setdefault("required", []).append("extra")

        return edit

    assert (
        only(changes(base_surface(), edited(add_to("PromptRequest"))), "field-added-required").roles == CLIENT
    )
    assert (
        only(changes(base_surface(), edited(add_to("PromptResponse"))), "field-added-required").roles == AGENT
    )
    assert (
        only(changes(base_surface(), edited(add_to("Implementation"))), "field-added-required").roles == BOTH
    )


def test_a_change_in_a_type_no_message_carries_is_info() -> None:
    def old(defs: Defs) -> None:
        add_unused_type(defs)

    def new(defs: Defs) -> None:
        add_unused_type(defs)
        defs["Unused"]["properties"]["y"] = {"type": "string"}
        defs["Unused"]["required"].append("y")

    change = only(changes(edited(old), edited(new)), "field-added-required")
    assert (change.severity, change.roles) == ("info", ())


# --- the IR facts senders_by_type relies on -------------------------------------------------


def test_every_root_envelope_has_its_sender(surface: ApiSurface) -> None:
    """The root message kinds "Agent" and "Client" each name a Request, Response and Notification envelope."""
    assert dict(surface.envelopes) == {
        "AgentRequest": "agent",
        "AgentResponse": "agent",
        "AgentNotification": "agent",
        "ClientRequest": "client",
        "ClientResponse": "client",
        "ClientNotification": "client",
    }


def test_error_payloads_travel_both_ways(surface: ApiSurface) -> None:
    """Errors are only reachable through the response envelopes, which both sides send."""
    senders = senders_by_type(surface)
    assert senders["Error"] == senders["ErrorCode"] == frozenset({"agent", "client"})
