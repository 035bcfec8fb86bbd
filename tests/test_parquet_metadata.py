"""Parquet files describe themselves to any reader: DuckDB's ``parquet_kv_metadata`` shows which
tilescope and schema version wrote them, the source file's name, size and SHA-256, the units and
every column's doc, as plain key-value pairs (not only inside pyarrow's base64 ``ARROW:schema``)."""

from __future__ import annotations

import hashlib
import json
import shutil

import duckdb
import pyarrow as pa
import pytest

from tilescope import __version__, cli
from tilescope.models.schemas import PER_TILE_TABLES, PROFILE_TABLES, SCHEMA_VERSION
from tilescope.models.search_schemas import SEARCH_TABLES
from tilescope.samples import SEARCH_STATE, sample_path


def kv_metadata(path) -> dict[str, str]:
    rows = duckdb.connect().execute("SELECT key, value FROM parquet_kv_metadata(?)", [str(path)]).fetchall()
    decode = lambda b: b.decode() if isinstance(b, (bytes, bytearray)) else str(b)  # noqa: E731
    return {decode(k): decode(v) for k, v in rows}


def test_every_schema_field_has_a_doc():
    schemas = {**PROFILE_TABLES, **{k: v for k, v in SEARCH_TABLES.items() if isinstance(v, pa.Schema)}}
    undocumented = [
        f"{table}.{f.name}" for table, schema in schemas.items() for f in schema if not (f.metadata or {}).get(b"doc")
    ]
    assert undocumented == []


@pytest.mark.parametrize("kind", ["memory_profile", "search_state"])
def test_duckdb_reads_the_metadata_of_every_table(tmp_path, capsys, kind):
    source = tmp_path / ("input.memory_profile.json" if kind == "memory_profile" else "input.search_state.json")
    shutil.copyfile(sample_path() if kind == "memory_profile" else sample_path(SEARCH_STATE), source)
    out = tmp_path / "out"
    assert cli.main(["normalise", str(source), "--out", str(out), "--json"]) == 0
    written = json.loads(capsys.readouterr().out)
    sha256 = hashlib.sha256(source.read_bytes()).hexdigest()
    assert written["kind"] == kind and written["sha256"] == sha256
    # (the sample is version 1: no per-tile tables, docs/formats.md §7)
    expected_tables = (
        [t for t in PROFILE_TABLES if t not in PER_TILE_TABLES] if kind == "memory_profile" else SEARCH_TABLES
    )
    assert sorted(written["tables"]) == sorted(expected_tables)
    for name, entry in written["tables"].items():
        meta = kv_metadata(entry["path"])
        assert meta["tilescope.version"] == __version__
        assert meta["tilescope.schema_version"] == str(SCHEMA_VERSION)
        assert meta["tilescope.table"] == name
        assert meta["tilescope.source.name"] == source.name
        assert meta["tilescope.source.bytes"] == str(source.stat().st_size)
        assert meta["tilescope.source.sha256"] == sha256
        assert "bytes per tile" in meta["tilescope.units"]
        top_level = duckdb.connect().execute("DESCRIBE SELECT * FROM read_parquet(?)", [entry["path"]]).fetchall()
        for column_name, *_ in top_level:
            doc = meta.get(f"tilescope.field.{column_name}.doc")
            assert doc, f"{name}.{column_name} has no doc in the key-value metadata"
        rows = duckdb.connect().execute("SELECT count(*) FROM read_parquet(?)", [entry["path"]]).fetchone()[0]
        assert rows == entry["rows"]


def test_units_and_docs_of_byte_columns(tmp_path, capsys, raw):
    assert cli.main(["normalise", str(sample_path()), "--out", str(tmp_path), "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    meta = kv_metadata(tmp_path / "values.parquet")
    assert meta["tilescope.field.shard_bytes.unit"] == "bytes per tile"
    assert meta["tilescope.field.bytes.doc"] == "recorded aligned_bytes * copies"
    assert "tilescope.field.name.unit" not in meta  # text has no unit
    axes = kv_metadata(tmp_path / "axes.parquet")
    for field in ("partitions", "padding_groups", "block_size", "padding_multiple", "shard_padding_multiple"):
        assert len(axes[f"tilescope.field.{field}.doc"]) > 20
    # and the figures themselves are the file's (independent: the raw JSON)
    total = (
        duckdb.connect()
        .execute("SELECT sum(bytes) FROM read_parquet(?)", [str(tmp_path / "values.parquet")])
        .fetchone()[0]
    )
    assert total == sum(v["bytes"] for v in raw["timeline"]["values"])
