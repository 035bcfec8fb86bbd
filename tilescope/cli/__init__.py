"""The ``tilescope`` command. Each subcommand lives in its own ``tilescope.cli.*`` module that
provides ``add_arguments(parser)`` and ``run(args) -> int``; this module only dispatches and turns
user-facing errors into one line on stderr and exit code 2: control characters and ANSI escapes
written as escapes, overlong tokens cut (``models.errors.one_line``).

Every command takes ``--quiet`` (before or after its name): no progress lines and no confirmation
lines (the paths written, ``ok: ...``); what was asked for (a plan, JSON, mismatches) and errors
are still printed. A usage error is one line ending ``try 'tilescope CMD --help'``."""

from __future__ import annotations

import argparse
import importlib
import sys

from tilescope.models.errors import TilescopeError, one_line
from tilescope.models.version import __version__

__all__ = ["COMMANDS", "build_parser", "main", "parse_arguments"]

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
    "serve": "serve the explorer in the browser (loopback only unless --address says otherwise)",
    "cache": "list or clear the cache of normalised profiles",
    "solve": "place one tile's placement problem (a compiler dump or a MiniMalloc CSV) with proof: placed, infeasible or unknown",
    "regress": "list the profiles whose peaks grew between two datasets (or folders of one), with the values that grew",
    "sample": "print the path of a bundled sample: the memory profile, the search state or an example edit set",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, no usage dump; where to read more
        sys.stderr.write(f"{self.prog}: {one_line(message)}; try '{self.prog} --help'\n")
        raise SystemExit(2)


QUIET_HELP = "no progress or confirmation lines (results and errors are still printed)"


def _ascii_only(convert):
    """Every typed option of the CLI is a number (a count, a step, a size, an edit, a port), and
    ``int``/``float`` (and ``re``'s ``\\d``) also read ``٥`` or ``１０`` as digits: a value that
    converts but is not ASCII is refused, so ``--top ٥`` is a usage error, not 5."""

    def checked(text: str):
        value = convert(text)
        if not text.isascii():
            raise argparse.ArgumentTypeError(f"expected a number in ASCII digits (0-9), found {text!r}")
        return value

    checked.__name__ = getattr(convert, "__name__", "value")  # argparse names the type in its messages
    return checked


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``only``: the one command whose module is imported and whose
    options are added (the others are listed with their help), so running a command does not
    import every command's dependencies (pandas, panel: tens of MB resident, seconds of start-up)."""
    parser = _Parser(prog="tilescope", description="Explore tile-accelerator memory plans.")
    parser.add_argument("--version", action="version", version=f"tilescope {__version__}")
    parser.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, help_text in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=help_text)
        if only is not None and name != only:
            continue
        module = importlib.import_module(f"tilescope.cli.{name}")
        # SUPPRESS: ``tilescope --quiet plan`` is not undone by the subcommand's default
        command.add_argument("--quiet", "-q", action="store_true", default=argparse.SUPPRESS, help=QUIET_HELP)
        module.add_arguments(command)
        for action in command._actions:
            if action.type is not None:
                action.type = _ascii_only(action.type)
    return parser


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """``build_parser().parse_args``, but an unknown option is the subcommand's usage error (its
    ``--help`` is the one to read), not the top-level parser's."""
    parser = build_parser(_command_named(sys.argv[1:] if argv is None else argv))
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        subcommands.choices[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def _command_named(argv: list[str]) -> str | None:
    """The command ``argv`` runs (its first word that is not an option), None when there is none
    or it is not a command (then the whole parser is built, to list the commands)."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in COMMANDS else None


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    module = importlib.import_module(f"tilescope.cli.{args.command}")
    try:
        return module.run(args)
    except TilescopeError as exc:
        # One line whatever the file name or the file holds (models.errors.one_line).
        sys.stderr.write(f"tilescope: {one_line(str(exc))}\n")
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
