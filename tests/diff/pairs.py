"""Real release pairs diffed once per test process, as the report tests read them."""

from __future__ import annotations

import functools

from codegen.diff import DiffResult, diff_releases
from tests.support.releases import release_files


@functools.cache
def diff_pair(old: str, new: str) -> DiffResult:
    """Both stability levels of two locked releases, without evidence."""
    return diff_releases(release_files(old), release_files(new), ("stable", "unstable"))
