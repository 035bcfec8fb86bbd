"""A memory profile back from a fleet dataset: one ``profiles`` row's partitions turned into the
loader's tables (``models.profile.MemoryProfile``) and the plan of the figures the batch
recomputed, checked against the row. ``tilescope regress`` compares these; the app opens one
when the row's input file is gone or changed.

Why the partitions and not the input file: the dataset is the record of what was normalised (a
nightly folder deleted from disk, or a dataset copied off the machine as a CI artifact, still
compares); the partitions are exactly the tables the loader produced from the content whose hash
the row holds, while the file at the row's path may have changed since; and reading them skips
parsing JSON. The per-value bytes are the batch's ``recomputed_*`` columns; usage per step and
the peaks are computed again from them (``planner.model.compute_plan``) and must equal the
partitions' ``recomputed_usage_*`` and the row's peaks, else the profile is refused (a dataset
whose parts disagree gives no answer rather than a wrong one).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from tilescope.models import schemas
from tilescope.models.errors import InputError
from tilescope.models.profile import MemoryProfile
from tilescope.planner.model import Plan, ProfileArrays, ValueBytes, arrays_of, compute_plan, read_only

from .layout import Dataset

# Loader table ← dataset table of the same rows (with ``profile_key`` and recomputed columns).
SOURCES = {"profile": "profile_headers", "values": "values", "axes": "axes", "steps": "steps", "live_intervals": "live_intervals"}
# profiles-row column ← the plan's figure
ROW_PEAKS = {
    "standard_peak": "standard", "interleaved_peak": "interleaved", "total_peak": "total",
    "effective_peak_bytes": "effective_peak_bytes", "fits_budget": "fits_budget",
    "standard_peak_step": "standard_step", "interleaved_peak_step": "interleaved_step", "total_peak_step": "total_step",
}


def is_loaded_profile(row: dict) -> bool:
    """A row with partitions: a memory profile that loaded."""
    return row.get("error") is None and row.get("kind") == "memory_profile"


def _read(dataset: Dataset, table: str, key: str) -> pa.Table:
    path = dataset.table_path(table, key)
    try:
        found = pq.read_table(path)
    except FileNotFoundError:
        raise InputError("$", f"the profile's {table} partition", "no such file (the dataset is incomplete)", file=str(path)) from None
    except (OSError, pa.ArrowException) as exc:
        raise InputError("$", f"a Parquet file of the {table} table", " ".join(str(exc).split()), file=str(path)) from None
    keys = found.column("profile_key") if "profile_key" in found.column_names else None
    if keys is None or (found.num_rows and not pc.all(pc.equal(keys, key)).as_py()):
        raise InputError("$.profile_key", f"every row keyed {key}", "rows of another profile", file=str(path))
    return found


def _loader_table(found: pa.Table, schema: pa.Schema, path: str) -> pa.Table:
    """The dataset's columns of ``schema``, in its order and types (text dictionary-encoded again)."""
    try:
        return pa.table({f.name: found.column(f.name) for f in schema}).cast(schema)
    except (KeyError, pa.ArrowException) as exc:
        raise InputError("$", f"the loader's columns ({', '.join(schema.names)})", " ".join(str(exc).split()), file=path) from None


def profile_tables(dataset: Dataset, row: dict, source: str) -> tuple[MemoryProfile, dict[str, pa.Table]]:
    """The loader's tables of ``row`` (named ``source`` in messages) and the dataset's own tables."""
    if not is_loaded_profile(row):
        what = "a search state" if row.get("kind") == "search_state" else "a file that did not load"
        raise InputError("$", "a memory profile that loaded", what, file=source)
    key = row["profile_key"]
    found = {name: _read(dataset, table, key) for name, table in SOURCES.items()}
    tables = {
        name: _loader_table(found[name], schemas.PROFILE_TABLES[name], str(dataset.table_path(SOURCES[name], key)))
        for name in SOURCES
    }
    if tables["profile"].num_rows != 1:
        raise InputError("$", "one header row", f"{tables['profile'].num_rows} rows", file=str(dataset.table_path("profile_headers", key)))
    return MemoryProfile(source, **tables), found


def _disagree(path: str, what: str, expected: object, found: object) -> InputError:
    return InputError("$", f"{what} = {expected} (as the dataset records it)", f"{found} recomputed from its partitions", file=path)


def reopen_profile(dataset: Dataset, row: dict, source: str) -> tuple[MemoryProfile, ProfileArrays, Plan]:
    """``row``'s profile (named ``source``), its arrays and the plan of the batch's recomputed
    figures, checked against the partitions and the row (module doc); read-only like
    ``planner.model.plan_profile``'s."""
    profile, found = profile_tables(dataset, row, source)
    arrays = arrays_of(profile)
    values, steps = found["values"], found["steps"]
    figures = ValueBytes(
        *(values.column(c).to_numpy().astype(np.int64) for c in ("recomputed_shard_bytes", "recomputed_aligned_bytes", "recomputed_bytes"))
    )
    plan = compute_plan(arrays, figures)
    steps_path = str(dataset.table_path("steps", row["profile_key"]))
    for column, usage in (("recomputed_usage_standard", plan.usage_standard), ("recomputed_usage_interleaved", plan.usage_interleaved)):
        recorded = steps.column(column).to_numpy()
        if recorded.shape != usage.shape or not np.array_equal(recorded, usage):
            wrong = int(np.flatnonzero(recorded != usage)[0]) if recorded.shape == usage.shape else None
            raise _disagree(steps_path, f"{column}" + (f" at step {wrong}" if wrong is not None else ""),
                            recorded[wrong] if wrong is not None else f"{recorded.size} steps", usage[wrong] if wrong is not None else f"{usage.size} steps")
    for column, attribute in ROW_PEAKS.items():
        recomputed = getattr(plan.peaks, attribute)
        if row.get(column) != recomputed:
            raise _disagree(str(dataset.row_path(row["path"])), column, row.get(column), recomputed)
    read_only(arrays)
    read_only(plan)
    return profile, arrays, plan
