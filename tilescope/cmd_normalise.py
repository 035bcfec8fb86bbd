"""``tilescope normalise FILE --out DIR``: each table as ``DIR/<table>.parquet``."""
from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from tilescope.inputs import open_profile


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile or a search state")
    parser.add_argument("--out", required=True, help="directory for the Parquet files (created if missing)")


def run(args) -> int:
    from loaders.detect import detect_kind  # written with the search-state loader

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if detect_kind(args.file) == "search_state":
        from loaders.search_state import load_search_state, write_search_state_tables

        written = write_search_state_tables(load_search_state(args.file), out)
    else:
        written = []
        for name, table in open_profile(args.file).tables().items():
            path = out / f"{name}.parquet"
            pq.write_table(table, path)
            written.append(path)
    for path in written:
        print(path)
    return 0
