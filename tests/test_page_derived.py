"""The pure parts of the page: peak-label lanes, the near-peak runs, thinned marks, and the
search state's ranking (its expected figures recomputed from the raw JSON, docs/formats.md §3)."""

from __future__ import annotations

import json
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tilescope.derived.peak_labels import PeakMark, place_labels, y_end_for
from tilescope.derived.series import near_peak_runs, thinned


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30_000), st.integers(0, 10**7)), min_size=1, max_size=6), st.integers(1, 30_001)
)
def test_peak_labels_never_share_a_lane_and_sit_above_every_mark(points, n_steps):
    marks = [PeakMark(f"m{k}", step, y, f"label {k}") for k, (step, y) in enumerate(points)]
    top = max(y for _, y in points)
    y_end = y_end_for(top, len(marks))
    placed = place_labels(marks, n_steps, y_end)
    assert sorted(p.lane for p in placed) == list(range(len(marks)))
    ys = [p.y for p in placed]
    assert len(set(ys)) == len(ys)
    assert all(top < y < y_end for y in ys)
    gap = min((b - a for a, b in zip(sorted(ys), sorted(ys)[1:])), default=y_end)
    assert gap >= 0.06 * y_end  # a lane is one line of text high at least


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 100), min_size=1, max_size=300), st.integers(0, 5))
def test_near_peak_runs_match_a_brute_force_scan(values, gap):
    total = np.array(values)
    first, last = near_peak_runs(total, 0.95, merge_gap=gap)
    near = [i for i, v in enumerate(values) if v >= 0.95 * max(values)]
    runs = []
    for i in near:
        if runs and i - runs[-1][1] <= max(gap, 1):
            runs[-1][1] = i
        else:
            runs.append([i, i])
    assert [list(r) for r in zip(first.tolist(), last.tolist())] == runs


def test_thinned_marks_are_all_or_none():
    positions = np.arange(0, 1000, 10)
    assert thinned(positions, 0, 100, 20).tolist() == list(range(0, 100, 10))
    assert thinned(positions, 0, 1000, 20).size == 0  # 100 marks in view: too dense, left out


def _block(m, n, k, r, c, i, element):
    ceil = lambda a, b: -(-a // b)  # noqa: E731
    return element * (ceil(m, r) * ceil(k, i) + ceil(k, i) * ceil(n, c) + ceil(m, r) * ceil(n, c))


def test_alternatives_are_ranked_by_their_dispatch_blocks_scratch():
    """docs/formats.md §3: query [4, 17, 72], key/value [4, 19, 72], F16; the dispatch pads the widths
    and the key rows (to key_block_rows). Recomputed from the raw JSON, independently of the loader."""
    from tilescope.derived.search_rows import BASIS_SCRATCH, SearchData
    from tilescope.loaders.search_state import load_search_state
    from tilescope.samples import sample_path

    path = sample_path("flash_attention.search_state.json")
    raw = json.loads(path.read_text())
    costs = []
    for alternative in raw["alternatives"]["0"]:
        d = alternative["dispatch"]["Attention"]
        keys = math.ceil(19 / d["key_block_rows"]) * d["key_block_rows"]
        qk, pv = d["query_key"], d["probability_value"]
        costs.append(
            _block(17, keys, d["padded_query_dimension"], qk["rows"], qk["columns"], qk["inner"], 2)
            + _block(17, d["padded_value_dimension"], keys, pv["rows"], pv["columns"], pv["inner"], 2)
        )
    state = load_search_state(path)
    alternatives = SearchData.of(state).alternatives(0)
    assert alternatives.basis == BASIS_SCRATCH
    assert alternatives.frame["cost"].tolist() == costs
    chosen = state.plans[0].chosen
    assert alternatives.chosen_rank == 1 + sum(c < costs[chosen] for c in costs)
    assert len(set(costs)) > 10  # the estimate tells alternatives apart
