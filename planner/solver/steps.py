"""The steps of one search node (``search`` module doc): the lowest legal start in a request's
domains, a placed request's top, placing a request (raising its unplaced neighbours' lowest starts
and the section floors, all logged), undoing it, the section inference and the time cuts. The state
is two tuples of int64 arrays, indexed by the constants below."""

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
            s = max(s, dom_lo[d])
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


# The static arrays (``st``) and the mutable state (``mt``), both tuples of int64 arrays, by index.
(
    DOM_PTR,
    DOM_LO,
    DOM_HI,
    DOM_ALIGN,
    DOM_SIZE,
    DOM_ELEM,
    EDGE_PTR,
    EDGE_TO,
    EDGE_CONFLICT,
    HAS_CONFLICT,
    SIZES_MIN,
    SEC_FIRST,
    SEC_LAST,
    SECBUF_PTR,
    SECBUF,
    RANGE_START,
    RANGE_END,
    RANK,
    WIDTH,
    AREA,
    CLASS_PTR,
    CLASS_MEMBER,
) = range(22)
(
    MIN_OFF,
    MIN_DOM,
    PLACED,
    OUT,
    SEC_FLOOR,
    SEC_TOTAL,
    CUTS,
    OFF_WHO,
    OFF_OLD,
    DOM_OLD,
    SEC_WHO,
    SEC_OLD,
    STAMP,
    AFFECTED,
    CAND,
    KEY,
    COUNTERS,
) = range(17)
# COUNTERS: the undo logs' tops, the candidate stack's top, nodes, the section stamp.
C_OFF, C_SEC, C_CAND, C_NODES, C_STAMP, C_OPTIONS, C_HEURISTIC = range(7)
# C_OPTIONS bit: re-rank each time partition by its unplaced bytes (MiniMalloc's SubSolve).
DYNAMIC_PREORDER = 2
UNALLOCATED_FLOOR = 1  # C_OPTIONS bit: raise section floors to their unplaced requests' lowest start


@njit(cache=True)
def _place(st, mt, b, o):  # pragma: no cover - compiled
    """Place b at o: raise the lowest starts of its unplaced neighbours, the section floors and
    totals (all logged). Returns (hatless, dead)."""
    a_edge_ptr = st[EDGE_PTR]
    a_edge_to = st[EDGE_TO]
    a_edge_conflict = st[EDGE_CONFLICT]
    a_off_who = mt[OFF_WHO]
    a_off_old = mt[OFF_OLD]
    a_dom_old = mt[DOM_OLD]
    a_sec_first = st[SEC_FIRST]
    a_sec_last = st[SEC_LAST]
    a_sec_who = mt[SEC_WHO]
    a_sec_old = mt[SEC_OLD]
    a_sizes_min = st[SIZES_MIN]
    a_secbuf_ptr = st[SECBUF_PTR]
    a_secbuf = st[SECBUF]
    min_off, min_dom, placed, sec_floor, sec_total = (
        mt[MIN_OFF],
        mt[MIN_DOM],
        mt[PLACED],
        mt[SEC_FLOOR],
        mt[SEC_TOTAL],
    )
    cnt, stamp, affected = mt[COUNTERS], mt[STAMP], mt[AFFECTED]
    dom_size, dom_elem = st[DOM_SIZE], st[DOM_ELEM]
    dom_ptr, dom_lo, dom_hi, dom_align = (st[DOM_PTR], st[DOM_LO], st[DOM_HI], st[DOM_ALIGN])
    placed[b] = o
    d_b = min_dom[b]
    hatless = True
    dead = False
    cnt[C_STAMP] += 1
    now = cnt[C_STAMP]
    top_b = o + dom_size[d_b]
    for sc in range(a_sec_first[b], a_sec_last[b]):
        k = cnt[C_SEC]
        a_sec_who[k] = sc
        a_sec_old[k] = sec_floor[sc]
        cnt[C_SEC] = k + 1
        sec_floor[sc] = max(sec_floor[sc], top_b)
        _count(st, sec_total, b, sc, -a_sizes_min[b])
    n_aff = 0
    for e in range(a_edge_ptr[b], a_edge_ptr[b + 1]):
        v = a_edge_to[e]
        if placed[v] >= 0:
            continue
        hatless = False
        t = _top(o, d_b, a_edge_conflict[e] != 0, dom_size, dom_elem)
        if min_off[v] >= t:
            continue
        k = cnt[C_OFF]
        a_off_who[k] = v
        a_off_old[k] = min_off[v]
        a_dom_old[k] = min_dom[v]
        cnt[C_OFF] = k + 1
        s, d = _lowest(v, t, dom_ptr, dom_lo, dom_hi, dom_align)
        min_off[v] = s
        min_dom[v] = d
        if d < 0:
            dead = True
        # Only a section whose floor is below v's new start can have its floor raised.
        for sc in range(a_sec_first[v], a_sec_last[v]):
            if stamp[sc] != now and sec_floor[sc] < s:
                stamp[sc] = now
                affected[n_aff] = sc
                n_aff += 1
    if not dead and (cnt[C_OPTIONS] & UNALLOCATED_FLOOR):
        # A section's floor is at least the lowest start of its unplaced requests.
        for k in range(n_aff):
            sc = affected[k]
            lowest = _INF
            for p in range(a_secbuf_ptr[sc], a_secbuf_ptr[sc + 1]):
                v = a_secbuf[p]
                if placed[v] < 0 and min_off[v] < lowest:
                    lowest = min_off[v]
                    if lowest <= sec_floor[sc]:
                        break
            if lowest != _INF and sec_floor[sc] < lowest:
                j = cnt[C_SEC]
                a_sec_who[j] = sc
                a_sec_old[j] = sec_floor[sc]
                cnt[C_SEC] = j + 1
                sec_floor[sc] = lowest
    return hatless, dead


