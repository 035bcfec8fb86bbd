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

The columns are made safe with Arrow compute, then ``pyarrow.csv`` writes them: RFC 4180 CSV,
UTF-8, comma-separated, ``\\r\\n`` line ends, every text field (and every column name) in double
quotes, numbers and booleans bare. (pyarrow before 26 cannot end lines with ``\\r\\n``:
``crlf_line_ends`` converts its output.)
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
import pyarrow.csv as pa_csv

from tilescope.models.files import atomic_output

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_TRIGGER_PATTERN = r"^([=+\-@\t\r])"  # the same set, for Arrow's RE2
LINE_END = "\r\n"


def _writes_crlf() -> bool:
    try:
        pa_csv.WriteOptions(eol=LINE_END)
        return True
    except TypeError:  # pyarrow before 26 ends every line with "\n" (crlf_line_ends does the rest)
        return False


_NATIVE_CRLF = _writes_crlf()


def neutralise(text: str) -> str:
    """``text`` with a leading apostrophe if a spreadsheet would read it as a formula."""
    return "'" + text if text.startswith(FORMULA_TRIGGERS) else text


def _cell_text(value: Any) -> str | None:
    """One cell of a column without one Arrow type (mixed objects, nested lists), as neutralised
    text; None for a null."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else repr(float(value))
    if isinstance(value, (list, tuple, np.ndarray)):
        return neutralise(json.dumps([_json_item(v) for v in value]))
    return neutralise(str(value))


def _json_item(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_json_item(v) for v in value]
    return value


def _int_lists_text(lists: pa.ListArray) -> pa.Array:
    """``[1, 729, 1152]`` per list of integers (as json.dumps writes it), vectorised."""
    items = pa.ListArray.from_arrays(lists.offsets, pc.cast(lists.values, pa.string()), mask=lists.is_null())
    return pc.binary_join_element_wise("[", pc.binary_join(items, ", "), "]", "")


def _safe_column(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """A column ``pyarrow.csv`` can write as it stands: text neutralised, NaN null, lists as JSON text."""
    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    if pa.types.is_integer(kind) or pa.types.is_boolean(kind):
        return column
    if pa.types.is_floating(kind):
        return pc.if_else(pc.is_nan(column), pa.scalar(None, kind), column)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return pc.replace_substring_regex(column, _TRIGGER_PATTERN, "'\\1")
    if pa.types.is_list(kind) and pa.types.is_integer(kind.value_type):
        lists = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        if lists.values.null_count == 0:
            return pc.replace_substring_regex(_int_lists_text(lists), _TRIGGER_PATTERN, "'\\1")
    return pa.array([_cell_text(v) for v in column.to_pylist()], pa.string())  # anything else: cell by cell


def _columns_of(table: pd.DataFrame | pa.Table) -> tuple[list[str], list[pa.ChunkedArray | pa.Array]]:
    """Column names and Arrow columns; a pandas column Arrow cannot type goes cell by cell."""
    if isinstance(table, pa.Table):
        return list(table.column_names), [_safe_column(c) for c in table.columns]
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame or a pyarrow Table, got {type(table).__name__}")
    names, columns = [], []
    for position in range(table.shape[1]):
        series = table.iloc[:, position]
        names.append(str(table.columns[position]))
        try:
            columns.append(_safe_column(pa.Array.from_pandas(series)))
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            columns.append(pa.array([_cell_text(v) for v in series.tolist()], pa.string()))
    return names, columns


def safe_table(table: pd.DataFrame | pa.Table) -> pa.Table:
    """``table`` as the CSV writer gets it: every cell and column name neutralised."""
    names, columns = _columns_of(table)
    if len(columns) == 1:
        # A row of one null field would be a blank line, which readers skip: as text it is ``""``.
        columns = [pc.fill_null(pc.cast(columns[0], pa.string()), "")]
    return pa.Table.from_arrays(columns, names=[neutralise(name) for name in names])


def crlf_line_ends(data: bytes) -> bytes:
    """``pyarrow.csv`` output with ``\n`` row ends turned into ``\r\n``; a line feed inside a quoted
    field stays as it is. Outside quotes means after an even number of ``"`` (a doubled quote
    inside a field counts twice, so the parity holds)."""
    text = np.frombuffer(data, dtype=np.uint8)
    inside = np.cumsum(text == ord('"'), dtype=np.uint8) & 1  # wraps at 256: parity is all that is kept
    row_ends = np.flatnonzero((text == ord("\n")) & (inside == 0))
    return np.insert(text, row_ends, ord("\r")).tobytes()


def to_csv_bytes(table: pd.DataFrame | pa.Table) -> bytes:
    """The neutralised CSV of a DataFrame or Arrow table, UTF-8 encoded."""
    safe = safe_table(table)
    if safe.num_columns == 0:
        return LINE_END.encode()
    buffer = io.BytesIO()
    if _NATIVE_CRLF:
        pa_csv.write_csv(safe, buffer, pa_csv.WriteOptions(eol=LINE_END))
        return buffer.getvalue()
    pa_csv.write_csv(safe, buffer)
    return crlf_line_ends(buffer.getvalue())


def write_csv_to(table: pd.DataFrame | pa.Table, sink: IO[bytes]) -> None:
    """Write the neutralised CSV of ``table`` to a binary handle."""
    sink.write(to_csv_bytes(table))


def write_csv(table: pd.DataFrame | pa.Table, path_or_buffer: str | Path | IO, *, overwrite: bool = False) -> None:
    """Write the neutralised CSV of ``table``.

    A path is written atomically with the permissions of a normal file (``models.files``) and
    never replaces an existing file unless ``overwrite`` (FileAccessError otherwise). A buffer gets
    bytes if it is binary, text otherwise.
    """
    if isinstance(path_or_buffer, (str, Path)):
        with atomic_output(path_or_buffer, overwrite=overwrite) as handle:
            write_csv_to(table, handle)
    elif isinstance(path_or_buffer, io.TextIOBase):
        path_or_buffer.write(to_csv_bytes(table).decode("utf-8"))
    else:
        write_csv_to(table, path_or_buffer)
