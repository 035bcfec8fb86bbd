"""The advisor: ranked, verified re-tilings that lower a chosen peak (``planner.advisor.advise``),
each applied with one click. Suggestions are ranked when asked for, then kept current while the
plan changes."""

from __future__ import annotations

import panel as pn
import param

from tilescope.app.assets import BUTTONS_CSS
from tilescope.app.format import esc
from tilescope.app.one_message import one_message
from tilescope.app.state import SessionState, error_text
from tilescope.app.view_guard import watch_state
from tilescope.derived.editing import PEAK_KINDS
from tilescope.models.format import fmt_bytes, shorten
from tilescope.planner.advisor import advise

SUGGESTION_LIMIT = 12


class AdvisorView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)

    def __init__(self, **params):
        super().__init__(**params)
        self._wanted = False  # the user asked for suggestions (then they follow the plan)
        self.peak_choice = pn.widgets.RadioButtonGroup(
            options=list(PEAK_KINDS), value="total", color="default", width=300, sizing_mode="fixed"
        )
        self.peak_choice.param.watch(one_message(lambda _: self.refresh(force=True)), "value")
        self.suggest_button = pn.widgets.Button(
            label="Suggest edits", color="primary", width=130, stylesheets=[BUTTONS_CSS]
        )
        self.suggest_button.on_click(one_message(lambda _: self.refresh(force=True)))
        self.advice = pn.Column(sizing_mode="stretch_width")
        watch_state(self.state, lambda _: self.refresh(force=False), ["data"])
        self._layout = pn.Column(
            pn.pane.HTML("<h4 style='margin:8px 0 0'>Advisor</h4>"),
            pn.FlexBox(
                pn.pane.HTML("lower the peak:", margin=(12, 5), width=110, sizing_mode="fixed"),
                self.peak_choice,
                self.suggest_button,
                sizing_mode="stretch_width",
            ),
            self.advice,
            sizing_mode="stretch_width",
        )

    def __panel__(self):
        return self._layout

    def refresh(self, force: bool) -> None:
        if force:
            self._wanted = True
        if not self._wanted:
            return
        data = self.state.data
        if data is None:
            self.advice.objects = []
            return
        peak = self.peak_choice.value
        # Ranking re-plans every candidate: a large plan's runs in the load workers (SessionState.compute).
        self.state.compute(
            data,
            lambda: advise(data.arrays, data.plan, peak, SUGGESTION_LIMIT, whatif=data.whatif),
            lambda suggestions: self._show(data, peak, suggestions),
        )

    def _show(self, data, peak: str, suggestions) -> None:
        if isinstance(suggestions, BaseException):
            self.advice.objects = [
                pn.pane.HTML(f"<p class='bad'>The advisor could not rank edits: {esc(error_text(suggestions))}</p>")
            ]
            return
        if not suggestions:
            self.advice.objects = [pn.pane.HTML(f"<p>No single re-tiling lowers the {esc(peak)} peak.</p>")]
            return
        names = data.opened.value_text.names
        rows = []
        for rank, suggestion in enumerate(suggestions):
            button = pn.widgets.Button(
                label="Apply", color="success", width=80, css_classes=[f"ts-apply-{rank}"], stylesheets=[BUTTONS_CSS]
            )
            button.on_click(one_message(lambda _, s=suggestion: self.apply(s)))
            row = data.arrays.row_of_id.get(int(suggestion.edits[0].value))
            name = "" if row is None else names[row]
            text = pn.pane.HTML(
                f"<span class='ts-suggestion'>{esc(suggestion.description)} <i>({esc(shorten(name, 60))})</i> — "
                f"{esc(peak)} peak {esc(fmt_bytes(suggestion.peak_before))} → {esc(fmt_bytes(suggestion.peak_after))} "
                f"(saves {esc(fmt_bytes(suggestion.saving))})</span>",
                margin=(10, 5),
            )
            rows.append(pn.Row(button, text, sizing_mode="stretch_width"))
        self.advice.objects = rows

    def apply(self, suggestion) -> str | None:
        """Add the suggestion's edits to the set, and show the value it re-tiles."""

        def refused(error: str) -> None:  # (here, or later on the loop: the plan is made in the load workers)
            self.advice.insert(0, pn.pane.HTML(f"<p class='ts-editor-error' role='alert'>{esc(error)}</p>"))

        error = self.state.add_edits(suggestion.edits, refused)
        if error:
            return error
        self.state.select_values([suggestion.edits[0].value])
        return None
