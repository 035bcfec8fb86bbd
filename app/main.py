"""The tilescope explorer: ``panel serve app`` serves this file at ``/app``.

Panel runs this module once per browser session, so everything built here belongs to one
session (one ``SessionState``; the page is ``app.explorer.ExplorerApp``). Which file opens:

- ``?file=NAME`` in the URL: a file under the data root (``sample_data/`` or ``--args --data-root DIR``);
  absolute paths, ``..`` and names resolving outside the root are refused with a message;
- else ``panel serve app --args PATH``;
- else ``sample_data/vit_finalist5.memory_profile.json``.
The rest of the URL restores a shared state (``app.url_state``: ``step``, ``value``, ``tab``,
``edits``), applied by the page's router (``app.page_router.PageRouter.load_initial``, run once the
browser has the page). A file can also be uploaded in the page (up to ``app.loading.MAX_UPLOAD_BYTES``,
200 MB, sent in chunks). Loads run in the load workers (``app.open_flow``) so other sessions keep working; a bad file
shows its one-line located error and the open profile stays.
"""

from __future__ import annotations

import sys

import panel as pn

from tilescope.app.chart_theme import theme_charts
from tilescope.app.explorer import ExplorerApp, build_app  # noqa: F401  (build_app: tests build sessions with it)
from tilescope.app.resources import configure_panel

configure_panel()
explorer = build_app(sys.argv[1:])
pn.state.onload(explorer.router.load_initial)
# No Panel Location: the page keeps its URL itself (``app.widgets.page_controls``), and Panel's
# Location parses the query with ``str.isdigit`` then ``int``, which raises on ``?step=²`` before
# any of the app runs (the page stayed blank). ``app.url_state`` reads the query instead.
explorer.servable(title="tilescope", location=False)
# The charts themed on the server as the page script themes them (app.chart_theme), set after the
# page is built so that the script still themes every chart itself.
document = pn.state.curdoc
theme_charts(document, explorer.page.dark_theme)
explorer.page.param.watch(lambda event: theme_charts(document, event.new), "dark_theme")
