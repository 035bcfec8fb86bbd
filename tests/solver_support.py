"""Independent checks for ``planner.solver``, written from the rules of compiler-formats.md §4 and
the issue, sharing no code with the solver (not its domains, bounds or its own checker).

- ``rule_violations(problem, starts)``: every broken rule as a (rule, detail) pair. Element sets are
  built as Python sets of (region, element index), byte overlaps by pairwise comparison.
- ``brute_force(problem)``: whether a placement exists, by trying every aligned start of every
  request in turn (a plain backtracking over all addresses of tiny problems), with
  ``rule_violations`` as the only judge.
- ``cut_rectangle(width, span, pieces, seed)``: a width × span rectangle (addresses × time) cut
  into random pieces by guillotine cuts: a MiniMalloc problem with zero slack whose solution is the
  cut itself.
"""

from __future__ import annotations

import random
from pathlib import Path

from tilescope.models.placement_problem import STANDARD, PlacementProblem, PlacementRequest


def _bench() -> Path:
    """``../shared/bench`` beside the repository (a worktree's: the first ``shared/bench`` above it)."""
    repo = Path(__file__).resolve().parents[1]
    for folder in repo.parents:
        if (folder / "shared" / "bench").is_dir():
            return folder / "shared" / "bench"
    return repo.parent / "shared" / "bench"


BENCH = _bench()
END = 4294967295


def _size(problem: PlacementProblem, request: PlacementRequest, start: int) -> int:
    if not problem.plain and request.region1_stride is not None and start >= problem.region_boundary:
        return request.region1_stride * len(request.roots)
    return request.bytes


def _element_set_fast(problem: PlacementProblem, start: int, end: int) -> set[tuple[int, int]]:
    # Per region, the elements from the one holding the first byte to the one holding the last.
    out = set()
    b = problem.region_boundary
    if start < min(end, b):
        e = problem.region0_element_bytes
        out |= {(0, k) for k in range(start // e, (min(end, b) - 1) // e + 1)}
    if max(start, b) < end:
        e = problem.region1_element_bytes
        out |= {(1, k) for k in range(max(start, b) // e, (end - 1) // e + 1)}
    return out


def rule_violations(problem: PlacementProblem, starts) -> list[tuple[str, str]]:
    bad: list[tuple[str, str]] = []
    reqs = problem.requests
    spans = []
    for i, (r, s) in enumerate(zip(reqs, starts)):
        s = int(s)
        size = _size(problem, r, s)
        spans.append((s, s + size))
        if s < 0:
            bad.append(("unplaced", f"{i}"))
            continue
        if s % r.alignment:
            bad.append(("alignment", f"{i} at {s}"))
        if size and not any(a <= s and s + size <= z for a, z in problem.ranges):
            bad.append(("range", f"{i} [{s}, {s + size})"))
        if problem.plain:
            continue
        b = problem.region_boundary
        if s < b < s + size:
            bad.append(("boundary", f"{i}"))
        if r.request_class != STANDARD and s < b + problem.interleaved_offset:
            bad.append(("interleaved", f"{i} at {s}"))
        if r.region1_stride is not None:
            if s >= b and s % problem.region1_element_bytes:
                bad.append(("stride", f"{i} at {s} in region 1"))
            if s < b and s % problem.region0_element_bytes:
                bad.append(("stride", f"{i} at {s} in region 0"))
        host = problem.host_scratch_range
        if host and (r.first == 0 or r.last == END) and size and s < host[1] and host[0] < s + size:
            bad.append(("host", f"{i}"))
    owner = {root: i for i, r in enumerate(reqs) for root, _ in r.roots}
    for i in range(len(reqs)):
        for j in range(i + 1, len(reqs)):
            (a0, a1), (b0, b1) = spans[i], spans[j]
            if min(starts[i], starts[j]) < 0:
                continue
            live_together = reqs[i].first <= reqs[j].last and reqs[j].first <= reqs[i].last
            if live_together and a0 < b1 and b0 < a1:
                bad.append(("overlap", f"{i} and {j}"))
    if not problem.plain:
        for i, r in enumerate(reqs):
            for root in r.conflicts:
                j = owner.get(root)
                if j is None or j == i or min(starts[i], starts[j]) < 0:
                    continue
                if _element_set_fast(problem, *spans[i]) & _element_set_fast(problem, *spans[j]):
                    bad.append(("element", f"{i} and {j}"))
    return bad


def brute_force(problem: PlacementProblem) -> bool:
    """Whether any placement passes ``rule_violations`` (tiny problems only)."""
    top = max(e for _, e in problem.ranges)
    reqs = problem.requests
    choices = [list(range(0, top, r.alignment)) for r in reqs]
    starts = [-1] * len(reqs)

    def extend(k: int) -> bool:
        if k == len(reqs):
            return True
        for s in choices[k]:
            starts[k] = s
            sub = PlacementProblem(
                problem.name,
                problem.kind,
                reqs[: k + 1],
                problem.ranges,
                problem.plain,
                region_boundary=problem.region_boundary,
                region0_element_bytes=problem.region0_element_bytes,
                region1_element_bytes=problem.region1_element_bytes,
                interleaved_offset=problem.interleaved_offset,
                host_scratch_range=problem.host_scratch_range,
            )
            if not rule_violations(sub, starts[: k + 1]) and extend(k + 1):
                return True
        starts[k] = -1
        return False

    return extend(0)


def cut_rectangle(width: int, span: int, pieces: int, seed: int, granule: int = 1) -> list[tuple[int, int, int, int]]:
    """(lower, upper, size, offset) pieces of [0, width) × [0, span), half-open lifetimes."""
    rng = random.Random(seed)
    boxes = [(0, width, 0, span)]  # address lo, hi, time lo, hi
    while len(boxes) < pieces:
        cuttable = [k for k, (a, b, t, u) in enumerate(boxes) if b - a >= 2 * granule or u - t >= 2]
        if not cuttable:
            break
        k = rng.choice(cuttable)
        a, b, t, u = boxes.pop(k)
        if (rng.random() < 0.5 and b - a >= 2 * granule) or u - t < 2:
            cut = a + granule * rng.randint(1, (b - a) // granule - 1)
            boxes += [(a, cut, t, u), (cut, b, t, u)]
        else:
            cut = rng.randint(t + 1, u - 1)
            boxes += [(a, b, t, cut), (a, b, cut, u)]
    return [(t, u, b - a, a) for a, b, t, u in boxes]


def csv_of(pieces: list[tuple[int, int, int, int]]) -> bytes:
    rows = ["id,lower,upper,size"] + [f"b{i},{t},{u},{z}" for i, (t, u, z, _o) in enumerate(pieces)]
    return ("\n".join(rows) + "\n").encode()
