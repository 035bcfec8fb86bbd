"""``planner.tile_figures.replace_runs`` (an edit's re-estimated values put in the per-tile figures)
against a plain-Python reference: per owner a list of (start, stop, *columns) runs, the replaced
owners' lists swapped for their new runs sorted by start, everything read back owner by owner.
Random tables, new runs given out of order, owners replaced with nothing and owners with none."""

from __future__ import annotations

import numpy as np
import pytest

from tilescope.planner.tile_figures import RunTable, replace_runs


def random_table(rng, owners: int, most: int) -> RunTable:
    parts = []
    for _ in range(owners):
        n = int(rng.integers(0, most + 1))
        start = np.sort(rng.choice(1472, n, replace=False))
        parts.append((start, start + rng.integers(1, 5, n), (rng.integers(0, 99, n), rng.integers(0, 99, n))))
    return RunTable.of(parts, 2)


def as_lists(table: RunTable) -> list[list[tuple[int, ...]]]:
    owners = table.bounds.size - 1
    return [
        [
            (int(table.start[i]), int(table.stop[i]), *(int(c[i]) for c in table.columns))
            for i in range(int(table.bounds[k]), int(table.bounds[k + 1]))
        ]
        for k in range(owners)
    ]


@pytest.mark.parametrize("seed", range(40))
def test_replaced_owners_get_their_new_runs_in_order_and_the_others_are_kept(seed):
    rng = np.random.default_rng(seed)
    table = random_table(rng, int(rng.integers(1, 30)), 6)
    owners = table.bounds.size - 1
    new = {}
    for owner in rng.choice(owners, int(rng.integers(0, owners + 1)), replace=False):
        n = int(rng.integers(0, 7))
        start = rng.choice(1472, n, replace=False)  # out of order on purpose
        new[int(owner)] = (start, start + 1, (rng.integers(0, 99, n), rng.integers(0, 99, n)))
    want = as_lists(table)
    for owner, (start, stop, (a, b)) in new.items():
        want[owner] = sorted(zip(start.tolist(), stop.tolist(), a.tolist(), b.tolist()))
    got = replace_runs(table, new)
    assert as_lists(got) == want
    assert got.bounds[-1] == got.start.size == got.stop.size == got.columns[0].size
