"""The placement solver (``planner.solver``) against today's packer on the public placement sets.

    .venv/bin/python -m benchmarks.bench_solve [--time-limit 120] [--evaluations 128] [--only A,C,...]

For every instance of ``../shared/bench/minimalloc`` (capacity 1,048,576 B) and
``../shared/bench/ipu-stack-placement``, in one process (the search is compiled, or loaded from
numba's cache, first, outside every timing), prints:

- the solver's verdict, height ÷ lower bound, wall seconds and search nodes; the proof for
  infeasible answers (and the deficit);
- today's packer (``planner.packing.pack``: first fit in the granule/bytes/lifetime order, then hill
  climbing, ``--evaluations`` first-fit runs, as ``place`` uses it with 128) on the same requests:
  its height ÷ the same lower bound and seconds. The packer knows one range from 0 and nothing of
  ranges, regions, conflicts or the host range, so for a dump its height is the packed top of the
  bare sizes (a figure beside the bound, not a placement of the dump);
- targets: every MiniMalloc instance placed at capacity within 120 s; ``fragmented`` and
  ``bank-branching`` placed; ``overcapacity`` infeasible with a deficit of 16,328 B.

The closing Markdown table is the README's.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from tilescope.loaders.minimalloc_csv import load_minimalloc_csv
from tilescope.loaders.placement_dump import load_placement_dump
from tilescope.models.placement_problem import PlacementProblem
from tilescope.planner.packing import pack
from tilescope.planner.solver import solve, warm_up

CAPACITY = 1_048_576
TARGETS = {"fragmented": "placed", "bank-branching": "placed", "overcapacity": "infeasible"}


def bench_folder() -> Path:
    """``../shared/bench`` beside the repository (for a worktree, the first one above it)."""
    repo = Path(__file__).resolve().parents[1]
    for folder in repo.parents:
        if (folder / "shared" / "bench").is_dir():
            return folder / "shared" / "bench"
    return repo.parent / "shared" / "bench"


def instances(only: set[str] | None) -> list[tuple[str, PlacementProblem]]:
    root = bench_folder()
    out = []
    for path in sorted((root / "minimalloc").glob("*.csv")):
        if only is None or path.stem in only:
            out.append((path.stem, load_minimalloc_csv(path, capacity=CAPACITY)))
    for path in sorted((root / "ipu-stack-placement").glob("*.json")):
        if only is None or path.stem in only:
            out.append((path.stem, load_placement_dump(path)))
    return out


def _events(problem: PlacementProblem) -> tuple[np.ndarray, np.ndarray]:
    """Lifetimes renumbered densely (same overlaps): the packer's bound sweeps every event, and a
    dump's ``last`` can be 4294967295."""
    first = np.array([r.first for r in problem.requests], dtype=np.int64)
    last = np.array([r.last for r in problem.requests], dtype=np.int64)
    events = np.unique(np.concatenate((first, last)))
    return np.searchsorted(events, first), np.searchsorted(events, last)


def packer(problem: PlacementProblem, evaluations: int) -> tuple[int, float]:
    reqs = problem.requests
    first, last = _events(problem)
    began = time.perf_counter()
    result = pack(
        np.array([r.bytes for r in reqs], dtype=np.int64),
        np.array([r.alignment for r in reqs], dtype=np.int64),
        first,
        last,
        max_evaluations=evaluations,
    )
    return result.top, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--evaluations", type=int, default=128, help="the packer's first-fit runs")
    parser.add_argument("--only", default=None, help="comma-separated instance names (A, fragmented, ...)")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    print(f"compiling / loading the search: {warm_up():.1f} s (not counted below)")
    rows = []
    for name, problem in instances(only):
        result = solve(problem, time_limit=args.time_limit)
        top, packer_s = packer(problem, args.evaluations)
        # The packer packs from address 0: its top is compared with the peak live bytes.
        peak = result.lower_bound if problem.plain else None
        if peak is None:
            from tilescope.planner.packing import group_lower_bound

            peak = group_lower_bound(np.array([r.bytes for r in problem.requests], dtype=np.int64), *_events(problem))
        ratio = f"{result.height / result.lower_bound:.4f}" if result.height is not None else "—"
        target = TARGETS.get(name, "placed")
        met = (
            result.verdict == target
            and (name != "overcapacity" or result.deficit_bytes == 16_328)
            and (not problem.plain or result.seconds <= 120)
        )
        rows.append(
            (
                name,
                len(problem.requests),
                result.verdict,
                ratio,
                f"{result.seconds:.2f}",
                f"{result.nodes:,}",
                f"{top / peak:.4f}",
                f"{packer_s:.2f}",
                "yes" if met else "NO",
            )
        )
        extra = f" deficit {result.deficit_bytes:,} B" if result.deficit_bytes is not None else ""
        print(f"{name}: {result.verdict}{extra} ({result.proof})", flush=True)
    head = (
        "instance",
        "requests",
        "verdict",
        "height ÷ bound",
        "seconds",
        "nodes",
        "packer height ÷ peak",
        "packer s",
        "target met",
    )
    print()
    print("| " + " | ".join(head) + " |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")


if __name__ == "__main__":
    main()
