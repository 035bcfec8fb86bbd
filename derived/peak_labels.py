"""Where a chart puts its peak labels so that none overlaps another: each label gets a lane of its
own at the top of the chart, above every data point, joined to its mark by a leader line. Pure
positions; the timeline draws them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

LANE_FRACTION = 0.07  # of the y range per lane (≈ 15 px on a 220 px plot: one 11 px line of text)
MARGIN_FRACTION = 0.03


@dataclass(frozen=True)
class PeakMark:
    name: str  # "total peak", ...
    step: int
    y: float  # where the mark sits
    text: str  # the label's text


@dataclass(frozen=True)
class PlacedLabel:
    mark: PeakMark
    lane: int  # 0: the top lane
    y: float  # the label's baseline (data units)
    align: str  # "left" or "right": labels point into the plot
    offset: int  # screen pixels from the leader line


def y_end_for(data_top: float, lanes: int) -> float:
    """The y-range end that leaves ``lanes`` lanes free above ``data_top``, and one lane more
    between the data and the lowest of them (for the chart's own labels on its top line)."""
    free = 1.0 - (lanes + 1) * LANE_FRACTION - MARGIN_FRACTION
    return max(float(data_top), 1.0) / max(free, 0.2)


def place_labels(marks: Sequence[PeakMark], n_steps: int, y_end: float) -> list[PlacedLabel]:
    """One lane per label, ordered by step (then by height, highest on top), so two labels never share
    a lane: no overlap however close their steps are or however the chart is zoomed."""
    ordered = sorted(marks, key=lambda m: (m.step, -m.y))
    placed = []
    for lane, mark in enumerate(ordered):
        late = mark.step > n_steps / 2
        y = y_end * (1.0 - MARGIN_FRACTION - (lane + 1) * LANE_FRACTION) + y_end * LANE_FRACTION * 0.2
        placed.append(PlacedLabel(mark, lane, y, "right" if late else "left", -6 if late else 6))
    return placed
