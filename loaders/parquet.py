"""Normalised tables out to Parquet: ``DIR/<table>.parquet``, all or nothing about overwriting."""
from __future__ import annotations

import io
from pathlib import Path
from typing import Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from tilescope.models.edits import write_atomically
from tilescope.models.errors import InputError


def write_parquet_tables(tables: Mapping[str, pa.Table], out_dir: str | Path, *, overwrite: bool = False) -> list[Path]:
    """Write each table atomically (temporary file, then rename). Existing files are never
    replaced unless ``overwrite``; then nothing at all is written."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError("$", "a directory for the Parquet files", "an existing file", file=str(out))
    targets = {name: out / f"{name}.parquet" for name in tables}
    existing = [p for p in targets.values() if p.exists()]
    if existing and not overwrite:
        raise InputError("$", "no existing table files (pass --overwrite to replace them)", f"{len(existing)} already there, e.g. {existing[0].name}", file=str(out))
    out.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        write_atomically(targets[name], buffer.getvalue(), overwrite=overwrite)
    return list(targets.values())
