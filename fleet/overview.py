"""What the app's fleet view lists: the ``profiles`` rows of a dataset, read by DuckDB in place
(``fleet.query.connect``). Called in a worker thread, never on a session's event loop."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from tilescope.models.errors import TilescopeError

from .query import connect

COLUMNS = (
    "path", "kind", "scope", "standard_peak", "interleaved_peak", "total_peak", "effective_peak_bytes", "fits_budget",
    "budget_bytes", "n_values", "n_steps", "check_mismatches", "error", "profile_key", "content_hash", "batch_id",
)
# Whole numbers stay exact (nullable Int64: a row that failed has no peaks); so do verdicts.
_TYPES = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}


def profiles_frame(dataset_root: str | Path, name: str | None = None) -> pd.DataFrame:
    """Every ``profiles`` row (``COLUMNS``), by path. A dataset that cannot be read is one
    ``TilescopeError`` line naming it (``name``: how the page names it) and what DuckDB found."""
    label = name or str(dataset_root)
    con = None
    try:
        con = connect(dataset_root)  # InputError naming the directory when it is not a dataset
        columns = ", ".join(f'"{c}"' for c in COLUMNS)
        table = con.sql(f"SELECT {columns} FROM profiles ORDER BY path").arrow()
        if isinstance(table, pa.RecordBatchReader):  # (newer DuckDB hands a reader)
            table = table.read_all()
    except duckdb.Error as exc:
        first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise TilescopeError(f"{label}: the dataset's tables cannot be read: {first.strip()}") from None
    finally:
        if con is not None:
            con.close()
    return table.to_pandas(types_mapper=_TYPES.get)
