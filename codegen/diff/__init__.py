"""The API differ: every change between two releases, classified by who it breaks."""

from .compare import (
    Change,
    DiffResult,
    SurfaceDiff,
    Waiver,
    apply_waivers,
    diff_releases,
    diff_surfaces,
    read_waivers,
    senders_by_type,
)

__all__ = [
    "Change",
    "DiffResult",
    "SurfaceDiff",
    "Waiver",
    "apply_waivers",
    "diff_releases",
    "diff_surfaces",
    "read_waivers",
    "senders_by_type",
]
