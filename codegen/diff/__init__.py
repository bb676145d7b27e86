"""The API differ: every change between two releases, classified by who it breaks."""

from .differ import diff_releases, diff_surfaces
from .model import Change, DiffResult, SurfaceDiff, Waiver
from .senders import senders_by_type
from .waivers import apply_waivers, read_waivers

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
