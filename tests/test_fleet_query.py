"""fleet.query (DuckDB over a dataset, read in place) against pyarrow's own dataset reader over the
same files: per-folder counts and per-profile sums agree; a fragment no profiles row names (what an
interrupted batch leaves) is in the files, which pyarrow reads, and in no view; a folder named like
a date stays text; DuckDB's values come back as JSON holds them."""

from __future__ import annotations

import datetime
import decimal
import json
import shutil
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from fleet_support import run_cli

from tilescope.fleet.query import json_value, run_query, tables_named
from tilescope.synth import write_synthetic_profile


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fleet_query_tree")
    for rel, (blocks, layers) in {
        "2024-05-01/a.memory_profile.json": (1, 2),
        "2024-05-01/b.memory_profile.json": (2, 2),
        "2024-05-02/a.memory_profile.json": (3, 2),
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        write_synthetic_profile(root / rel, blocks, layers)
    out = tmp_path_factory.mktemp("fleet_query") / "dataset"
    code, _, err = run_cli("batch", root, "--out", out, "--workers", "1", "--quiet")
    assert code == 0, err
    return out


def arrow(dataset: Path, table: str):
    return pads.dataset(dataset / table, format="parquet", partitioning="hive").to_table()


def test_counts_and_sums_are_pyarrows(dataset):
    profiles = arrow(dataset, "profiles")
    columns, rows = run_query(dataset, "SELECT folder, count(*) AS n FROM profiles GROUP BY folder ORDER BY folder")
    assert columns == ["folder", "n"]
    expected: dict[str, int] = {}
    for folder in profiles.column("folder").to_pylist():
        expected[str(folder)] = expected.get(str(folder), 0) + 1
    assert dict(rows) == expected == {"2024-05-01": 2, "2024-05-02": 1}
    values = arrow(dataset, "values")
    _, rows = run_query(dataset, 'SELECT profile_key, sum(bytes), count(*) FROM "values" GROUP BY profile_key')
    grouped = values.group_by("profile_key").aggregate([("bytes", "sum"), ("bytes", "count")])
    expected_sums = {
        k: (s, n)
        for k, s, n in zip(
            grouped.column("profile_key").to_pylist(),
            grouped.column("bytes_sum").to_pylist(),
            grouped.column("bytes_count").to_pylist(),
        )
    }
    assert {k: (int(s), n) for k, s, n in rows} == expected_sums
    assert len(expected_sums) == 3


def test_a_fragment_no_profile_names_is_in_no_view(dataset, tmp_path):
    copy = tmp_path / "dataset"
    shutil.copytree(dataset, copy)
    fragment = sorted((copy / "values").rglob("*.parquet"))[0]
    table = pq.read_table(fragment)
    key = table.schema.get_field_index("profile_key")
    orphan = table.set_column(
        key, table.schema.field(key), pa.array(["orphan"] * table.num_rows).cast(table.schema.field(key).type)
    )
    pq.write_table(orphan, fragment.with_name("orphan-" + fragment.name))
    in_files = arrow(copy, "values").num_rows
    _, rows = run_query(copy, 'SELECT count(*) FROM "values"')
    assert in_files == arrow(dataset, "values").num_rows + table.num_rows
    assert rows == [(arrow(dataset, "values").num_rows,)]
    _, rows = run_query(copy, "SELECT count(*) FROM \"values\" WHERE profile_key = 'orphan'")
    assert rows == [(0,)]


def test_tables_named_and_json_values():
    assert tables_named("select * from VALUES join steps using (profile_key)") == {"profiles", "values", "steps"}
    assert tables_named("select 1") == {"profiles"}
    assert json_value(decimal.Decimal("12")) == 12 and isinstance(json_value(decimal.Decimal("12")), int)
    assert json_value(decimal.Decimal("1.5")) == 1.5
    assert json_value(datetime.date(2024, 5, 2)) == "2024-05-02"
    assert json_value(datetime.timedelta(minutes=1, seconds=3)) == 63.0
    assert json_value(b"\x00\xff") == "00ff"
    u = uuid.UUID(int=5)
    assert json_value({1: [u, decimal.Decimal("3")]}) == {"1": [str(u), 3]}
    assert json.dumps(json_value([decimal.Decimal("7"), (b"a",)])) == '[7, ["61"]]'


def test_a_date_named_folder_is_text(dataset):
    _, rows = run_query(dataset, "SELECT DISTINCT typeof(folder) FROM profiles")
    assert rows == [("VARCHAR",)]
