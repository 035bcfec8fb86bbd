"""DuckDB over a fleet dataset, read in place: ``profiles`` and each per-profile table
(``schema.PROFILE_TABLES``) registered as a view, each with the Hive partition column ``folder``
(the first folder of the input file's path), so ``WHERE folder = '2024-05-02'`` reads that
folder's files only.

The per-profile views keep only rows whose ``profile_key`` is a row of ``profiles`` (a batch that
was interrupted can leave fragments no row names until the next batch removes them: see
``fleet.layout``). Every file is checked before DuckDB sees it (``Dataset.open``: regular files
only, so a FIFO never blocks a query; each file's columns its table's), and files are passed to
DuckDB as a list, not a glob, so a dataset path holding glob characters or quotes reads as it is.
"""

from __future__ import annotations

import datetime
import decimal
import re
import uuid
from pathlib import Path

import duckdb
import pyarrow as pa

from .layout import Dataset
from .schema import FOLDER, PROFILE_TABLES, PROFILES, TABLE_NAMES


def tables_named(sql: str) -> set[str]:
    """The dataset's tables a query names (as words, any case), and ``profiles``, which every
    other view joins on."""
    return {"profiles"} | {t for t in PROFILE_TABLES if re.search(rf"\b{t}\b", sql, re.IGNORECASE)}


def connect(dataset_root: str | Path, tables: set[str] | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the dataset's tables (default: all) as views; only
    their files are checked and bound, so a query of ``profiles`` does not open every fragment."""
    wanted = set(TABLE_NAMES) if tables is None else tables | {"profiles"}
    dataset = Dataset.open(dataset_root, tables=sorted(wanted))
    con = duckdb.connect()
    for name, schema in {"profiles": PROFILES, **PROFILE_TABLES}.items():
        if name not in wanted:
            continue
        files = [str(p) for _, p in dataset.table_files(name)]
        source = f"_{name}_files"
        if files:
            # hive_types: a folder named like a date or a number stays text
            con.sql(
                f"SELECT * FROM read_parquet($files, hive_partitioning = true, hive_types = {{'{FOLDER}': VARCHAR}})",
                params={"files": files},
            ).create_view(source)
        else:  # no file yet: an empty table of the same columns
            con.register(source, schema.append(pa.field(FOLDER, pa.string())).empty_table())
        if name == "profiles":
            con.execute(f'CREATE VIEW "profiles" AS SELECT * FROM "{source}"')
        else:
            con.execute(
                f'CREATE VIEW "{name}" AS SELECT * FROM "{source}" '
                'WHERE profile_key IN (SELECT profile_key FROM "profiles")'
            )
    return con


def run_query(dataset_root: str | Path, sql: str) -> tuple[list[str], list[tuple]]:
    """Column names and rows of ``sql`` over the dataset (``duckdb.Error`` when it does not run)."""
    con = connect(dataset_root, tables_named(sql))
    try:
        relation = con.sql(sql)
        if relation is None:  # a statement without a result (CREATE, SET, ...)
            return [], []
        return list(relation.columns), relation.fetchall()
    finally:
        con.close()


def json_value(value: object) -> object:
    """A DuckDB result value as JSON can hold it: exact integers stay integers."""
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    return value
