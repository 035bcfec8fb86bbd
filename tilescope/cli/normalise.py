"""``tilescope normalise FILE --out DIR [--overwrite]``: each table as ``DIR/<table>.parquet``."""
from __future__ import annotations

from tilescope.loaders.parquet import write_parquet_tables
from tilescope.cli.inputs import open_output


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile or a search state")
    parser.add_argument("--out", required=True, help="directory for the Parquet files (created if missing)")
    parser.add_argument("--overwrite", action="store_true", help="replace table files that exist already")


def run(args) -> int:
    kind, opened = open_output(args.file)
    if kind == "search_state":
        from tilescope.loaders.search_state import parse_search_state
        from tilescope.loaders.search_tables import search_state_tables

        tables = search_state_tables(parse_search_state(opened, str(args.file)))
    else:
        tables = opened.tables()
    for path in write_parquet_tables(tables, args.out, overwrite=args.overwrite):
        print(path)
    return 0
