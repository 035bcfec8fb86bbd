"""``tilescope normalise FILE --out DIR [--overwrite] [--json]``: each table as ``DIR/<table>.parquet``,
with the key-value metadata of ``loaders.parquet`` (tilescope and schema version, the source file's
name, size and SHA-256, units, every column's doc).

Prints the paths written, one a line; ``--json``: ``{"kind": "memory_profile"|"search_state",
"source": FILE, "sha256", "tables": {TABLE: {"path", "rows"}}}``. A table file that is FILE itself
(``normalise DIR/values.parquet --out DIR``), however spelled, is refused even with ``--overwrite``.
"""

from __future__ import annotations

import json
import sys

from tilescope.cli.inputs import load_output
from tilescope.loaders.parquet import Source, write_parquet_tables


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile or a search state")
    parser.add_argument("--out", required=True, help="directory for the Parquet files (created if missing)")
    parser.add_argument("--overwrite", action="store_true", help="replace table files that exist already")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


class _RefusePandas:
    """An import finder under which ``import pandas`` fails (ModuleNotFoundError)."""

    @staticmethod
    def find_spec(name: str, path=None, target=None):
        if name == "pandas":
            raise ModuleNotFoundError("pandas is not imported by normalise", name=name)
        return None


def _arrow_without_pandas() -> None:
    """pyarrow imports pandas at its first ``pa.array`` (to recognise pandas objects among its
    inputs): ~50 MB resident (31 MB of heap, 18 MB of code) that normalising never uses, added
    to the peak while the file's text is in memory. When nothing has imported pandas yet, that
    first look is made while ``import pandas`` fails, and pyarrow settles on "no pandas" for this
    process (converting tables to pandas is then unavailable here; normalise never does)."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    sys.meta_path.insert(0, _RefusePandas)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(_RefusePandas)


def run(args) -> int:
    _arrow_without_pandas()
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
