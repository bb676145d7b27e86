"""Methods (``codegen.diff.compare.methods``): subjects, the bindings' signatures, their Python changes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from codegen.api.methods import method_spec
from codegen.diff.compare.methods import method_part
from codegen.diff.compare.python import python_paths, signature
from codegen.diff.model import HandlerPart, MethodPart
from codegen.diff.wording import path_words
from codegen.schema.ir import ApiSurface, Method
from tests.support.diffkit import (
    Defs,
    base_surface,
    cancel_to_client,
    changes,
    drop_field,
    edited,
    methods_edit,
    mini,
    only,
    props,
)


def base_method(wire_name: str) -> Method:
    return next(m for m in base_surface().methods if m.wire_name == wire_name)


# --- subjects ------------------------------------------------------------------------------


def method_subject(m: Method) -> str:
    return path_words((method_part(m),))


def test_a_method_subject_names_its_kind_wire_name_and_handler() -> None:
    assert method_part(base_method("session/prompt")) == MethodPart("session/prompt", "request", "agent")
    assert method_subject(base_method("session/prompt")) == "request session/prompt (handled by the agent)"
    assert (
        method_subject(base_method("session/cancel")) == "notification session/cancel (handled by the agent)"
    )


@pytest.mark.parametrize(
    ("wire_name", "expected"),
    [
        ("session/prompt", ["agent.prompt"]),
        ("session/request_permission", ["client.request_permission"]),
        ("$/cancel_request", ["agent.cancel_request", "client.cancel_request"]),
    ],
)
def test_python_subjects_are_on_each_handler_class(wire_name: str, expected: list[str]) -> None:
    spec = method_spec(base_surface(), base_method(wire_name))
    found = python_paths(spec, ("agent", "client"))
    assert [path_words(path) for path in found] == expected
    assert all(isinstance(path[0], HandlerPart) for path in found)


def test_a_signature_maps_wire_names_to_keyword_arguments() -> None:
    """session/prompt takes ``session_id`` and ``prompt`` (required) and leaves ``_meta`` out."""
    surface = base_surface()
    found = signature(surface, method_spec(surface, base_method("session/prompt")))
    assert found["sessionId"] == ("session_id", True)
    assert found["prompt"] == ("prompt", True)
    assert "_meta" not in found


# --- python method signatures: the bindings' own -------------------------------------------


def python_methods(found: tuple[Any, ...]) -> set[tuple[str, str, str]]:
    return {(c.rule.id, c.subject, c.detail) for c in found if c.rule.id.startswith("python-method")}


def test_meta_is_no_python_argument() -> None:
    """The bindings leave ``_meta`` out of the signatures (extra keyword arguments carry it)."""
    found = changes(base_surface(), edited(drop_field("PromptRequest", "_meta")))
    assert python_methods(found) == set()
    assert only(found, "python-attribute-removed").subject == "PromptRequest.field_meta"


def test_a_field_every_branch_of_a_union_params_type_requires_is_a_required_argument() -> None:
    """``set_config_option`` takes the fields of all the branches of SetSessionConfigOptionRequest."""

    def edit(defs: Defs) -> None:
        props(defs, "SetSessionConfigOptionRequest")["mode"] = {"type": "string"}
        defs["SetSessionConfigOptionRequest"]["required"].append("mode")

    assert python_methods(changes(base_surface(), edited(edit))) == {
        ("python-method-argument-required", "agent.set_config_option(mode)", ""),
    }


def test_a_field_one_branch_of_a_union_params_type_requires_is_an_optional_argument() -> None:
    """Only the boolean branch has ``mode``; the known branches now differ, so ``type`` must be given."""

    def edit(defs: Defs) -> None:
        branch = defs["SetSessionConfigOptionRequest"]["anyOf"][1]
        assert branch["properties"]["type"]["const"] == "boolean"
        branch["properties"]["mode"] = {"type": "string"}
        branch["required"].append("mode")

    assert python_methods(changes(base_surface(), edited(edit))) == {
        ("python-method-argument-added", "agent.set_config_option(mode)", ""),
        ("python-method-argument-required", "agent.set_config_option(type)", ""),
    }


def test_a_protocol_method_is_on_the_agent_and_the_client() -> None:
    def edit(defs: Defs) -> None:
        props(defs, "CancelRequestNotification")["reason"] = {"type": "string"}
        defs["CancelRequestNotification"]["required"].append("reason")

    assert python_methods(changes(base_surface(), edited(edit))) == {
        ("python-method-argument-required", "agent.cancel_request(reason)", ""),
        ("python-method-argument-required", "client.cancel_request(reason)", ""),
    }


def test_a_method_that_moves_side_leaves_the_old_handler_class() -> None:
    found = changes(base_surface(), methods_edit(cancel_to_client)(base_surface()))
    assert python_methods(found) == {
        ("python-method-removed", "agent.session_cancel", "handled by the agent -> by the client"),
    }


# --- a notification that became a request: one change per layer (issue 32, finding 6) ---------------


def test_a_notification_that_becomes_a_request_is_one_change_per_layer() -> None:
    """The result it now has is part of the kind change, and its Python method is renamed, not removed."""

    def update_as_request(surface: ApiSurface) -> ApiSurface:
        replace = dataclasses.replace
        return replace(
            surface,
            methods=tuple(
                replace(m, kind="request", result="PromptResponse") if m.wire_name == "session/update" else m
                for m in surface.methods
            ),
        )

    found = changes(mini().surface(), update_as_request(mini().surface()))
    assert [(c.layer, c.rule.id, c.subject, c.detail) for c in found] == [
        (
            "wire",
            "method-kind-changed",
            "request session/update (handled by the client)",
            "notification -> request",
        ),
        ("python", "python-method-renamed", "client.update", "session_update -> update"),
    ]


def test_a_request_that_becomes_a_notification_and_moves_side_leaves_the_old_class_only() -> None:
    """Kind and side both change: the old handler class loses the method, the new one renames nothing."""

    def prompt_to_client(surface: ApiSurface) -> ApiSurface:
        replace = dataclasses.replace
        return replace(
            surface,
            methods=tuple(
                replace(m, kind="notification", result=None, side="client")
                if m.wire_name == "session/prompt"
                else m
                for m in surface.methods
            ),
        )

    found = changes(mini().surface(), prompt_to_client(mini().surface()))
    assert [(c.rule.id, c.subject) for c in found] == [
        ("method-kind-changed", "notification session/prompt (handled by the client)"),
        ("method-moved-side", "notification session/prompt (handled by the client)"),
        ("python-method-removed", "agent.prompt"),
    ]
