"""Independent checks of a placement, written without planner.placement or planner.packing.

- ``expected_allocations(raw)``: the allocations the rules of docs/formats.md §2 and the issue give for a
  profile read with ``json.load``: per value, each maximal run of consecutive steps whose live list names
  it; per step, its nonzero scratch in each region; the exchange rows over the whole program.
- ``sweep_overlaps``: for every step, the allocations live there sorted by offset, each ending at or
  before the next one's start (numpy over every (step, allocation) pair: no conflict lists).
- ``exact_top``: the lowest possible top of a small group, by first fit over every order, written
  here in plain Python. Exact because any feasible placement is matched or beaten by first fit in the
  order of its offsets (each allocation, taken by increasing offset, still fits where that placement
  has it: those placed before it only moved down and ended below it). ``grid_top`` checks it against
  a brute force over every offset on tiny instances.
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

REGION_GRANULE = {"standard": 16384, "interleaved": 32768}
REGION_OF_CLASS = {"Ipu21Standard": "standard", "Ipu21Interleaved": "interleaved"}


def runs(steps: list[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive step indices: [(first, last), ...]."""
    out: list[tuple[int, int]] = []
    for s in sorted(set(steps)):
        if out and s == out[-1][1] + 1:
            out[-1] = (out[-1][0], s)
        else:
            out.append((s, s))
    return out


def granule_of(value: dict, region: str) -> int:
    """docs/formats.md §2: 1 when aligned == shard, else the region's granule."""
    return 1 if value["aligned_bytes"] == value["shard_bytes"] else REGION_GRANULE[region]


def expected_allocations(raw: dict, bytes_of: dict[int, int] | None = None) -> Counter:
    """Multiset of (kind, id, region, bytes, first, last) from the raw JSON (``bytes_of`` overrides
    a value's bytes, e.g. after an edit)."""
    values = {v["id"]: v for v in raw["timeline"]["values"]}
    steps = raw["timeline"]["steps"]
    live: dict[int, list[int]] = {}
    for step in steps:
        for vid in step["live"]:
            live.setdefault(vid, []).append(step["index"])
    out: Counter = Counter()
    for vid, at in live.items():
        v = values[vid]
        size = (bytes_of or {}).get(vid, v["bytes"])
        for first, last in runs(at):
            out[("value", vid, REGION_OF_CLASS[v["class"]], size, first, last)] += 1
    for step in steps:
        for region in ("standard", "interleaved"):
            if step["scratch"][region]:
                out[("scratch", None, region, step["scratch"][region], step["index"], step["index"])] += 1
    if raw["peak"]["exchange_rows"]:
        out[("exchange_rows", None, "standard", raw["peak"]["exchange_rows"], 0, len(steps) - 1)] += 1
    return out


def placed_allocations(placement) -> Counter:
    kinds, regions = placement.kind_names(), placement.region_names()
    return Counter(
        (k, None if i < 0 else i, r, b, f, l)
        for k, i, r, b, f, l in zip(
            kinds.tolist(),
            placement.value_id.tolist(),
            regions.tolist(),
            placement.bytes.tolist(),
            placement.first_step.tolist(),
            placement.last_step.tolist(),
        )
    )


def sweep_overlaps(
    region: np.ndarray, offset: np.ndarray, size: np.ndarray, first: np.ndarray, last: np.ndarray
) -> int:
    """How many times, in some region at some step, an allocation ends above the start of the next
    one by offset."""
    keep = size > 0
    region, offset, size, first, last = region[keep], offset[keep], size[keep], first[keep], last[keep]
    lengths = last - first + 1
    owner = np.repeat(np.arange(offset.size), lengths)
    step = np.repeat(first, lengths) + np.arange(owner.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    order = np.lexsort((offset[owner], step, region[owner]))
    s, o = step[order], owner[order]
    same = (s[1:] == s[:-1]) & (region[o[1:]] == region[o[:-1]])
    return int(np.sum(same & ((offset[o[:-1]] + size[o[:-1]]) > offset[o[1:]])))


def usage_peak(size, first, last) -> int:
    top = 0
    for s in range(int(min(first)), int(max(last)) + 1):
        top = max(top, sum(int(z) for z, f, l in zip(size, first, last) if f <= s <= l))
    return top


def _first_fit_top(order, items) -> int:
    placed: list[tuple[int, int]] = []  # (item, offset)
    top = 0
    for i in order:
        size, g, f, l = items[i]
        near = [(o, o + items[j][0]) for j, o in placed if items[j][2] <= l and f <= items[j][3] and items[j][0] > 0]
        start = 0
        while True:
            start = -(-start // g) * g
            clash = [end for low, end in near if low < start + size and start < end] if size else []
            if not clash:
                break
            start = max(clash)
        placed.append((i, start))
        top = max(top, start + size)
    return top


def exact_top(items: list[tuple[int, int, int, int]]) -> int:
    """Lowest top over all placements of ``items`` = [(bytes, granule, first, last)] (module doc)."""
    bound = usage_peak([i[0] for i in items], [i[2] for i in items], [i[3] for i in items])
    best = None
    for order in itertools.permutations(range(len(items))):
        top = _first_fit_top(order, items)
        if best is None or top < best:
            best = top
            if best == bound:
                break
    return best


def grid_top(items: list[tuple[int, int, int, int]]) -> int:
    """Brute force over every aligned offset up to Σ bytes (tiny instances only)."""
    limit = sum(i[0] + i[1] for i in items)
    choices = [range(0, limit, g) for _, g, _, _ in items]
    best = None
    for offsets in itertools.product(*choices):
        ok = True
        for a, b in itertools.combinations(range(len(items)), 2):
            sa, _, fa, la = items[a]
            sb, _, fb, lb = items[b]
            if fa <= lb and fb <= la and offsets[a] < offsets[b] + sb and offsets[b] < offsets[a] + sa:
                ok = False
                break
        if ok:
            top = max(o + i[0] for o, i in zip(offsets, items))
            best = top if best is None else min(best, top)
    return best
