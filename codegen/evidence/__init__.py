"""Evidence for the differ's verdicts, and the oracle that checks the differ against behaviour.

The differ (:mod:`codegen.diff`) reads the IR and the API spec only.  This
stage comes after the emitters (and after :mod:`codegen.generate`): it renders
the generated models of both sides of a diff (:mod:`.models`), generates
messages from the JSON Schemas (:mod:`.instances`), tries them on the models
of the other side and attaches the smallest refused message to the change it
shows (:mod:`.search`).  :mod:`.oracle` runs the same search the other way:
a refusal no reported change explains is a change the differ missed.

Nothing flows back: the differ never imports this stage, so its verdicts are
the same with or without evidence.
"""

from .instances import INSTALL_HINT, MissingGeneratorError, incompatible, require_generator
from .search import DEFAULT_EXAMPLES, attach_evidence, wants_evidence

__all__ = [
    "DEFAULT_EXAMPLES",
    "INSTALL_HINT",
    "MissingGeneratorError",
    "attach_evidence",
    "incompatible",
    "require_generator",
    "wants_evidence",
]
