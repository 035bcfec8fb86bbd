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

FOUND, COMPLETE, ABORTED = 0, 1, 2
_INF = np.int64(1 << 62)


@njit(cache=True)
def _lowest(u, h, dom_ptr, dom_lo, dom_hi, dom_align):  # pragma: no cover - compiled
    """The lowest legal start of request u at or above h, and its domain (INF, -1: none)."""
    for d in range(dom_ptr[u], dom_ptr[u + 1]):
        if h <= dom_hi[d]:
            a = dom_align[d]
            s = ((h + a - 1) // a) * a
            if s < dom_lo[d]:
                s = dom_lo[d]
            if s <= dom_hi[d]:
                return s, d
    return _INF, -1


@njit(cache=True)
def _top(s, d, elementwise, dom_size, dom_elem):  # pragma: no cover - compiled
    end = s + dom_size[d]
    if elementwise:
        e = dom_elem[d]
        end = ((end + e - 1) // e) * e
    return end


@njit(cache=True)
def search(  # pragma: no cover - compiled
    dom_ptr, dom_lo, dom_hi, dom_align, dom_size, dom_elem,
    edge_ptr, edge_to, edge_conflict, has_conflict, sizes_min,
    sec_first, sec_last, secbuf_ptr, secbuf, sec_total0, range_start, range_end,
    order, node_limit, out_starts,
):
    """Returns (status, nodes); on FOUND, ``out_starts`` holds every request's base address.
    ``order``: the requests in preorder (rank = position)."""
    n = order.size
    n_sec = sec_total0.size
    rank = np.empty(n, np.int64)
    for k in range(n):
        rank[order[k]] = k
    min_off = np.empty(n, np.int64)
    min_dom = np.empty(n, np.int64)
    for u in range(n):
        s, d = _lowest(u, 0, dom_ptr, dom_lo, dom_hi, dom_align)
        if d < 0:
            return COMPLETE, 0
        min_off[u] = s
        min_dom[u] = d
    placed = np.full(n, -1, np.int64)
    sec_floor = np.zeros(n_sec, np.int64)
    sec_total = sec_total0.copy()
    # Undo logs.
    off_cap = edge_to.size + 1
    off_who = np.empty(off_cap, np.int64)
    off_old = np.empty(off_cap, np.int64)
    dom_old = np.empty(off_cap, np.int64)
    sec_cap = 2 * n_sec * (n + 1) + 1
    sec_who = np.empty(sec_cap, np.int64)
    sec_old = np.empty(sec_cap, np.int64)
    stamp = np.zeros(n_sec, np.int64)
    affected = np.empty(n_sec, np.int64)
    # Per level.
    cand = np.empty((n + 1) * (n + 2) // 2 + 1, np.int64)
    cand_at = np.zeros(n + 2, np.int64)
    ncand = np.zeros(n + 1, np.int64)
    pos = np.zeros(n + 1, np.int64)
    x_off = np.zeros(n + 1, np.int64)
    x_rank = np.zeros(n + 1, np.int64)
    min_h = np.zeros(n + 1, np.int64)
    trial = np.full(n + 1, -1, np.int64)
    trial_hat = np.zeros(n + 1, np.bool_)
    off_mark = np.zeros(n + 1, np.int64)
    sec_mark = np.zeros(n + 1, np.int64)
    key = np.empty(n, np.int64)
    off_top = 0
    sec_top = 0
    stamp_now = 0
    # Level 0: every request, by (min_off, rank).
    for k in range(n):
        cand[k] = order[k]
    ncand[0] = n
    cand_at[1] = n
    depth = 0
    nodes = 1
    fresh = True
    while True:
        if fresh:
            # Sort this level's candidates by (min_off, rank): insertion sort, as the parent's order
            # is nearly right. Then the dominance height.
            base = cand_at[depth]
            m = ncand[depth]
            for k in range(m):
                key[k] = cand[base + k]
            for k in range(1, m):
                v = key[k]
                j = k - 1
                while j >= 0 and (min_off[key[j]] > min_off[v] or (min_off[key[j]] == min_off[v] and rank[key[j]] > rank[v])):
                    key[j + 1] = key[j]
                    j -= 1
                key[j + 1] = v
            h = _INF
            for k in range(m):
                v = key[k]
                cand[base + k] = v
                t = _top(min_off[v], min_dom[v], has_conflict[v] != 0, dom_size, dom_elem)
                if t < h:
                    h = t
            min_h[depth] = h
            pos[depth] = 0
            fresh = False
        advanced = False
        base = cand_at[depth]
        while pos[depth] < ncand[depth]:
            b = cand[base + pos[depth]]
            pos[depth] += 1
            o = min_off[b]
            if o < x_off[depth] or (o == x_off[depth] and rank[b] < x_rank[depth]):
                continue
            if o >= min_h[depth]:
                pos[depth] = ncand[depth]  # sorted by offset: every later one is dominated too
                break
            # Place b at o.
            placed[b] = o
            d_b = min_dom[b]
            off_mark[depth] = off_top
            sec_mark[depth] = sec_top
            hatless = True
            dead = False
            stamp_now += 1
            n_aff = 0
            for e in range(edge_ptr[b], edge_ptr[b + 1]):
                v = edge_to[e]
                if placed[v] >= 0:
                    continue
                hatless = False
                t = _top(o, d_b, edge_conflict[e] != 0, dom_size, dom_elem)
                if min_off[v] >= t:
                    continue
                off_who[off_top] = v
                off_old[off_top] = min_off[v]
                dom_old[off_top] = min_dom[v]
                off_top += 1
                s, d = _lowest(v, t, dom_ptr, dom_lo, dom_hi, dom_align)
                min_off[v] = s
                min_dom[v] = d
                if d < 0:
                    dead = True
                for sc in range(sec_first[v], sec_last[v]):
                    if stamp[sc] != stamp_now:
                        stamp[sc] = stamp_now
                        affected[n_aff] = sc
                        n_aff += 1
            top_b = o + dom_size[d_b]
            for sc in range(sec_first[b], sec_last[b]):
                sec_who[sec_top] = sc
                sec_old[sec_top] = sec_floor[sc]
                sec_top += 1
                if top_b > sec_floor[sc]:
                    sec_floor[sc] = top_b
                sec_total[sc] -= sizes_min[b]
            if not dead:
                for k in range(n_aff):
                    sc = affected[k]
                    lowest = _INF
                    for p in range(secbuf_ptr[sc], secbuf_ptr[sc + 1]):
                        v = secbuf[p]
                        if placed[v] < 0 and min_off[v] < lowest:
                            lowest = min_off[v]
                    if lowest != _INF and sec_floor[sc] < lowest:
                        sec_who[sec_top] = sc
                        sec_old[sec_top] = sec_floor[sc]
                        sec_top += 1
                        sec_floor[sc] = lowest
            ok = not dead
            if ok:
                for sc in range(n_sec):
                    need = sec_total[sc]
                    if need == 0:
                        continue
                    f = sec_floor[sc]
                    if f < o:
                        f = o
                    room = 0
                    for r in range(range_start.size):
                        lo = range_start[r]
                        if lo < f:
                            lo = f
                        if range_end[r] > lo:
                            room += range_end[r] - lo
                    if need > room:
                        ok = False
                        break
            if ok:
                nodes += 1
                if nodes > node_limit:
                    return ABORTED, nodes
                trial[depth] = b
                trial_hat[depth] = hatless
                # The child's candidates: this level's, less the placed ones.
                child = cand_at[depth] + ncand[depth]
                m = 0
                for k in range(ncand[depth]):
                    v = cand[base + k]
                    if placed[v] < 0:
                        cand[child + m] = v
                        m += 1
                if m == 0:
                    for u in range(n):
                        out_starts[u] = placed[u]
                    return FOUND, nodes
                depth += 1
                cand_at[depth] = child
                ncand[depth] = m
                x_off[depth] = o
                x_rank[depth] = rank[b]
                fresh = True
                advanced = True
                break
            # Undo b and try the next candidate (none, when b was hatless).
            while sec_top > sec_mark[depth]:
                sec_top -= 1
                sec_floor[sec_who[sec_top]] = sec_old[sec_top]
            for sc in range(sec_first[b], sec_last[b]):
                sec_total[sc] += sizes_min[b]
            while off_top > off_mark[depth]:
                off_top -= 1
                min_off[off_who[off_top]] = off_old[off_top]
                min_dom[off_who[off_top]] = dom_old[off_top]
            placed[b] = -1
            if hatless:
                pos[depth] = ncand[depth]
                break
        if advanced:
            continue
        # This level is exhausted: undo the parent's trial and go on with its next candidate.
        if depth == 0:
            return COMPLETE, nodes
        depth -= 1
        b = trial[depth]
        while sec_top > sec_mark[depth]:
            sec_top -= 1
            sec_floor[sec_who[sec_top]] = sec_old[sec_top]
        for sc in range(sec_first[b], sec_last[b]):
            sec_total[sc] += sizes_min[b]
        while off_top > off_mark[depth]:
            off_top -= 1
            min_off[off_who[off_top]] = off_old[off_top]
            min_dom[off_who[off_top]] = dom_old[off_top]
        placed[b] = -1
        if trial_hat[depth]:
            pos[depth] = ncand[depth]
