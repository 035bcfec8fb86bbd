"""Arrow schemas of the fleet dataset's tables (the layout is in ``tilescope.fleet.layout``).

``profiles`` has one row per input file. Every other table holds the rows of many profiles, each
row starting with its ``profile_key`` (the key of its ``profiles`` row); their columns are the
loader's (``models.schemas``) plus the planner's recomputed figures. Text the loader
dictionary-encodes is plain text here: each Parquet file is dictionary-encoded on disk anyway, and
plain strings read the same in DuckDB, polars and pyarrow across files with different dictionaries.

Every figure's field carries its unit in its metadata (``unit``: bytes per tile, step index, count,
seconds), as the loader's do. Each schema also carries pandas metadata naming the nullable dtype of
its whole-number and yes/no columns (``Int64``, ``boolean``), so ``pd.read_parquet`` gives integers
for the peaks, null where a file did not load, instead of float64.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pyarrow as pa

from tilescope.models.schemas import (
    AXES,
    BYTES_PER_TILE,
    LIVE_INTERVALS,
    PROFILE,
    STEP_INDEX,
    STEP_TILES,
    STEPS,
    VALUE_TILES,
    VALUES,
)

B, S, N = BYTES_PER_TILE, STEP_INDEX, "count"
# The Hive partition column of every table: the first folder of the input file's path below the
# batch's DIR ('.' for files directly in DIR). It is the directory name, not a column in the files.
FOLDER = "folder"


def _f(name: str, type_: pa.DataType, doc: str, nullable: bool = True, unit: str | None = None) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"doc": doc, **({"unit": unit} if unit else {})})


def _pandas_types(schema: pa.Schema) -> pa.Schema:
    """``schema`` with pandas metadata asking for nullable integers and booleans (module doc)."""
    columns = []
    for f in schema:
        if pa.types.is_integer(f.type):
            columns.append(
                {"name": f.name, "field_name": f.name, "pandas_type": "int64", "numpy_type": "Int64", "metadata": None}
            )
        elif pa.types.is_boolean(f.type):
            columns.append(
                {"name": f.name, "field_name": f.name, "pandas_type": "bool", "numpy_type": "boolean", "metadata": None}
            )
    pandas = {
        "index_columns": [],
        "column_indexes": [],
        "columns": columns,
        "attributes": {},
        "creator": {"library": "tilescope"},
    }
    return schema.with_metadata({**(schema.metadata or {}), b"pandas": json.dumps(pandas).encode()})


PROFILE_KEY = _f(
    "profile_key", pa.string(), "key of the profile's row in `profiles`: a hash of its path and content", nullable=False
)

PROFILES = _pandas_types(
    pa.schema(
        [
            PROFILE_KEY,
            _f("path", pa.string(), "the input file, relative to the batch's DIR, with '/' separators", nullable=False),
            _f(
                "content_hash",
                pa.string(),
                "hash of the file's bytes and the loader's schema version (null: unreadable)",
            ),
            _f("file_bytes", pa.int64(), "size of the input file", unit="bytes"),
            _f("kind", pa.string(), "memory_profile or search_state (null when the file did not load)"),
            _f("scope", pa.string(), "the profile's scope (which candidate it is for)"),
            _f("standard_peak", pa.int64(), "recomputed peak.standard (exchange rows included)", unit=B),
            _f("interleaved_peak", pa.int64(), "recomputed peak.interleaved", unit=B),
            _f("total_peak", pa.int64(), "recomputed peak.total (exchange rows included)", unit=B),
            _f(
                "effective_peak_bytes",
                pa.int64(),
                "recomputed: max(standard + interleaved usage) + support reserve",
                unit=B,
            ),
            _f("fits_budget", pa.bool_(), "recomputed (docs/formats.md §5)"),
            _f("standard_peak_step", pa.int64(), "first step reaching the standard peak", unit=S),
            _f("interleaved_peak_step", pa.int64(), "first step reaching the interleaved peak", unit=S),
            _f("total_peak_step", pa.int64(), "first step reaching the total peak", unit=S),
            _f("n_values", pa.int64(), "values in the profile", unit=N),
            _f("n_steps", pa.int64(), "steps in the profile", unit=N),
            _f(
                "check_mismatches",
                pa.int64(),
                "recorded figures that differ from the recomputation (rows of `mismatches`)",
                unit=N,
            ),
            _f("budget_bytes", pa.int64(), "per-tile memory budget, as recorded", unit=B),
            _f("interleaved_budget_bytes", pa.int64(), "interleaved budget, as recorded", unit=B),
            _f(
                "error",
                pa.string(),
                "why the file did not load, one line naming the file and where in it; null when it loaded",
            ),
            _f("tilescope_version", pa.string(), "version of tilescope that wrote the row", nullable=False),
            _f("batch_id", pa.string(), "the `tilescope batch` run that wrote the row", nullable=False),
            _f("normalised_at", pa.timestamp("us", tz="UTC"), "when the row was written", nullable=False),
            _f(
                "seconds",
                pa.float64(),
                "seconds spent hashing, loading and re-planning the file on its worker",
                nullable=False,
                unit="seconds",
            ),
            _f(
                "fragment",
                pa.string(),
                "the file of each per-profile table holding this profile's rows (one row group); null without rows",
            ),
            # Memory profiles v2/v3 (docs/formats.md §7): the format version, and where each peak is.
            _f("format_version", pa.int64(), "the memory profile's format version (1, 2 or 3)"),
            _f("standard_peak_tile", pa.int64(), "device tile of the standard peak at its step (v2/v3; null for v1)"),
            _f(
                "interleaved_peak_tile",
                pa.int64(),
                "device tile of the interleaved peak at its step (v2/v3; null for v1)",
            ),
            _f("total_peak_tile", pa.int64(), "device tile of the total peak at its step (v2/v3; null for v1)"),
        ]
    )
)


def _plain_text(schema: pa.Schema) -> list[pa.Field]:
    return [f.with_type(pa.string()) if pa.types.is_dictionary(f.type) else f for f in schema]


def _keyed(schema: pa.Schema, extra: Sequence[pa.Field] = ()) -> pa.Schema:
    return _pandas_types(pa.schema([PROFILE_KEY, *_plain_text(schema), *extra]))


# Per-profile tables, in the order a profile's files are written.
PROFILE_TABLES = {
    "profile_headers": _keyed(PROFILE),
    "values": _keyed(
        VALUES,
        [
            _f("recomputed_shard_bytes", pa.int64(), "the planner's shard bytes (docs/formats.md §2)", False, B),
            _f(
                "recomputed_aligned_bytes",
                pa.int64(),
                "recomputed shard bytes rounded up to the value's granule",
                False,
                B,
            ),
            _f(
                "recomputed_bytes",
                pa.int64(),
                "recomputed aligned bytes * copies: the value's cost on a tile while live",
                False,
                B,
            ),
        ],
    ),
    "axes": _keyed(AXES),
    "steps": _keyed(
        STEPS,
        [
            _f(
                "recomputed_usage_standard",
                pa.int64(),
                "recomputed bytes used, standard region (without exchange rows)",
                False,
                B,
            ),
            _f("recomputed_usage_interleaved", pa.int64(), "recomputed bytes used, interleaved region", False, B),
        ],
    ),
    "live_intervals": _keyed(LIVE_INTERVALS),
    "mismatches": _pandas_types(
        pa.schema(
            [
                PROFILE_KEY,
                _f("subject", pa.string(), "what the figure belongs to: value, step or profile", False),
                _f("key", pa.int64(), "value id or step index; null for a profile-wide figure"),
                _f("field", pa.string(), "which figure", False),
                _f("recorded", pa.string(), "as the file records it", False),
                _f("recomputed", pa.string(), "as the planner recomputes it", False),
                _f("tile", pa.int64(), "device tile of a per-tile figure (v2/v3); null otherwise"),
            ]
        )
    ),
}

PROFILE_TABLES["value_tiles"] = _keyed(VALUE_TILES)  # v2/v3 per-tile runs (empty for v1)
PROFILE_TABLES["step_tiles"] = _keyed(STEP_TILES)

TABLE_NAMES = ("profiles", *PROFILE_TABLES)
