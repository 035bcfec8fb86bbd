"""Export view: download the PNG report and the CSV tables of the current plan (placeholder, being built)."""
from __future__ import annotations

import panel as pn
import param


class ExportView(pn.viewable.Viewer):
    state = param.Parameter(doc="the session's SessionState")

    def __panel__(self):
        return pn.Column(pn.pane.Markdown("### Export"), pn.pane.Markdown("Exports are being prepared."))
