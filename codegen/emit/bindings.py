"""Emitter: the typed method bindings of one surface (``bindings.py`` and its runtime).

The methods' Python names and signatures come from :mod:`codegen.api` (the
API spec derived from the IR), as do the capability gates, batches, prompt
echo and protocol names; the templates in ``templates/bindings`` only lay the
code out.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .. import pysource
from ..api.connections import article
from ..api.ends import Bindings, bindings
from ..api.methods import MethodSpec
from ..errors import CodegenError
from ..schema.ir import ApiSurface
from . import transports
from .output import TEMPLATES, Module, format_source, header, packaging, runtime_module, template_environment

BINDING_TEMPLATES = TEMPLATES / "bindings"

RUNTIME: Final[Mapping[str, tuple[str, ...]]] = {
    "_rpc.py": (
        "CapabilityError",
        "Channel",
        "HttpStatusError",
        "RequestError",
        "StreamChannel",
        "TransportError",
        "current_request_id",
    ),
    "_params.py": ("UNSET", "Unset"),
    "_streams.py": ("memory_pipe", "spawn", "stdio_streams"),
    "_router.py": ("NegotiatedConnection", "ReconnectRequiredError", "RoutedConnection"),
    "_http.py": (),
    "_ws.py": ("WebSocketChannel",),
    "_asgi.py": ("AcpAsgiApp", "AuthError", "RequestInfo", "ServerLimits"),
}
"""The runtime the bindings run on: file -> the names the package re-exports from it.  The files of
:data:`.transports.OPTIONAL_RUNTIME` come only with a transport that needs them."""


@dataclass(frozen=True)
class Carried:
    """What a package's bindings and runtime hold of the transports (:mod:`.transports`)."""

    transports: tuple[str, ...]
    runtime: tuple[str, ...]
    """The runtime files the package carries."""
    defined: frozenset[str]
    """What the bindings define for the transports (only bindings with a client and an agent end)."""
    left_out: Mapping[str, str]
    """Name -> the transport that would bring it: what the package was vendored without."""
    add: Mapping[str, str]
    """Transport -> the command that writes the package with it too."""


def carried(surface: ApiSurface, spec: Bindings, chosen: tuple[str, ...] | None = None) -> Carried:
    """What the package of ``spec`` carries with the transports ``chosen`` (the package's packaging's)."""
    written = packaging()
    chosen = written.transports if chosen is None else chosen
    files = tuple(
        f for f in RUNTIME if f not in transports.OPTIONAL_RUNTIME or f in transports.runtime_files(chosen)
    )
    remote = _remote(spec)
    defined = (
        frozenset(n for t in transports.TRANSPORTS if t.name in chosen for n in t.bindings)
        if remote
        else frozenset()
    )
    left_out: dict[str, str] = {}
    for transport in transports.TRANSPORTS:
        brought = [
            *(transport.bindings if remote else ()),
            *(n for f in transport.runtime for n in RUNTIME[f]),
        ]
        for name in brought:
            if name not in defined and not any(name in RUNTIME[f] for f in files):
                left_out.setdefault(name, transport.name)
    add = {
        t: written.command(surface.release, transports.normalised({*chosen, t}))
        for t in sorted(set(left_out.values()))
    }
    return Carried(chosen, files, defined, left_out, add)


def render_bindings(surface: ApiSurface) -> str:
    """The bindings of ``surface`` as the package being rendered carries them (every transport by default)."""
    spec = bindings(surface)
    return _render(surface, spec, carried(surface, spec))


def _render(surface: ApiSurface, spec: Bindings, holds: Carried) -> str:
    environment = template_environment(BINDING_TEMPLATES)
    environment.filters["article"] = article
    _check_members(surface, spec)
    body = environment.get_template("bindings.py.jinja2").render(
        surface=surface,
        bindings=spec,
        defined=holds.defined,
        left_out=sorted(holds.left_out.items(), key=lambda item: pysource.isort_key(item[0])),
        add=sorted(holds.add.items()),
        transports=transports.option(holds.transports),
    )
    imports = pysource.import_block(set(imported_names(spec, holds)), _IMPORTS)
    source = header(surface, "Typed method bindings.") + module_doc(surface, spec) + "\n\n" + imports + body
    return format_source(source)


