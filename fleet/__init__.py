"""Many planner outputs → one Parquet dataset, on Dask; DuckDB over it (``tilescope batch``,
``tilescope fleet``).

- ``discover``: which files under a folder are planner outputs;
- ``task``: the per-file task a worker runs (hash, load, re-plan, commit), returning one small row;
- ``tables``: a loaded memory profile → its ``profiles`` fields and partitions;
- ``writer``: one file's rows committed atomically; ``layout``: where everything lives, the
  commit protocol and the repair after a crash; ``schema``: every table's columns;
- ``driver``: the batch on a LocalCluster or an existing cluster;
- ``query``: the DuckDB views.

The dataset (``layout`` has the details)::

    DATASET/profiles/*.parquet          one row per input file: path, content_hash, kind, scope,
                                        recomputed peaks and peak steps, fits_budget, n_values,
                                        n_steps, check_mismatches, error, ...; key profile_key
    DATASET/values/*.parquet            per loaded memory profile, one file each, every row with
    DATASET/steps/*.parquet             its profile_key: the loader's tables (models.schemas) plus
    DATASET/live_intervals/*.parquet    recomputed_shard_bytes / recomputed_aligned_bytes /
    DATASET/axes/*.parquet              recomputed_bytes (values) and recomputed_usage_standard /
    DATASET/profile_headers/*.parquet   recomputed_usage_interleaved (steps); profile_headers is
    DATASET/mismatches/*.parquet        the file's recorded header, mismatches ``check``'s list

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


def __getattr__(name: str) -> Any:  # imported on first use: importing one module of the package does not import the rest
    if name in _FROM:
        return getattr(import_module(f"{__name__}.{_FROM[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
