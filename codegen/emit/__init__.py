"""Stage 4: the emitters, each a function from a surface to generated modules.

:mod:`.output` is the leaf they share (the module type, headers, formatting,
templates); :mod:`.models`, :mod:`.bindings` and :mod:`.patches` are the
emitters, and :mod:`.package` assembles one importable package from them.
"""
