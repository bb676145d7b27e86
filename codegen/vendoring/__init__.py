"""Vendoring: write one generated package into a user's tree, check it, and upgrade code that uses it.

* :mod:`.manifest`: the ``VENDORED.json`` file inside a vendored package;
* :mod:`.vendoring`: ``acp-codegen vendor`` and ``vendor --check``;
* :mod:`.migration`: what changed at the Python level between two releases, read from the differ;
* :mod:`.codemod`: the rewrite of user code for a migration (resolved by :mod:`.scopes`, written by
  :mod:`.sourcetext`), and what it cannot rewrite;
* :mod:`.upgrade`: ``acp-codegen upgrade``, which ties the three together;
* :mod:`.source`: everything this package needs from the rest of acp-codegen, imported in one place.
"""
