"""tilescope: an explorer for the memory plans of a tile-based accelerator compiler; command line,
reports, and a notebook API mirroring the commands (``tilescope.api``):

- ``tilescope.open(path)`` ↔ ``tilescope summary PATH``: the file opened as the kind it is;
- ``tilescope.compare(a, b)`` ↔ ``tilescope compare A B``: two plans compared;
- ``tilescope.solve(problem, time_limit)`` ↔ ``tilescope solve FILE``: a tile's placement, proved;
- ``tilescope.explore(path)`` ↔ ``tilescope serve PATH``: the explorer as a cell's output.

Each is looked up lazily (``__getattr__``): importing tilescope imports neither Panel nor the
planner.
"""

from __future__ import annotations

from typing import Any

from tilescope.models.version import __version__

__all__ = ["__version__", "compare", "explore", "open", "solve"]


def __getattr__(name: str) -> Any:
    if name in ("open", "compare", "solve"):
        from tilescope import api

        return getattr(api, name)
    if name == "explore":
        from tilescope.app.notebook import explore

        return explore
    raise AttributeError(f"module 'tilescope' has no attribute {name!r}")
