"""What-if editor view (minimal placeholder while the full view is written)."""
from __future__ import annotations

import panel as pn
import param


class EditorView(pn.viewable.Viewer):
    state = param.Parameter(doc="The session's SessionState")

    def __panel__(self):
        return pn.pane.Markdown("### What-if editor\n\nLoading…")
