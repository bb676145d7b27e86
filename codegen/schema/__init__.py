"""Stages 1 and 2: find and verify the upstream schema files, and build the IR from them.

* :mod:`.load` reads the release lock, finds a release's files (schema folder,
  fetch cache, upstream) and refuses any whose sha256 differs from the lock;
* :mod:`.ir` is the intermediate representation every later stage reads;
* :mod:`.builder` builds it from one schema file and its meta table.
"""
