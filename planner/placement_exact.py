"""The exact solver (``planner.solver``) behind the profile's placement, and each region's verdict.

**Lowering a region's height.** The packer's placement (``planner.placement_groups``) is the
incumbent. A region's height is its highest group's top plus the stack of unaligned whole-program
allocations above it, so only the groups at that top matter. Each of them (identical groups share
one packing, so once per distinct group) is handed to ``planner.solver.solve`` as a plain problem —
its allocations, granules as alignments, one range from the region's floor up to a target top —
with a short time limit: first the lowest useful target (its own live-byte bound, or the next
group's top), then, if that is proved impossible or times out, halfway to the packer's top, and so
on. A placement the solver returns has passed its independent re-check; it replaces the group's
packing and the stack above is moved down. Run only for a fresh placement given ``seconds`` (``tilescope
place``, the file plan's placement in the app), never for a re-placement after an edit, so edits stay
as fast as before.

**Verdict per region** (relative to the capacity rule, ``planner.placement.CAPACITY_RULE``):

- *infeasible*: the region's lower bound (its peak usage) exceeds the most capacity the rule can
  leave it (the other region at its own lower bound); ``deficit_bytes`` is the excess;
- *placed*: the placement fits; the proof says whether its height is the lower bound (optimal) or
  how far above it, and what the exact search found;
- *unknown*: the placement does not fit, but the lower bound does: no proof either way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tilescope.models.placement_problem import STANDARD, PlacementProblem, PlacementRequest

from .packing import Packing, group_lower_bound
from .placement_groups import Allocations, RegionState, stack

MAX_GROUP = 2000  # allocations: larger groups are left to the packer (the search's arrays grow as n²)


@dataclass(frozen=True)
class Improvement:
    before: int  # the region's highest group top before the search
    after: int
    proved: bool  # the bottleneck groups cannot go lower (a complete search or a bound said so)
    searched: int  # distinct groups handed to the solver
    seconds: float


def _group_problem(alloc: Allocations, members: np.ndarray, floor: int, top: int) -> PlacementProblem:
    requests = tuple(
        PlacementRequest(
            k, ((k, 0),), STANDARD, int(alloc.first[m]), int(alloc.last[m]), int(alloc.bytes[m]), int(alloc.granule[m])
        )
        for k, m in enumerate(members.tolist())
    )
    return PlacementProblem(
        "group", "minimalloc", requests, ((floor, top),), plain=True, host_scratch_range=None, capacity=top - floor
    )


def improve_region(
    code: int, alloc: Allocations, n_steps: int, offsets: np.ndarray, state: RegionState, seconds: float
) -> Improvement | None:
    """Lower the region's top with the exact solver (module doc); updates ``offsets`` and
    ``state.packings`` in place. None when there is nothing to search."""
    from .solver import solve

    began = time.monotonic()
    tops = [state.packings[g.key].top for g in state.groups]
    if not tops:
        return None
    highest = max(tops)
    floor = state.floor
    at_top = [i for i, t in enumerate(tops) if t == highest]
    keys = list(dict.fromkeys(state.groups[i].key for i in at_top))
    others = max([t for t in tops if t < highest], default=floor)
    proved_all = True
    new_tops = []
    searched = 0
    for n_key, key in enumerate(keys):
        group = next(state.groups[i] for i in at_top if state.groups[i].key == key)
        m = group.members
        if m.size > MAX_GROUP:
            return None
        own = floor + group_lower_bound(alloc.bytes[m], alloc.first[m], alloc.last[m])
        low, high = max(own, others), highest - 1  # the top is searched in [low, high]
        best: Packing | None = None
        proved = low > high
        proved_below = True  # every target tried so far was proved impossible
        first_try = True
        while low <= high:
            left = (seconds - (time.monotonic() - began)) / (len(keys) - n_key)
            if left <= 0.01:
                break
            target = low if first_try else (low + high) // 2
            first_try = False
            result = solve(_group_problem(alloc, m, floor, target), time_limit=left / 2)
            searched += 1
            if result.verdict == "placed" and result.height is not None:
                starts = result.starts.astype(np.int64)
                best = Packing(starts, np.argsort(starts, kind="stable"), result.height, 1 << 30)
                high = result.height - 1
            else:  # infeasible (a proof) or unknown (none): a higher target next
                low = target + 1
                proved_below = proved_below and result.verdict == "infeasible"
        # Every top below ``low`` was proved impossible (or is below what the region needs), and
        # one at ``high + 1`` exists: the region's top cannot go lower through this group.
        proved = proved or (proved_below and low > high)
        if best is not None:
            state.packings[key] = best
            for i in at_top:
                if state.groups[i].key == key:
                    offsets[state.groups[i].members] = best.offsets
        new_tops.append(best.top if best is not None else highest)
        proved_all = proved_all and proved
    after = max([others, *new_tops])
    if after < highest:
        in_region = np.flatnonzero(alloc.region == code)
        whole = (alloc.first[in_region] <= 0) & (alloc.last[in_region] >= n_steps - 1)
        stack(offsets, alloc, in_region[whole & (alloc.granule[in_region] == 1)], after)
    return Improvement(highest, after, proved_all, searched, time.monotonic() - began)


def region_verdict(
    placed: int, lower_bound: int, capacity: int, best_capacity: int, improvement: Improvement | None
) -> tuple[str, str, int | None]:
    """(verdict, proof, deficit_bytes) of one region (module doc)."""
    if lower_bound > best_capacity:
        return (
            "infeasible",
            f"the region's peak usage ({lower_bound:,} B) exceeds the most capacity the rule can leave it "
            f"({best_capacity:,} B, the other region at its own lower bound) by {lower_bound - best_capacity:,} B",
            lower_bound - best_capacity,
        )
    if placed == lower_bound:
        note = "its height equals the lower bound (optimal)"
    else:
        note = f"{placed - lower_bound:,} B above the lower bound"
        if improvement is not None:
            if improvement.after < improvement.before:
                note += f"; the exact search lowered the highest group's top by {improvement.before - improvement.after:,} B"
            if improvement.proved:
                note += "; the exact search proved its highest groups cannot end lower"
            elif improvement.searched:
                note += f"; the exact search found nothing lower within {improvement.seconds:.1f} s (not proved)"
    if placed <= capacity:
        return ("placed", f"every allocation placed and checked within the capacity ({capacity:,} B); {note}", None)
    return (
        "unknown",
        f"the placement ends at {placed:,} B, above the capacity ({capacity:,} B), but the lower bound fits: "
        f"no proof either way; {note}",
        None,
    )
