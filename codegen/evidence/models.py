"""The generated models of one side of a diff, importable: what a peer running that release accepts.

A release's models are the ``schema.py`` and ``_base.py`` the models emitter
writes for its surface (:func:`codegen.emit.models.emit_models`), the same
statements its generated package holds (not formatted: they are imported,
never shown).  A search needs the classes of the types it tries and of the
types they refer to, so only those are rendered when the caller names them
(``only``): each class as the whole module has it, in a tenth of the time
or less.  They are rendered on every core at once (:func:`load_all`), each
class that several sides define alike once (:func:`render_all`), and kept
under the build cache (``--cache``), keyed by the release's schema
files, the stability level, the types named and what shapes the models
(:data:`MODEL_SOURCES` and the versions of the tools the emitter runs), and
imported from there under a name of their own: the models of two releases
live side by side in one process, each rendered and imported once.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import hashlib
import importlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..schema.ir import ApiSurface
from ..schema.load import ReleaseFiles
from .parallel import Tick, run_all, workers

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from ..emit.normalise import Normalised

_LOADED: dict[str, ModuleType] = {}


CODEGEN = Path(__file__).resolve().parent.parent
MODEL_SOURCES = (
    "emit",
    "evidence/models.py",
    "schema",
    "runtime",
    "naming.py",
    "pysource.py",
    "knowledge.py",
    "knowledge.toml",
    "diagnostics.py",
    "errors.py",
    "../templates/models",
)
"""What shapes the generated models, besides the schema: a change to any of these renders them again."""
_JOBS_PER_WORKER = 2
"""How many render jobs :func:`render_all` makes per worker (a job costs about 10 ms besides its classes)."""

MODEL_TOOLS = ("datamodel-code-generator", "black", "jinja2", "pydantic")


@functools.cache
def models_fingerprint() -> str:
    """A hash of the sources and tool versions the models emitter depends on."""
    from importlib import metadata

    digest = hashlib.sha256()
    for name in MODEL_SOURCES:
        root = (CODEGEN / name).resolve()
        found = sorted(root.rglob("*")) if root.is_dir() else [root]
        for path in found:
            if (
                path.is_file()
                and path.suffix in (".py", ".toml", ".jinja2")
                and "__pycache__" not in path.parts
            ):
                digest.update(path.relative_to(CODEGEN.parent).as_posix().encode())
                digest.update(path.read_bytes())
    for tool in MODEL_TOOLS:
        try:
            digest.update(f"{tool}=={metadata.version(tool)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(tool.encode())
    return digest.hexdigest()


Only = frozenset[str] | None
"""The types whose models a side needs (with those they refer to); ``None``: every type."""


@dataclass(frozen=True)
class Wanted:
    """One side whose models are wanted: a surface of ``files``, and the types it needs (``only``)."""

    files: ReleaseFiles
    surface: ApiSurface
    only: Only = None

    @property
    def key(self) -> str:
        digest = hashlib.sha256()
        for name, document in sorted(self.files.documents.items()):
            digest.update(f"{name}:{document.sha256}\n".encode())
        digest.update(f"{self.surface.stability}\n{models_fingerprint()}".encode())
        if self.only is not None:
            digest.update(("\0" + "\n".join(sorted(self.only))).encode())
        return digest.hexdigest()[:20]


def _render(surface: ApiSurface, only: Only = None) -> dict[str, str]:
    """The files of :func:`~codegen.emit.models.emit_models`, the models not formatted (of the types
    ``only`` names and those they refer to, if it names some)."""
    from ..emit.models import render_models
    from ..emit.output import runtime_module

    return {
        "schema.py": render_models(surface, formatted=False, only=only),
        "_base.py": runtime_module(surface, "_base.py").source,
    }


def _write(folder: Path, files: dict[str, str]) -> None:
    """Write the package in one step: a temporary sibling renamed into place."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    for name, text in {"__init__.py": "", **files}.items():
        (staging / name).write_text(text, encoding="utf-8")
    try:
        os.replace(staging, folder)
    except OSError:  # another process wrote it first: theirs is the same
        for path in staging.iterdir():
            path.unlink()
        staging.rmdir()


def load_models(files: ReleaseFiles, surface: ApiSurface, cache: Path) -> ModuleType:
    """The ``schema`` module of the generated models of ``surface`` (a surface of ``files``)."""
    wanted = Wanted(files, surface)
    return import_models(surface, cache, wanted.key)


