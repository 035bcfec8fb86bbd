"""Where a peak's change comes from, byte by byte (docs/formats.md §2's peak rules).

For a figure (``total``, ``standard`` or ``interleaved``) each side's peak is, at its own peak
step, the bytes of the values live there in the figure's regions, plus that step's scratch in
those regions, plus the exchange rows (``standard`` and ``total`` only). So, with ``a_step`` and
``b_step`` the two peak steps:

    delta = Σ parts + scratch_delta + exchange_rows_delta

where a value's part is its bytes live at ``b_step`` in B minus its bytes live at ``a_step`` in A
(0 on a side where it is not live there, or absent, or in another region). Matched values are one
entry (``compare_match``); each side's sum is checked against that side's recomputed peak, and a
mismatch raises instead of returning parts that do not add up.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from tilescope.planner.tile_whatif import file_figures, file_usage

from .live import live_rows_at

if TYPE_CHECKING:
    from .compare import CompareSide
    from .compare_match import ValueMatch

FIGURES = ("total", "standard", "interleaved")
FIGURE_REGIONS = MappingProxyType(
    {"total": (0, 1), "standard": (0,), "interleaved": (1,)}
)  # region codes of each figure


@dataclass(frozen=True)
class Part:
    """One value's share of a peak's change (ids are None on a side where it is absent)."""

    entry: int
    name: str
    a_id: int | None
    b_id: int | None
    a_bytes: int  # bytes live at a_step in A (in the figure's regions)
    b_bytes: int
    bytes: int  # b_bytes - a_bytes

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "a_id": self.a_id,
            "b_id": self.b_id,
            "a_bytes": self.a_bytes,
            "b_bytes": self.b_bytes,
            "bytes": self.bytes,
        }


@dataclass(frozen=True)
class Attribution:
    figure: str
    a_step: int
    b_step: int
    a_peak: int
    b_peak: int
    parts: tuple[Part, ...]  # every value whose part is not 0, largest magnitude first (ties: entry order)
    a_scratch: int
    b_scratch: int
    a_exchange_rows: int
    b_exchange_rows: int
    live_unchanged: int  # values live at both peak steps whose part is 0 (not listed)

    @property
    def delta(self) -> int:
        return self.b_peak - self.a_peak

    @property
    def scratch_delta(self) -> int:
        return self.b_scratch - self.a_scratch

    @property
    def exchange_rows_delta(self) -> int:
        return self.b_exchange_rows - self.a_exchange_rows

    @property
    def parts_total(self) -> int:
        return sum(p.bytes for p in self.parts)

    def to_json(self) -> dict:
        return {
            "a_step": self.a_step,
            "b_step": self.b_step,
            "a_peak": self.a_peak,
            "b_peak": self.b_peak,
            "delta": self.delta,
            "parts": [p.to_json() for p in self.parts],
            "scratch_delta": self.scratch_delta,
            "exchange_rows_delta": self.exchange_rows_delta,
            "live_unchanged": self.live_unchanged,
        }


def peak_of(side: CompareSide, figure: str) -> tuple[int, int]:
    """(peak, peak step) of one figure, as the planner recomputed them."""
    p = side.plan.peaks
    return {
        "total": (p.total, p.total_step),
        "standard": (p.standard, p.standard_step),
        "interleaved": (p.interleaved, p.interleaved_step),
    }[figure]


def _peak_tile(side: CompareSide, figure: str) -> int | None:
    """The tile of a plan-per-tile peak (v2/v3, docs/formats.md §7): its parts are that tile's."""
    tiles = side.plan.peak_tiles
    return None if tiles is None else tiles[figure]


def _live_bytes(
    side: CompareSide,
    step: int,
    regions: tuple[int, ...],
    entry_of_row: np.ndarray,
    n_entries: int,
    tile: int | None = None,
) -> np.ndarray:
    """Bytes live at ``step`` in ``regions``, per entry (each row is one entry: no collisions); on
    ``tile`` when given (what each value holds there, spec §1.6)."""
    out = np.zeros(n_entries, dtype=np.int64)
    if side.arrays.n_steps == 0:
        return out
    rows = live_rows_at(side.arrays, step)
    rows = rows[np.isin(side.arrays.region[rows], regions)]
    if tile is not None and side.arrays.tiles is not None:
        # M(root(v), tile): what each live value counts on the tile (the file's per-tile rows, §1.6)
        out[entry_of_row[rows]] = file_usage(side.arrays).requirement.at_tile(tile)[0][rows]
    else:
        out[entry_of_row[rows]] = side.plan.figures.bytes[rows]
    return out


def _scratch(side: CompareSide, step: int, regions: tuple[int, ...], tile: int | None = None) -> int:
    arrays = side.arrays
    if arrays.n_steps == 0:
        return 0
    if tile is not None and arrays.tiles is not None:
        on_tile = file_figures(arrays).scratch.at_tile(tile)  # per class, every step's tile_scratch there
        return sum(int(on_tile[r][step]) for r in regions)
    per_region = (arrays.scratch_standard, arrays.scratch_interleaved)
    return sum(int(per_region[r][step]) for r in regions)


def _exchange(side: CompareSide, regions: tuple[int, ...]) -> int:
    """The exchange rows in a figure: standard and total, except in a v3 plan per tile (spec §1.3)."""
    if 0 not in regions or (side.plan.tiles is not None and side.arrays.version >= 3):
        return 0
    return side.arrays.exchange_rows


def attribute(a: CompareSide, b: CompareSide, match: ValueMatch, figure: str) -> Attribution:
    regions = FIGURE_REGIONS[figure]
    a_peak, a_step = peak_of(a, figure)
    b_peak, b_step = peak_of(b, figure)
    n = match.n_entries
    a_tile, b_tile = _peak_tile(a, figure), _peak_tile(b, figure)
    a_live = _live_bytes(a, a_step, regions, match.entry_of_a_row, n, a_tile)
    b_live = _live_bytes(b, b_step, regions, match.entry_of_b_row, n, b_tile)
    a_scratch, b_scratch = _scratch(a, a_step, regions, a_tile), _scratch(b, b_step, regions, b_tile)
    a_exchange, b_exchange = _exchange(a, regions), _exchange(b, regions)
    for side, live, scratch, exchange, peak in (
        (a, a_live, a_scratch, a_exchange, a_peak),
        (b, b_live, b_scratch, b_exchange, b_peak),
    ):
        if int(live.sum()) + scratch + exchange != peak:  # the model's own rule; a broken invariant is not an answer
            raise ArithmeticError(
                f"{side.label}: {figure} peak {peak} ≠ live {int(live.sum())} + scratch {scratch} + exchange rows {exchange}"
            )
    part = b_live - a_live
    listed = np.flatnonzero(part)
    listed = listed[np.lexsort((listed, -np.abs(part[listed])))]
    ids_a, ids_b = a.arrays.value_ids, b.arrays.value_ids
    parts = tuple(
        Part(
            entry=e,
            name=str(match.name[e]),
            a_id=int(ids_a[match.a_row[e]]) if match.a_row[e] >= 0 else None,
            b_id=int(ids_b[match.b_row[e]]) if match.b_row[e] >= 0 else None,
            a_bytes=int(a_live[e]),
            b_bytes=int(b_live[e]),
            bytes=int(part[e]),
        )
        for e in listed.tolist()
    )
    unchanged = int(np.count_nonzero((part == 0) & (a_live > 0)))
    return Attribution(
        figure, a_step, b_step, a_peak, b_peak, parts, a_scratch, b_scratch, a_exchange, b_exchange, unchanged
    )
