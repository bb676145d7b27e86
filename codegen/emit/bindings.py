"""Emitter: the typed method bindings of one surface (``bindings.py`` and its runtime).

The methods' Python names and signatures come from :mod:`codegen.api` (the
API spec derived from the IR), as do the capability gates, batches, prompt
echo and protocol names; the templates in ``templates/bindings`` only lay the
code out.
"""

from __future__ import annotations

import ast

from .. import pysource
from ..api.methods import specs
from ..api.protocol import batch_kinds, gates, prompt_echo, protocol_names
from ..errors import CodegenError
from ..schema.ir import ApiSurface
from .output import TEMPLATES, Module, format_source, header, runtime_module, template_environment

BINDING_TEMPLATES = TEMPLATES / "bindings"


def render_bindings(surface: ApiSurface) -> str:
    protocol = protocol_names(surface)
    echo = prompt_echo(surface)
    context = {
        "surface": surface,
        "agent_methods": specs(surface, "agent"),
        "client_methods": specs(surface, "client"),
        "agent_gates": gates(surface, "agent"),
        "client_gates": gates(surface, "client"),
        "agent_batches": batch_kinds(surface, "agent"),
        "client_batches": batch_kinds(surface, "client"),
        "protocol": protocol,
        "echo": echo,
    }
    body = template_environment(BINDING_TEMPLATES).get_template("bindings.py.jinja2").render(**context)
    _check_members(surface, body)
    imports = pysource.import_block(pysource.used_names(body), _IMPORTS)
    source = header(surface, "Typed method bindings.") + module_doc(surface) + "\n\n" + imports + body
    return format_source(source)


def module_doc(surface: ApiSurface) -> str:
    return pysource.docstring(
        f"ACP {surface.release} ({surface.stability} schema): typed method bindings.\n\n"
        ":class:`Agent` and :class:`Client` describe the handlers of each side: every method takes\n"
        "the fields of its params as keyword-only, snake_case parameters and returns its response\n"
        "model (``None`` for a notification).  Subclassing them is optional; a method left out\n"
        "answers method-not-found (a notification is ignored).  Extra keyword arguments carry the\n"
        'message\'s ``_meta`` keys; ``kwargs["_meta"]`` is the whole ``_meta`` when the message had one.\n\n'
        ":class:`ClientSideConnection` calls the agent's methods and :class:`AgentSideConnection`\n"
        "the client's, with the same signatures; extra keyword arguments become ``_meta`` keys\n"
        "(``_meta=...`` sets it whole)."
    )


def _check_members(surface: ApiSurface, body: str) -> None:
    """Refuse a method whose Python name is a member the template writes (``close``, ``ext_method``...)."""
    for node in ast.parse(body).body:
        if not isinstance(node, ast.ClassDef):
            continue
        seen: set[str] = set()
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_overload(item):
                if item.name in seen:
                    raise CodegenError(
                        f"{node.name}.{item.name}: a method of the schema gets the name of a member "
                        "the bindings define themselves",
                        file=surface.schema_file,
                    )
                seen.add(item.name)


def _is_overload(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a method is one of the ``@overload`` signatures written before its implementation."""
    return any(isinstance(d, ast.Name) and d.id == "overload" for d in function.decorator_list)


# name -> the module it comes from (see pysource.import_block); only the names the module uses are imported
_IMPORTS: dict[str, str] = {
    "asyncio": "",
    "uuid": "",
    "Callable": "collections.abc",
    "Mapping": "collections.abc",
    "Sequence": "collections.abc",
    "Any": "typing",
    "Final": "typing",
    "Literal": "typing",
    "Protocol": "typing",
    "overload": "typing",
    "schema": ".",
    "UNSET": "._params",
    "Scopes": "._params",
    "UnionParams": "._params",
    "Unset": "._params",
    "build": "._params",
    "omit": "._params",
    "DEFAULT_MAX_MESSAGE_BYTES": "._rpc",
    "Connection": "._rpc",
    "Gate": "._rpc",
    "ProtocolNames": "._rpc",
    "RequestError": "._rpc",
    "Route": "._rpc",
    "Writer": "._rpc",
    "handler_of": "._rpc",
    "stdio_streams": "._streams",
}


def emit_bindings(surface: ApiSurface) -> dict[str, Module]:
    """The emitter (see :data:`codegen.emit.package.EMITTERS`): the bindings and the runtime they run on.

    A schema that defines no methods at all (only types) gets models and no bindings.
    """
    if not surface.methods:
        return {}
    return {
        "bindings.py": Module(
            render_bindings(surface),
            exports=(
                "Agent",
                "AgentSideConnection",
                "Client",
                "ClientSideConnection",
                "connect_to_agent",
                "connect_to_client",
                "run_agent",
            ),
            expose=True,
        ),
        "_rpc.py": runtime_module(
            surface, "_rpc.py", exports=("CapabilityError", "RequestError", "current_request_id")
        ),
        "_params.py": runtime_module(surface, "_params.py", exports=("UNSET", "Unset")),
        "_streams.py": runtime_module(
            surface, "_streams.py", exports=("memory_pipe", "spawn", "stdio_streams")
        ),
        "_router.py": runtime_module(
            surface,
            "_router.py",
            exports=(
                "AgentProtocolRouter",
                "NegotiatedConnection",
                "ReconnectRequiredError",
                "RoutedConnection",
                "connect_with_fallback",
            ),
        ),
    }
