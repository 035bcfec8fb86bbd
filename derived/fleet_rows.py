"""What the app's fleet view shows of a dataset's ``profiles`` rows (``fleet.overview.profiles_frame``):
the table's columns, the chart's bars grouped by folder, the failures. Pure pandas.

**Groups.** A profile's group is the first folder below the folders every path shares, its member
the rest of its path: with ``nightly/2024-05-01/model_a.memory_profile.json`` and
``nightly/2024-05-02/model_a.memory_profile.json`` the groups are ``nightly/2024-05-01`` and
``nightly/2024-05-02`` (one per nightly run) and both members are ``model_a.memory_profile.json``,
so one model's bars sit at the same place in every run. Files directly in the shared folder form
its own group. Groups are in natural order (``run-2`` before ``run-10``; ISO dates in date order).

**Colours and the budget.** A bar's colour is the profile's fit verdict as recorded (``fits_budget``:
fits, does not fit, unknown); each bar carries the budget its figure is held to — the interleaved
budget for the interleaved peak, the budget for the others (the fit rule compares the effective
peak with it) — drawn as a mark across the bar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

# figure column → how the page names it
FIGURES = {
    "total_peak": "total peak",
    "standard_peak": "standard peak",
    "interleaved_peak": "interleaved peak",
    "effective_peak_bytes": "effective peak",
}
TABLE_COLUMNS = (
    "path",
    "scope",
    "status",
    "standard_peak",
    "interleaved_peak",
    "total_peak",
    "effective_peak_bytes",
    "fits",
    "budget_bytes",
    "n_values",
    "n_steps",
    "check_mismatches",
)
TEXT_COLUMNS = ("path", "scope", "status", "fits")
BYTE_COLUMNS = ("standard_peak", "interleaved_peak", "total_peak", "effective_peak_bytes", "budget_bytes")
COUNT_COLUMNS = ("n_values", "n_steps", "check_mismatches")
LOADED, FAILED, SEARCH_STATE = "loaded", "failed", "search state"
FITS, OVER, FIT_UNKNOWN = "fits the budget", "does not fit", "fit unknown"  # the chart's colours, in legend order
BUDGET_OF = {  # figure → the budget column it is held to
    "total_peak": "budget_bytes",
    "standard_peak": "budget_bytes",
    "interleaved_peak": "interleaved_budget_bytes",
    "effective_peak_bytes": "budget_bytes",
}


def natural_key(text: str) -> tuple:
    """Digits compared as numbers: ``run-2`` < ``run-10``."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


def folder_groups(paths: list[str]) -> tuple[list[str], list[str]]:
    """(group, member) of each path (module doc)."""
    parts = [p.split("/") for p in paths]
    shared = 0
    if parts:
        folders = [p[:-1] for p in parts]
        shortest = min(len(f) for f in folders)
        while shared < shortest and len({f[shared] for f in folders}) == 1:
            shared += 1
    groups, members = [], []
    for p in parts:
        if len(p) - 1 > shared:  # a folder below the shared ones
            groups.append("/".join(p[: shared + 1]))
            members.append("/".join(p[shared + 1 :]))
        else:
            groups.append("/".join(p[:shared]) + "/" if shared else "./")
            members.append(p[-1])
    return groups, members


def _status(frame: pd.DataFrame) -> pd.Series:
    failed = frame["error"].notna()
    # Other planner outputs (search states, placement dumps and profiles) by their kind's name.
    other = frame["kind"].fillna("").astype(str).str.replace("_", " ")
    return pd.Series(
        np.where(failed, FAILED, np.where(frame["kind"] == "memory_profile", LOADED, other)), index=frame.index
    )


def table_frame(profiles: pd.DataFrame) -> pd.DataFrame:
    """The table's rows, one per ``profiles`` row in the same order and index (a clicked row's
    position is its row of ``profiles``). Peaks of rows that have none (failures, search states)
    are empty; ``fits`` reads yes/no."""
    out = pd.DataFrame(index=profiles.index)
    out["path"] = profiles["path"].astype(str)
    out["scope"] = profiles["scope"].fillna("").astype(str)
    out["status"] = _status(profiles)
    for column in (*BYTE_COLUMNS, *COUNT_COLUMNS):
        # float for the browser table (NaN shows as empty); exact below 2⁵³, and every figure is
        # (the loader refuses larger ones)
        out[column] = profiles[column].astype("Float64").astype(float)
    fits = profiles["fits_budget"]
    out["fits"] = np.where(fits.isna(), "", np.where(fits.fillna(False).astype(bool), "yes", "no"))
    return out[list(TABLE_COLUMNS)]


def failures(profiles: pd.DataFrame) -> list[tuple[str, str]]:
    """(path, error) of every row that did not load, by path; the error without the path it starts
    with (``fleet.task.located_error`` names the file: the page shows the path once)."""
    failed = profiles[profiles["error"].notna()]
    return [(p, error_after_path(p, e)) for p, e in zip(failed["path"].astype(str), failed["error"].astype(str))]


def error_after_path(path: str, error: str) -> str:
    """``error`` without a leading ``"PATH: "`` (the row's path, as the batch named the file)."""
    prefix = f"{path}: "
    return error[len(prefix) :] if error.startswith(prefix) else error


@dataclass(frozen=True)
class ChartBars:
    """One bar per loaded memory profile: ``factors`` (group, member) in chart order (groups in
    natural order, members by name within a group), each bar's figure, path, fit verdict (``FITS``,
    ``OVER``, ``FIT_UNKNOWN``: its colour) and the budget its figure is held to (None: not recorded)."""

    figure: str
    factors: list[tuple[str, str]]
    groups: list[str]
    values: list[int]
    paths: list[str]
    fits: list[str]
    budgets: list[int | None]
    rows: list[int]  # the bar's row of ``profiles`` (positional)

    @property
    def budget_label(self) -> str:
        return "interleaved budget" if BUDGET_OF[self.figure] == "interleaved_budget_bytes" else "budget"


def chart_bars(profiles: pd.DataFrame, figure: str) -> ChartBars:
    if figure not in FIGURES:
        raise ValueError(f"figure must be one of {', '.join(FIGURES)}")
    positions = np.flatnonzero((profiles["error"].isna() & (profiles["kind"] == "memory_profile")).to_numpy())
    paths = profiles["path"].astype(str).to_numpy()[positions].tolist()
    groups, members = folder_groups(paths)
    order = sorted(range(len(paths)), key=lambda i: (natural_key(groups[i]), natural_key(members[i])))
    figure_values = profiles[figure].to_numpy()[positions]
    recorded = profiles["fits_budget"].to_numpy()[positions]
    verdicts = [FIT_UNKNOWN if pd.isna(v) else (FITS if bool(v) else OVER) for v in recorded]
    budget_column = profiles.get(BUDGET_OF[figure])
    budgets = (
        [None] * len(positions)
        if budget_column is None
        else [None if pd.isna(v) else int(v) for v in budget_column.to_numpy()[positions]]
    )
    return ChartBars(
        figure=figure,
        factors=[(groups[i], members[i]) for i in order],
        groups=sorted(set(groups), key=natural_key),
        values=[int(figure_values[i]) for i in order],
        paths=[paths[i] for i in order],
        fits=[verdicts[i] for i in order],
        budgets=[budgets[i] for i in order],
        rows=[int(positions[i]) for i in order],
    )
