"""``UsageOverview``: the timeline's first picture of a profile, small whatever the file's size.

It is the file plan's usage over the whole profile, downsampled per pixel column exactly as the
timeline downsamples it (``series.minmax_indices`` with ``PIXEL_COLUMNS``: first, last, min and
max of each drawn line per column, so no peak disappears), with what the first render draws beside
it: the peaks, the budgets, the near-peak bands, the loop and ``Repeat`` marks of the whole
profile, and the operation, source and execution count of each kept step (the hover). At most
``PIXEL_COLUMNS × 8`` steps, so a 1 GB profile's overview is as small as a 90 MB one's.

``derived.opening`` stores it beside the cached tables of a profile (``loaders.cache.CacheEntry``,
table ``overview``) when it plans the file, so reopening the file draws its first chart from this
table alone while the arrays and the plan are built behind it. The table's metadata records
``OVERVIEW_VERSION`` and tilescope's version: one written by other code is ignored and rebuilt.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tilescope.models.version import __version__
from tilescope.planner.model import Peaks

from .series import StepInfo, StepSeries, minmax_indices, near_peak_runs, thinned

PIXEL_COLUMNS = 700  # columns per visible window; each keeps first, last and min/max of every series
MOST_MARKS = 120  # loop regions / Repeat boundaries drawn per window at most (denser: left out until zoomed in)
OVERVIEW_VERSION = 1  # bump when what the overview holds or how it is computed changes
OVERVIEW_TABLE = "overview"  # its name in a cache entry

_SCHEMA = pa.schema(
    [
        ("step", pa.int64()),
        ("standard", pa.int64()),
        ("interleaved", pa.int64()),
        ("operation", pa.string()),
        ("source", pa.int64()),
        ("execution_count", pa.int64()),
    ]
)
_MARKS = ("near_first", "near_last", "loop_first", "loop_last", "repeat_steps")


@dataclass(frozen=True, eq=False)
class UsageOverview:
    """The whole profile as the timeline first draws it (arrays are per kept step unless said)."""

    n_steps: int
    step: np.ndarray  # the kept steps, increasing
    standard: np.ndarray  # usage of the file's plan at them (values + scratch), bytes per tile
    interleaved: np.ndarray
    operation: list[str]  # the step's operation text (untrusted: escape it)
    source: np.ndarray
    execution_count: np.ndarray
    exchange_rows: int
    support_reserve_bytes: int
    budget_bytes: int
    interleaved_budget_bytes: int
    peaks: Peaks
    near_first: np.ndarray  # near-peak runs of the whole profile (first, last step), columns merged
    near_last: np.ndarray
    loop_first: np.ndarray  # loop bodies of the whole profile; none when more than MOST_MARKS
    loop_last: np.ndarray
    repeat_steps: np.ndarray  # Repeat boundaries; none when more than MOST_MARKS

    @staticmethod
    def of(arrays, plan, steps: StepInfo) -> UsageOverview:
        """The overview of ``plan`` (the file's) over ``arrays``."""
        series = StepSeries.of(plan, arrays.exchange_rows)
        n = int(series.total.size)
        keep = whole_profile_points(series)
        column = max(n / PIXEL_COLUMNS, 1.0)  # steps per pixel column of the whole profile
        near_first, near_last = near_peak_runs(series.total, 0.95, merge_gap=int(column))
        loops = steps.loop_first.size <= MOST_MARKS
        return UsageOverview(
            n_steps=n,
            step=keep,
            standard=series.standard[keep],
            interleaved=series.interleaved[keep],
            operation=steps.operation.take(keep).to_pylist(),
            source=steps.source[keep],
            execution_count=steps.execution_count[keep],
            exchange_rows=int(arrays.exchange_rows),
            support_reserve_bytes=int(arrays.support_reserve_bytes),
            budget_bytes=int(arrays.budget_bytes),
            interleaved_budget_bytes=int(arrays.interleaved_budget_bytes),
            peaks=plan.peaks,
            near_first=near_first,
            near_last=near_last,
            loop_first=steps.loop_first if loops else steps.loop_first[:0],
            loop_last=steps.loop_last if loops else steps.loop_last[:0],
            repeat_steps=thinned(steps.repeat_steps, 0, n, MOST_MARKS),
        )

    def same_as(self, other: UsageOverview) -> bool:
        """Whether two overviews draw the same picture (a stored one against a recomputed one)."""
        if self.peaks != other.peaks or self.operation != other.operation:
            return False
        for field in dataclasses.fields(self):
            mine, theirs = getattr(self, field.name), getattr(other, field.name)
            if isinstance(mine, np.ndarray) and not np.array_equal(mine, theirs):
                return False
            if isinstance(mine, int) and mine != theirs:
                return False
        return True

    # ------------------------------------------------------------------ as a table

    def to_table(self) -> pa.Table:
        """An Arrow table (one row per kept step; the rest in its metadata, as JSON)."""
        header = {
            "overview_version": OVERVIEW_VERSION,
            "tilescope": __version__,
            "n_steps": self.n_steps,
            "exchange_rows": self.exchange_rows,
            "support_reserve_bytes": self.support_reserve_bytes,
            "budget_bytes": self.budget_bytes,
            "interleaved_budget_bytes": self.interleaved_budget_bytes,
            "peaks": dataclasses.asdict(self.peaks),
            **{m: getattr(self, m).tolist() for m in _MARKS},
        }
        columns = [self.step, self.standard, self.interleaved, self.operation, self.source, self.execution_count]
        arrays = [pa.array(c, type=f.type) for c, f in zip(columns, _SCHEMA)]
        return pa.Table.from_arrays(arrays, schema=_SCHEMA.with_metadata({"tilescope.overview": json.dumps(header)}))

    @staticmethod
    def from_table(table: pa.Table) -> UsageOverview | None:
        """The overview a table holds; None when it is not one this code wrote (another version,
        another layout, a damaged file)."""
        try:
            if not table.schema.remove_metadata().equals(_SCHEMA):
                return None
            header = json.loads(table.schema.metadata[b"tilescope.overview"])
            if header.get("overview_version") != OVERVIEW_VERSION or header.get("tilescope") != __version__:
                return None
            c = {name: table.column(name) for name in _SCHEMA.names}
            marks = {m: np.asarray(header[m], dtype=np.int64) for m in _MARKS}
            return UsageOverview(
                n_steps=int(header["n_steps"]),
                step=c["step"].to_numpy(),
                standard=c["standard"].to_numpy(),
                interleaved=c["interleaved"].to_numpy(),
                operation=c["operation"].to_pylist(),
                source=c["source"].to_numpy(),
                execution_count=c["execution_count"].to_numpy(),
                exchange_rows=int(header["exchange_rows"]),
                support_reserve_bytes=int(header["support_reserve_bytes"]),
                budget_bytes=int(header["budget_bytes"]),
                interleaved_budget_bytes=int(header["interleaved_budget_bytes"]),
                peaks=Peaks(**header["peaks"]),
                **marks,
            )
        except (KeyError, TypeError, ValueError, pa.ArrowException):
            return None


def whole_profile_points(series: StepSeries) -> np.ndarray:
    """The steps the timeline draws for the whole profile of an unedited plan."""
    return minmax_indices([series.total, series.standard_line, series.interleaved], 0, series.total.size, PIXEL_COLUMNS)
