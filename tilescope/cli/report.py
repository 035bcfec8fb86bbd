"""``tilescope report FILE [--edits EDITS.json] [--step N] --out DIR [--overwrite] [--json]``: write
the PNG report and the CSV files (``tilescope.report``) into DIR. Existing files are never replaced
unless ``--overwrite``; in that case nothing at all is written. A file to write that is one of the
inputs (FILE, B or an edit set, however spelled) is refused even with ``--overwrite``.

``tilescope report A --compare B [--edits E] [--compare-edits E] --out DIR`` writes the compare
form instead (``report.compare_tables``, ``report.compare_png``): compare.png, compare_values.csv,
compare_attribution.csv, compare_steps.csv and compare.json; ``--edits`` applies to A,
``--compare-edits`` to B (``--compare-edits`` without ``--compare`` compares A with A edited).

Prints the paths written, one a line; ``--json``: ``{"source": FILE, "step": N (the breakdown's
step), "files": [PATH, ...]}`` in writing order.
"""

from __future__ import annotations

import json

from tilescope.cli.inputs import open_profile
from tilescope.derived.plan_data import PlanData
from tilescope.loaders.edit_sets import load_edit_set
from tilescope.models.edits import EDIT_SET_FORMAT


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile (*.memory_profile.json)")
    parser.add_argument("--edits", metavar="EDITS.json", help="an edit-set file to apply before reporting")
    parser.add_argument("--step", type=int, metavar="N", help="step of the breakdown (default: the total peak step)")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory to write into (created if missing)")
    parser.add_argument("--overwrite", action="store_true", help="replace files that exist already")
    parser.add_argument("--compare", metavar="B", help="write the compare form: FILE (A) against the memory profile B")
    parser.add_argument(
        "--compare-edits", metavar="EDITS.json", help="an edit set applied to B (to A itself without --compare)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.epilog = EDIT_SET_FORMAT  # the edit-set file's reference (models.edits)


def inputs_of(args) -> list[str | None]:
    """Every file the report is made from: none of them is ever written (``models.files``)."""
    return [args.file, args.compare, args.edits, args.compare_edits]


def run_compare(args) -> int:
    from argparse import Namespace

    from tilescope.cli.compare import comparison_of
    from tilescope.models.errors import TilescopeError
    from tilescope.report.compare_png import compare_png
    from tilescope.report.compare_tables import COMPARE_NAMES, COMPARE_PNG, compare_tables
    from tilescope.report.files import Report, check_targets, write_report

    if args.step is not None:
        raise TilescopeError("--step: not with --compare (the compare form attributes each peak at its own step)")
    check_targets(
        args.out, list(COMPARE_NAMES), overwrite=args.overwrite, inputs=inputs_of(args)
    )  # before the slow part
    comparison = comparison_of(
        Namespace(a=args.file, b=args.compare, edits_a=args.edits, edits_b=args.compare_edits, top=0)
    )
    file_b = args.compare if args.compare is not None else args.file
    files = {COMPARE_PNG: compare_png(comparison, args.file, file_b), **compare_tables(comparison, args.file, file_b)}
    written = write_report(
        Report(files, comparison.a.plan.peaks.total_step), args.out, overwrite=args.overwrite, inputs=inputs_of(args)
    )
    print_written(args, str(args.file), comparison.a.plan.peaks.total_step, written)
    return 0


def run(args) -> int:
    if args.compare is not None or args.compare_edits is not None:
        return run_compare(args)
    # matplotlib is imported only when a report is drawn, not on every CLI start.
    from tilescope.report.files import check_targets, report_names, report_of, write_report
    from tilescope.report.tables import report_input

    opened = open_profile(args.file, quiet=args.quiet)
    whatif = None
    if args.edits:
        edits = load_edit_set(args.edits)
        if edits:
            from tilescope.planner.edits import apply_edits  # raises EditError (a TilescopeError) on a bad set

            whatif = apply_edits(opened.arrays, opened.plan, edits)
    data = report_input(PlanData(opened, whatif), args.step)
    check_targets(
        args.out, report_names(data.step), overwrite=args.overwrite, inputs=inputs_of(args)
    )  # before the slow drawing
    written = write_report(report_of(data), args.out, overwrite=args.overwrite, inputs=inputs_of(args))
    print_written(args, str(args.file), data.step, written)
    return 0


def print_written(args, source: str, step: int, written) -> None:
    """The paths written, one a line; ``--json``: one object (module doc)."""
    if args.json:
        print(json.dumps({"source": source, "step": step, "files": [str(p) for p in written]}))
    elif not args.quiet:
        for path in written:
            print(path)