def _listing(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def bindings_summary(surface: ApiSurface) -> str:
    """The first sentence of the bindings' docstring."""
    return f"ACP {surface.release} ({surface.stability} schema): typed method bindings."


def module_doc(surface: ApiSurface, spec: Bindings | None = None) -> str:
    spec = spec if spec is not None else bindings(surface)
    handlers = _listing([f":class:`{e.role.handler}`" for e in spec.handlers])
    first, *rest = spec.ends
    calls = [f":class:`{first.role.connection}` calls the {first.role.peer}'s methods"]
    calls += [f":class:`{e.role.connection}` the {e.role.peer}'s" for e in rest]
    return pysource.docstring(
        f"{bindings_summary(surface)}\n\n"
        f"{handlers} describe the handlers of each role: every method takes\n"
        "the fields of its params as keyword-only, snake_case parameters and returns its response\n"
        "model (``None`` for a notification).  Subclassing them is optional; a method left out\n"
        "answers method-not-found (a notification is ignored).  Extra keyword arguments carry the\n"
        'message\'s ``_meta`` keys; ``kwargs["_meta"]`` is the whole ``_meta`` when the message had one.\n\n'
        + textwrap.fill(
            _listing(calls) + ", with the same signatures; extra keyword arguments become ``_meta`` keys "
            "(``_meta=...`` sets it whole).",
            width=89,
        )
    )


HANDLER_MEMBERS = ("ext_method", "ext_notification")
"""What ``templates/bindings`` writes on a handler protocol besides its methods (a protocol that
extends another inherits them)."""
CONNECTION_MEMBERS = (
    "__init__",
    "initialized",
    "peer_capabilities",
    "send_extension_request",
    "send_extension_notification",
    "wait_closed",
    "close",
)
"""What ``templates/bindings`` writes on a connection class besides its calls (a class that extends
another inherits all but ``__init__``, which it writes again)."""
ECHO_MEMBER = "echo_user_message"
"""The prompt echo helper of a connection class whose :attr:`~codegen.api.ends.End.echo` is set."""


def _check_members(surface: ApiSurface, spec: Bindings) -> None:
    """Refuse a method whose Python name is a member the template writes (``close``, ``ext_method``...),
    in the class or one it extends."""
    classes = [(end.role.handler, end.own_served, set(HANDLER_MEMBERS)) for end in spec.handlers]
    classes += [
        (
            end.role.connection,
            end.own_called,
            {*CONNECTION_MEMBERS, *([ECHO_MEMBER] if end.has_echo else [])},
        )
        for end in spec.ends
    ]
    for name, methods, members in classes:
        for method in methods:
            if method.name in members:
                raise CodegenError(
                    f"{name}.{method.name}: a method of the schema gets the name of a member "
                    "the bindings define themselves",
                    file=surface.schema_file,
                )


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
    "_http": ".",
    "_router": ".",
    "NegotiatedConnection": "._router",
    "AcpModel": "._base",
    "ModuleType": "types",
    "Any": "typing",
    "Final": "typing",
    "Literal": "typing",
    "Protocol": "typing",
    "TYPE_CHECKING": "typing",
    "overload": "typing",
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
    "GeneratedPackage": "._rpc",
    "ProtocolNames": "._rpc",
    "RequestError": "._rpc",
    "Route": "._rpc",
    "SessionRoutes": "._rpc",
    "Writer": "._rpc",
    "handler_of": "._rpc",
    "stdio_streams": "._streams",
}


INJECTED = ("AgentProtocolRouter", "HttpChannel")
"""The runtime's classes the bindings subclass with this package's ``PACKAGE`` and ``SESSIONS``."""


def _remote(spec: Bindings) -> bool:
    """Whether the bindings get the router and the remote transports: a client and an agent end."""
    return {"ClientSideConnection", "AgentSideConnection"} <= {end.role.connection for end in spec.ends}


def _exports(spec: Bindings, holds: Carried) -> tuple[str, ...]:
    extra: tuple[str, ...] = ()
    if _remote(spec):
        extra = ("AgentProtocolRouter", *holds.defined)
        extra += ("connect_with_fallback",) if spec.protocol.handshake is not None else ()
    return tuple(sorted({*spec.exports, *extra}))


