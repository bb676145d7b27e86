"""Stage 3: the Python-facing API spec of a surface, derived from the IR.

Method names, keyword-only signatures and union dispatch (:mod:`.methods`),
what the runtime needs besides (:mod:`.protocol`), and the connection ends a
release's bindings define, from ``[connections]`` (:mod:`.connections`,
:mod:`.ends`).  The bindings emitter
renders it; the differ and the codemod compare it between releases.
"""
