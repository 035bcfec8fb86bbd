"""Export of the comparison shown: the files ``tilescope report A --compare B --out DIR`` writes
(compare.png, compare_values.csv, compare_attribution.csv, compare_steps.csv, compare.json, built by
the same ``report.compare_png`` and ``report.compare_tables`` from the same comparison, each side
named as the user named its file), one button each, and all five in one ZIP.

Each file is built when its button is clicked, from the comparison at that moment, in a worker
thread (the comparison is immutable), and kept for the next click of the same comparison.
"""

from __future__ import annotations

import io
import zipfile
from types import MappingProxyType

import panel as pn

from tilescope.app.assets import BUTTONS_CSS, themed_css
from tilescope.app.format import esc
from tilescope.app.views.compare_part import ComparePart
from tilescope.derived.compare_data import WHATIF
from tilescope.report.compare_png import compare_png
from tilescope.report.compare_tables import (
    COMPARE_ATTRIBUTION_CSV,
    COMPARE_JSON,
    COMPARE_NAMES,
    COMPARE_PNG,
    COMPARE_STEPS_CSV,
    COMPARE_VALUES_CSV,
    compare_tables,
)

CSS = themed_css("compare.css")
ZIP_NAME = "compare_report.zip"
LABELS = MappingProxyType(
    {
        COMPARE_PNG: "Compare report (PNG)",
        COMPARE_VALUES_CSV: "Changed values (CSV)",
        COMPARE_ATTRIBUTION_CSV: "Attribution (CSV)",
        COMPARE_STEPS_CSV: "Aligned steps (CSV)",
        COMPARE_JSON: "Comparison (JSON)",
        ZIP_NAME: "All five (ZIP)",
    }
)
ZIP_DATE = (2000, 1, 1, 0, 0, 0)  # fixed: the same comparison gives the same archive


def compare_files(compare, names: tuple[str, ...] = COMPARE_NAMES) -> dict[str, bytes]:
    """The report's files of a ``CompareData`` (``names``: which; the PNG is the slow one)."""
    c = compare.comparison
    out = dict(compare_tables(c, compare.a_name, compare.b_name)) if set(names) - {COMPARE_PNG} else {}
    if COMPARE_PNG in names:
        out[COMPARE_PNG] = compare_png(c, compare.a_name, compare.b_name)
    return {name: out[name] for name in COMPARE_NAMES if name in names}


def zip_of(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(zipfile.ZipInfo(name, ZIP_DATE), data)
    return out.getvalue()


def _command(compare) -> str:
    """The CLI line that writes the same files."""
    if compare.mode == WHATIF:
        return "tilescope report A --compare-edits EDITS.json (the what-if's edit set)"
    edits = " --edits EDITS.json (A's what-if edit set)" if compare.a.edited else ""
    return f"tilescope report A --compare B{edits}"


class CompareExportView(ComparePart):
    def __init__(self, **params):
        super().__init__(**params)
        self._built_for = None  # the CompareData the kept files are of
        self._files: dict[str, bytes] = {}
        self._note = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10))
        self._buttons = {name: self._button(name) for name in (*COMPARE_NAMES, ZIP_NAME)}
        self.gate.watch(self._redraw, ["compare"])
        self._redraw()

    def _button(self, name: str) -> pn.widgets.FileDownload:
        async def send() -> io.BytesIO:  # FileDownload awaits coroutine functions only
            return io.BytesIO(await self._file(name))

        return pn.widgets.FileDownload(
            callback=send,
            filename=name,
            label=LABELS[name],
            auto=True,
            embed=False,
            color="primary" if name == ZIP_NAME else "default",
            css_classes=[f"ts-compare-export-{name.replace('.', '-')}"],
            stylesheets=[BUTTONS_CSS],
            width=190,
            margin=(5, 10),
        )

    async def _file(self, name: str) -> bytes:
        compare = self.state.compare
        if compare is None:
            raise RuntimeError("not comparing")
        wanted = COMPARE_NAMES if name == ZIP_NAME else (name,)

        def build() -> dict[str, bytes]:
            kept = self._files if self._built_for is compare else {}
            missing = tuple(n for n in wanted if n not in kept)
            return {**kept, **(compare_files(compare, missing) if missing else {})}

        try:
            files = await self.state.work(build, label="compare export")  # the load workers, under their time limit
        except Exception as exc:  # say it in the view; the button sends nothing
            self._note.object = (
                f'<div class="bad" data-testid="ts-compare-export-error">export failed: {esc(exc)}</div>'
            )
            raise
        if self.state.compare is compare:
            self._built_for, self._files = compare, files
        return zip_of({n: files[n] for n in COMPARE_NAMES}) if name == ZIP_NAME else files[name]

    def _redraw(self, *_):
        compare = self.state.compare
        for button in self._buttons.values():
            button.disabled = compare is None
        if compare is None:
            self._note.object = ""
            return
        self._note.object = (
            f'<div class="ts-compare-note" data-testid="ts-compare-export-note">The compare report of A = {esc(compare.a_label)} '
            f"and B = {esc(compare.b_label)}: the files <code>{esc(_command(compare))}</code> writes.</div>"
        )

    def __panel__(self):
        return pn.Column(
            pn.pane.HTML("<b>Export the comparison</b>", margin=(8, 10)),
            self._note,
            pn.FlexBox(*self._buttons.values()),
            sizing_mode="stretch_width",
            css_classes=["ts-compare-export"],
            stylesheets=[CSS],
        )
