"""Compare: the session's profile beside a second one (or its what-if beside its file).

``CompareView`` is the whole compare page section: the picker (a file under the data root, an
upload, or the current what-if against the file; ``app.compare_open.CompareOpener`` opens it in a
worker thread), then, once comparing (``state.compare``, a ``derived.compare_data.CompareData``):
the summary A | B | Δ, both timelines overlaid per region, the attribution waterfall at the peak,
the changed values, the selected value in both, and the export. Each part is its own view
(``app/views/compare_*.py``) over the same ``state`` and ``CompareSelection``, so a page layout can
place them apart: ``CompareView.parts`` names them.
"""

from __future__ import annotations

from pathlib import Path

import panel as pn
import param

from tilescope.app.assets import BUTTONS_CSS, themed_css
from tilescope.app.compare_open import CompareOpener
from tilescope.app.loading import MAX_UPLOAD_BYTES
from tilescope.app.one_message import one_message
from tilescope.app.shown_gate import ShownGate
from tilescope.app.state import SessionState
from tilescope.app.view_guard import watch_state
from tilescope.app.views.compare_export import CompareExportView
from tilescope.app.views.compare_lifetimes import CompareLifetimesView
from tilescope.app.views.compare_selection import CompareSelection
from tilescope.app.views.compare_summary import CompareSummaryView
from tilescope.app.views.compare_timeline import CompareTimelineView
from tilescope.app.views.compare_values import CompareValuesView
from tilescope.app.views.compare_waterfall import CompareWaterfallView
from tilescope.app.widgets.upload import CappedFileDropper

CSS = themed_css("compare.css")
NO_FILE = "(choose a file under the data root)"


class ComparePicker(pn.viewable.Viewer):
    """What to compare the open profile with."""

    state = param.ClassSelector(class_=SessionState)
    opener = param.ClassSelector(class_=CompareOpener)

    def __init__(self, **params):
        super().__init__(**params)
        self.file = pn.widgets.Select(
            label="compare with a file under the data root",
            options=[NO_FILE, *self.opener.files()],
            width=300,
            css_classes=["ts-compare-file"],
        )
        self.open_button = pn.widgets.Button(
            label="Compare",
            color="primary",
            margin=(23, 5, 5, 5),
            css_classes=["ts-compare-open"],
            stylesheets=[BUTTONS_CSS],
        )
        self.upload = CappedFileDropper(
            accepted_filetypes=[".json", "application/json"],
            max_bytes=MAX_UPLOAD_BYTES,
            multiple=False,
            layout="compact",
            width=260,
            height=60,
            label="or upload B",
            css_classes=["ts-compare-upload"],
        )
        self.upload.param.watch(
            lambda event: self.state.fail(f"compare: {event.new}") if event.new else None, "refused"
        )
        self.whatif_button = pn.widgets.Button(
            label="Compare the what-if with the file",  # buttons as wide as their labels
            margin=(23, 5, 5, 5),
            css_classes=["ts-compare-whatif"],
        )
        self.stop_button = pn.widgets.Button(
            label="Stop comparing", margin=(23, 5, 5, 5), css_classes=["ts-compare-stop"]
        )
        self.open_button.on_click(self._on_open)
        self.whatif_button.on_click(self._on_whatif)
        self.stop_button.on_click(one_message(lambda _: self.state.stop_compare()))
        self.upload.param.watch(self._on_upload, "value")
        watch_state(self.state, self._enable, ["edits", "compare", "data", "loading"])
        self._enable()

    def _enable(self, *_):
        s = self.state
        self.open_button.disabled = s.data is None or s.loading
        self.whatif_button.disabled = not s.edits or s.loading
        self.stop_button.disabled = s.compare is None

    async def _on_open(self, _event):
        if self.file.value and self.file.value != NO_FILE:
            await self.opener.open_name(self.file.value)

    async def _on_whatif(self, _event):
        await self.opener.compare_whatif()

    async def _on_upload(self, event):
        files = event.new or {}
        if not files:
            return
        name, data = next(iter(files.items()))
        self.upload.value = {}
        await self.opener.open_upload(data.encode("utf-8") if isinstance(data, str) else data, Path(name).name)

    def __panel__(self):
        # wraps: the controls' fixed widths add up to more than the side panel at 1024 px, and a Row
        # would widen the whole page past the window
        return pn.FlexBox(
            self.file,
            self.open_button,
            self.upload,
            self.whatif_button,
            self.stop_button,
            flex_wrap="wrap",
            align_items="flex-start",
            sizing_mode="stretch_width",
        )


class CompareView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)
    opener = param.ClassSelector(class_=CompareOpener)

    def __init__(self, **params):
        super().__init__(**params)
        s = self.state
        self.gate = gate = ShownGate(s)  # the tab may be hidden: its parts wait (app.shown_gate)
        self.selection = CompareSelection(s, gate=gate)
        self.picker = ComparePicker(state=s, opener=self.opener)
        self.summary = CompareSummaryView(state=s, gate=gate)
        self.timeline = CompareTimelineView(state=s, selection=self.selection, gate=gate)
        self.waterfall = CompareWaterfallView(state=s, selection=self.selection, gate=gate)
        self.values = CompareValuesView(state=s, selection=self.selection, gate=gate)
        self.lifetimes = CompareLifetimesView(
            state=s, selection=self.selection, x_range=self.timeline.x_range, gate=gate
        )
        self.export = CompareExportView(state=s, gate=gate)
        self._body = pn.Column(
            self.timeline, self.lifetimes, self.waterfall, self.values, self.export, sizing_mode="stretch_width"
        )
        watch_state(s, self._show, ["compare"])
        self._show()

    @property
    def parts(self) -> dict[str, pn.viewable.Viewer]:
        """Each part, for a layout that places them apart."""
        return {
            "picker": self.picker,
            "summary": self.summary,
            "timeline": self.timeline,
            "lifetimes": self.lifetimes,
            "waterfall": self.waterfall,
            "values": self.values,
            "export": self.export,
        }

    def _show(self, *_):
        self._body.visible = self.state.compare is not None

    def set_shown(self, shown: bool) -> None:
        """Hidden, the comparison's parts wait; shown again, they catch up (``app.shown_gate``)."""
        self.gate.set_shown(shown)

    def __panel__(self):
        return pn.Column(
            self.picker,
            pn.pane.HTML(
                '<div class="ts-compare-note">A is the open profile (its what-if plan when edited); B the file compared with it. '
                "Every figure is recomputed by the planner.</div>",
                stylesheets=[CSS],
                margin=(0, 10),
            ),
            self.summary,
            self._body,
            sizing_mode="stretch_width",
            css_classes=["ts-compare"],
        )
