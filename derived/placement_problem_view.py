"""The address × event picture of one tile's placement problem (``models.placement_problem``): what
the dump view and its PNG draw, computed once, pure Python and numpy (no Panel, no Bokeh).

- ``ProblemGeometry``: what does not depend on a placement: the allowed ranges, the host scratch
  range, the region boundary, the memory-element grid (``region0_element_bytes`` below the
  boundary, ``region1_element_bytes`` at or above it), the event axis (event 4294967295, "after the
  program", drawn one past the last finite event), and each request's conflict partners (request
  indices: a conflict names roots, whose owning requests are the partners; the relation is made
  symmetric, roots no request owns are ignored, §4).
- ``Picture``: one placement (spans by root, as ``assigned_root_spans`` and
  ``planner.solver.root_spans`` give them) as one rectangle per placed request: events on x
  (``first − ½`` to ``last + ½``), addresses on y (the group's ``[start, end)``).
- ``solution_rows`` / ``solution_csv`` / ``solution_json``: a placement as the exports write it.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

import numpy as np

from tilescope.models.placement_problem import INTERLEAVED, PROGRAM_END, PlacementProblem

Spans = dict  # root id → (start, end) of its whole group


@dataclass(frozen=True, eq=False)
class ProblemGeometry:
    """What the picture of ``problem`` shows whatever the placement (module doc)."""

    problem: PlacementProblem
    end_event: int  # x of PROGRAM_END
    partners: tuple[tuple[int, ...], ...]  # per request, the indices of its conflict partners
    low: int  # lowest allowed address
    high: int  # highest allowed address

    @classmethod
    def of(cls, problem: PlacementProblem) -> ProblemGeometry:
        owner = {root: r.index for r in problem.requests for root, _ in r.roots}
        partners: list[set[int]] = [set() for _ in problem.requests]
        for k, r in enumerate(problem.requests):
            for root in r.conflicts:
                other = owner.get(root)
                if other is not None and other != r.index:
                    partners[k].add(_position(problem, other))
                    partners[_position(problem, other)].add(k)
        finite = [e for r in problem.requests for e in (r.first, r.last) if e != PROGRAM_END]
        low = min((s for s, _ in problem.ranges), default=0)
        high = max((e for _, e in problem.ranges), default=1)
        return cls(problem, max(finite, default=0) + 1, tuple(tuple(sorted(p)) for p in partners), low, high)

    def x(self, event: int) -> int:
        return self.end_event if event == PROGRAM_END else event

    def grid(self, low: int | None = None, high: int | None = None) -> list[int]:
        """The memory-element boundaries in [low, high] (default: the allowed addresses)."""
        p = self.problem
        low, high = (self.low if low is None else low, self.high if high is None else high)
        if p.plain:
            return []
        lines = []
        b = p.region_boundary
        e0, e1 = p.region0_element_bytes, p.region1_element_bytes
        at = -(-low // e0) * e0
        while at < min(high, b) + 1 and at <= b:
            lines.append(at)
            at += e0
        at = max(b, -(-low // e1) * e1)
        while at <= high:
            if at not in lines:
                lines.append(at)
            at += e1
        return lines

    @property
    def conflict_counts(self) -> list[int]:
        return [len(p) for p in self.partners]


def _position(problem: PlacementProblem, index: int) -> int:
    """The position in ``requests`` of the request with ``index`` (they are equal as the loaders build them)."""
    if index < len(problem.requests) and problem.requests[index].index == index:
        return index
    return next(k for k, r in enumerate(problem.requests) if r.index == index)


@dataclass(frozen=True, eq=False)
class Picture:
    """One rectangle per placed request (positions into ``problem.requests``)."""

    request: np.ndarray  # int64 position of the request
    left: np.ndarray  # float64 events − ½
    right: np.ndarray
    bottom: np.ndarray  # float64 addresses
    top: np.ndarray
    missing: tuple[int, ...]  # requests this placement leaves unplaced
    height: int  # highest end (0: nothing placed)

    @classmethod
    def of(cls, geometry: ProblemGeometry, spans: Spans | None) -> Picture:
        spans = spans or {}
        placed, missing, rows = [], [], []
        for k, r in enumerate(geometry.problem.requests):
            span = next((spans[root] for root, _ in r.roots if root in spans), None)
            if span is None:
                missing.append(k)
                continue
            placed.append(k)
            rows.append((geometry.x(r.first) - 0.5, geometry.x(r.last) + 0.5, float(span[0]), float(span[1])))
        arr = np.array(rows, dtype=np.float64).reshape(-1, 4)
        return cls(
            np.array(placed, dtype=np.int64),
            arr[:, 0],
            arr[:, 1],
            arr[:, 2],
            arr[:, 3],
            tuple(missing),
            int(arr[:, 3].max()) if arr.size else 0,
        )


def group_span(problem: PlacementProblem, k: int, spans: Spans) -> tuple[int, int] | None:
    r = problem.requests[k]
    return next((tuple(spans[root]) for root, _ in r.roots if root in spans), None)


def solution_rows(problem: PlacementProblem, spans: Spans) -> list[dict]:
    """One row per request: its index, roots, class, lifetime, bytes, alignment and placed [start, end)
    (None when unplaced)."""
    out = []
    for k, r in enumerate(problem.requests):
        span = group_span(problem, k, spans)
        out.append(
            {
                "request": r.index,
                "roots": [root for root, _ in r.roots],
                "class": r.request_class,
                "first": r.first,
                "last": r.last,
                "bytes": r.bytes,
                "alignment": r.alignment,
                "start": None if span is None else int(span[0]),
                "end": None if span is None else int(span[1]),
            }
        )
    return out


CSV_FIELDS = ("request", "roots", "class", "first", "last", "bytes", "alignment", "start", "end")


def solution_csv(problem: PlacementProblem, spans: Spans) -> str:
    """The placement as CSV (``CSV_FIELDS``; roots space-separated; an unplaced request's start and end empty)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for row in solution_rows(problem, spans):
        writer.writerow(
            [
                " ".join(map(str, row["roots"])) if f == "roots" else ("" if row[f] is None else row[f])
                for f in CSV_FIELDS
            ]
        )
    return buffer.getvalue()


def solution_json(problem: PlacementProblem, spans: Spans, verdict: str, who: str) -> str:
    """The placement as JSON: the problem's name and tile, whose placement, the verdict, the rows."""
    return json.dumps(
        {
            "problem": problem.name,
            "tile": problem.tile,
            "placement": who,
            "verdict": verdict,
            "requests": solution_rows(problem, spans),
        },
        indent=1,
    )


def is_interleaved(problem: PlacementProblem, k: int) -> bool:
    return problem.requests[k].request_class == INTERLEAVED
