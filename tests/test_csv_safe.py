"""CSV output neutralises text a spreadsheet would execute, and leaves numbers alone."""

import csv
import io

import pandas as pd
import pyarrow as pa
import pytest

from tilescope.models.errors import InputError
from tilescope.report.csv_safe import to_csv_bytes, write_csv

HOSTILE = ['=HYPERLINK("http://x","click")', "+1", "@SUM(A1)", "-2+3", "\tTAB", "\rCR=1"]


def parse(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


@pytest.mark.parametrize("make", [pd.DataFrame, pa.table], ids=["pandas", "arrow"])
def test_hostile_strings_get_an_apostrophe_and_numbers_stay_numbers(make):
    table = make({"name": HOSTILE, "bytes": [-5, 0, 7, -1, 2, 3], "share": [-0.5, 0.25, 1.0, 0.0, 2.5, -3.0]})
    rows = parse(to_csv_bytes(table))
    assert rows[0] == ["name", "bytes", "share"]
    assert [r[0] for r in rows[1:]] == ["'" + text for text in HOSTILE]
    # A negative number is a number: written as typed, no apostrophe.
    assert [r[1] for r in rows[1:]] == ["-5", "0", "7", "-1", "2", "3"]
    assert [float(r[2]) for r in rows[1:]] == [-0.5, 0.25, 1.0, 0.0, 2.5, -3.0]
    assert not any(r[2].startswith("'") for r in rows[1:])


def test_harmless_strings_are_unchanged_and_quoting_survives():
    names = ["vit.encoder.layer0.mlp.up.weight", "a, b", 'say "hi"', "line\nbreak", "x=1", " =leading space", ""]
    rows = parse(to_csv_bytes(pa.table({"name": names})))
    assert [r[0] for r in rows[1:]] == names


def test_string_that_looks_negative_is_neutralised_but_int_is_not():
    rows = parse(to_csv_bytes(pd.DataFrame({"text": ["-2"], "number": [-2]})))
    assert rows[1] == ["'-2", "-2"]


def test_lists_nulls_and_booleans():
    table = pa.table(
        {"shape": [[1, 729, 1152], None], "first": pa.array([3, None], pa.int64()), "edited": [True, False]}
    )
    rows = parse(to_csv_bytes(table))
    assert rows[1] == ["[1, 729, 1152]", "3", "true"]
    assert rows[2] == ["", "", "false"]


def test_mixed_pandas_column_goes_cell_by_cell():
    # Arrow cannot type this column: numbers must still stay numbers and strings be neutralised.
    rows = parse(to_csv_bytes(pd.DataFrame({"mixed": [-3, "=1+1", 2.5, None, "ok"]})))
    assert [r[0] for r in rows[1:]] == ["-3", "'=1+1", "2.5", "", "ok"]


def test_nan_and_single_empty_column():
    rows = parse(to_csv_bytes(pd.DataFrame({"x": [float("nan"), 1.5]})))
    assert rows == [["x"], [""], ["1.5"]]
    rows = parse(to_csv_bytes(pa.table({"name": ["", "a"]})))
    assert rows == [["name"], [""], ["a"]]  # the empty row is a row, not a blank line


def test_integer_lists_of_a_sliced_table():
    table = pa.table({"shape": pa.array([[9], [1, -2], [], None, [3, None]], pa.list_(pa.int64()))})
    assert [r[0] for r in parse(to_csv_bytes(table.slice(1)))[1:]] == ["[1, -2]", "[]", "", "[3, null]"]


def test_hostile_column_name_is_neutralised():
    rows = parse(to_csv_bytes(pd.DataFrame({"=cmd": [1]})))
    assert rows[0] == ["'=cmd"]


def test_write_csv_is_atomic_and_does_not_overwrite(tmp_path):
    path = tmp_path / "values.csv"
    write_csv(pa.table({"name": ["@x"]}), path)
    assert parse(path.read_bytes()) == [["name"], ["'@x"]]
    with pytest.raises(InputError, match="exists already"):
        write_csv(pa.table({"name": ["other"]}), path)
    assert parse(path.read_bytes()) == [["name"], ["'@x"]]
    write_csv(pa.table({"name": ["other"]}), path, overwrite=True)
    assert parse(path.read_bytes()) == [["name"], ["other"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["values.csv"]  # no temporary left behind


def test_write_csv_to_buffers():
    text, binary = io.StringIO(), io.BytesIO()
    write_csv(pd.DataFrame({"a": ["+1"]}), text)
    write_csv(pd.DataFrame({"a": ["+1"]}), binary)
    # RFC 4180 line ends; text fields (and names) quoted, as pyarrow.csv writes them
    assert text.getvalue() == '"a"\r\n"\'+1"\r\n'
    assert binary.getvalue() == b'"a"\r\n"\'+1"\r\n'


def test_numbers_and_booleans_are_bare_text_is_quoted():
    data = to_csv_bytes(pa.table({"n": [-2], "f": [0.5], "b": [True], "t": ["-2"]}))
    assert data == b'"n","f","b","t"\r\n-2,0.5,true,"\'-2"\r\n'
