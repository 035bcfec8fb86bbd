"""Normalised tables out to Parquet: ``DIR/<table>.parquet``, all or nothing about overwriting.

Every file is self-describing for any Parquet reader (DuckDB's ``parquet_kv_metadata``, pyarrow's
``ParquetFile(...).metadata.metadata``), not only inside pyarrow's base64 ``ARROW:schema``: plain
key-value metadata gives

- ``tilescope.version``, ``tilescope.schema_version`` (``models.schemas.SCHEMA_VERSION``),
  ``tilescope.table`` (the table's name);
- ``tilescope.source.name``, ``tilescope.source.bytes``, ``tilescope.source.sha256``: the planner
  output it was made from (its file name, size and the SHA-256 of its bytes, as ``sha256sum``
  prints it);
- ``tilescope.units``: how figures are measured; and for each column ``tilescope.field.NAME.doc``
  and, where it has one, ``tilescope.field.NAME.unit``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tilescope.models.files import (
    FileAccessError,
    InputPaths,
    atomic_output,
    cannot_read,
    exists_already,
    make_directory,
    refuse_inputs,
)
from tilescope.models.schemas import SCHEMA_VERSION, UNITS
from tilescope.models.version import __version__

KEY_PREFIX = "tilescope."


@dataclass(frozen=True)
class Source:
    """The planner output the tables come from."""

    name: str  # the file's name, without its folder
    size_bytes: int
    sha256: str

    @classmethod
    def of_bytes(cls, path: str | Path, data: bytes) -> Source:
        return cls(Path(path).name, len(data), hashlib.sha256(data).hexdigest())

    @classmethod
    def of_file(cls, path: str | Path, sha256: str | None = None) -> Source:
        """The file at ``path``; ``sha256`` when it is known already (the cache's key)."""
        from .cache import file_sha256

        digest = sha256 or file_sha256(path)
        try:
            size = Path(path).stat().st_size
        except OSError as exc:
            raise cannot_read(path, exc) from None
        return cls(Path(path).name, size, digest)


def file_metadata(table_name: str, schema: pa.Schema, source: Source) -> dict[str, str]:
    """The key-value metadata of one table's Parquet file (module doc)."""
    meta = {
        "tilescope.version": __version__,
        "tilescope.schema_version": str(SCHEMA_VERSION),
        "tilescope.table": table_name,
        "tilescope.source.name": source.name,
        "tilescope.source.bytes": str(source.size_bytes),
        "tilescope.source.sha256": source.sha256,
        "tilescope.units": UNITS,
    }
    for field in schema:
        field_meta = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
        meta[f"tilescope.field.{field.name}.doc"] = field_meta.get("doc", "")
        if "unit" in field_meta:
            meta[f"tilescope.field.{field.name}.unit"] = field_meta["unit"]
    return meta


def with_file_metadata(table: pa.Table, table_name: str, source: Source) -> pa.Table:
    kept = {k: v for k, v in (table.schema.metadata or {}).items() if not k.startswith(KEY_PREFIX.encode())}
    return table.replace_schema_metadata(
        {**kept, **{k.encode(): v.encode() for k, v in file_metadata(table_name, table.schema, source).items()}}
    )


def write_parquet_tables(
    tables: Mapping[str, pa.Table],
    out_dir: str | Path,
    source: Source,
    *,
    overwrite: bool = False,
    inputs: InputPaths = (),
) -> list[Path]:
    """Write each table atomically with its metadata. Existing files are never replaced unless
    ``overwrite``; then nothing at all is written. A target that is one of ``inputs`` is refused,
    ``overwrite`` or not, before anything is written (``models.files.refuse_inputs``)."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise FileAccessError(out, "is not a directory")
    targets = {name: out / f"{name}.parquet" for name in tables}
    inputs = list(inputs)
    for target in targets.values():
        refuse_inputs(target, inputs)
    existing = [p for p in targets.values() if p.exists()]
    if existing and not overwrite:
        raise exists_already(existing[0])
    make_directory(out)
    for name, table in tables.items():
        with atomic_output(targets[name], overwrite=overwrite, inputs=inputs) as handle:
            pq.write_table(with_file_metadata(table, name, source), handle)
    return list(targets.values())
