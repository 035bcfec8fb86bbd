"""Placement with proof: base addresses for a placement problem (``models.placement_problem``), or a
proof that none exists, or an honest "unknown".

``solve(problem, time_limit, progress)`` returns a ``SolveResult`` whose ``verdict`` is

- ``"placed"``: every request has a base address, re-checked by ``check.violations`` (which shares
  no code with the search) before it is reported;
- ``"infeasible"``: ``proof`` is one sentence naming the bound no placement meets (``bounds``; with
  ``deficit_bytes``), or saying that a complete search ended without a placement;
- ``"unknown"``: the time limit was reached; ``starts`` is the best placement found (-1 where a
  request found no room) and ``best_height`` its highest end. Never called infeasible.

The steps: the bounds (``bounds``); a few first-fit orders (``greedy``), which answer at once when
they place everything; then the exact search (``search``) with MiniMalloc's restarts — three
preorders in turn, node limits doubling from 2n — until it finds a placement, completes without
one, or the time is up. The clock is read between calls; a call's node limit is capped by the rate
measured so far so that it ends near the deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from tilescope.models.placement_problem import PlacementProblem

from .arrays import Arrays, build_arrays, lowest_height
from .bounds import infeasibility, peak_live_bytes
from .check import occupied, violations
from .greedy import greedy

__all__ = [
    "HEURISTICS",
    "SolveResult",
    "root_spans",
    "search_ready",
    "solve",
    "violations",
    "warm_up",
    "warm_up_in_background",
]

Progress = Callable[[str, float], None]
HEURISTICS = ("WAT", "TAW", "TWA")  # MiniMalloc's preorders: width, area, section total (largest first)
OPTIONS = 3  # search.steps' option bits (UNALLOCATED_FLOOR); kept for the measurements in the README
DECOMPOSE = True  # solve time partitions apart (when no element conflict joins two of them)
# Requests × sections above which the search is not run (its undo logs take 32 B per cell).
MAX_SEARCH_CELLS = 4_000_000


@dataclass(frozen=True)
class SolveResult:
    verdict: str  # "placed" | "infeasible" | "unknown"
    lower_bound: int  # no placement ends lower (the peak live bytes, packed into the ranges from below)
    height: int | None  # highest end address (placed, unknown); None when infeasible
    deficit_bytes: int | None
    proof: str
    seconds: float
    nodes: int
    starts: np.ndarray  # base address per request, -1 where none
    best_height: int | None = None  # unknown: the best placement's top (as ``height``)

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict,
            "lower_bound": self.lower_bound,
            "height": self.height,
            "deficit_bytes": self.deficit_bytes,
            "proof": self.proof,
            "seconds": round(self.seconds, 3),
            "nodes": self.nodes,
        }


def _preorder(arrays: Arrays, first: np.ndarray, last: np.ndarray, heuristic: str) -> np.ndarray:
    width = last - first + 1
    area = width * arrays.sizes_min
    total = np.zeros(arrays.n, dtype=np.int64)
    for i in range(arrays.n):
        s0, s1 = int(arrays.sec_first[i]), int(arrays.sec_last[i])
        total[i] = arrays.sec_total[s0:s1].max() if s1 > s0 else 0
    keys = {"W": -width, "A": -area, "T": -total}
    # np.lexsort sorts by the last key first: the heuristic's letters in reverse, index last.
    return np.lexsort((np.arange(arrays.n), *[keys[c] for c in reversed(heuristic)])).astype(np.int64)


def _height(problem: PlacementProblem, starts: np.ndarray) -> int:
    tops = [occupied(problem, r, int(s))[1] for r, s in zip(problem.requests, starts.tolist()) if s >= 0]
    return max(tops, default=0)


def _positive(problem: PlacementProblem) -> tuple[PlacementProblem, np.ndarray]:
    """The problem without zero-byte requests (they occupy nothing) and the kept indices."""
    keep = np.array([r.bytes > 0 for r in problem.requests], dtype=bool)
    if keep.all():
        return problem, np.arange(len(problem.requests))
    return replace(problem, requests=tuple(r for r, k in zip(problem.requests, keep) if k)), np.flatnonzero(keep)


_WARM: list[bool] = []


def warm_up() -> float:
    """Compile the search (or load numba's on-disk cache) on a two-request problem; seconds spent.
    ``solve`` calls it before its clock starts, so a first compilation (tens of seconds, once per
    installation) never eats a time limit."""
    if _WARM:
        return 0.0
    began = time.monotonic()
    from tilescope.models.placement_problem import STANDARD, PlacementRequest

    from .search import make_state, reset, search

    tiny = PlacementProblem(
        "warm-up",
        "minimalloc",
        tuple(PlacementRequest(i, ((i, 0),), STANDARD, 0, 1, 4, 1) for i in range(2)),
        ((0, 8),),
        plain=True,
        host_scratch_range=None,
        capacity=8,
    )
    arrays = build_arrays(tiny)
    static, state = make_state(arrays)
    for decompose in (True, False):
        reset(arrays, state)
        search(static, state, np.arange(2, dtype=np.int64), 100, decompose)
    _WARM.append(True)
    return time.monotonic() - began


def search_ready() -> bool:
    """Whether the search is compiled (or loaded) in this process: a caller that must not wait
    for a first compilation (the app) can check this and ``warm_up_in_background()``."""
    return bool(_WARM)


_WARMING: list[bool] = []


def warm_up_in_background() -> None:
    """Start ``warm_up`` on a daemon thread (once per process)."""
    if _WARM or _WARMING:
        return
    import threading

    _WARMING.append(True)
    threading.Thread(target=warm_up, name="tilescope-solver-warm-up", daemon=True).start()


def solve(problem: PlacementProblem, time_limit: float = 60.0, progress: Progress | None = None) -> SolveResult:
    """Place ``problem`` (module doc)."""
    began = time.monotonic()
    n_all = len(problem.requests)
    arrays_all = build_arrays(problem)
    peak = peak_live_bytes(problem, arrays_all)
    lower = lowest_height(problem, peak) if n_all else 0
    bound = infeasibility(problem, arrays_all)
    starts_all = np.full(n_all, -1, dtype=np.int64)

    def result(verdict: str, proof: str, nodes: int, deficit: int | None = None) -> SolveResult:
        height = None if verdict == "infeasible" else _height(problem, starts_all)
        return SolveResult(
            verdict,
            lower,
            height,
            deficit,
            proof,
            time.monotonic() - began,
            nodes,
            starts_all.copy(),
            height if verdict == "unknown" else None,
        )

    if bound is not None:
        return result("infeasible", bound.proof, 0, bound.deficit_bytes)
    # Zero-byte requests occupy nothing: each goes to its lowest legal start.
    for i in range(n_all):
        if problem.requests[i].bytes == 0:
            starts_all[i] = arrays_all.dom_lo[arrays_all.dom_ptr[i]]
    sub, kept = _positive(problem)
    arrays = build_arrays(sub) if len(kept) != n_all else arrays_all
    first = np.array([r.first for r in sub.requests], dtype=np.int64)
    last = np.array([r.last for r in sub.requests], dtype=np.int64)
    starts, _where = greedy(arrays, first, last)
    starts_all[kept] = starts
    if (starts >= 0).all() and not violations(problem, starts_all):
        return result("placed", "a first-fit order placed every request (re-checked)", 0)
    best = starts_all.copy()
    nodes_total = 0
    if arrays.n * max(arrays.sec_total.size, 1) > MAX_SEARCH_CELLS:
        starts_all[:] = _packed(problem) if problem.plain else best
        return result(
            "unknown",
            f"too large for the exact search ({arrays.n:,} requests); a first-fit order placed "
            f"{int((starts >= 0).sum()):,} of them",
            0,
        )
    began += warm_up()  # a first compilation does not count against the time limit
    from .search import ABORTED, COMPLETE, FOUND, OUT, make_state, reset, search
    from .steps import C_HEURISTIC, C_OPTIONS, COUNTERS

    orders = [_preorder(arrays, first, last, h) for h in HEURISTICS]
    static, state = make_state(arrays)
    state[COUNTERS][C_OPTIONS] = OPTIONS
    decompose = DECOMPOSE
    limit = 2 * max(arrays.n, 1)
    rate = None  # nodes per second, once measured
    while True:
        for code, (heuristic, order) in enumerate(zip(HEURISTICS, orders)):
            state[COUNTERS][C_HEURISTIC] = code
            left = time_limit - (time.monotonic() - began)
            if left <= 0:
                # The best placement found: today's packer places everything of a plain problem
                # (above the capacity when it must), where first fit within it leaves some out.
                starts_all[:] = _packed(problem) if problem.plain else best
                return result(
                    "unknown",
                    f"the time limit ({time_limit:g} s) was reached after {nodes_total:,} search "
                    "nodes without a placement or a proof",
                    nodes_total,
                )
            call_limit = limit if rate is None else min(limit, max(1000, int(0.8 * rate * left)))
            t0 = time.monotonic()
            reset(arrays, state)
            status, nodes = search(static, state, order, call_limit, decompose)
            out = state[OUT]
            spent = time.monotonic() - t0
            nodes_total += int(nodes)
            if nodes >= 10_000 and spent > 0.05:
                rate = nodes / spent
            if progress is not None:
                progress(
                    f"search ({heuristic}, {nodes_total:,} nodes)", min(1.0, (time.monotonic() - began) / time_limit)
                )
            if status == FOUND:
                starts_all[kept] = out
                bad = violations(problem, starts_all)
                if bad:  # a bug in the search: never reported as placed
                    raise AssertionError(f"the search's placement fails the check: {bad[0]}")
                return result("placed", f"found by the exact search ({heuristic} order, re-checked)", nodes_total)
            if status == COMPLETE:
                starts_all[:] = -1
                return result(
                    "infeasible",
                    "a complete search of the canonical placements (every request at its lowest "
                    "legal start, in non-decreasing address order) ended without a placement",
                    nodes_total,
                )
            assert status == ABORTED
        limit *= 2


def _packed(problem: PlacementProblem) -> np.ndarray:
    from tilescope.planner.packing import pack

    reqs = problem.requests
    first = np.array([r.first for r in reqs], dtype=np.int64)
    last = np.array([r.last for r in reqs], dtype=np.int64)
    events = np.unique(np.concatenate((first, last)))  # dense event numbers: the same overlaps
    packing = pack(
        np.array([r.bytes for r in reqs], dtype=np.int64),
        np.array([r.alignment for r in reqs], dtype=np.int64),
        np.searchsorted(events, first),
        np.searchsorted(events, last),
        max_evaluations=64 if len(reqs) <= 1000 else 8,  # first-fit runs: each is O(n · neighbours)
    )
    return packing.offsets.astype(np.int64)


def root_spans(problem: PlacementProblem, result: SolveResult) -> dict[str, list[int]]:
    """Every root id of every placed request (as a string) → its whole group's ``[start, end)``,
    as the dump's ``assigned_root_spans``."""
    spans: dict[str, list[int]] = {}
    for request, start in zip(problem.requests, result.starts.tolist()):
        if start < 0:
            continue
        low, high = occupied(problem, request, int(start))
        for root, _offset in request.roots:
            spans[str(root)] = [low, high]
    return spans
