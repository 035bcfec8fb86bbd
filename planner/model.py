"""The memory model over a loaded profile (docs/formats.md §2): per-value bytes, per-step usage, peaks.

``ProfileArrays`` holds the numpy columns the model needs (built once per loaded profile, immutable).
``compute_plan`` recomputes everything from tilings; ``Plan`` is its result. Edits (``planner.edits``)
derive new plans from a base plan incrementally.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tilescope.models.lazy import lazy
from tilescope.models.profile import MemoryProfile
from tilescope.models.tiling import Axis, AxisTiling, TensorTiling

from .shards import infer_granules, shard_bytes
from .tile_arrays import TileArrays, tile_arrays_of

REGION_CODES = {"standard": 0, "interleaved": 1}  # ProfileArrays.region holds these codes


@dataclass(frozen=True)
class ProfileArrays:
    """Read-only numpy view of a profile, indexed by value row (the values table's order)."""

    value_ids: np.ndarray
    roots: np.ndarray  # root id per value
    root_rows: np.ndarray  # row of each value's root
    region: np.ndarray  # 0 standard, 1 interleaved
    element_bytes: np.ndarray
    shapes: list[tuple[int, ...]]
    layout_text: list[str]
    copies: np.ndarray
    tile_counts: np.ndarray
    replicas: np.ndarray
    recorded_shard: np.ndarray
    recorded_aligned: np.ndarray
    recorded_bytes: np.ndarray
    granule: np.ndarray  # allocation granule inferred per value (open in docs/formats.md; see shards.infer_granule)
    axes_start: np.ndarray  # first row of the value's axes in the axes columns
    axes_count: np.ndarray
    axes_columns: dict[str, np.ndarray]
    interval_row: np.ndarray  # value row of each live interval
    interval_first: np.ndarray
    interval_last: np.ndarray
    scratch_standard: np.ndarray
    scratch_interleaved: np.ndarray
    exchange_rows: int
    support_reserve_bytes: int
    budget_bytes: int
    interleaved_budget_bytes: int
    device_tiles: int
    storage_groups: np.ndarray | None = None  # storage group id per value (what-if edits of a whole group)
    standard_contiguous_overflow_bytes: int = 0  # from the header; open in docs/formats.md (planner.placement)
    version: int = 1  # the file's format version (docs/formats.md §7)
    tiles: TileArrays | None = None  # versions 2 and 3: the file's per-tile rows (planner.tile_arrays)

    @property
    def n_steps(self) -> int:
        return self.scratch_standard.size

    @property
    def n_values(self) -> int:
        return self.value_ids.size

    @lazy
    def row_of_id(self) -> dict[int, int]:
        return {int(v): i for i, v in enumerate(self.value_ids)}

    @lazy
    def interval_bounds(self) -> np.ndarray:
        """Row r's live intervals are ``interval_bounds[r]`` up to ``interval_bounds[r + 1]``
        (intervals are sorted by value row): one array, not an object per value."""
        return np.searchsorted(self.interval_row, np.arange(self.n_values + 1))

    @lazy
    def live_rows(self) -> np.ndarray:
        """Rows of the values live at some step, ascending (``np.unique(interval_row)``, kept)."""
        return np.flatnonzero(np.diff(self.interval_bounds))

    def intervals_of(self, row: int) -> range:
        """Indices of value row ``row``'s live intervals."""
        bounds = self.interval_bounds
        return range(int(bounds[row]), int(bounds[row + 1]))

    @lazy
    def alias_rows(self) -> dict[int, list[int]]:
        """Root row → rows of every value with that root (the root included)."""
        out: dict[int, list[int]] = {}
        for row, root in enumerate(self.root_rows.tolist()):
            out.setdefault(root, []).append(row)
        return out

    @lazy
    def storage_group_rows(self) -> dict[int, list[int]]:
        """Storage group id → rows of its members."""
        out: dict[int, list[int]] = {}
        groups = self.storage_groups if self.storage_groups is not None else self.value_ids
        for row, group in enumerate(groups.tolist()):
            out.setdefault(group, []).append(row)
        return out

    def tiling(self, row: int) -> TensorTiling:
        """The value's tiling as recorded, rebuilt from the axes table."""
        c = self.axes_columns
        axes = []
        for k in range(int(self.axes_start[row]), int(self.axes_start[row] + self.axes_count[row])):
            index = c["axis_index"][k]
            stride = c["tile_stride"][k]
            axes.append(
                AxisTiling(
                    axis=Axis(str(c["axis_kind"][k]), None if index < 0 else int(index)),
                    partitions=int(c["partitions"][k]),
                    padding_groups=int(c["padding_groups"][k]),
                    block_size=int(c["block_size"][k]),
                    padding_multiple=int(c["padding_multiple"][k]),
                    shard_padding_multiple=int(c["shard_padding_multiple"][k]),
                    padding=str(c["padding"][k]),
                    tile_stride=None if stride < 0 else int(stride),
                )
            )
        return TensorTiling(int(self.tile_counts[row]), int(self.replicas[row]), tuple(axes))


def _int_column(table, name: str, fill: int = -1) -> np.ndarray:
    column = table.column(name)
    if column.null_count:
        column = column.fill_null(fill)
    return column.to_numpy().astype(np.int64, copy=False)  # a column without nulls: often no copy


def _text_column(table, name: str) -> np.ndarray:
    """A non-null text column as an object array. A dictionary-encoded one is decoded by a gather
    from its few distinct texts (``to_pylist`` would make a Python object per cell: ~0.3 s per
    column of 10⁵ values)."""
    column = table.column(name)
    if not pa.types.is_dictionary(column.type):
        return np.array(column.to_pylist(), dtype=object)
    chunks = [np.array(c.dictionary.to_pylist(), dtype=object)[c.indices.to_numpy()] for c in column.chunks]
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=object)


