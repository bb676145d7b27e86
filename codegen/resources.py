"""Where acp-codegen's own files are, in a checkout and when installed.

The repository keeps the schema store and the templates at its top level
(``schemas/``, ``templates/``); a wheel carries the same folders as package
data under ``codegen/data/`` (``pyproject.toml`` maps them there). Every
module that reads one of them asks this one, so the two layouts are told
apart in one place:

* installed (a wheel, ``pip install .``): the folders are inside the package,
  and the bundled store is read-only as far as the tool is concerned;
* a checkout (the repository, or an editable install of it): the folders
  beside the package, and the checkout's ``generated/`` and ``reports/`` are
  the default outputs.
"""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
"""The ``codegen`` package folder."""
RUNTIME = PACKAGE / "runtime"
"""The hand-written runtime, copied verbatim into every generated package."""
KNOWLEDGE = PACKAGE / "knowledge.toml"
"""The declarative facts the schema does not carry."""

_INSTALLED_DATA = PACKAGE / "data"


def _checkout() -> Path | None:
    """The repository the package is imported from, if it is (not a wheel's copy)."""
    if (_INSTALLED_DATA / "schemas" / "lock.json").is_file():
        return None
    root = PACKAGE.parent
    if (root / "pyproject.toml").is_file() and (root / "schemas" / "lock.json").is_file():
        return root
    return None


CHECKOUT = _checkout()
"""The repository's root in a checkout; ``None`` when installed."""
_DATA = CHECKOUT if CHECKOUT is not None else _INSTALLED_DATA
SCHEMAS = _DATA / "schemas"
"""The bundled schema store: ``lock.json`` and ``v<major>/<release>/`` of every locked release."""
TEMPLATES = _DATA / "templates"
"""Everything the emitters render: one folder per emitter."""
SHARED_SCHEMAS = CHECKOUT.parent / "shared" / "schemas" if CHECKOUT is not None else None
"""A folder of upstream files that a checkout may have beside it: a place to import releases from."""
DEFAULT_OUT = CHECKOUT / "generated" if CHECKOUT is not None else None
"""Where ``generate`` writes without ``--out``: the checkout's ``generated/`` (installed: no default)."""
DEFAULT_REPORTS = CHECKOUT / "reports" if CHECKOUT is not None else None
"""Where ``reports`` writes without ``--out``: the checkout's ``reports/`` (installed: no default)."""


def installed() -> bool:
    """Whether the tool runs from an installed copy (its bundled store is not the user's to write)."""
    return CHECKOUT is None


def version() -> str:
    """The tool's version, as its distribution metadata records it."""
    try:
        return metadata.version("acp-codegen")
    except metadata.PackageNotFoundError:  # a checkout run without installing it
        if CHECKOUT is None:
            return "unknown"
        with (CHECKOUT / "pyproject.toml").open("rb") as handle:
            return str(tomllib.load(handle)["project"]["version"])
