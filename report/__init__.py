"""The exported report of a memory plan (``tilescope report``, the app's Export view): CSV files, edits.json and one PNG;
pure: derived data in, bytes out; no browser, no Panel, no Bokeh.

The public names below are imported on first use (``__getattr__``), so importing one module of the
package does not import the rest."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .files import Report, build_report, write_report

_FROM = {"Report": "files", "build_report": "files", "write_report": "files"}
__all__ = ["Report", "build_report", "write_report"]


def __getattr__(name: str) -> Any:
    if name in _FROM:
        return getattr(import_module(f"{__name__}.{_FROM[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