@njit(cache=True)
def _undo(st, mt, b, off_mark, sec_mark):  # pragma: no cover - compiled
    a_sec_who = mt[SEC_WHO]
    a_sec_old = mt[SEC_OLD]
    a_sec_first = st[SEC_FIRST]
    a_sec_last = st[SEC_LAST]
    a_sec_total = mt[SEC_TOTAL]
    a_sizes_min = st[SIZES_MIN]
    a_off_who = mt[OFF_WHO]
    a_off_old = mt[OFF_OLD]
    a_dom_old = mt[DOM_OLD]
    a_placed = mt[PLACED]
    cnt = mt[COUNTERS]
    sec_floor, min_off, min_dom = mt[SEC_FLOOR], mt[MIN_OFF], mt[MIN_DOM]
    while cnt[C_SEC] > sec_mark:
        cnt[C_SEC] -= 1
        sec_floor[a_sec_who[cnt[C_SEC]]] = a_sec_old[cnt[C_SEC]]
    for sc in range(a_sec_first[b], a_sec_last[b]):
        _count(st, a_sec_total, b, sc, a_sizes_min[b])
    while cnt[C_OFF] > off_mark:
        cnt[C_OFF] -= 1
        min_off[a_off_who[cnt[C_OFF]]] = a_off_old[cnt[C_OFF]]
        min_dom[a_off_who[cnt[C_OFF]]] = a_dom_old[cnt[C_OFF]]
    a_placed[b] = -1


@njit(cache=True)
def _count(st, sec_total, b, sc, by):  # pragma: no cover - compiled
    """Add ``by`` to section sc's total in every class request b belongs to."""
    class_member = st[CLASS_MEMBER]
    k = st[CLASS_PTR].size - 1
    n = class_member.size // k
    n_sec = sec_total.size // k
    for c in range(k):
        if class_member[c * n + b]:
            sec_total[c * n_sec + sc] += by


@njit(cache=True)
def _fits(st, mt, o, sec_lo, sec_hi):  # pragma: no cover - compiled
    """Section inference: in every section and class, the unplaced requests' smallest sizes fit
    in the class's ranges above max(floor, o)."""
    sec_total, sec_floor = mt[SEC_TOTAL], mt[SEC_FLOOR]
    range_start, range_end, class_ptr = st[RANGE_START], st[RANGE_END], st[CLASS_PTR]
    n_sec = sec_floor.size
    for c in range(class_ptr.size - 1):
        for sc in range(sec_lo, sec_hi):
            need = sec_total[c * n_sec + sc]
            if need == 0:
                continue
            f = max(sec_floor[sc], o)
            room = 0
            for r in range(class_ptr[c], class_ptr[c + 1]):
                lo = max(range_start[r], f)
                if range_end[r] > lo:
                    room += range_end[r] - lo
            if need > room:
                return False
    return True


