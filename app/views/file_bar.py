"""The file bar: what is open and loading progress (in the page's header), the error of the last
action (above the views), and the upload box (under the timeline)."""

from __future__ import annotations

import panel as pn
import param

from tilescope.app.assets import static_text
from tilescope.app.format import esc
from tilescope.app.loading import MAX_UPLOAD_BYTES
from tilescope.app.state import SessionState
from tilescope.app.view_guard import watch_state
from tilescope.app.widgets.upload import CappedFileDropper
from tilescope.derived.opening import FILE_KINDS, kind_label

CSS = static_text("page.css")
KINDS_TEXT = (
    ", ".join(kind.label for kind in FILE_KINDS[:-1]) + f" or {FILE_KINDS[-1].label}"
)  # every kind the registry opens


class FileBar(pn.viewable.Viewer):
    """What is open, loading progress, the error of the last action, and the upload box."""

    state = param.ClassSelector(class_=SessionState)

    def __init__(self, **params):
        super().__init__(**params)
        self.source = pn.pane.HTML("", css_classes=["ts-source"], stylesheets=[CSS], margin=(4, 10), min_width=160)
        # a native <progress> with a name (panel_material_ui's LinearProgress takes no aria-label)
        self.progress = pn.pane.HTML("", stylesheets=[CSS], width=120, visible=False, margin=(14, 10))
        self.error = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", visible=False, margin=(4, 10))
        self.upload = CappedFileDropper(
            accepted_filetypes=[".json", "application/json"],
            max_bytes=MAX_UPLOAD_BYTES,
            multiple=False,
            layout="compact",
            width=300,
            height=60,
            label=f"open another {KINDS_TEXT}",
        )
        self.header = pn.Row(self.source, self.progress, margin=0, sizing_mode="stretch_width")
        self.upload_box = pn.Column(
            pn.pane.HTML(
                f"<b>Open another file</b> ({KINDS_TEXT}, up to "
                f"{MAX_UPLOAD_BYTES // (1024 * 1024)} MB; never written to disk)",
                stylesheets=[CSS],
                margin=(10, 10, 0, 10),
            ),
            self.upload,
            sizing_mode="stretch_width",
            css_classes=["ts-upload"],
        )
        self.upload.param.watch(lambda event: self.state.fail(event.new) if event.new else None, "refused")
        watch_state(self.state, self._redraw, ["source", "status", "error", "loading", "progress", "kind"])
        self._redraw()

    def _redraw(self, *_):
        s = self.state
        kind = kind_label(s.kind or "memory_profile")
        source = (
            f'<span data-testid="ts-source">{esc(s.source)}</span> <span class="ts-kind">({kind})</span>'
            if s.source
            else "no file open"
        )
        self.source.object = f'{source}<br><span class="ts-status" data-testid="ts-status">{esc(s.status)}</span>'
        self.progress.visible = s.loading
        self.progress.object = (
            f'<progress class="ts-progress" max="100" value="{round(s.progress * 100)}" aria-label="loading the file"></progress>'
            if s.loading
            else ""
        )
        self.error.visible = bool(s.error)
        self.error.object = f'<div class="ts-error" data-testid="ts-error">{esc(s.error)}</div>' if s.error else ""

    def __panel__(self):
        return pn.Column(self.header, self.error, sizing_mode="stretch_width")
