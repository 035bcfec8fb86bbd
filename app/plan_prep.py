"""What the page reads of a new plan first, computed in a load worker before the plan is shown
(``app.state``: no work sized by the file on the session's event loop)."""

from __future__ import annotations

from tilescope.derived.plan_data import PlanData

LIFETIMES_DRAWN = 150  # the lifetimes view's default "values drawn" (app.views.lifetimes reads it here)


def prepare_plan(data: PlanData) -> PlanData:
    """The timeline's series, the values table, the storage groups' overlaps, the lifetimes at
    their default setting: computed where this is called (a load worker), kept on ``data``. The
    placement is not: it is slower, and its views say "placing…" while ``SessionState.result``
    computes it in the background."""
    data.series, data.values, data.group_overlap  # noqa: B018 (computed and kept)
    data.gantt(LIFETIMES_DRAWN)
    return data
