"""The memory model (docs/formats.md §2): pure numpy/pyarrow, never imports loaders, Panel or Bokeh.

The public names below are imported on first use (``__getattr__``), so importing one module of the
package does not import the rest."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .advisor import Suggestion, advise
    from .edits import EditError, WhatIf, apply_edits
    from .model import Plan, ProfileArrays, plan_profile
    from .placement import Placement, place
    from .solver import SolveResult, solve

_FROM = {
    "Suggestion": "advisor",
    "advise": "advisor",
    "EditError": "edits",
    "WhatIf": "edits",
    "apply_edits": "edits",
    "Plan": "model",
    "ProfileArrays": "model",
    "plan_profile": "model",
    "Placement": "placement",
    "place": "placement",
    "SolveResult": "solver",
    "solve": "solver",
}
__all__ = [
    "EditError",
    "Placement",
    "Plan",
    "ProfileArrays",
    "SolveResult",
    "Suggestion",
    "WhatIf",
    "advise",
    "apply_edits",
    "place",
    "plan_profile",
    "solve",
]


def __getattr__(name: str) -> Any:
    if name in _FROM:
        return getattr(import_module(f"{__name__}.{_FROM[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
