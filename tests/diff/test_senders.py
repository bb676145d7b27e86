"""Who sends what (``codegen.diff.senders``), and how that decides whom a change breaks."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from codegen.diff.rules import Flow
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
    """The root message kinds "Agent" and "Client" (and "Proxy" where proxies are) each name a Request,
    Response and Notification envelope."""
    senders = ["agent", "client"] + (["proxy"] if any(m.side == "proxy" for m in surface.methods) else [])
    assert dict(surface.envelopes) == {
        f"{sender.capitalize()}{kind}": sender
        for sender in senders
        for kind in ("Request", "Response", "Notification")
    }


def test_error_payloads_travel_both_ways(surface: ApiSurface) -> None:
    """Errors are only reachable through the response envelopes, which both sides (and proxies) send."""
    senders = senders_by_type(surface)
    assert senders["Error"] == senders["ErrorCode"] >= frozenset({"agent", "client"})
    assert senders["Error"] <= frozenset(surface.envelopes.values())


def test_with_proxies_the_peers_are_the_roles_of_the_connections() -> None:
    """From v2-sdk-2.3.0 (unstable) a proxy serves what an agent does and a conductor calls it."""
    from codegen.diagnostics import collecting
    from codegen.diff.senders import Peers, method_flow
    from tests.support.releases import surface_of

    with collecting(strict=False):
        surface = surface_of("v2-sdk-2.3.0", True)
    peers = Peers.of(surface)
    assert peers.names == ("agent", "client", "proxy", "conductor")
    prompt = next(m for m in surface.methods if m.wire_name == "session/prompt")
    assert method_flow(prompt, peers) == Flow(
        frozenset({"client", "conductor"}), frozenset({"agent", "proxy"})
    )
    initialize = next(m for m in surface.methods if m.wire_name == "proxy/initialize")
    assert method_flow(initialize, peers) == Flow(frozenset({"conductor"}), frozenset({"proxy"}))
    # without proxy methods there are no proxies: the stable schema's peers are the agent and the client
    with collecting(strict=False):
        assert Peers.of(surface_of("v2-sdk-2.3.0", False)).names == ("agent", "client")
