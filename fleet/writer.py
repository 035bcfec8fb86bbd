"""Write one input file's rows into a dataset, atomically (the protocol is in ``fleet.layout``).

Runs on a Dask worker: the worker writes its partitions itself and sends back only the small
``profiles`` row, so a large profile's tables never travel through the scheduler.
"""
from __future__ import annotations

import os
import shutil
from typing import Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from .layout import Dataset
from .schema import PROFILE_TABLES, PROFILES


def commit_profile(dataset: Dataset, row: dict, tables: Mapping[str, pa.Table] | None) -> None:
    """Replace the rows of ``row["path"]`` with ``row`` and, for a loaded memory profile, its
    ``tables`` (one per ``schema.PROFILE_TABLES``, rows carrying ``row["profile_key"]``).

    The partitions are renamed into place before the row, so the row never names a partition
    that is missing; the previous content's partitions are deleted after it.
    """
    key, path = row["profile_key"], row["path"]
    if tables is not None and set(tables) != set(PROFILE_TABLES):
        raise ValueError(f"tables {sorted(tables)} are not {sorted(PROFILE_TABLES)}")
    stage = dataset.staging_dir()
    try:
        staged = {}
        for name, table in (tables or {}).items():
            staged[name] = stage / f"{name}.parquet"
            pq.write_table(table.cast(PROFILE_TABLES[name]), staged[name])
        staged_row = stage / "profiles.parquet"
        pq.write_table(pa.Table.from_pylist([row], schema=PROFILES), staged_row)
        previous = dataset.read_row(path)
        for name, staged_file in staged.items():
            os.replace(staged_file, dataset.table_path(name, key))
        os.replace(staged_row, dataset.row_path(path))  # the commit
        if previous is not None and previous["profile_key"] != key:
            for name in PROFILE_TABLES:
                dataset.table_path(name, previous["profile_key"]).unlink(missing_ok=True)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