def rows_of_ids(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Row of each wanted id in ``ids`` (all wanted ids are known: the loader checked them)."""
    order = np.argsort(ids, kind="stable")
    return order[np.searchsorted(ids[order], wanted)]


_AXIS_INTS = (
    "axis_index",
    "partitions",
    "padding_groups",
    "block_size",
    "padding_multiple",
    "shard_padding_multiple",
    "tile_stride",
)


def arrays_of(profile: MemoryProfile) -> ProfileArrays:
    v, ax, lv = profile.values, profile.axes, profile.live_intervals
    header = profile.header
    ids = _int_column(v, "id")
    region = (_text_column(v, "region") == "interleaved").astype(np.int8)
    recorded_shard = _int_column(v, "shard_bytes")
    recorded_aligned = _int_column(v, "aligned_bytes")
    granule = infer_granules(recorded_shard, recorded_aligned, region)
    # Axes grouped by value row, in tiling order, so a value's axes are one contiguous slice.
    axis_row = rows_of_ids(ids, _int_column(ax, "value_id"))
    axis_order = np.lexsort((_int_column(ax, "position"), axis_row))
    if np.any(axis_order != np.arange(axis_order.size)):  # (the loader writes them in this order)
        ax = ax.take(axis_order)
    axes_count = np.bincount(axis_row, minlength=ids.size).astype(np.int64)
    axes_start = np.concatenate(([0], np.cumsum(axes_count)[:-1])).astype(np.int64)
    axes_columns = {name: _int_column(ax, name) for name in _AXIS_INTS}
    axes_columns["axis_kind"] = np.array(ax.column("axis_kind").to_pylist(), dtype=object)
    axes_columns["padding"] = np.array(ax.column("padding").to_pylist(), dtype=object)
    interval_row = rows_of_ids(ids, _int_column(lv, "value_id"))
    first, last = _int_column(lv, "first_step"), _int_column(lv, "last_step")
    order = np.lexsort((first, interval_row))
    return ProfileArrays(
        value_ids=ids,
        roots=_int_column(v, "root"),
        root_rows=rows_of_ids(ids, _int_column(v, "root")),
        region=region,
        element_bytes=_int_column(v, "element_bytes"),
        shapes=[tuple(s) for s in v.column("shape").to_pylist()],
        layout_text=_text_column(v, "layout").tolist(),
        copies=_int_column(v, "copies"),
        tile_counts=_int_column(v, "tile_count"),
        replicas=_int_column(v, "replicas"),
        recorded_shard=recorded_shard,
        recorded_aligned=recorded_aligned,
        recorded_bytes=_int_column(v, "bytes"),
        granule=granule,
        axes_start=axes_start,
        axes_count=axes_count,
        axes_columns=axes_columns,
        interval_row=interval_row[order],
        interval_first=first[order],
        interval_last=last[order],
        scratch_standard=_int_column(profile.steps, "scratch_standard"),
        scratch_interleaved=_int_column(profile.steps, "scratch_interleaved"),
        exchange_rows=int(header["exchange_rows"]),
        support_reserve_bytes=int(header["support_reserve_bytes"]),
        budget_bytes=int(header["budget_bytes"]),
        interleaved_budget_bytes=int(header["interleaved_budget_bytes"]),
        device_tiles=int(header["tile_count"]),
        storage_groups=_int_column(v, "storage_group"),
        standard_contiguous_overflow_bytes=int(header.get("standard_contiguous_overflow_bytes") or 0),
        version=int(header["version"]),
        tiles=tile_arrays_of(profile),
    )


# ----------------------------------------------------------------------------- figures


@dataclass(frozen=True)
class ValueBytes:
    """Recomputed per-value figures, by value row."""

    shard: np.ndarray
    aligned: np.ndarray
    bytes: np.ndarray  # aligned * copies: what the value costs on a tile while live


def value_bytes(arrays: ProfileArrays) -> ValueBytes:
    """Shard/aligned/bytes for every value, computing each distinct (layout, shape, precision) once."""
    shard = np.zeros(arrays.n_values, dtype=np.int64)
    memo: dict[tuple, int] = {}
    for row in range(arrays.n_values):
        key = (arrays.layout_text[row], arrays.shapes[row], int(arrays.element_bytes[row]))
        size = memo.get(key)
        if size is None:
            size = memo[key] = shard_bytes(arrays.shapes[row], int(arrays.element_bytes[row]), arrays.tiling(row))
        shard[row] = size
    return figures_from_shards(shard, arrays.granule, arrays.copies)


def figures_from_shards(shard: np.ndarray, granule: np.ndarray, copies: np.ndarray) -> ValueBytes:
    aligned = -(-shard // granule) * granule
    return ValueBytes(shard, aligned, aligned * copies)


def step_usage(arrays: ProfileArrays, value_cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """usage[step][region] = Σ bytes of values live at the step in that region + scratch.

    Built from live intervals with a difference array: O(intervals + steps).
    """
    n = arrays.n_steps
    cost = value_cost[arrays.interval_row]
    out = []
    for code, scratch in ((0, arrays.scratch_standard), (1, arrays.scratch_interleaved)):
        mask = arrays.region[arrays.interval_row] == code
        diff = np.zeros(n + 1, dtype=np.int64)
        np.add.at(diff, arrays.interval_first[mask], cost[mask])
        np.add.at(diff, arrays.interval_last[mask] + 1, -cost[mask])
        out.append(np.cumsum(diff[:-1]) + scratch)
    return out[0], out[1]


@dataclass(frozen=True)
class Peaks:
    standard: int
    interleaved: int
    total: int
    exchange_rows: int
    maximum_standard_allocation: int
    standard_step: int
    interleaved_step: int
    total_step: int
    effective_peak_bytes: int
    fits_budget: bool


def peaks_of(
    arrays: ProfileArrays, usage_standard: np.ndarray, usage_interleaved: np.ndarray, cost: np.ndarray
) -> Peaks:
    """docs/formats.md §2. Each peak step is the first step reaching the maximum (np.argmax's rule).

    fits_budget is open in docs/formats.md; our rule: effective peak within the budget and the
    interleaved peak within the interleaved budget.
    """
    both = usage_standard + usage_interleaved
    empty = usage_standard.size == 0
    s_step = 0 if empty else int(np.argmax(usage_standard))
    i_step = 0 if empty else int(np.argmax(usage_interleaved))
    t_step = 0 if empty else int(np.argmax(both))
    standard_cost = cost[arrays.region == 0]
    effective = (0 if empty else int(both[t_step])) + arrays.support_reserve_bytes
    interleaved = 0 if empty else int(usage_interleaved[i_step])
    return Peaks(
        standard=(0 if empty else int(usage_standard[s_step])) + arrays.exchange_rows,
        interleaved=interleaved,
        total=(0 if empty else int(both[t_step])) + arrays.exchange_rows,
        exchange_rows=arrays.exchange_rows,
        maximum_standard_allocation=int(standard_cost.max()) if standard_cost.size else 0,
        standard_step=s_step,
        interleaved_step=i_step,
        total_step=t_step,
        effective_peak_bytes=effective,
        fits_budget=effective <= arrays.budget_bytes and interleaved <= arrays.interleaved_budget_bytes,
    )


@dataclass(frozen=True)
class TilePlan:
    """Per-step figures of a plan per tile (``planner.tile_usage.tile_plan_of``)."""

    # [steps, 2]: the peak tile's usage (largest total; ties: the last tile), and that tile
    usage: np.ndarray
    usage_tile: np.ndarray
    # [steps, 2]: the largest standard and interleaved figure over tiles, and where (ties: the last)
    largest: np.ndarray
    largest_tile: np.ndarray


@dataclass(frozen=True)
class Plan:
    """A complete memory plan: per-value figures, per-step usage and the peaks."""

    figures: ValueBytes
    usage_standard: np.ndarray
    usage_interleaved: np.ndarray
    peaks: Peaks
    tiles: TilePlan | None = None  # the plan per tile (versions 2 and 3, without edits): usage is its peak tile's

    @property
    def peak_tiles(self) -> dict[str, int] | None:
        """The device tile where each peak is reached, at its peak step (docs/formats.md §7); None
        without a plan per tile."""
        if self.tiles is None:
            return None
        p, t = self.peaks, self.tiles
        return {
            "standard": int(t.largest_tile[p.standard_step, 0]),
            "interleaved": int(t.largest_tile[p.interleaved_step, 1]),
            "total": int(t.usage_tile[p.total_step]),
        }


def compute_plan(arrays: ProfileArrays, figures: ValueBytes | None = None) -> Plan:
    """The plan of ``figures`` (default: the recorded tilings'). A v2/v3 profile without edited
    figures is planned per tile from the file's own rows (``per_tile_plan``)."""
    if figures is None and arrays.tiles is not None:
        return per_tile_plan(arrays)
    figures = figures if figures is not None else value_bytes(arrays)
    std, intl = step_usage(arrays, figures.bytes)
    return Plan(figures, std, intl, peaks_of(arrays, std, intl, figures.bytes))


def per_tile_plan(arrays: ProfileArrays) -> Plan:
    """The plan per tile of a v2/v3 profile (docs/formats.md §7): per-step usage is the peak
    tile's; the peaks follow the file's version (spec §1.3): maxima over steps and tiles, with the
    exchange rows in ``standard`` and ``total`` in v2 and out in v3; each peak step the earliest."""
    from .tile_usage import TileUsage, tile_plan_of  # (the per-tile modules build on this one)
    from .tile_whatif import file_figures

    assert arrays.tiles is not None
    # The file's per-tile rows summed by the reconstruction rule (§1.6), not its recorded tile_usage:
    # check compares the two.
    usage = TileUsage(arrays, file_figures(arrays))
    return plan_of_tile_plan(arrays, value_bytes(arrays), tile_plan_of(usage))


def plan_of_tile_plan(arrays: ProfileArrays, figures: ValueBytes, tp: TilePlan) -> Plan:
    """The plan whose per-tile figures per step are ``tp`` (``per_tile_plan``'s peaks rule; a
    what-if of a v2/v3 profile is planned by it too, ``planner.tile_whatif``)."""
    rows = arrays.exchange_rows if arrays.version == 2 else 0
    total = tp.usage.sum(axis=1)
    empty = total.size == 0
    s_step = 0 if empty else int(np.argmax(tp.largest[:, 0]))
    i_step = 0 if empty else int(np.argmax(tp.largest[:, 1]))
    t_step = 0 if empty else int(np.argmax(total))
    standard_cost = figures.bytes[arrays.region == 0]
    largest_allocation = max(
        int(standard_cost.max()) if standard_cost.size else 0, int(arrays.scratch_standard.max(initial=0))
    )
    effective = (0 if empty else int(total[t_step])) + arrays.support_reserve_bytes
    interleaved = 0 if empty else int(tp.largest[i_step, 1])
    peaks = Peaks(
        standard=(0 if empty else int(tp.largest[s_step, 0])) + rows,
        interleaved=interleaved,
        total=(0 if empty else int(total[t_step])) + rows,
        exchange_rows=arrays.exchange_rows,
        maximum_standard_allocation=largest_allocation,
        standard_step=s_step,
        interleaved_step=i_step,
        total_step=t_step,
        effective_peak_bytes=effective,
        fits_budget=(
            interleaved <= arrays.interleaved_budget_bytes
            and effective <= arrays.budget_bytes
            and arrays.standard_contiguous_overflow_bytes == 0
        ),
    )
    return Plan(figures, tp.usage[:, 0].copy(), tp.usage[:, 1].copy(), peaks, tp)


def plan_profile(profile: MemoryProfile) -> tuple[ProfileArrays, Plan]:
    """The profile's arrays and its plan, both read-only: an app process shares them between
    sessions, and every what-if plan is computed into new arrays."""
    arrays = arrays_of(profile)
    plan = compute_plan(arrays)
    read_only(arrays)
    read_only(plan)
    return arrays, plan


def read_only(record) -> None:
    """Make every numpy array of a (nested) dataclass record unwritable, in place."""
    for value in vars(record).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
        elif isinstance(value, dict):
            for item in value.values():
                if isinstance(item, np.ndarray):
                    item.flags.writeable = False
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            read_only(value)
