"""The compare summary: A | B | Δ of every peak (with its step), the effective peak, the largest
standard allocation and the verdict, and how steps and values were matched.

Every figure carries a ``data-testid`` whose text is only the figure: ``ts-compare-a-standard``,
``ts-compare-b-standard``, ``ts-compare-delta-standard`` (likewise ``interleaved``, ``total``,
``effective``, ``max-standard-allocation``), ``ts-compare-a-standard-step``…, ``ts-compare-a-fits``,
``ts-compare-steps`` (the step matching line), ``ts-compare-values``, ``ts-compare-a-name``,
``ts-compare-b-name``. File names and scopes are escaped.
"""

from __future__ import annotations

import panel as pn

from tilescope.app.assets import themed_css
from tilescope.app.format import esc, esc_figure
from tilescope.app.views.compare_part import ComparePart
from tilescope.models.format import fmt_bytes, fmt_signed_bytes

CSS = themed_css("compare.css")
ROWS = (  # (label, testid key, Peaks attribute, peak-step attribute or None)
    ("standard peak", "standard", "standard", "standard_step"),
    ("interleaved peak", "interleaved", "interleaved", "interleaved_step"),
    ("total peak", "total", "total", "total_step"),
    ("effective peak", "effective", "effective_peak_bytes", None),
    ("largest standard allocation", "max-standard-allocation", "maximum_standard_allocation", None),
    ("exchange rows", "exchange-rows", "exchange_rows", None),
)


def _cell(testid: str, text: str, cls: str = "ts-fig") -> str:
    return f'<span class="{cls}" data-testid="{testid}">{esc_figure(text)}</span>'


def _side_cell(side: str, peaks, attribute: str, step_attribute: str | None, key: str) -> str:
    html = _cell(f"ts-compare-{side}-{key}", fmt_bytes(getattr(peaks, attribute)))
    if step_attribute:
        html += " at " + _cell(f"ts-compare-{side}-{key}-step", f"step {getattr(peaks, step_attribute)}", "ts-step")
    return f"<td>{html}</td>"


def _delta_class(delta: int) -> str:
    return "ts-fig more" if delta > 0 else ("ts-fig less" if delta < 0 else "ts-fig")


def _side_heading(key: str, label: str, side, name: str) -> str:
    scope = side.profile.header.get("scope") or ""
    edits = f", {len(side.edits)} what-if edit(s)" if side.edits else ""
    return (
        f'<div><b>{key}</b> <span data-testid="ts-compare-{key.lower()}-name">{esc(label)}</span> '
        f'<span class="note">({esc(name)}; scope {esc(scope)}; {side.arrays.n_steps:,} steps, {side.arrays.n_values:,} values{esc(edits)})</span></div>'
    )


def compare_summary_html(compare) -> str:
    """The summary of a ``derived.compare_data.CompareData`` as HTML (every file text escaped)."""
    if compare is None:
        return '<div class="ts-compare-summary" data-testid="ts-compare-empty">Not comparing: pick a second profile above.</div>'
    c = compare.comparison
    pa, pb = c.a.plan.peaks, c.b.plan.peaks
    rows = []
    for label, key, attribute, step_attribute in ROWS:
        delta = int(getattr(pb, attribute)) - int(getattr(pa, attribute))
        rows.append(
            f'<tr><td class="k">{esc(label)}</td>{_side_cell("a", pa, attribute, step_attribute, key)}'
            f"{_side_cell('b', pb, attribute, step_attribute, key)}"
            f"<td>{_cell(f'ts-compare-delta-{key}', fmt_signed_bytes(delta), _delta_class(delta))}</td></tr>"
        )
    fits = {s: ("yes" if p.fits_budget else "no") for s, p in (("a", pa), ("b", pb))}
    rows.append(
        '<tr><td class="k">fits budget</td>'
        + "".join(
            f"<td>{_cell(f'ts-compare-{s}-fits', fits[s], 'ok' if fits[s] == 'yes' else 'bad')}</td>"
            for s in ("a", "b")
        )
        + "<td></td></tr>"
    )
    head = "<tr><th></th><th>A</th><th>B</th><th>Δ (B − A)</th></tr>"
    return (
        f'<div class="ts-compare-summary" data-testid="ts-compare-summary">'
        f"{_side_heading('A', c.a.label, c.a, compare.a_name)}{_side_heading('B', c.b.label, c.b, compare.b_name)}"
        f"<table>{head}{''.join(rows)}</table>"
        f'<div class="note" data-testid="ts-compare-steps">{esc(compare.step_line())}</div>'
        f'<div class="note" data-testid="ts-compare-values">{esc(compare.value_line())}</div>'
        "</div>"
    )


class CompareSummaryView(ComparePart):
    def __init__(self, **params):
        super().__init__(**params)
        self._pane = pn.pane.HTML(
            compare_summary_html(self.state.compare), stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10)
        )
        self.gate.watch(self._redraw, ["compare"])

    def _redraw(self, *_):
        self._pane.object = compare_summary_html(self.state.compare)

    def __panel__(self):
        return self._pane
