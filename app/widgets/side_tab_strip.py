"""The side panel's ``pn.Tabs``, whose headers keep the focus when a tab's view is first built.

``app.side_tabs.SideTabs`` puts a tab's view in its spacer's place the first time the tab is
shown, which sends the browser a new list of tabs; BokehJS then draws every header again, and the
header the user had just clicked (focused) left the page with the focus. The page's keys (←/→,
Home/End, p: ``app/static/page_controls.js``) leave a focused tab header alone, so without its
focus the next ← moved the step instead. ``app/static/side_tab_focus.js`` gives it back. A Bokeh
``CustomJS`` on the tabs' model, not a Panel link (``tests/test_session_models.py``: a Panel link
makes every later layout change walk the page's models).
"""

from __future__ import annotations

import panel as pn
from bokeh.models import CustomJS

from tilescope.app.assets import static_text

__all__ = ["SideTabStrip"]

FOCUS_JS = static_text("side_tab_focus.js")


class SideTabStrip(pn.Tabs):
    def _get_model(self, doc, root=None, parent=None, comm=None):
        model = super()._get_model(doc, root, parent, comm)
        for changed in ("active", "tabs"):
            model.js_on_change(changed, CustomJS(args={"changed": changed}, code=FOCUS_JS))
        return model
