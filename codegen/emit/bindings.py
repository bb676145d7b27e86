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
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if item.name in seen:
                    raise CodegenError(
                        f"{node.name}.{item.name}: a method of the schema gets the name of a member "
                        "the bindings define themselves",
                        file=surface.schema_file,
                    )
                seen.add(item.name)


# name -> the module it comes from (see pysource.import_block); only the names the module uses are imported
_IMPORTS: dict[str, str] = {
    "asyncio": "",
    "uuid": "",
    "Callable": "collections.abc",
    "Mapping": "collections.abc",
    "Sequence": "collections.abc",
    "Iterable": "collections.abc",
    "sys": "",
    "AcpAsgiApp": "._asgi",
    "RequestInfo": "._asgi",
    "ServerLimits": "._asgi",
    "AgentProtocolRouter": "._router",
    "NegotiatedConnection": "._router",
    "AcpModel": "._base",
    "ModuleType": "types",
    "Any": "typing",
    "Final": "typing",
    "Literal": "typing",
    "Protocol": "typing",
    "schema": ".",
    "UNSET": "._params",
    "Scopes": "._params",
    "UnionParams": "._params",
    "Unset": "._params",
    "build": "._params",
    "omit": "._params",
    "DEFAULT_MAX_MESSAGE_BYTES": "._rpc",
    "Channel": "._rpc",
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
                "asgi_app",
                "connect_http",
                "connect_to_agent",
                "connect_to_client",
                "connect_websocket",
                "connect_with_fallback",
                "run_agent",
            ),
            expose=True,
        ),
        "_rpc.py": runtime_module(
            surface,
            "_rpc.py",
            exports=("CapabilityError", "Channel", "RequestError", "StreamChannel", "current_request_id"),
        ),
        "_asgi.py": runtime_module(
            surface, "_asgi.py", exports=("AcpAsgiApp", "AuthError", "RequestInfo", "ServerLimits")
        ),
        "_http.py": runtime_module(surface, "_http.py", exports=("HttpChannel", "HttpStatusError")),
        "_ws.py": runtime_module(surface, "_ws.py", exports=("WebSocketChannel",)),
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
            ),
        ),
    }
