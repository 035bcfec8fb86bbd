"""``tilescope batch DIR --out DATASET [--scheduler ADDRESS] [--workers N] [--retry-failed] [--json]``:
every planner output under DIR normalised into one Parquet dataset by local worker processes or on
a Dask cluster (``tilescope.fleet``).

A line per file on stderr as it completes (none with ``--quiet``); at the end a summary on stdout
(``--json``: the object of ``fleet.driver.BatchReport.as_json``: ``processed``, ``skipped``,
``failed`` counts, ``failures`` and ``skipped_failures`` as ``[{path, error}]``, ``not_loaded`` and
``others`` as ``[{path, why}]``, ``gone`` paths, ``repaired``, ``worker_cpu_seconds``: the CPU
each local worker process used). Exit 0 when every planner output
loaded or was unchanged; 1 when one failed in this run, or when DIR holds no planner output at
all; 2 for a usage error or a dataset that cannot be written.
"""

from __future__ import annotations

import argparse
import json
import sys

from tilescope.models.format import terminal_text

OTHERS_SHOWN = 20
HELP_EPILOG = """\
Files: every file under DIR, in any folder, whatever its name (names starting with '.'
skipped): a worker tells planner outputs from their first bytes (memory profiles v1-v3,
search states, placement dumps, placement profiles) and loads them. Every other
entry is listed with why it was not read: not a planner output, a FIFO or device, a dangling
symlink or loop, a symlink to a file outside DIR or to a folder.

Workers: by default N worker processes started from this one (N = the number of cores; named
tilescope-work). With --scheduler tcp://HOST:PORT the tasks run on that Dask cluster instead: its workers
open the input files under DIR and write their parts of DATASET themselves, so DIR and DATASET
must be readable (DATASET writable) at the same absolute paths on every worker, e.g. on a shared
filesystem, and tilescope must be installed in the workers' Python.

Rerunning over the same DATASET normalises only new or changed files (by content hash) and
replaces the rows of changed ones; an unchanged file that failed before is skipped unless
--retry-failed. Rows of files no longer under DIR are kept (listed as "gone"). Each run first
checks DATASET and repairs it: damaged files (not Parquet, other columns, a FIFO or folder in
their place) are removed and their input files normalised again.

Exit status: 0 every planner output loaded or unchanged; 1 one failed in this run, or DIR holds
no planner output; 2 usage error (missing DIR, DATASET not a dataset, another batch writing it).
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
    parser.add_argument(
        "--scheduler", metavar="ADDRESS", help="an existing Dask scheduler, tcp://HOST:PORT (default: a local cluster)"
    )
    parser.add_argument("--workers", type=_workers, metavar="N", help="local worker processes (default: one per core)")
    parser.add_argument("--retry-failed", action="store_true", help="load again unchanged files that failed before")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def _progress_line(done: int, total: int, summary: dict) -> str:
    path = terminal_text(summary["path"])
    status = summary["status"]
    if status == "failed":
        return f"[{done}/{total}] failed {terminal_text(summary['error'])}"
    if "why" in summary:
        return f"[{done}/{total}] skipped {path}: {terminal_text(summary['why'])}"
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
    if r["found_nothing"]:
        lines.append("no planner output found under DIR: nothing loaded")
    repaired = r["repaired"]
    if repaired.get("damaged") or repaired.get("incomplete_rows"):
        lines.append(
            f"repaired the dataset: {len(repaired['damaged'])} damaged files removed, "
            f"{repaired['incomplete_rows']} rows without their tables normalised again:"
        )
        lines += [f"  {terminal_text(d['path'])}: {terminal_text(d['why'])}" for d in repaired["damaged"]]
    lines += [f"failed: {terminal_text(f['error'])}" for f in r["failures"]]
    if r["skipped_failures"]:
        lines.append(
            f"{len(r['skipped_failures'])} unchanged files that failed before were skipped (--retry-failed loads them again):"
        )
        lines += [f"  {terminal_text(f['error'])}" for f in r["skipped_failures"]]
    if r["gone"]:
        lines.append(f"{len(r['gone'])} files of the dataset are no longer under DIR (their rows are kept):")
        lines += [f"  {terminal_text(p)}" for p in r["gone"]]
    for key, title in (
        ("not_loaded", "planner outputs not loaded"),
        ("others", "other files, not read or not planner outputs"),
    ):
        if r[key]:
            lines.append(f"{len(r[key])} {title}:")
            lines += [f"  {terminal_text(e['path'])}: {terminal_text(e['why'])}" for e in r[key][:OTHERS_SHOWN]]
            if len(r[key]) > OTHERS_SHOWN:
                lines.append(f"  … and {len(r[key]) - OTHERS_SHOWN} more (--json lists them all)")
    return "\n".join(lines)


def run(args) -> int:
    from tilescope.fleet.driver import run_batch
    from tilescope.models.errors import TilescopeError

    if args.scheduler and args.workers:
        raise TilescopeError(
            "--workers sizes the local cluster; with --scheduler the cluster's own workers run the tasks"
        )

    def on_result(done: int, total: int, summary: dict) -> None:
        print(_progress_line(done, total, summary), file=sys.stderr, flush=True)

    report = run_batch(
        args.directory,
        args.out,
        scheduler=args.scheduler,
        workers=args.workers,
        retry_failed=args.retry_failed,
        on_result=None if args.quiet else on_result,
    )
    print(json.dumps(report.as_json(), indent=1) if args.json else _text(report))
    return 1 if report.failed or report.found_nothing else 0
