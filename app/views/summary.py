"""Summary: the profile's scope, device and budgets, the three peaks with their steps, the effective
peak and the verdict, and the placement's figures per region (``placement_summary``). After what-if
edits each figure reads ``before → after (difference)``.

Every figure carries a ``data-testid`` (``ts-peak-total``, ``ts-budget``…) whose text is only the
figure, e.g. ``429,904 B (419.8 KiB)``.
"""

from __future__ import annotations

import panel as pn
import param

from tilescope.app.assets import themed_css
from tilescope.app.format import esc
from tilescope.app.state import SessionState
from tilescope.app.view_guard import watch_state
from tilescope.app.views.placement_summary import placement_summary_html, placements
from tilescope.derived.fit_verdict import FitVerdict, fit_verdict
from tilescope.models.format import fmt_bytes, fmt_change
from tilescope.models.glossary import GLOSSARY

CSS = themed_css("summary.css")


def _figure(testid: str, before: int, after: int) -> str:
    changed = " changed" if int(before) != int(after) else ""
    return f'<span class="ts-fig{changed}" data-testid="{testid}">{esc(fmt_change(before, after))}</span>'


def _step(testid: str, before: int, after: int) -> str:
    text = f"step {after}" if before == after else f"step {before} → {after}"
    return f'<span data-testid="{testid}">{esc(text)}</span>'


def _row(key: str, value_html: str, term: str | None = None) -> str:
    """One figure; its glossary word (``term``, default the key) defined on hover."""
    definition = GLOSSARY.get(term or key)
    label = f'<abbr class="ts-term" title="{esc(definition)}">{esc(key)}</abbr>' if definition else esc(key)
    return f'<tr><td class="k">{label}</td><td>{value_html}</td></tr>'


def _item(key: str, value_html: str) -> str:
    """One profile figure inline: ``budget 586,960 B (573.2 KiB)``, its word defined on hover."""
    definition = GLOSSARY.get(key)
    label = (
        f'<abbr class="ts-term k" title="{esc(definition)}">{esc(key)}</abbr>'
        if definition
        else f'<span class="k">{esc(key)}</span>'
    )
    return f'<span class="ts-item">{label} {value_html}</span>'


def summary_html(state: SessionState) -> str:
    """The summary as HTML (all file text escaped)."""
    data = state.data
    if data is None:
        return '<div class="ts-summary" data-testid="ts-summary-empty">No memory profile open.</div>'
    arrays, header = data.arrays, data.profile.header
    base, now = data.base.plan.peaks, data.plan.peaks
    placed_now, placed_before, refused = placements(state)
    verdict = fit_verdict(now, arrays, placed_now, refused)
    was = fit_verdict(base, arrays, placed_before, refused).word
    device = " · ".join(
        [
            _item("scope", f'<span data-testid="ts-scope">{esc(header["scope"])}</span>'),
            _item("device tiles", f'<span data-testid="ts-device-tiles">{arrays.device_tiles:,}</span>'),
            _item(
                "budget", f'<span class="ts-fig" data-testid="ts-budget">{esc(fmt_bytes(arrays.budget_bytes))}</span>'
            ),
            _item(
                "interleaved budget",
                f'<span class="ts-fig" data-testid="ts-interleaved-budget">{esc(fmt_bytes(arrays.interleaved_budget_bytes))}</span>',
            ),
            _item(
                "support reserve",
                f'<span class="ts-fig" data-testid="ts-support-reserve">{esc(fmt_bytes(arrays.support_reserve_bytes))}</span>',
            ),
            _item(
                "exchange rows",
                f'<span class="ts-fig" data-testid="ts-exchange-rows">{esc(fmt_bytes(arrays.exchange_rows))}</span>',
            ),
        ]
    )
    peaks = "".join(
        [
            _row(
                "standard peak",
                _figure("ts-peak-standard", base.standard, now.standard)
                + " at "
                + _step("ts-peak-standard-step", base.standard_step, now.standard_step),
            ),
            _row(
                "interleaved peak",
                _figure("ts-peak-interleaved", base.interleaved, now.interleaved)
                + " at "
                + _step("ts-peak-interleaved-step", base.interleaved_step, now.interleaved_step),
            ),
            _row(
                "total peak",
                _figure("ts-peak-total", base.total, now.total)
                + " at "
                + _step("ts-peak-total-step", base.total_step, now.total_step),
            ),
            _row("effective peak", _figure("ts-effective-peak", base.effective_peak_bytes, now.effective_peak_bytes)),
            _row(
                "largest standard allocation",
                _figure(
                    "ts-max-standard-allocation", base.maximum_standard_allocation, now.maximum_standard_allocation
                ),
            ),
            _row("fits budget", _verdict(verdict, was), term="fits"),
        ]
    )
    # The line is there with or without edits, so the first edit does not push the timeline down.
    edits = '<div class="note" data-testid="ts-summary-plan">the file\'s plan: no what-if edits</div>'
    if data.edited:
        edits = f'<div class="note" data-testid="ts-summary-edits">with {len(data.whatif.edits)} what-if edit(s): figures read before → after (difference)</div>'
    return (
        f'<div class="ts-summary" data-testid="ts-summary"><div class="ts-grid">'
        f"<div><h3>Peaks (per tile)</h3><table>{peaks}</table>{edits}{_recorded_note(header, base)}</div>"
        f"<div class='ts-profile'><h3>Profile</h3>{device} · {placement_summary_html(state)}</div>"
        f"</div></div>"
    )


def _verdict(verdict: FitVerdict, was: str) -> str:
    """The one fit verdict (``derived.fit_verdict``) and, in the same row (the timeline must stay in
    view at 1024×768), the estimate's and the placement's figures; the rule and the full figures on hover."""
    change = "" if verdict.word == was else f" (was {was})"
    full = "\n".join(verdict.lines())
    return (
        f'<span class="{verdict.css}" data-testid="ts-fits-budget" title="{esc(full)}">{esc(verdict.word)}{esc(change)}</span>'
        f' <span class="note ts-fit" data-testid="ts-fit-figures" title="{esc(full)}">· {esc(verdict.short)}</span>'
    )


def _recorded_note(header: dict, base) -> str:
    """Whether the recomputed peaks reproduce the figures the file records."""
    recorded = {
        "standard": (header["peak_standard"], base.standard),
        "interleaved": (header["peak_interleaved"], base.interleaved),
        "total": (header["peak_total"], base.total),
        "effective": (header["effective_peak_bytes"], base.effective_peak_bytes),
    }
    differ = [f"{k}: file {r:,}, recomputed {c:,}" for k, (r, c) in recorded.items() if int(r) != int(c)]
    if not differ:
        return '<div class="note" data-testid="ts-recorded-check">recomputed peaks match the figures recorded in the file</div>'
    return f'<div class="note bad" data-testid="ts-recorded-check">recomputed peaks differ from the file: {esc("; ".join(differ))}</div>'


class SummaryView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)

    def __init__(self, **params):
        super().__init__(**params)
        self._pane = pn.pane.HTML(
            summary_html(self.state), stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10)
        )
        watch_state(self.state, self._redraw, ["data", "ready"])

    def _redraw(self, *_):
        self._pane.object = summary_html(self.state)

    def __panel__(self):
        return self._pane
