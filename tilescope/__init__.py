"""tilescope: an explorer for the memory plans of a tile-based accelerator compiler; command line,
reports, and ``tilescope.explore(path)`` for a Jupyter notebook.

``explore`` is looked up lazily (``__getattr__``): importing tilescope does not import Panel.
"""
from __future__ import annotations

from tilescope.models.version import __version__  # noqa: F401


def __getattr__(name: str):
    if name == "explore":
        from tilescope.app.notebook import explore

        return explore
    raise AttributeError(f"module 'tilescope' has no attribute {name!r}")
