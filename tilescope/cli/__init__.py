"""The ``tilescope`` command. Each subcommand lives in its own ``tilescope.cli.*`` module that
provides ``add_arguments(parser)`` and ``run(args) -> int``; this module only dispatches and turns
user-facing errors into one line on stderr and exit code 2."""
from __future__ import annotations

import argparse
import importlib
import sys

from tilescope.models.errors import TilescopeError

COMMANDS = {
    "check": "compare every recorded figure of a memory profile with the recomputation",
    "plan": "recompute the memory plan (optionally with tiling edits)",
    "place": "place every allocation at an address in its region: fragmentation and fits (optionally with tiling edits)",
    "normalise": "write the file's tables as Parquet",
    "summary": "summarise a memory profile or a search state",
    "advise": "rank tiling edits that lower a peak",
    "synth": "write a synthetic memory profile built from the sample's structure",
    "report": "write the PNG report and CSV files",
    "compare": "compare two memory plans: peaks, changed values, each peak's change value by value",
    "batch": "normalise every planner output under a folder into one Parquet dataset, on Dask",
    "fleet": "run DuckDB SQL over a dataset written by batch",
    "regress": "list the profiles whose peaks grew between two datasets (or folders of one), with the values that grew",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, no usage dump
        sys.stderr.write(f"tilescope: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tilescope", description="Explore tile-accelerator memory plans.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, help_text in COMMANDS.items():
        module = importlib.import_module(f"tilescope.cli.{name}")
        module.add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module = importlib.import_module(f"tilescope.cli.{args.command}")
    try:
        return module.run(args)
    except TilescopeError as exc:
        sys.stderr.write(f"tilescope: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
