"""``tilescope normalise FILE --out DIR [--overwrite] [--json]``: each table as ``DIR/<table>.parquet``,
with the key-value metadata of ``loaders.parquet`` (tilescope and schema version, the source file's
name, size and SHA-256, units, every column's doc).

Prints the paths written, one a line; ``--json``: ``{"kind": "memory_profile"|"search_state",
"source": FILE, "sha256", "tables": {TABLE: {"path", "rows"}}}``. A table file that is FILE itself
(``normalise DIR/values.parquet --out DIR``), however spelled, is refused even with ``--overwrite``.
"""

from __future__ import annotations

import json

from tilescope.cli.inputs import load_output
from tilescope.loaders.arrow_pandas import arrow_without_pandas
from tilescope.loaders.parquet import Source, write_parquet_tables


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile or a search state")
    parser.add_argument("--out", required=True, help="directory for the Parquet files (created if missing)")
    parser.add_argument("--overwrite", action="store_true", help="replace table files that exist already")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    arrow_without_pandas()  # (loaders.arrow_pandas: ~50 MB less at the peak)
    kind, opened = load_output(args.file, quiet=args.quiet)
    if isinstance(opened, bytes):  # a search state ("search_state": its bytes)
        from tilescope.loaders.search_state import parse_search_state
        from tilescope.loaders.search_tables import search_state_tables

        tables = search_state_tables(parse_search_state(opened, str(args.file)))
        source = Source.of_bytes(args.file, opened)
    else:
        tables = opened.file_tables()  # (a version 1 profile has no per-tile tables)
        source = Source.of_file(args.file, opened.content_sha256)
    paths = write_parquet_tables(tables, args.out, source, overwrite=args.overwrite, inputs=[args.file])
    if args.json:
        print(
            json.dumps(
                {
                    "kind": kind,
                    "source": str(args.file),
                    "sha256": source.sha256,
                    "tables": {
                        name: {"path": str(path), "rows": tables[name].num_rows} for name, path in zip(tables, paths)
                    },
                }
            )
        )
    elif not args.quiet:
        for path in paths:
            print(path)
    return 0
