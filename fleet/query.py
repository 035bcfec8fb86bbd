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
import uuid
from pathlib import Path

import duckdb

import pyarrow as pa

from .layout import Dataset
from .schema import FOLDER, PROFILE_TABLES, PROFILES


def connect(dataset_root: str | Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the dataset's tables as views."""
    dataset = Dataset.open(dataset_root)
    con = duckdb.connect()
    for name, schema in {"profiles": PROFILES, **PROFILE_TABLES}.items():
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
    con = connect(dataset_root)
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