# What each part of ``templates/bindings/bindings.py.jinja2`` writes of the names a module imports,
# besides the pieces the API spec renders (signatures, types, union branches, protocol constants).
_ROUTES = frozenset({"Final", "Mapping", "Route"})
_EXTENSION_HANDLERS = frozenset({"Any", "RequestError"})
_CALL = frozenset({"Any"})  # the annotation of ``arguments``
_CONNECTION = frozenset(
    {"Callable", "asyncio", "Channel", "Writer", "DEFAULT_MAX_MESSAGE_BYTES", "Connection", "handler_of"}
)
_CONNECTION_MEMBERS = frozenset({"Any", "Mapping"})
_ECHO = frozenset({"Sequence", "uuid", "schema"})
_CONNECT = frozenset({"Callable", "asyncio", "Channel", "Writer", "DEFAULT_MAX_MESSAGE_BYTES"})
_RUN = frozenset({"Callable", "DEFAULT_MAX_MESSAGE_BYTES", "stdio_streams"})
_REMOTE = frozenset({"Final", "SessionRoutes", "GeneratedPackage", "sys", "schema", "_router"})
_TRANSPORT: Final[Mapping[str, frozenset[str]]] = {
    "HttpChannel": frozenset({"_http"}),
    "connect_http": frozenset({"Any", "Mapping", "DEFAULT_MAX_MESSAGE_BYTES"}),
    "connect_websocket": frozenset({"Mapping", "DEFAULT_MAX_MESSAGE_BYTES"}),
    "asgi_app": frozenset(
        {"Any", "Callable", "Iterable", "AcpAsgiApp", "RequestInfo", "ServerLimits", "_router"}
    ),
}
"""What the template writes for each name a transport brings (:attr:`.transports.Transport.bindings`)."""
_LEFT_OUT = frozenset({"TYPE_CHECKING"})
_FALLBACK = frozenset(
    {
        "Any",
        "Mapping",
        "asyncio",
        "Writer",
        "AcpModel",
        "ModuleType",
        "DEFAULT_MAX_MESSAGE_BYTES",
        "NegotiatedConnection",
    }
)


def _handler_names(method: MethodSpec) -> frozenset[str]:
    """What the template's ``handler`` macro writes for ``method``."""
    names = set(method.signature_names)
    names |= {"schema"} if method.result_type else set()
    names |= {"RequestError"} if method.is_request else set()
    return frozenset(names)


def _call_names(method: MethodSpec) -> frozenset[str]:
    """What the template's ``call`` macro writes for ``method``."""
    names = set(_CALL | method.signature_names)
    for overload in method.overloads:
        names |= {"overload"} | overload.signature_names
    names |= {"schema"} if method.result_type else set()
    names |= {"omit"} if method.omit_none or method.omit_unset else set()
    names |= {"UNSET"} if method.omit_unset else set()
    names |= {"build", "schema"} if method.union is None else set()
    return frozenset(names)


def imported_names(spec: Bindings, holds: Carried) -> frozenset[str]:
    """Every name the rendered bindings use that a module imports, from ``spec``, the transports the
    package ``holds`` and what each part of the template writes (the imports: see :data:`_IMPORTS`)."""
    names: set[str] = set()
    for method in spec.union_specs:
        assert method.union is not None
        names |= {"Final", "UnionParams"} | method.union.names
    for end in spec.handlers:
        names.add("Protocol")
        for method in end.own_served if end.handler_base else end.served:
            names |= _handler_names(method)
        if not end.handler_base:
            names |= _EXTENSION_HANDLERS
        names |= _ROUTES | ({"schema"} if end.served else set())
        names |= _RUN if end.role.stdio else set()
    for constant in spec.protocol.constants:
        names |= {"Final", "ProtocolNames"} | constant.names
    for _table in spec.gate_tables:
        names |= {"Final", "Mapping", "Gate"}
    for end in spec.ends:
        names |= _CONNECTION | _CONNECT
        names |= _CONNECTION_MEMBERS if not end.connection_base else set()
        names |= (_ECHO | end.echo.names) if end.echo else set()
        for method in end.own_called:
            names |= _call_names(method)
    if _remote(spec):
        names |= _REMOTE
        for name in holds.defined:
            names |= _TRANSPORT[name]
        handshake = spec.protocol.handshake
        names |= (_FALLBACK | handshake.names) if handshake else set()
    names |= _LEFT_OUT if holds.left_out else set()
    return frozenset(names)


def emit_bindings(surface: ApiSurface) -> dict[str, Module]:
    """The emitter (see :data:`codegen.emit.package.EMITTERS`): the bindings and the runtime they run on.

    A schema that defines no methods at all (only types) gets models and no bindings.
    """
    if not surface.methods:
        return {}
    spec = bindings(surface)
    if not spec.ends:
        return {}
    holds = carried(surface, spec)
    module = Module(
        _render(surface, spec, holds),
        exports=_exports(spec, holds),
        left_out=tuple(holds.left_out),
        expose=True,
        summary=bindings_summary(surface),
    )
    return {
        "bindings.py": module,
        **{file: runtime_module(surface, file, exports=RUNTIME[file]) for file in holds.runtime},
    }
