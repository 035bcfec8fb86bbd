"""``tilescope batch DIR --out DATASET [--scheduler ADDRESS] [--workers N] [--retry-failed] [--json]``:
every planner output under DIR normalised on Dask into one Parquet dataset (``tilescope.fleet``).

A line per file on stderr as it completes; at the end a summary on stdout (``--json``: the
object of ``fleet.driver.BatchReport.as_json``: ``processed``, ``skipped``, ``failed`` counts,
``failures`` and ``skipped_failures`` as ``[{path, error}]``, ``gone`` paths). Exit 1 when a file
failed in this run, 0 when none did, 2 for a usage error.
"""
from __future__ import annotations

import argparse
import json
import sys

from tilescope.models.format import terminal_text

HELP_EPILOG = """\
Files: every *.memory_profile.json and *.search_state.json under DIR, in any folder (names
starting with '.' skipped); the loader tells which is which from the content.

Cluster: by default a Dask LocalCluster of N worker processes on 127.0.0.1 (N = the number of
cores). With --scheduler tcp://HOST:PORT the tasks run on that cluster instead: its workers
open the input files under DIR and write their parts of DATASET themselves, so DIR and DATASET
must be readable (DATASET writable) at the same absolute paths on every worker, e.g. on a shared
filesystem, and tilescope must be installed in the workers' Python.

Rerunning over the same DATASET normalises only new or changed files (by content hash) and
replaces the rows of changed ones; an unchanged file that failed before is skipped unless
--retry-failed. Rows of files no longer under DIR are kept (listed as "gone").
"""


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of workers, found {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 worker, found {n}")
    return n


def add_arguments(parser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = HELP_EPILOG
    parser.add_argument("directory", metavar="DIR", help="folder searched recursively for planner outputs")
    parser.add_argument("--out", required=True, metavar="DATASET", help="dataset directory (created if missing)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler, tcp://HOST:PORT (default: a local cluster)")
    parser.add_argument("--workers", type=_workers, metavar="N", help="worker processes of the local cluster (default: one per core)")
    parser.add_argument("--retry-failed", action="store_true", help="load again unchanged files that failed before")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def _progress_line(done: int, total: int, summary: dict) -> str:
    path = terminal_text(summary["path"])
    status = summary["status"]
    if status == "failed":
        return f"[{done}/{total}] failed {terminal_text(summary['error'])}"
    if status == "skipped":
        note = ", failed before" if summary["error"] else ""
        return f"[{done}/{total}] skipped {path} (unchanged{note})"
    if summary["kind"] == "memory_profile":
        what = f"{summary['n_values']:,} values, {summary['n_steps']:,} steps"
        if summary["check_mismatches"]:
            what += f", {summary['check_mismatches']:,} check mismatches"
    else:
        what = "search state"
    return f"[{done}/{total}] loaded {path} ({what}) in {summary['seconds']:.2f} s"


def _text(report) -> str:
    r = report.as_json()
    lines = [
        f"{r['files']} planner outputs under {terminal_text(r['directory'])}: {r['processed']} loaded, "
        f"{r['skipped']} skipped (unchanged), {r['failed']} failed; dataset {terminal_text(r['dataset'])}"
    ]
    lines += [f"failed: {terminal_text(f['error'])}" for f in r["failures"]]
    if r["skipped_failures"]:
        lines.append(f"{len(r['skipped_failures'])} unchanged files that failed before were skipped (--retry-failed loads them again):")
        lines += [f"  {terminal_text(f['error'])}" for f in r["skipped_failures"]]
    if r["gone"]:
        lines.append(f"{len(r['gone'])} files of the dataset are no longer under DIR (their rows are kept):")
        lines += [f"  {terminal_text(p)}" for p in r["gone"]]
    if r["other_json"]:
        lines.append(f"{r['other_json']} other .json files not named *.memory_profile.json or *.search_state.json were not loaded")
    return "\n".join(lines)


def run(args) -> int:
    from tilescope.fleet.driver import run_batch
    from tilescope.models.errors import TilescopeError

    if args.scheduler and args.workers:
        raise TilescopeError("--workers sizes the local cluster; with --scheduler the cluster's own workers run the tasks")

    def on_result(done: int, total: int, summary: dict) -> None:
        print(_progress_line(done, total, summary), file=sys.stderr, flush=True)

    report = run_batch(
        args.directory, args.out, scheduler=args.scheduler, workers=args.workers,
        retry_failed=args.retry_failed, on_result=on_result,
    )
    print(json.dumps(report.as_json(), indent=1) if args.json else _text(report))
    return 1 if report.failed else 0
