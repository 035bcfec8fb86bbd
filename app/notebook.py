"""The explorer in a Jupyter notebook: ``import tilescope; tilescope.explore(path)``.

The same page as ``panel serve app`` (``app.explorer.ExplorerApp``: summary, timeline, side tabs,
URL-free), shown as the cell's output. The file is opened in the calling thread before the page is
returned, so the cell shows the views at once; a bad file raises its ``InputError`` (which file,
where in it, what was expected) instead of showing a page. Panel's resources are inlined in the
notebook's output, so nothing is fetched from the network.
"""

from __future__ import annotations

from pathlib import Path

from tilescope.app.explorer import ExplorerApp
from tilescope.app.loading import DEFAULT_DATA_ROOT, AppOptions, display_name
from tilescope.app.resources import configure_panel
from tilescope.app.shared import SharedProfiles
from tilescope.app.state import SessionState
from tilescope.derived.opening import open_file
from tilescope.samples import sample_path


def explore(path: str | Path | None = None) -> ExplorerApp:
    """The explorer on ``path`` (a memory profile or a search state; default: the sample profile).
    Display the result (the last expression of a cell) to see it; ``.state`` is its
    ``SessionState`` (select a step, apply edits from Python: the views follow)."""
    configure_panel(notebook=True)
    path = Path(path).expanduser() if path is not None else sample_path()
    opened = open_file(path)  # raises InputError on a bad file
    app = ExplorerApp(AppOptions(path, DEFAULT_DATA_ROOT), state=SessionState(), shared=SharedProfiles())
    app.router.adopt(opened, display_name(path))
    return app
