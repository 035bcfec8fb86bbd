"""CSV output that spreadsheet programs cannot execute ("CSV injection" / formula injection).

Excel, LibreOffice and Google Sheets treat a cell whose text starts with ``=``, ``+``, ``-`` or ``@``
as a formula (``=HYPERLINK("http://…")``, ``@SUM(A1)``, ``-2+3``), and some also do after a leading
tab or carriage return. Value names and operation strings come from files we did not write, so every
CSV tilescope writes goes through here:

- a **string** cell starting with one of ``= + - @ \\t \\r`` gets a leading apostrophe (``'``), the
  usual neutralisation (OWASP): spreadsheets show the text as typed, and the apostrophe makes the
  escaping visible to anyone reading the file as plain text;
- numbers (ints, floats) are written as numbers, unchanged: ``-2`` in an integer column is a
  number, not a formula; only strings are neutralised. Booleans are ``true``/``false``, NaN and
  null an empty field;
- list cells (e.g. a shape) are written as JSON text (``[1, 729, 1152]``), then treated as strings;
- column names are neutralised the same way (they are ours, but the rule costs nothing).

The output is RFC 4180 CSV: UTF-8, comma-separated, ``\\r\\n`` line ends, a field in double quotes
when it holds a comma, a quote, a carriage return or a line feed. Typed Arrow columns are formatted
column-wise with Arrow compute (10⁵-row tables in well under a second).
"""
from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tilescope.models.edits import write_atomically

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_TRIGGER_PATTERN = r"^([=+\-@\t\r])"  # the same set, for Arrow's RE2
_NEEDS_QUOTES = r'[",\r\n]'
LINE_END = "\r\n"


def neutralise(text: str) -> str:
    """``text`` with a leading apostrophe if a spreadsheet would read it as a formula."""
    return "'" + text if text.startswith(FORMULA_TRIGGERS) else text


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in '",\r\n') else text


def _field(value: Any) -> str:
    """One cell's CSV field, for columns without one Arrow type (mixed objects, lists)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return "" if math.isnan(value) else repr(float(value))
    if isinstance(value, (list, tuple, np.ndarray)):
        return _quote(neutralise(json.dumps([_json_item(v) for v in value])))
    return _quote(neutralise(str(value)))


def _json_item(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_json_item(v) for v in value]
    return value


def _safe_strings(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Neutralise, then quote where the CSV syntax needs it; vectorised over the column."""
    text = pc.replace_substring_regex(column, _TRIGGER_PATTERN, "'\\1")
    quoted = pc.binary_join_element_wise("", pc.replace_substring(text, '"', '""'), "", '"')
    return pc.if_else(pc.match_substring_regex(text, _NEEDS_QUOTES), quoted, text)


def _fields(column: pa.ChunkedArray) -> pa.ChunkedArray | pa.Array:
    """The CSV fields of one Arrow column, as strings (null → empty field)."""
    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    if pa.types.is_integer(kind):
        fields = pc.cast(column, pa.string())
    elif pa.types.is_floating(kind):
        fields = pc.if_else(pc.is_nan(column), "", pc.cast(column, pa.string()))
    elif pa.types.is_boolean(kind):
        fields = pc.if_else(column, "true", "false")
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
        fields = _safe_strings(column)
    elif pa.types.is_list(kind) and pa.types.is_integer(kind.value_type) and _int_lists(column).values.null_count == 0:
        fields = _safe_strings(_int_lists_text(_int_lists(column)))
    else:  # lists, structs, anything else: cell by cell
        fields = pa.array([_field(v) for v in column.to_pylist()], pa.string())
    return pc.fill_null(fields, "")


def _int_lists(column: pa.ChunkedArray | pa.Array) -> pa.ListArray:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _int_lists_text(lists: pa.ListArray) -> pa.Array:
    """``[1, 729, 1152]`` per list of integers (as json.dumps writes it), vectorised."""
    items = pa.ListArray.from_arrays(lists.offsets, pc.cast(lists.values, pa.string()), mask=lists.is_null())
    return pc.binary_join_element_wise("[", pc.binary_join(items, ", "), "]", "")


def _arrow_table(table: pd.DataFrame | pa.Table) -> tuple[list[str], list[pa.ChunkedArray | pa.Array]]:
    """Column names and Arrow field columns; a pandas column Arrow cannot type goes cell by cell."""
    if isinstance(table, pa.Table):
        return list(table.column_names), [_fields(table.column(i)) for i in range(table.num_columns)]
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame or a pyarrow Table, got {type(table).__name__}")
    names, columns = [], []
    for position in range(table.shape[1]):
        series = table.iloc[:, position]
        names.append(str(table.columns[position]))
        try:
            columns.append(_fields(pa.chunked_array([pa.Array.from_pandas(series)])))
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            columns.append(pa.array([_field(v) for v in series.tolist()], pa.string()))
    return names, columns


def to_csv_bytes(table: pd.DataFrame | pa.Table) -> bytes:
    """The neutralised CSV of a DataFrame or Arrow table, UTF-8 encoded."""
    names, columns = _arrow_table(table)
    head = ",".join(_quote(neutralise(name)) for name in names)
    if not columns:
        return (head + LINE_END).encode("utf-8")
    rows = pc.binary_join_element_wise(*columns, ",") if len(columns) > 1 else columns[0]
    lines = rows.to_pylist()
    if len(columns) == 1:  # a row of one empty field must not read as a blank line
        lines = [line or '""' for line in lines]
    return "".join(line + LINE_END for line in [head, *lines]).encode("utf-8")


def write_csv_to(table: pd.DataFrame | pa.Table, handle: IO[str]) -> None:
    """Write the neutralised CSV text of ``table`` to an open text handle."""
    handle.write(to_csv_bytes(table).decode("utf-8"))


def write_csv(table: pd.DataFrame | pa.Table, path_or_buffer: str | Path | IO, *, overwrite: bool = False) -> None:
    """Write the neutralised CSV of ``table``.

    A path is written atomically (temporary file + rename) and never replaces an existing file
    unless ``overwrite`` (InputError otherwise). A buffer gets bytes if it is binary, text otherwise.
    """
    data = to_csv_bytes(table)
    if isinstance(path_or_buffer, (str, Path)):
        write_atomically(path_or_buffer, data, overwrite=overwrite)
    elif isinstance(path_or_buffer, io.TextIOBase):
        path_or_buffer.write(data.decode("utf-8"))
    else:
        path_or_buffer.write(data)
