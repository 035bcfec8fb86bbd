"""The placement solver's rules on tiny MiniMalloc-style problems (plain: ranges, alignment,
lifetimes), against an occupancy grid and an exhaustive search written here: every byte of every
step owned at most once, every request aligned and inside one range. ``solver.check.violations``
agrees with the grid on random addresses; ``solver.bounds.infeasibility`` proves only problems the
exhaustive search cannot place; ``solve`` never calls a placeable problem infeasible, its placements
pass the grid and its lower bound is at most the best height there is."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from tilescope.models.placement_problem import STANDARD, PlacementProblem, PlacementRequest
from tilescope.planner.solver import solve
from tilescope.planner.solver.arrays import build_arrays
from tilescope.planner.solver.bounds import infeasibility
from tilescope.planner.solver.check import violations


def problem(rng: random.Random) -> PlacementProblem:
    n = rng.randint(1, 4)
    requests = []
    for i in range(n):
        first = rng.randint(0, 3)
        requests.append(
            PlacementRequest(
                i, ((i, 0),), STANDARD, first, first + rng.randint(0, 2), rng.randint(1, 4), rng.choice((1, 1, 2))
            )
        )
    ranges = rng.choice([((0, 5),), ((0, 8),), ((0, 3), (4, 9)), ((1, 4), (6, 10)), ((0, 2),)])
    return PlacementProblem("tiny", "minimalloc", tuple(requests), ranges, plain=True, host_scratch_range=None)


def fits(p: PlacementProblem, starts) -> bool:
    """The grid: each request aligned, inside one range, and no byte of a step owned twice."""
    top = max(end for _, end in p.ranges)
    steps = max(r.last for r in p.requests) + 1
    grid = np.zeros((steps, top), dtype=np.int64)
    for r, s in zip(p.requests, starts):
        if s < 0 or s % r.alignment or not any(a <= s and s + r.bytes <= b for a, b in p.ranges):
            return False
        grid[r.first : r.last + 1, s : s + r.bytes] += 1
    return bool((grid <= 1).all())


def placements(p: PlacementProblem):
    top = max(end for _, end in p.ranges)
    options = [[s for s in range(0, top) if s % r.alignment == 0] for r in p.requests]
    for starts in itertools.product(*options):
        if fits(p, starts):
            yield starts


def best_height(p: PlacementProblem) -> int | None:
    heights = [max(s + r.bytes for r, s in zip(p.requests, starts)) for starts in placements(p)]
    return min(heights) if heights else None


@pytest.mark.parametrize("seed", range(4))
def test_violations_agree_with_the_grid(seed):
    rng = random.Random(seed)
    agreed = {True: 0, False: 0}
    for _ in range(300):
        p = problem(rng)
        top = max(end for _, end in p.ranges)
        starts = [rng.randint(-1, top) for _ in p.requests]
        ok = fits(p, starts)
        assert (violations(p, starts) == []) == ok, (p, starts, violations(p, starts))
        agreed[ok] += 1
    assert agreed[True] >= 20 and agreed[False] >= 20  # both answers were asked for


def test_bounds_prove_only_what_cannot_be_placed():
    rng = random.Random(7)
    proved = 0
    for _ in range(250):
        p = problem(rng)
        bound = infeasibility(p, build_arrays(p))
        if bound is not None:
            proved += 1
            assert next(placements(p), None) is None, (p, bound.proof)
    assert proved >= 10


def test_solve_is_sound_on_tiny_problems():
    rng = random.Random(11)
    placed = 0
    for _ in range(120):
        p = problem(rng)
        best = best_height(p)
        result = solve(p, time_limit=10.0)
        assert result.lower_bound <= (best if best is not None else result.lower_bound)
        if best is None:
            assert result.verdict != "placed"
            continue
        assert result.verdict != "infeasible", (p, result.proof)
        if result.verdict == "placed":
            placed += 1
            assert fits(p, result.starts.tolist()) and violations(p, result.starts) == []
            assert result.height == max(s + r.bytes for r, s in zip(p.requests, result.starts.tolist())) >= best
    assert placed >= 40
