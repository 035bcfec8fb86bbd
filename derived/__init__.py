"""What views, reports and the CLI show, computed once from a file and a plan; the one open path (``opening``).

The public names below are imported on first use (``__getattr__``), so importing one module of the
package does not import the rest."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .compare import CompareSide, Comparison, compare_plans
    from .compare_data import CompareData
    from .opened import Opened, OpenedProfile, OpenedSearchState
    from .opening import FILE_KINDS, FileKind, Found, Source, open_file
    from .plan_data import PlanData

_FROM = {
    "CompareSide": "compare",
    "Comparison": "compare",
    "compare_plans": "compare",
    "CompareData": "compare_data",
    "Opened": "opened",
    "OpenedProfile": "opened",
    "OpenedSearchState": "opened",
    "FILE_KINDS": "opening",
    "FileKind": "opening",
    "Found": "opening",
    "Source": "opening",
    "open_file": "opening",
    "PlanData": "plan_data",
}
__all__ = [
    "FILE_KINDS",
    "CompareData",
    "CompareSide",
    "Comparison",
    "FileKind",
    "Found",
    "Opened",
    "OpenedProfile",
    "OpenedSearchState",
    "PlanData",
    "Source",
    "compare_plans",
    "open_file",
]


def __getattr__(name: str) -> Any:
    if name in _FROM:
        return getattr(import_module(f"{__name__}.{_FROM[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
