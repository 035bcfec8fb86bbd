"""The per-tile part of a what-if written as a memory profile v2/v3 (``report.profile_json``): what
``tilescope plan FILE --edit … --write-profile OUT.json`` rewrites in a v2/v3 file, from the edited
plan's per-tile usage (``planner.tile_usage.TileUsage``, ``derived.tile_usage``):

- per value: ``tile_shards`` and ``tile_bytes`` of every edited value (the others' are kept as the
  input spells them), and every value's ``shard_bytes``, ``aligned_bytes`` (= ``bytes`` / copies)
  and ``bytes`` as the maxima of its per-tile figures (compiler-formats.md §1.4);
- per step: ``tile_usage`` of every step where an edited value is live or whose scratch was spread
  again, ``tile_scratch`` of the latter, every step's ``usage`` (the peak tile's: largest total,
  the last such tile) and ``coarse_usage`` (the v1 rule on the values' scalar bytes, §1.5);
- the header: ``peak`` (maxima over steps and tiles; the exchange rows added to ``standard`` and
  ``total`` in v2, not in v3, §1.3), the three ``*_peak_step`` (earliest), ``effective_peak_bytes``
  and ``fits_budget`` by the version's formula, ``maximum_standard_allocation`` (the largest
  standard value or standard scratch).

With no edit nothing per tile is rewritten: the input's arrays are kept byte for byte.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from tilescope.planner.model import ProfileArrays
from tilescope.planner.tile_usage import TileUsage, on_device_runs

_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])


def _raw(value: Any) -> msgspec.Raw:
    return msgspec.Raw(msgspec.json.encode(value))


def _pairs(standard: np.ndarray, interleaved: np.ndarray) -> msgspec.Raw:
    """A per-tile ``[[standard, interleaved], …]`` list."""
    return _raw(np.stack((standard, interleaved), axis=1).tolist())


def value_maxima(arrays: ProfileArrays, usage: TileUsage) -> tuple[np.ndarray, np.ndarray]:
    """Each value's largest ``tile_shards`` and ``tile_bytes`` entry."""
    table = usage.figures.values
    owner = table.owner
    shard = np.zeros(arrays.n_values, dtype=np.int64)
    held = np.zeros(arrays.n_values, dtype=np.int64)
    np.maximum.at(shard, owner, table.columns[0])
    np.maximum.at(held, owner, table.columns[1])
    return shard, held


def coarse_usage(arrays: ProfileArrays, held: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """§1.5 ``coarse_usage``: scratch plus, per live value, the largest ``bytes`` among its root's
    aliases, in the root's class."""
    root_most = np.zeros(arrays.n_values, dtype=np.int64)
    np.maximum.at(root_most, arrays.root_rows, held)
    roots = arrays.root_rows[arrays.interval_row]
    cost, region = root_most[roots], arrays.region[roots]
    out = []
    for code, scratch in ((0, arrays.scratch_standard), (1, arrays.scratch_interleaved)):
        pick = region == code
        diff = np.zeros(arrays.n_steps + 1, dtype=np.int64)
        np.add.at(diff, arrays.interval_first[pick], cost[pick])
        np.add.at(diff, arrays.interval_last[pick] + 1, -cost[pick])
        out.append(np.cumsum(diff[:-1]) + scratch)
    return out[0], out[1]


def rewrite_values(
    values: list[dict[str, msgspec.Raw]], arrays: ProfileArrays, usage: TileUsage, edited: set[int]
) -> np.ndarray:
    """Every value's scalars from its per-tile figures, the edited values' arrays; returns bytes."""
    shard, held = value_maxima(arrays, usage)
    copies = arrays.copies
    for row, value in enumerate(values):
        value["shard_bytes"] = _raw(int(shard[row]))
        value["aligned_bytes"] = _raw(int(held[row] // max(int(copies[row]), 1)))
        value["bytes"] = _raw(int(held[row]))
        if row in edited:
            tiles_shard, tiles_bytes = usage.figures.value_runs(row).dense(arrays.device_tiles)
            value["tile_shards"] = _raw(tiles_shard.tolist())
            value["tile_bytes"] = _raw(tiles_bytes.tolist())
    return held


def rewrite_steps(
    steps: list[dict[str, msgspec.Raw]], arrays: ProfileArrays, usage: TileUsage, held: np.ndarray
) -> None:
    sp = usage.step_peaks
    coarse = coarse_usage(arrays, held)
    changed = usage.affected_steps
    affected = changed if changed is not None else np.zeros(arrays.n_steps, dtype=bool)
    respread = set(usage.changed_steps.tolist())
    for s, step in enumerate(steps):
        record = _FIELDS.decode(step["usage"])
        record["standard"], record["interleaved"] = (
            _raw(int(sp.usage_standard[s])),
            _raw(int(sp.usage_interleaved[s])),
        )
        step["usage"] = _raw(record)
        step["coarse_usage"] = _raw({"standard": int(coarse[0][s]), "interleaved": int(coarse[1][s])})
        if affected[s]:
            step["tile_usage"] = _pairs(*usage.at_step(s))
        if s in respread:
            start, stop, (standard, interleaved) = usage.figures.scratch.runs(s)
            step["tile_scratch"] = _pairs(
                *(on_device_runs(start, stop, c, arrays.device_tiles) for c in (standard, interleaved))
            )


def rewrite_header(top: dict[str, msgspec.Raw], arrays: ProfileArrays, usage: TileUsage, held: np.ndarray) -> None:
    sp = usage.step_peaks
    version = int(msgspec.json.decode(top["version"]))
    rows = arrays.exchange_rows if version == 2 else 0
    total = sp.usage_standard + sp.usage_interleaved
    empty = total.size == 0
    s_step = 0 if empty else int(np.argmax(sp.most["standard"]))
    i_step = 0 if empty else int(np.argmax(sp.most["interleaved"]))
    t_step = 0 if empty else int(np.argmax(total))
    standard_held = held[arrays.region == 0]
    largest = max(int(standard_held.max()) if standard_held.size else 0, int(arrays.scratch_standard.max(initial=0)))
    peak = _FIELDS.decode(top["peak"])
    interleaved = 0 if empty else int(sp.most["interleaved"][i_step])
    peak_total = (0 if empty else int(total[t_step])) + rows
    peak.update(
        standard=_raw((0 if empty else int(sp.most["standard"][s_step])) + rows),
        interleaved=_raw(interleaved),
        total=_raw(peak_total),
        maximum_standard_allocation=_raw(largest),
    )
    overflow = int(msgspec.json.decode(top["standard_contiguous_overflow_bytes"]))
    effective = peak_total - rows + arrays.support_reserve_bytes
    fits = interleaved <= arrays.interleaved_budget_bytes and effective <= arrays.budget_bytes and overflow == 0
    top.update(
        peak=_raw(peak),
        effective_peak_bytes=_raw(effective),
        fits_budget=_raw(fits),
        total_peak_step=_raw(t_step),
        standard_peak_step=_raw(s_step),
        interleaved_peak_step=_raw(i_step),
    )


def rewrite_per_tile(
    top: dict[str, msgspec.Raw], values: list, steps: list, arrays: ProfileArrays, usage: TileUsage, edited: set[int]
) -> None:
    """Everything per tile of a v2/v3 what-if (module doc), in place."""
    held = rewrite_values(values, arrays, usage, edited)
    rewrite_steps(steps, arrays, usage, held)
    rewrite_header(top, arrays, usage, held)
