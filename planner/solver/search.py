"""The exact search: a depth-first search over *canonical* placements, compiled with numba.

The ideas are MiniMalloc's (Moffitt, ASPLOS 2023; google/minimalloc ``solver.cc``), generalised to
the compiler's domains (``arrays`` module doc); the code is ours.

- **Canonical placements.** Take a feasible placement whose sum of base addresses is smallest. Taken
  in order of (base, preorder rank), every request sits at its *lowest legal start* above the
  requests before it that interfere with it: the lowest start in one of its domains at or above
  each earlier interfering request's *top* (its end for the byte rule; its end rounded up to its
  element for the element rule — with both starting no lower, disjoint elements means exactly
  that). Otherwise it could move down, and the sum would drop. So a search that places requests
  one at a time in non-decreasing (base, rank) order, each at its lowest legal start, misses no
  feasible problem. ``min_off[i]`` is that start given what is placed (``INF``: no legal start
  left: this branch fails).
- **Dominance.** A request may not be placed at or above the lowest *effective top* of any unplaced
  request at its lowest start (end, rounded to the element when it has conflicts): that request
  could then sit in the gap below, legal against everything, and the sum would drop.
- **Hatless pruning.** If the request just tried interferes with nothing unplaced and its subtree
  failed, no other choice at this node can succeed: in any canonical completion it comes next.
- **Section inference.** Every unplaced request live in a section lies above that section's floor
  (the top of the placed requests live there, and the smallest ``min_off`` of its unplaced ones)
  and above the base just placed; their smallest sizes must fit in the ranges' bytes above that.

Each call runs at most ``node_limit`` nodes and says which of three things happened: a placement
was found, the search was *complete* without one (a proof, since every rule above is sound), or it
stopped at the node limit (nothing proved). The driver restarts with other preorders and doubled
limits, as MiniMalloc does, and checks the clock between calls.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
from .steps import (
    _INF,
    ABORTED,
    C_CAND,
    C_HEURISTIC,
    C_NODES,
    C_OFF,
    C_OPTIONS,
    C_SEC,
    CAND,
    COMPLETE,
    COUNTERS,
    CUTS,
    DOM_ALIGN,
    DOM_ELEM,
    DOM_HI,
    DOM_LO,
    DOM_PTR,
    DOM_SIZE,
    DYNAMIC_PREORDER,
    FOUND,
    HAS_CONFLICT,
    KEY,
    MIN_DOM,
    MIN_OFF,
    OUT,
    PLACED,
    RANK,
    SEC_FIRST,
    SEC_FLOOR,
    SEC_LAST,
    SEC_TOTAL,
    UNALLOCATED_FLOOR,
    _cut,
    _fits,
    _highest_start,
    _independent,
    _lowest,
    _place,
    _preorder,
    _top,
    _undo,
)

__all__ = ["ABORTED", "COMPLETE", "FOUND", "OUT", "make_state", "reset", "search"]


@njit(cache=True)
def _part(st, mt, members, sec_lo, sec_hi, node_limit, decompose):  # pragma: no cover - compiled
    """Search one time partition: ``members`` (unplaced requests, spanning only sections
    ``sec_lo .. sec_hi``). Returns FOUND (every member's start is in ``mt[OUT]``; the state is
    as on entry), COMPLETE (no placement) or ABORTED (node limit)."""
    a_sec_first = st[SEC_FIRST]
    a_sec_last = st[SEC_LAST]
    a_cuts = mt[CUTS]
    min_off, min_dom, placed, out, cnt = (mt[MIN_OFF], mt[MIN_DOM], mt[PLACED], mt[OUT], mt[COUNTERS])
    cand, key = mt[CAND], mt[KEY]
    rank, has_conflict, dom_size, dom_elem = (st[RANK], st[HAS_CONFLICT], st[DOM_SIZE], st[DOM_ELEM])
    m = members.size
    if m == 0:
        return FOUND
    saved_rank = rank[members]
    if cnt[C_OPTIONS] & DYNAMIC_PREORDER:
        _preorder(st, mt, members, cnt[C_HEURISTIC])
    cand_at = np.zeros(m + 2, np.int64)
    ncand = np.zeros(m + 1, np.int64)
    pos = np.zeros(m + 1, np.int64)
    x_off = np.zeros(m + 1, np.int64)
    x_rank = np.full(m + 1, -1, np.int64)
    min_h = np.zeros(m + 1, np.int64)
    trial = np.full(m + 1, -1, np.int64)
    trial_hat = np.zeros(m + 1, np.bool_)
    off_mark = np.zeros(m + 1, np.int64)
    sec_mark = np.zeros(m + 1, np.int64)
    base0 = cnt[C_CAND]
    for k in range(m):
        cand[base0 + k] = members[k]
    cand_at[0] = base0
    ncand[0] = m
    depth = 0
    fresh = True
    status = COMPLETE
    while True:
        if fresh:
            # Candidates by (lowest start, rank): insertion sort (the parent's order is nearly
            # right); then the dominance height.
            base = cand_at[depth]
            mm = ncand[depth]
            for k in range(mm):
                key[k] = cand[base + k]
            for k in range(1, mm):
                v = key[k]
                j = k - 1
                while j >= 0 and (
                    min_off[key[j]] > min_off[v] or (min_off[key[j]] == min_off[v] and rank[key[j]] > rank[v])
                ):
                    key[j + 1] = key[j]
                    j -= 1
                key[j + 1] = v
            h = _INF
            for k in range(mm):
                v = key[k]
                cand[base + k] = v
                t = _top(min_off[v], min_dom[v], has_conflict[v] != 0, dom_size, dom_elem)
                h = min(h, t)
            # No candidate above the highest start at which every section's unplaced bytes
            # still fit can pass the section check (placing one only moves bytes from "need" to
            # "floor" in its own sections): min_h then also stops the loop there.
            h = min(h, _highest_start(st, mt, sec_lo, sec_hi) + 1)
            min_h[depth] = h
            pos[depth] = 0
            fresh = False
        advanced = False
        finished = False
        base = cand_at[depth]
        while pos[depth] < ncand[depth]:
            b = cand[base + pos[depth]]
            pos[depth] += 1
            o = min_off[b]
            if o < x_off[depth] or (o == x_off[depth] and rank[b] < x_rank[depth]):
                continue
            if o >= min_h[depth]:
                # Sorted by start: every later one is dominated too (or past the section bound).
                pos[depth] = ncand[depth]
                break
            off_mark[depth] = cnt[C_OFF]
            sec_mark[depth] = cnt[C_SEC]
            hatless, dead = _place(st, mt, b, o)
            trial[depth] = b
            trial_hat[depth] = hatless
            ok = (not dead) and _fits(st, mt, o, sec_lo, sec_hi)
            if ok:
                cnt[C_NODES] += 1
                if cnt[C_NODES] > node_limit:
                    status = ABORTED
                    finished = True
                    break
                out[b] = o
                # The child's candidates: this level's, less b.
                child = base + ncand[depth]
                mm = 0
                for k in range(ncand[depth]):
                    v = cand[base + k]
                    if placed[v] < 0:
                        cand[child + mm] = v
                        mm += 1
                if mm == 0:
                    status = FOUND
                    finished = True
                    break
                split = False
                if decompose:
                    _cut(st, mt, b, -1)
                    for sc in range(a_sec_first[b], a_sec_last[b] - 1):
                        if a_cuts[sc] == 0:
                            split = True
                            break
                    # Pieces joined by an element conflict between unplaced requests are not
                    # independent: then no split.
                    split = split and _independent(st, mt, cand[child : child + mm], sec_lo, sec_hi)
                if split:
                    # The unplaced members fall into time pieces that share no request: solve each
                    # on its own (its own canonical order, from the bottom).
                    # The pieces' own candidate stacks start where this child's list would: each
                    # piece is at most as large, so the stack never outgrows n(n+1)/2 (module doc).
                    kids = cand[child : child + mm].copy()
                    sub = np.empty(mm, np.int64)
                    lo = sec_lo
                    result = FOUND
                    cnt[C_CAND] = child
                    while lo < sec_hi and result == FOUND:
                        hi = lo + 1
                        while hi < sec_hi and a_cuts[hi - 1] != 0:
                            hi += 1
                        ns = 0
                        for k in range(mm):
                            v = kids[k]
                            if a_sec_first[v] >= lo and a_sec_first[v] < hi:
                                sub[ns] = v
                                ns += 1
                        if ns > 0:
                            result = _part(st, mt, sub[:ns].copy(), lo, hi, node_limit, decompose)
                        lo = hi
                    cnt[C_CAND] = base0
                    _cut(st, mt, b, 1)
                    if result == FOUND:
                        status = FOUND
                        finished = True
                        break
                    if result == ABORTED:
                        status = ABORTED
                        finished = True
                        break
                    # A piece has no placement: this trial fails.
                else:
                    depth += 1
                    cand_at[depth] = child
                    ncand[depth] = mm
                    x_off[depth] = o
                    x_rank[depth] = rank[b]
                    fresh = True
                    advanced = True
                    break
            _undo(st, mt, b, off_mark[depth], sec_mark[depth])
            trial[depth] = -1
            if hatless:  # nothing unplaced above it: no other choice here can do better
                pos[depth] = ncand[depth]
                break
        if finished:
            # Leave the state as on entry: undo this level's trial and every level above it.
            # (Only the levels below hold cut decrements: this level's trial never keeps one.)
            top = depth
            while depth >= 0:
                b = trial[depth]
                if b >= 0:
                    if decompose and depth < top:
                        _cut(st, mt, b, 1)
                    _undo(st, mt, b, off_mark[depth], sec_mark[depth])
                depth -= 1
            rank[members] = saved_rank
            return status
        if advanced:
            continue
        # This level is exhausted: undo the parent's trial, go on with its next candidate.
        if depth == 0:
            rank[members] = saved_rank
            return COMPLETE
        depth -= 1
        b = trial[depth]
        if decompose:
            _cut(st, mt, b, 1)
        _undo(st, mt, b, off_mark[depth], sec_mark[depth])
        trial[depth] = -1
        if trial_hat[depth]:
            pos[depth] = ncand[depth]


@njit(cache=True)
def search(static, state, order, node_limit, decompose):  # pragma: no cover - compiled
    """Search every time partition of the problem in turn (pieces between section boundaries
    that no request crosses). ``order``: the requests in preorder. Returns (status, nodes); on
    FOUND ``state[OUT]`` holds every start."""
    n = order.size
    rank = static[RANK]
    for k in range(n):
        rank[order[k]] = k
    min_off, min_dom, cnt = state[MIN_OFF], state[MIN_DOM], state[COUNTERS]
    for u in range(n):
        s, d = _lowest(u, 0, static[DOM_PTR], static[DOM_LO], static[DOM_HI], static[DOM_ALIGN])
        if d < 0:
            return COMPLETE, 0
        min_off[u] = s
        min_dom[u] = d
    n_sec = state[SEC_FLOOR].size
    cuts = state[CUTS]
    cuts[:] = 0
    for u in range(n):
        for sc in range(static[SEC_FIRST][u], static[SEC_LAST][u] - 1):
            cuts[sc] += 1
    options, heuristic = cnt[C_OPTIONS], cnt[C_HEURISTIC]
    cnt[:] = 0
    cnt[C_OPTIONS] = options
    cnt[C_HEURISTIC] = heuristic
    members = np.empty(n, np.int64)
    apart = decompose and _independent(static, state, order, 0, n_sec)
    lo = 0
    while lo < n_sec:
        hi = lo + 1
        while hi < n_sec and (cuts[hi - 1] != 0 or not apart):
            hi += 1
        m = 0
        for k in range(n):
            v = order[k]
            if static[SEC_FIRST][v] >= lo and static[SEC_FIRST][v] < hi:
                members[m] = v
                m += 1
        if m > 0:
            status = _part(static, state, members[:m].copy(), lo, hi, node_limit, decompose)
            if status != FOUND:
                return status, cnt[C_NODES]
        lo = hi
    return FOUND, cnt[C_NODES]


def make_state(arrays) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """The static and the mutable arrays ``search`` reads (``arrays``: an ``arrays.Arrays``)."""
    n, n_sec = arrays.n, arrays.sec_total.size
    static = (
        arrays.dom_ptr,
        arrays.dom_lo,
        arrays.dom_hi,
        arrays.dom_align,
        arrays.dom_size,
        arrays.dom_elem,
        arrays.edge_ptr,
        arrays.edge_to,
        arrays.edge_conflict,
        arrays.has_conflict,
        arrays.sizes_min,
        arrays.sec_first,
        arrays.sec_last,
        arrays.secbuf_ptr,
        arrays.secbuf,
        arrays.range_start,
        arrays.range_end,
        np.zeros(n, np.int64),
        arrays.width,
        arrays.area,
        arrays.class_ptr,
        arrays.class_member,
    )
    sec_log = 2 * n_sec * (n + 1) + 1
    state = (
        np.zeros(n, np.int64),
        np.zeros(n, np.int64),
        np.full(n, -1, np.int64),
        np.full(n, -1, np.int64),
        np.zeros(n_sec, np.int64),
        np.zeros(arrays.class_total.size, np.int64),
        np.zeros(max(n_sec, 1), np.int64),
        np.zeros(arrays.edge_to.size + 1, np.int64),
        np.zeros(arrays.edge_to.size + 1, np.int64),
        np.zeros(arrays.edge_to.size + 1, np.int64),
        np.zeros(sec_log, np.int64),
        np.zeros(sec_log, np.int64),
        np.zeros(n_sec, np.int64),
        np.zeros(n_sec, np.int64),
        np.zeros((n + 1) * (n + 2) // 2 + n + 1, np.int64),
        np.zeros(n, np.int64),
        np.array([0, 0, 0, 0, 0, UNALLOCATED_FLOOR | DYNAMIC_PREORDER, 0], np.int64),
    )
    return static, state


def reset(arrays, state: tuple[np.ndarray, ...]) -> None:
    """Back to nothing placed (between calls)."""
    state[PLACED][:] = -1
    state[OUT][:] = -1
    state[SEC_FLOOR][:] = 0
    state[SEC_TOTAL][:] = arrays.class_total
