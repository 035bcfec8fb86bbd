"""A memory profile back from a fleet dataset: one ``profiles`` row's partitions turned into the
loader's tables (``models.profile.MemoryProfile``) and the plan of the figures the batch
recomputed, checked against the row. ``tilescope regress`` compares these; the app opens one
when the row's input file is gone or changed.

Why the partitions and not the input file: the dataset is the record of what was normalised (a
nightly folder deleted from disk, or a dataset copied off the machine as a CI artifact, still
compares); the partitions are exactly the tables the loader produced from the content whose hash
the row holds, while the file at the row's path may have changed since; and reading them skips
parsing JSON. Nothing the batch recomputed is trusted: the per-value bytes are computed again
from the stored tilings, shapes and precisions (``planner.model.compute_plan``), and the usage per
step and the peaks from them; they must equal the partitions' ``recomputed_*`` columns and the
row's peaks, else the profile is refused. So a dataset edited consistently (a value's recomputed
bytes, the steps' usage and the row's peaks lowered together) is refused too: its stored tiling
still gives the old size. A dataset whose parts disagree gives no answer rather than a wrong one.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tilescope.models import schemas
from tilescope.models.errors import InputError
from tilescope.models.profile import MemoryProfile
from tilescope.planner.model import Plan, ProfileArrays, arrays_of, compute_plan, read_only

from .layout import Dataset, folder_of

# Loader table ← dataset table of the same rows (with ``profile_key`` and recomputed columns).
SOURCES = {
    "profile": "profile_headers",
    "values": "values",
    "axes": "axes",
    "steps": "steps",
    "live_intervals": "live_intervals",
    "value_tiles": "value_tiles",
    "step_tiles": "step_tiles",
}
# profiles-row column ← the plan's figure
ROW_PEAKS = {
    "standard_peak": "standard",
    "interleaved_peak": "interleaved",
    "total_peak": "total",
    "effective_peak_bytes": "effective_peak_bytes",
    "fits_budget": "fits_budget",
    "standard_peak_step": "standard_step",
    "interleaved_peak_step": "interleaved_step",
    "total_peak_step": "total_step",
}


def is_loaded_profile(row: dict) -> bool:
    """A row with partitions: a memory profile that loaded."""
    return row.get("error") is None and row.get("kind") == "memory_profile"


def _path(dataset: Dataset, table: str, row: dict) -> str:
    return str(dataset.fragment_path(table, folder_of(row["path"]), row.get("fragment") or "(none)"))


def _read(dataset: Dataset, table: str, row: dict) -> pa.Table:
    found = dataset.profile_rows(table, row)  # the row group of the row's key, checked
    if table in ("profile_headers", "steps") and not found.num_rows:
        raise InputError(
            "$.profile_key",
            f"rows keyed {row['profile_key']}",
            "none (the dataset is incomplete)",
            file=_path(dataset, table, row),
        )
    return found


def _loader_table(found: pa.Table, schema: pa.Schema, path: str) -> pa.Table:
    """The dataset's columns of ``schema``, in its order and types (text dictionary-encoded again)."""
    try:
        return pa.table({f.name: found.column(f.name) for f in schema}).cast(schema)
    except (KeyError, pa.ArrowException) as exc:
        raise InputError(
            "$", f"the loader's columns ({', '.join(schema.names)})", " ".join(str(exc).split()), file=path
        ) from None


def profile_tables(dataset: Dataset, row: dict, source: str) -> tuple[MemoryProfile, dict[str, pa.Table]]:
    """The loader's tables of ``row`` (named ``source`` in messages) and the dataset's own tables."""
    if not is_loaded_profile(row):
        what = "a search state" if row.get("kind") == "search_state" else "a file that did not load"
        raise InputError("$", "a memory profile that loaded", what, file=source)
    found = {name: _read(dataset, table, row) for name, table in SOURCES.items()}
    tables = {
        name: _loader_table(found[name], schemas.PROFILE_TABLES[name], _path(dataset, SOURCES[name], row))
        for name in SOURCES
    }
    if tables["profile"].num_rows != 1:
        raise InputError(
            "$", "one header row", f"{tables['profile'].num_rows} rows", file=_path(dataset, "profile_headers", row)
        )
    return MemoryProfile(source, **tables), found


def _disagree(path: str, what: str, expected: object, found: object) -> InputError:
    return InputError(
        "$",
        f"{what} = {expected} (as the dataset records it)",
        f"{found} recomputed from its stored tilings and shapes",
        file=path,
    )


def reopen_profile(dataset: Dataset, row: dict, source: str) -> tuple[MemoryProfile, ProfileArrays, Plan]:
    """``row``'s profile (named ``source``), its arrays and the plan of the batch's recomputed
    figures, checked against the partitions and the row (module doc); read-only like
    ``planner.model.plan_profile``'s."""
    profile, found = profile_tables(dataset, row, source)
    arrays = arrays_of(profile)
    plan = compute_plan(arrays)  # from the stored tilings and shapes: nothing recomputed is trusted
    checks = [
        ("values", "recomputed_shard_bytes", plan.figures.shard, "value row"),
        ("values", "recomputed_aligned_bytes", plan.figures.aligned, "value row"),
        ("values", "recomputed_bytes", plan.figures.bytes, "value row"),
        ("steps", "recomputed_usage_standard", plan.usage_standard, "step"),
        ("steps", "recomputed_usage_interleaved", plan.usage_interleaved, "step"),
    ]
    for table, column, recomputed, unit in checks:
        recorded = found[table].column(column).to_numpy(zero_copy_only=False)
        if recorded.shape != recomputed.shape or not np.array_equal(recorded, recomputed):
            wrong = int(np.flatnonzero(recorded != recomputed)[0]) if recorded.shape == recomputed.shape else None
            raise _disagree(
                _path(dataset, table, row),
                column + (f" at {unit} {wrong}" if wrong is not None else ""),
                recorded[wrong] if wrong is not None else f"{recorded.size} rows",
                recomputed[wrong] if wrong is not None else f"{recomputed.size} rows",
            )
    for column, attribute in ROW_PEAKS.items():
        recomputed = getattr(plan.peaks, attribute)
        if row.get(column) != recomputed:
            raise _disagree(
                str(dataset.profiles_path(folder_of(row["path"]))),
                f"{column} of {row['path']}",
                row.get(column),
                recomputed,
            )
    read_only(arrays)
    read_only(plan)
    return profile, arrays, plan