@njit(cache=True)
def _highest_start(st, mt, sec_lo, sec_hi):  # pragma: no cover - compiled
    """The highest placement start o at which every section still passes ``_fits``: in each
    section and class, the highest floor at or below which the class's ranges hold its unplaced
    bytes."""
    range_start, range_end, class_ptr = st[RANGE_START], st[RANGE_END], st[CLASS_PTR]
    sec_total = mt[SEC_TOTAL]
    n_sec = mt[SEC_FLOOR].size
    best = _INF
    for c in range(class_ptr.size - 1):
        for sc in range(sec_lo, sec_hi):
            need = sec_total[c * n_sec + sc]
            if need == 0:
                continue
            acc = 0
            theta = -1
            for r in range(class_ptr[c + 1] - 1, class_ptr[c] - 1, -1):
                length = range_end[r] - range_start[r]
                if acc + length >= need:
                    theta = range_end[r] - (need - acc)
                    break
                acc += length
            best = min(best, theta)
    return best


@njit(cache=True)
def _preorder(st, mt, members, heuristic):  # pragma: no cover - compiled
    """Rank ``members`` (0, 1, …) by the heuristic's keys, largest first, ties by index: width
    (W), area (A) and the most unplaced bytes in any of its sections now (T), in the order
    WAT (0), TAW (1) or TWA (2)."""
    rank, width, area = st[RANK], st[WIDTH], st[AREA]
    sec_first, sec_last, sec_total = st[SEC_FIRST], st[SEC_LAST], mt[SEC_TOTAL]
    m = members.size
    total = np.zeros(m, np.int64)
    for k in range(m):
        v = members[k]
        for sc in range(sec_first[v], sec_last[v]):
            total[k] = max(total[k], sec_total[sc])
    order = np.argsort(members, kind="mergesort")
    # Stable sorts from the least significant key up.
    for letter in range(2, -1, -1):
        which = (0, 1, 2)[letter] if heuristic == 0 else ((2, 1, 0)[letter] if heuristic == 1 else (2, 0, 1)[letter])
        if which == 0:
            keys = -width[members[order]]
        elif which == 1:
            keys = -area[members[order]]
        else:
            keys = -total[order]
        order = order[np.argsort(keys, kind="mergesort")]
    for k in range(m):
        rank[members[order[k]]] = k


@njit(cache=True)
def _independent(st, mt, cands, sec_lo, sec_hi):  # pragma: no cover - compiled
    """Whether the time pieces of ``sec_lo .. sec_hi`` (cut where no unplaced request crosses,
    ``mt[CUTS]`` zero) share no element conflict between unplaced requests ``cands``."""
    edge_ptr, edge_to, edge_conflict, sec_first = st[EDGE_PTR], st[EDGE_TO], st[EDGE_CONFLICT], st[SEC_FIRST]
    placed, cuts = mt[PLACED], mt[CUTS]
    # The piece of a section: the count of zero cuts before it.
    piece_of_section = np.zeros(sec_hi - sec_lo, np.int64)
    p = 0
    for sc in range(sec_lo, sec_hi):
        if sc > sec_lo and cuts[sc - 1] == 0:
            p += 1
        piece_of_section[sc - sec_lo] = p
    if p == 0:
        return True
    for k in range(cands.size):
        v = cands[k]
        for e in range(edge_ptr[v], edge_ptr[v + 1]):
            if edge_conflict[e] == 0:
                continue
            w = edge_to[e]
            if placed[w] >= 0 or sec_first[w] < sec_lo or sec_first[w] >= sec_hi:
                continue
            if piece_of_section[sec_first[w] - sec_lo] != piece_of_section[sec_first[v] - sec_lo]:
                return False
    return True


@njit(cache=True)
def _cut(st, mt, b, by):  # pragma: no cover - compiled
    """Add ``by`` to the unplaced-crossing counts of the section boundaries inside b's lifetime."""
    a_sec_first = st[SEC_FIRST]
    a_sec_last = st[SEC_LAST]
    cuts = mt[CUTS]
    for sc in range(a_sec_first[b], a_sec_last[b] - 1):
        cuts[sc] += by
