"""Many planner outputs → one Parquet dataset, in local worker processes or on Dask; DuckDB over it (``tilescope batch``,
``tilescope fleet``).

- ``discover``: what is under a folder (the client lists; a worker sniffs each file's kind);
- ``task``: a worker's task (some files of one folder: read once, hash, load, re-plan), returning
  small rows and writing one fragment per table;
- ``tables``: a loaded memory profile → its ``profiles`` fields and per-profile tables;
- ``layout``: where everything lives, and reading it checked; ``commit``: the client's commit,
  the fragments' collection and the repair of a damaged dataset; ``schema``: every table's columns;
- ``driver``: the batch in local worker processes (``workers``) or on an existing Dask cluster;
- ``query``: the DuckDB views; ``overview``: the app's rows; ``reopen``: a profile rebuilt from the
  dataset and verified; ``regress``: two datasets or folders compared.

The dataset (``layout`` has the details)::

    DATASET/profiles/folder=F/profiles.parquet     one row per input file under folder F: path,
                                                   content_hash, kind, scope, recomputed peaks and
                                                   peak steps, fits_budget, ..., fragment
    DATASET/<table>/folder=F/<fragment>.parquet    values, steps, live_intervals, axes,
                                                   profile_headers, mismatches, value_tiles,
                                                   step_tiles: the rows of one task's profiles,
                                                   each row with its profile_key

The values live at a profile's peak step ``s`` are the ``live_intervals`` rows with
``first_step <= s <= last_step``, joined to ``values`` on ``(profile_key, value_id = id)``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .driver import BatchReport, run_batch
    from .layout import Dataset
    from .query import connect, run_query
    from .reopen import reopen_profile

_FROM = {
    "BatchReport": "driver",
    "run_batch": "driver",
    "Dataset": "layout",
    "connect": "query",
    "run_query": "query",
    "reopen_profile": "reopen",
}
__all__ = ["BatchReport", "Dataset", "connect", "reopen_profile", "run_batch", "run_query"]


def __getattr__(
    name: str,
) -> Any:  # imported on first use: importing one module of the package does not import the rest
    if name in _FROM:
        return getattr(import_module(f"{__name__}.{_FROM[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
