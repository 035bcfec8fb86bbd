"""What the app's fleet view lists: the ``profiles`` rows of a dataset, each of its files checked
as it is read (``fleet.layout``: regular files only, Parquet of the table's columns). Called in a
worker thread, never on a session's event loop."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa

from .layout import Dataset

COLUMNS = (
    "path",
    "kind",
    "scope",
    "standard_peak",
    "interleaved_peak",
    "total_peak",
    "effective_peak_bytes",
    "fits_budget",
    "budget_bytes",
    "interleaved_budget_bytes",
    "n_values",
    "n_steps",
    "check_mismatches",
    "error",
    "profile_key",
    "content_hash",
    "batch_id",
)
# Whole numbers stay exact (nullable Int64: a row that failed has no peaks); so do verdicts.
_TYPES = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}


def profiles_frame(dataset_root: str | Path, name: str | None = None) -> pd.DataFrame:
    """Every ``profiles`` row (``COLUMNS``), by path. A dataset that cannot be read is one
    ``InputError`` line naming the damaged file."""
    table = Dataset.open(dataset_root, tables=["profiles"]).rows().select(list(COLUMNS))
    table = table.take(pa.compute.sort_indices(table, [("path", "ascending")]))
    return table.to_pandas(types_mapper=_TYPES.get)
