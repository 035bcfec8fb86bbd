"""``tilescope report FILE [--edits EDITS.json] [--step N] --out DIR [--overwrite]``: write the PNG
report and the CSV files (``tilescope.report``) into DIR. Existing files are never replaced unless
``--overwrite``; in that case nothing at all is written."""
from __future__ import annotations

from tilescope.cli.inputs import open_profile
from tilescope.loaders.edit_sets import load_edit_set
from tilescope.planner.model import plan_profile



def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile (*.memory_profile.json)")
    parser.add_argument("--edits", metavar="EDITS.json", help="an edit-set file to apply before reporting")
    parser.add_argument("--step", type=int, metavar="N", help="step of the breakdown (default: the total peak step)")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory to write into (created if missing)")
    parser.add_argument("--overwrite", action="store_true", help="replace files that exist already")


def run(args) -> int:
    # matplotlib is imported only when a report is drawn, not on every CLI start.
    from tilescope.report.files import check_targets, report_names, report_of, write_report
    from tilescope.report.tables import report_input

    profile = open_profile(args.file)
    arrays, base_plan = plan_profile(profile)
    whatif = None
    if args.edits:
        edits = load_edit_set(args.edits)
        if edits:
            from tilescope.planner.edits import apply_edits  # raises EditError (a TilescopeError) on a bad set

            whatif = apply_edits(arrays, base_plan, edits)
    data = report_input(profile, arrays, base_plan, whatif, args.step)
    check_targets(args.out, report_names(data.step), overwrite=args.overwrite)  # before the slow drawing
    for path in write_report(report_of(data), args.out, overwrite=args.overwrite):
        print(path)
    return 0
