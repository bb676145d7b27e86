"""Stage 4: render the pydantic models of one surface.

The normalised schema (:mod:`codegen.emit.normalise`) goes through
datamodel-code-generator with our templates; this module then gives the
module its header and its imports and formats it with black.  The imports
are the names the normaliser says each class and alias uses
(:attr:`~codegen.emit.normalise.Normalised.names`), so there are no dead
ones; of the engine's module only its statements are kept, from the first
that is not an import (its own header and imports name what its stock
templates would use, not ours).
"""

from __future__ import annotations

import ast
import contextlib
import logging
import warnings
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from .. import naming, pysource
from ..errors import CodegenError
from ..schema.ir import ApiSurface
from .normalise import Normalised, normalise
from .output import TEMPLATES, Module, format_source, header, runtime_module

MODEL_TEMPLATES = TEMPLATES / "models"


def _engine_output(surface: ApiSurface, normalised: Normalised, eager: bool) -> str:
    import datamodel_code_generator as dcg  # imported here: it is slow and only needed on a cache miss

    with warnings.catch_warnings(), _engine_errors(surface):
        warnings.simplefilter("ignore")
        logging.getLogger("datamodel_code_generator").setLevel(logging.ERROR)
        result: Any = dcg.generate(
            normalised.schema,
            input_file_type=dcg.InputFileType.JsonSchema,
            output_model_type=dcg.DataModelType.PydanticV2BaseModel,
            target_python_version=dcg.PythonVersion.PY_311,
            custom_template_dir=MODEL_TEMPLATES,
            extra_template_data=defaultdict(dict, normalised.template_data),
            use_type_alias=True,
            use_annotated=True,
            field_constraints=True,
            use_standard_collections=True,
            use_union_operator=True,
            use_double_quotes=True,
            disable_timestamp=True,
            skip_root_model=True,
            formatters=[],
            disable_future_imports=eager,
        )
    if not isinstance(result, str):
        raise CodegenError("datamodel-code-generator returned several modules; expected one")
    return result


@contextlib.contextmanager
def _engine_errors(surface: ApiSurface) -> Iterator[None]:
    """Any failure inside the engine or its templates becomes one :class:`CodegenError`."""
    try:
        yield
    except CodegenError:
        raise
    except Exception as exc:  # the engine is a dependency: never let its traceback reach the user
        text = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        message = f"datamodel-code-generator failed on this schema: {text}"
        raise CodegenError(message, file=surface.schema_file) from None


def _statements(surface: ApiSurface, engine_output: str) -> str:
    """The engine's module from its first statement that is not an import: the models themselves."""
    try:
        tree = ast.parse(engine_output)
    except (RecursionError, SyntaxError, MemoryError) as exc:
        message = f"the generated models cannot be parsed: {type(exc).__name__}"
        raise CodegenError(message, file=surface.schema_file) from None
    first = next((n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))), None)
    if first is None:
        return ""
    decorators = first.decorator_list if isinstance(first, ast.ClassDef) else []
    start = min([first.lineno, *(d.lineno for d in decorators)])
    return "\n".join(engine_output.splitlines()[start - 1 :]).strip() + "\n"


def render_models(surface: ApiSurface, formatted: bool = True, only: Iterable[str] | None = None) -> str:
    """The complete ``schema.py`` of one surface, formatted with black unless ``formatted`` is false
    (the same statements: the evidence search imports the models and never shows them).

    With ``only``, the module holds the classes of those types and of the types they refer to, and
    no others, each class as the whole module has it (the evidence search renders what it tries).
    """
    # Without recursive types every type can be defined before it is used, so annotations
    # need no deferred evaluation (a string annotation costs a compile() when the class is made).
    eager = not surface.recursive_types()
    normalised = normalise(surface)
    if only is not None:
        normalised = normalised.reaching(only)
    has_classes = bool(normalised.schema["$defs"])  # none: ``only`` named none of the surface's types
    body = _statements(surface, _engine_output(surface, normalised, eager)) if has_classes else ""
    doc = pysource.docstring(
        f"{models_summary(surface)}\n\n"
        "Every JSON-RPC payload, union and enum of the schema, with snake_case attributes "
        "and the wire names as aliases."
    )
    imports = pysource.import_block(set(normalised.names), naming.MODEL_IMPORTS, future=not eager)
    source = header(surface, "Pydantic models.") + doc + "\n\n" + imports + "\n" + body
    return format_source(source) if formatted else source


def models_summary(surface: ApiSurface) -> str:
    """The first sentence of the models' docstring."""
    return f"Pydantic models of ACP {surface.release} ({surface.stability} schema)."


def emit_models(surface: ApiSurface) -> dict[str, Module]:
    """The emitter (see :data:`codegen.emit.package.EMITTERS`): ``schema.py`` and the runtime it runs on."""
    return {
        "schema.py": Module(render_models(surface), expose=True, eager=True, summary=models_summary(surface)),
        "_base.py": runtime_module(surface, "_base.py"),
    }
