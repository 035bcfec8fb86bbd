"""Typed records and Arrow table schemas shared by the loaders, the planner and the app; the one number format; errors.

The public names below are imported on first use (``__getattr__``), so importing one module of the
package does not import the rest."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .edits import TilingEdit, save_edit_set
    from .errors import InputError, TilescopeError
    from .format import fmt_bytes, fmt_change, fmt_signed_bytes
    from .glossary import define
    from .placement_problem import PlacementProblem, PlacementRequest
    from .profile import MemoryProfile
    from .search_state import SearchState
    from .tiling import TensorFormat, TensorTiling
    from .version import __version__

_FROM = {
    "TilingEdit": "edits",
    "save_edit_set": "edits",
    "InputError": "errors",
    "TilescopeError": "errors",
    "fmt_bytes": "format",
    "fmt_change": "format",
    "fmt_signed_bytes": "format",
    "define": "glossary",
    "PlacementProblem": "placement_problem",
    "PlacementRequest": "placement_problem",
    "MemoryProfile": "profile",
    "SearchState": "search_state",
    "TensorFormat": "tiling",
    "TensorTiling": "tiling",
    "__version__": "version",
}
__all__ = [
    "InputError",
    "MemoryProfile",
    "PlacementProblem",
    "PlacementRequest",
    "SearchState",
    "TensorFormat",
    "TensorTiling",
    "TilescopeError",
    "TilingEdit",
    "__version__",
    "define",
    "fmt_bytes",
    "fmt_change",
    "fmt_signed_bytes",
    "save_edit_set",
]


def __getattr__(name: str) -> Any:
    if name in _FROM:
        return getattr(import_module(f"{__name__}.{_FROM[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
