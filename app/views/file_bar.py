"""The file bar: what is open, loading progress, the error of the last action, and the upload box."""
from __future__ import annotations

import panel as pn
import param

from tilescope.app.assets import static_text
from tilescope.app.format import esc
from tilescope.app.loading import MAX_UPLOAD_BYTES
from tilescope.app.state import SessionState
from tilescope.app.widgets.upload import CappedFileDropper
from tilescope.app.view_guard import watch_state

CSS = static_text("page.css")


class FileBar(pn.viewable.Viewer):
    """What is open, loading progress, the error of the last action, and the upload box."""

    state = param.ClassSelector(class_=SessionState)

    def __init__(self, **params):
        super().__init__(**params)
        self.source = pn.pane.HTML("", css_classes=["ts-source"], stylesheets=[CSS], margin=(8, 10))
        self.status = pn.pane.HTML("", css_classes=["ts-status"], stylesheets=[CSS], margin=(8, 10))
        self.progress = pn.indicators.Progress(value=100, max=100, width=160, visible=False, margin=(14, 10))
        self.error = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", visible=False, margin=(0, 10))
        self.upload = CappedFileDropper(
            accepted_filetypes=[".json", "application/json"], max_bytes=MAX_UPLOAD_BYTES,
            multiple=False, layout="compact", width=260, height=60, name="upload a memory profile or search state",
        )
        self.upload.param.watch(lambda event: self.state.fail(event.new) if event.new else None, "refused")
        watch_state(self.state, self._render, ["source", "status", "error", "loading", "progress", "kind"])
        self._render()

    def _render(self, *_):
        s = self.state
        kind = "search state" if s.kind == "search_state" else "memory profile"
        self.source.object = (
            f'<span data-testid="ts-source">{esc(s.source)}</span> <span style="color:#777">({kind})</span>' if s.source else "no file open"
        )
        self.status.object = f'<span data-testid="ts-status">{esc(s.status)}</span>'
        self.progress.visible = s.loading
        self.progress.value = int(round(s.progress * 100))
        self.error.visible = bool(s.error)
        self.error.object = f'<div class="ts-error" data-testid="ts-error">{esc(s.error)}</div>' if s.error else ""

    def __panel__(self):
        return pn.Column(
            pn.Row(pn.pane.HTML("<b style='font-size:18px'>tilescope</b>", margin=(6, 10)), self.source, self.progress, self.status,
                   pn.layout.HSpacer(), self.upload, sizing_mode="stretch_width"),
            self.error,
            sizing_mode="stretch_width",
        )
