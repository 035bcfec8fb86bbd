"""The served app's garbage collector, set once per server process (issue #26: CPU per session).

Python's cyclic collector walks, at every full collection, every container object the process
holds: for a server that is Bokeh, Panel, pandas, pyarrow and the shared profiles, hundreds of
thousands of objects that live as long as the process, walked again and again while sessions are
built. And each session allocates tens of thousands of objects (Bokeh models, their property
dicts, Panel's wrappers), so with the default thresholds (700, 10, 10) a session's build ran ~30
young collections and a few middle ones, each walking the session's survivors again. Measured on
the sample's first page built in process, 20 sessions: 76 ms of collection per session (~10 % of
its CPU) with the defaults, 46 ms with the start-up heap frozen, 10 ms with the thresholds below.

So the first session of a server process moves everything alive by then (the imported modules,
the load workers, that session's own start) to the collector's permanent generation
(``gc.freeze``: still freed by reference counting, never walked again), and young collections run
every 20,000 net allocations instead of 700. A cycle of garbage then waits a little longer; memory
is still returned as soon as a session's objects are unreachable and a collection runs.
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_THRESHOLD", "settle_heap"]

YOUNG_THRESHOLD = 20_000  # net allocations between young collections (Python's default: 700)


def settle_heap() -> None:
    """Freeze the process's start-up heap and raise the young threshold, once per process (a
    process whose permanent generation holds anything has been through here, or its owner froze
    it on purpose: either way, nothing to do)."""
    if gc.get_freeze_count():
        return
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
