"""``tilescope fleet DATASET --sql QUERY [--json]``: DuckDB SQL over a dataset written by
``tilescope batch`` (``tilescope.fleet.query``). ``--json`` prints a list of row objects; the
text form is an aligned table (numbers exact, right-aligned; long text cut at 80 characters).
A query that does not run is one line on stderr, exit 2."""

from __future__ import annotations

import argparse
import json

from tilescope.models.format import shorten, terminal_text

TEXT_CELL_LIMIT = 80

HELP_EPILOG = """\
Views: profiles (one row per input file: path, kind, scope, recomputed peaks and peak steps,
fits_budget, n_values, n_steps, check_mismatches, error, ...) and, for loaded memory profiles,
values, axes, steps, live_intervals, profile_headers, mismatches, value_tiles and step_tiles,
every row carrying its profile_key. Every view has the column folder (the first folder of the
file's path below the batch's DIR): WHERE folder = '2024-05-02' reads that folder's files only.
Example, the values live at each profile's standard peak:

  SELECT p.path, v.name, v.recomputed_bytes
  FROM profiles p JOIN live_intervals l USING (profile_key) JOIN values v
    ON v.profile_key = l.profile_key AND v.id = l.value_id
  WHERE p.standard_peak_step BETWEEN l.first_step AND l.last_step AND v.region = 'standard'
  ORDER BY p.path, v.recomputed_bytes DESC
"""


def add_arguments(parser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = HELP_EPILOG
    parser.add_argument("dataset", metavar="DATASET", help="a dataset directory written by `tilescope batch`")
    parser.add_argument("--sql", required=True, metavar="QUERY", help="the DuckDB SQL to run")
    parser.add_argument("--json", action="store_true", help="print the rows as a JSON list of objects")


def _cell(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return repr(value)
    return shorten(terminal_text(str(value)), TEXT_CELL_LIMIT)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def table_text(columns: list[str], rows: list[tuple]) -> str:
    """An aligned table: a header, a rule, a line per row, then the row count."""
    header = [terminal_text(c) for c in columns]
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(header[i])] + [len(r[i]) for r in cells]) for i in range(len(columns))]
    numeric = [bool(rows) and all(_is_number(row[i]) or row[i] is None for row in rows) for i in range(len(columns))]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)] if columns else []
    out += [line(r) for r in cells]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)


def run(args) -> int:
    import duckdb

    from tilescope.fleet.query import json_value, run_query
    from tilescope.models.errors import TilescopeError

    try:
        columns, rows = run_query(args.dataset, args.sql)
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TilescopeError(f"SQL error: {first}") from None
    if args.json:
        repeated = sorted({c for c in columns if columns.count(c) > 1})
        if repeated:
            raise TilescopeError(
                f"the result has more than one column named {', '.join(repeated)}: name them apart (AS) for --json"
            )
        print(json.dumps([{c: json_value(v) for c, v in zip(columns, row)} for row in rows], indent=1))
    else:
        print(table_text(columns, rows))
    return 0