def load_all(
    sides: Sequence[Wanted],
    cache: Path,
    tick: Tick | None = None,
    beside: Callable[[], None] | None = None,
) -> list[ModuleType]:
    """The ``schema`` module of the models of each side, the ones not yet under ``cache`` rendered on
    every core.

    ``tick`` is called once per side rendered; ``beside`` is run by this process while they render
    (:func:`~.parallel.run_all`).
    """
    missing = {side.key: side for side in sides if _missing(side.key, cache)}
    for key, files in zip(missing, render_all(list(missing.values()), tick, beside), strict=True):
        _write(_folder(cache, key), files)
    return [import_models(side.surface, cache, side.key, side.only) for side in sides]


def render_all(
    sides: Sequence[Wanted], tick: Tick | None = None, beside: Callable[[], None] | None = None
) -> list[dict[str, str]]:
    """The files of each side's models (as :func:`_render` makes them), rendered on every core, each
    class that several sides define alike rendered once.

    The sides of a diff (two releases, two stability levels) share most of their classes: the same
    type, defined alike, renders the same statement on each side.  So a class is rendered once, on
    the first side that has it (:func:`~codegen.emit.models.render_parts`), and each side's module is
    put together from the statements of its classes (:func:`~codegen.emit.models.assemble_models`):
    about half the classes are rendered, in a few jobs per core (a side's classes rendered first there,
    or a part of them), the longest first so that the last to end is a short one.  ``tick`` is called
    once per side, the last time with the last job; ``beside`` is run by this process while the jobs
    run (:func:`~.parallel.run_all`).
    """
    from ..emit.models import parts_renderable

    if len(sides) < 2 or not all(parts_renderable(side.surface) for side in sides):
        if len(sides) > 1:  # once here, not in every worker
            _engine_ready(sides[0].surface)
        whole = [functools.partial(_render, side.surface, side.only) for side in sides]
        return run_all(whole, tick, beside)
    from ..emit.models import assemble_models, render_parts
    from ..emit.normalise import normalise
    from ..emit.output import runtime_module
    from ..errors import CodegenError

    normalised = [normalise(side.surface) for side in sides]
    normalised = [
        n if side.only is None else n.reaching(side.only) for n, side in zip(normalised, sides, strict=True)
    ]
    keys = [_class_keys(n) for n in normalised]
    firsts: list[tuple[int, list[str]]] = []  # a side, and the classes first rendered there
    seen: set[str] = set()
    for index, by_name in enumerate(keys):
        first = [name for name, key in by_name.items() if key not in seen]
        seen.update(by_name.values())
        if first:
            firsts.append((index, first))
    # a few jobs per core, the longest first: the last to end is a short one, whatever the sides
    size = max(1, sum(len(names) for _, names in firsts) // (_JOBS_PER_WORKER * workers()))
    jobs = sorted(
        ((index, part) for index, names in firsts for part in _parts(names, size)),
        key=lambda job: -len(job[1]),
    )
    if len(jobs) > 1:  # the engine readied once here, not in every worker: one class, thrown away
        last, names = jobs[-1]
        with contextlib.suppress(CodegenError):  # only a head start: the jobs say what fails
            render_parts(sides[last].surface, normalised[last], names[:1])
    rendered = run_all(
        [functools.partial(render_parts, sides[i].surface, normalised[i], names) for i, names in jobs],
        _spread(tick, len(jobs), len(sides)),
        beside,
    )
    if tick is not None and not jobs:  # no side has a class
        for _ in sides:
            tick()
    statements = {
        keys[i][name]: text
        for (i, _), parts in zip(jobs, rendered, strict=True)
        for name, text in parts.items()
    }
    return [
        {
            "schema.py": assemble_models(
                side.surface, n, {name: statements[key] for name, key in by_name.items() if key in statements}
            ),
            "_base.py": runtime_module(side.surface, "_base.py").source,
        }
        for side, n, by_name in zip(sides, normalised, keys, strict=True)
    ]


def _parts(names: list[str], size: int) -> list[list[str]]:
    """``names`` in as few parts of about the same length as have at most ``size`` names each."""
    count = -(-len(names) // size)
    step = -(-len(names) // count)
    return [names[start : start + step] for start in range(0, len(names), step)]


def _spread(tick: Tick | None, jobs: int, steps: int) -> Tick | None:
    """A tick per job done that calls ``tick`` ``steps`` times in all, the last with the last job."""
    if tick is None:
        return None
    done = [0]

    def step() -> None:
        before = done[0] * steps // jobs
        done[0] += 1
        for _ in range(done[0] * steps // jobs - before):
            tick()

    return step


def _class_keys(normalised: Normalised) -> dict[str, str]:
    """Each class of ``normalised`` and what its statement is rendered from: its name, definition
    and template data (alike: the same statement, in a module whose annotations are evaluated as
    each class is made, as :func:`render_all` has them all)."""
    defs = normalised.schema["$defs"]
    return {
        name: hashlib.sha256(
            json.dumps([name, definition, _plain(normalised.template_data[name])]).encode()
        ).hexdigest()
        for name, definition in defs.items()
    }


def _plain(value: Any) -> Any:
    """``value`` (template data: dataclasses, mappings, sets) as JSON, the same for equal data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [type(value).__name__, *(_plain(getattr(value, f.name)) for f in dataclasses.fields(value))]
    if isinstance(value, Mapping):
        return [[key, _plain(item)] for key, item in value.items()]
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _engine_ready(surface: ApiSurface) -> None:
    """Make this process ready to render, so that the workers forked after it are too.

    The engine (datamodel-code-generator) loads most of itself on its first
    use in a process, not on import: its parser and settings, a few dozen
    pydantic classes built on the spot, and our templates, about a second
    altogether, paid in each worker when the models were rendered on every
    core.  Rendering the smallest class of ``surface`` here (a type that
    refers to no other; its text is thrown away) loads all of it once.
    """
    from ..errors import CodegenError
    from ..schema.ir import references_of

    alone = sorted(name for name, named in surface.types.items() if not references_of(named))
    if alone:
        with contextlib.suppress(CodegenError):  # only a head start: the renders say what fails
            _render(surface, frozenset(alone[:1]))


def missing_models(sides: Sequence[Wanted], cache: Path) -> int:
    """How many model modules :func:`load_all` of ``sides`` will render."""
    return sum(1 for key in {side.key for side in sides} if _missing(key, cache))


def _missing(key: str, cache: Path) -> bool:
    return key not in _LOADED and not (_folder(cache, key) / "schema.py").is_file()


def _folder(cache: Path, key: str) -> Path:
    return cache / "evidence-models" / f"_acp_evidence_{key}"


def import_models(surface: ApiSurface, cache: Path, key: str, only: Only = None) -> ModuleType:
    """The models of ``surface`` (of the types ``only`` names and those they refer to, if it names
    some), rendered under ``cache`` (unless there already) and imported by ``key``."""
    if key in _LOADED:
        return _LOADED[key]
    folder = _folder(cache, key)
    root, name = folder.parent, folder.name
    if not (folder / "schema.py").is_file():
        _write(folder, _render(surface, only))
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    module = importlib.import_module(f"{name}.schema")
    _LOADED[key] = module
    return module


@dataclass
class Models:
    """The models of one side, and a validator per ``$defs`` type found through the IR."""

    surface: ApiSurface
    module: ModuleType
    _adapters: dict[str, TypeAdapter[Any] | None] = field(default_factory=dict)

    def adapter(self, schema_name: str) -> Any:
        """A pydantic ``TypeAdapter`` of the model of ``$defs[schema_name]`` (``None`` if it has none)."""
        if schema_name not in self._adapters:
            from pydantic import TypeAdapter

            found = self.surface.by_schema_name(schema_name)
            target = getattr(self.module, found.name, None) if found is not None else None
            self._adapters[schema_name] = TypeAdapter(target) if target is not None else None
        return self._adapters[schema_name]

    def refusal(self, schema_name: str, instance: Any) -> Any:
        """The models' first validation error for ``instance``, or ``None`` if they accept it."""
        from pydantic import ValidationError

        adapter = self.adapter(schema_name)
        if adapter is None:
            return None
        try:
            adapter.validate_python(copy.deepcopy(instance))
        except ValidationError as error:
            return error
        except (ValueError, TypeError, RecursionError) as error:  # a validator that raises is a refusal too
            return error
        return None
