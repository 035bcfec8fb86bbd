"""A fast first-fit placement to start from: the requests in a few orders, each at the lowest legal
start in its domains that overlaps no interfering request placed before it (bytes for the byte
rule, whole elements for the element rule). Used as the answer when it already places everything,
and as the best placement found when the search runs out of time. A request that finds no room
gets -1 (not placed).
"""

from __future__ import annotations

import numpy as np

from tilescope.models.placement_problem import PROGRAM_END

from .arrays import Arrays


def _forbidden(arrays: Arrays, u: int, starts: np.ndarray, where: np.ndarray) -> list[tuple[int, int]]:
    out = []
    for e in range(int(arrays.edge_ptr[u]), int(arrays.edge_ptr[u + 1])):
        v = int(arrays.edge_to[e])
        s = int(starts[v])
        if s < 0:
            continue
        d = int(where[v])
        end = s + int(arrays.dom_size[d])
        if arrays.edge_conflict[e]:
            el = int(arrays.dom_elem[d])
            s, end = s // el * el, -(-end // el) * el
        out.append((s, end))
    out.sort()
    return out


def first_fit(arrays: Arrays, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Base addresses (-1: no room) and domain indices, placing in ``order``."""
    starts = np.full(arrays.n, -1, dtype=np.int64)
    where = np.full(arrays.n, -1, dtype=np.int64)
    for u in order.tolist():
        blocked = _forbidden(arrays, u, starts, where)
        for d in range(int(arrays.dom_ptr[u]), int(arrays.dom_ptr[u + 1])):
            lo, hi, align, size = (
                int(arrays.dom_lo[d]),
                int(arrays.dom_hi[d]),
                int(arrays.dom_align[d]),
                int(arrays.dom_size[d]),
            )
            s = lo
            for b0, b1 in blocked:
                if s > hi:
                    break
                if b1 <= s or (size > 0 and s + size <= b0):
                    continue
                if size == 0 and not (b0 <= s < b1):
                    continue
                s = max(s, -(-b1 // align) * align)
            if s <= hi:
                starts[u], where[u] = s, d
                break
    return starts, where


def greedy(arrays: Arrays, first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The best of a few first-fit orders: the one that places most bytes, then the lowest top."""
    n = arrays.n
    size = arrays.sizes_min
    width = last - first
    conflicts = np.diff(arrays.edge_ptr)
    persistent = (last >= PROGRAM_END).astype(np.int64)
    orders = (
        np.lexsort((np.arange(n), -size, -persistent)),  # lives to program end first, then bytes
        np.lexsort((np.arange(n), -width, -size)),  # bytes, then lifetime, largest first
        np.lexsort((np.arange(n), -size, -conflicts, -width)),  # long-lived first (the compiler's persistent-first)
        np.lexsort((np.arange(n), -size, first)),  # lifetime-first ("online")
    )
    best: tuple[int, int] | None = None
    chosen = (np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64))
    for order in orders:
        starts, where = first_fit(arrays, order)
        ok = starts >= 0
        placed_bytes = int(size[ok].sum())
        top = int((starts[ok] + arrays.dom_size[where[ok]]).max()) if ok.any() else 0
        score = (-placed_bytes, top)
        if best is None or score < best:
            best, chosen = score, (starts, where)
    return chosen
