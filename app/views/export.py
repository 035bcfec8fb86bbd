"""Export: download the PNG report and the CSV tables of the session's current plan.

Every file is built on the server when its button is clicked, from the state at that moment (the
current edits, the selected step), by ``tilescope.report`` (``report.tables``, ``report.png``), the same code as ``tilescope report``.
The PNG is drawn with matplotlib's Agg canvas: no browser involved. Building runs in a worker
thread so a slow report does not freeze the session; the inputs are immutable snapshots.
"""

from __future__ import annotations

import io

import panel as pn
import param

from tilescope.app.assets import BUTTONS_CSS, themed_css
from tilescope.app.format import esc
from tilescope.app.shown_gate import ShownGate
from tilescope.app.state import SessionState
from tilescope.report.png import png_of
from tilescope.report.tables import (
    ALLOCATIONS_CSV,
    EDITS_CSV,
    EDITS_JSON,
    PNG_NAME,
    STEPS_CSV,
    VALUES_CSV,
    ReportInput,
    breakdown_name,
    report_input,
    tables_of,
)

CSS = themed_css("export.css")
BREAKDOWN = "breakdown"  # key of the breakdown button (its file name follows the selected step)


class ExportView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)

    def __init__(self, **params):
        super().__init__(**params)
        self.gate = ShownGate(self.state)  # its tab may be hidden: app.shown_gate
        self._tables_key: tuple = ()  # (PlanData, step) the cached tables were built from
        self._tables: dict[str, bytes] = {}
        self._note = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10))
        self._buttons = {
            PNG_NAME: self._button(PNG_NAME, "Report (PNG)", self._png_file, "primary"),
            VALUES_CSV: self._button(VALUES_CSV, "Values (CSV)", self._table_sender(VALUES_CSV)),
            STEPS_CSV: self._button(STEPS_CSV, "Steps (CSV)", self._table_sender(STEPS_CSV)),
            BREAKDOWN: self._button(breakdown_name(0), "Breakdown (CSV)", self._breakdown_file),
            EDITS_JSON: self._button(EDITS_JSON, "Edit set (JSON)", self._table_sender(EDITS_JSON)),
            EDITS_CSV: self._button(EDITS_CSV, "Edits (CSV)", self._table_sender(EDITS_CSV)),
            ALLOCATIONS_CSV: self._button(ALLOCATIONS_CSV, "Allocations (CSV)", self._table_sender(ALLOCATIONS_CSV)),
        }
        self._layout = pn.Column(
            pn.pane.HTML('<h3 style="margin:0">Export</h3>', margin=(0, 10)),
            self._note,
            pn.FlexBox(*self._buttons.values()),
            css_classes=["ts-export"],
            stylesheets=[CSS],
            sizing_mode="stretch_width",
        )
        self.gate.watch(self._redraw, ["data", "selected_step"])
        self._redraw()

    def _button(self, filename: str, label: str, callback, color: str = "default") -> pn.widgets.FileDownload:
        key = BREAKDOWN if filename.startswith("step_") else filename
        return pn.widgets.FileDownload(
            callback=callback,
            filename=filename,
            label=label,
            color=color,
            auto=True,
            embed=False,
            css_classes=[f"ts-export-{key.replace('.', '-')}"],
            stylesheets=[BUTTONS_CSS],
            width=170,
            margin=(5, 10),
        )

    # ------------------------------------------------------------------ what the buttons send

    def _input(self) -> ReportInput:
        if self.state.data is None:
            raise RuntimeError("no memory profile is open")
        return report_input(self.state.data, self.state.selected_step)

    def _tables_for(self, report: ReportInput) -> dict[str, bytes]:
        """The CSVs, built once per (plan, step): one click after another reuses them. Compared by
        identity (the state replaces, never mutates, its PlanData)."""
        cached = self._tables_key
        if not (len(cached) == 2 and cached[0] is report.data and cached[1] == report.step):
            self._tables, self._tables_key = tables_of(report), (report.data, report.step)
        return self._tables

    async def _in_worker(self, build):
        try:
            return await self.state.work(build, label="export")  # the load workers, under their time limit
        except Exception as exc:  # say it in the view; the button simply sends nothing
            self._note.object = f'<div class="bad" data-testid="ts-export-error">export failed: {esc(exc)}</div>'
            raise

    async def _png_file(self) -> io.BytesIO:
        data = self._input()
        return io.BytesIO(await self._in_worker(lambda: png_of(data)))

    def _table_sender(self, name: str):
        """A coroutine function (FileDownload awaits only those) sending one table."""

        async def send() -> io.BytesIO:
            data = self._input()
            tables = await self._in_worker(lambda: self._tables_for(data))
            return io.BytesIO(tables[name])

        return send

    async def _breakdown_file(self) -> io.BytesIO:
        data = self._input()
        self._buttons[BREAKDOWN].filename = breakdown_name(data.step)  # the step may have moved since the refresh
        tables = await self._in_worker(lambda: self._tables_for(data))
        return io.BytesIO(tables[breakdown_name(data.step)])

    # ------------------------------------------------------------------ keeping the view current

    def _redraw(self, *_):
        s = self.state
        open_ = s.data is not None
        for button in self._buttons.values():
            button.disabled = not open_
        if not open_:
            self._note.object = (
                '<div class="note" data-testid="ts-export-note">Open a memory profile to export its report.</div>'
            )
            return
        step = min(max(int(s.selected_step), 0), max(s.arrays.n_steps - 1, 0))
        self._buttons[BREAKDOWN].filename = breakdown_name(step)
        edits = f"{len(s.edits)} what-if edit(s) applied" if s.edits else "no edits"
        self._note.object = (
            f'<div class="note" data-testid="ts-export-note">Current plan of {esc(s.source)} ({edits}); '
            f"breakdown of step {step:,}. CSV cells that a spreadsheet would run as a formula start with an apostrophe.</div>"
        )

    def set_shown(self, shown: bool) -> None:
        """Hidden, the view waits; shown again, it catches up (``app.shown_gate``)."""
        self.gate.set_shown(shown)

    def __panel__(self):
        return self._layout
