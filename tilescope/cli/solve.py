"""``tilescope solve FILE [--capacity BYTES] [--time-limit SECONDS] [--json] [--out PATH [--overwrite]]``:
place one tile's placement problem with proof (``planner.solver``).

- FILE is a placement constraint dump of osmarks/ipu-stack (version 1, or the older fixture form;
  a file whose first non-blank byte is ``{``) or a MiniMalloc CSV (``id,lower,upper,size``,
  lifetimes half-open; ``--capacity`` is required, as the CSV holds none).
- The verdict is *placed* (every base address, re-checked), *infeasible* (with its proof, and the
  deficit in bytes when a bound gives one) or *unknown* (the time limit was reached: the best
  placement found and its height, never called infeasible). Exit 0 placed, 1 infeasible or
  unknown, 2 bad input (one located line).
- ``--json``: one object: ``file``, ``kind``, ``requests``, ``verdict``, ``lower_bound``, ``height``
  (null when infeasible), ``deficit_bytes``, ``proof``, ``seconds``, ``nodes`` and ``placement``:
  for a CSV a list of {``id``, ``offset``} (the ids as written), for a dump an object mapping every
  root id of every placed request (as a string) to its whole group's ``[start, end)``.
- ``--out PATH``: MiniMalloc's solution CSV (``id,lower,upper,size,offset``) or the dump with
  ``assigned_root_spans`` (and ``placed``) replaced by this placement; written atomically, only
  when every request is placed; never over FILE, nor over an existing file without ``--overwrite``.
- A search longer than a few seconds shows progress on stderr (``--quiet`` silences it).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tilescope.cli.inputs import size_option
from tilescope.cli.progress import StderrProgress
from tilescope.loaders.json_input import read_bytes
from tilescope.loaders.minimalloc_csv import load_minimalloc_csv
from tilescope.loaders.placement_dump import load_placement_dump
from tilescope.models.errors import InputError
from tilescope.models.files import refuse_inputs, write_atomically
from tilescope.models.format import fmt_bytes
from tilescope.models.placement_problem import PlacementProblem
from tilescope.planner.solver import SolveResult, root_spans, solve

DEFAULT_TIME_LIMIT = 60.0
PROGRESS_AFTER = 2.0  # seconds of search before the first progress line
PROGRESS_EVERY = 10.0  # seconds between progress lines in a log (a terminal line is rewritten)


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a placement dump (JSON) or a MiniMalloc CSV")
    parser.add_argument(
        "--capacity",
        type=size_option,
        default=None,
        help="bytes available (required for a MiniMalloc CSV): 4096, 64KiB, 1MB, …",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_TIME_LIMIT,
        help=f"seconds before the search stops with 'unknown' (default {DEFAULT_TIME_LIMIT:g})",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", default=None, help="write the placement: a solution CSV, or the dump with its spans")
    parser.add_argument("--overwrite", action="store_true", help="let --out replace an existing file")


def load_problem(path: str, capacity: int | None) -> tuple[PlacementProblem, bytes]:
    """The problem in ``path`` (a dump or a MiniMalloc CSV, by its first byte) and the file's bytes."""
    data = read_bytes(path)
    if data.lstrip()[:1] == b"{":
        if capacity is not None:
            raise InputError(
                "--capacity",
                "no --capacity for a placement dump (its ranges give the capacity)",
                str(capacity),
                file=path,
            )
        return load_placement_dump(data, path), data
    if capacity is None:
        raise InputError(
            "--capacity", "a capacity in bytes for a MiniMalloc CSV (the file holds none)", "none", file=path
        )
    return load_minimalloc_csv(data, path, capacity), data


def placement_of(problem: PlacementProblem, result: SolveResult) -> list | dict:
    if problem.kind == "minimalloc":
        return [{"id": ident, "offset": int(s)} for ident, s in zip(problem.csv_ids, result.starts.tolist()) if s >= 0]
    return root_spans(problem, result)


def result_json(path: str, problem: PlacementProblem, result: SolveResult) -> dict:
    return {
        "file": path,
        "kind": problem.kind,
        "requests": len(problem.requests),
        **result.to_json(),
        "placement": placement_of(problem, result),
    }


def result_text(path: str, problem: PlacementProblem, result: SolveResult) -> str:
    if result.height is not None and result.lower_bound:
        above = f" ({100 * (result.height - result.lower_bound) / result.lower_bound:.2f} % above the lower bound)"
    else:
        above = ""
    head = {
        "placed": f"placed: height {fmt_bytes(result.height or 0)}{above}",
        "infeasible": "INFEASIBLE"
        + (f": {fmt_bytes(result.deficit_bytes)} short" if result.deficit_bytes is not None else ""),
        "unknown": f"UNKNOWN (time limit reached; not proved infeasible): best placement's height {fmt_bytes(result.height or 0)}{above}, "
        f"{int((result.starts >= 0).sum()):,} of {len(problem.requests):,} requests placed",
    }[result.verdict]
    return "\n".join(
        [
            f"{path}: {head}",
            f"proof: {result.proof}",
            f"lower bound {fmt_bytes(result.lower_bound)}; {len(problem.requests):,} requests; {result.nodes:,} search nodes; {result.seconds:.2f} s",
        ]
    )


def _out_target(args) -> Path | None:
    if args.out is None:
        return None
    out = Path(args.out)
    refuse_inputs(out, [args.file])  # the input is never written, however spelled (models.files)
    if out.exists() and not args.overwrite:
        raise InputError(
            "--out",
            "a path that does not exist yet (pass --overwrite to replace it)",
            "an existing file",
            file=str(out),
        )
    if not out.parent.is_dir():
        raise InputError("--out", "a path in an existing folder", "no such folder", file=str(out))
    return out


def output_bytes(problem: PlacementProblem, data: bytes, result: SolveResult) -> bytes:
    """The ``--out`` file's bytes (module doc)."""
    if problem.kind == "minimalloc":
        rows = ["id,lower,upper,size,offset"]
        for ident, request, start in zip(problem.csv_ids, problem.requests, result.starts.tolist()):
            rows.append(f"{ident},{request.first},{request.last + 1},{request.bytes},{start}")
        return ("\n".join(rows) + "\n").encode()
    doc = json.loads(data)
    doc["placed"] = True
    doc["assigned_root_spans"] = root_spans(problem, result)
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()


class _Throttled:
    """The search's progress, as a line at most every few seconds after the first ones."""

    def __init__(self, label: str):
        self.display = StderrProgress(label)
        self.started = time.monotonic()
        self.last = 0.0

    def __call__(self, stage: str, fraction: float) -> None:
        now = time.monotonic() - self.started
        wait = PROGRESS_AFTER if not self.last else (1.0 if self.display.terminal else PROGRESS_EVERY)
        if now - self.last >= wait:
            self.last = now
            self.display(f"{stage}, {now:.0f} s", min(fraction, 0.99))

    def done(self) -> None:
        self.display.interrupt()


def run(args) -> int:
    if not args.time_limit > 0:
        raise InputError("--time-limit", "a positive number of seconds", str(args.time_limit))
    if args.capacity is not None and args.capacity <= 0:
        raise InputError("--capacity", "a positive number of bytes", str(args.capacity))
    out = _out_target(args)
    problem, data = load_problem(args.file, args.capacity)
    progress = None if args.quiet else _Throttled(f"solving {Path(args.file).name}")
    try:
        result = solve(problem, time_limit=args.time_limit, progress=progress)
    finally:
        if progress is not None:
            progress.done()
    if args.json:
        print(json.dumps(result_json(args.file, problem, result)))
    else:
        print(result_text(args.file, problem, result))
    if out is not None:
        if result.verdict == "placed":
            path = write_atomically(
                out, output_bytes(problem, data, result), overwrite=args.overwrite, inputs=[args.file]
            )
            if not args.quiet:
                print(f"wrote {path}", file=sys.stderr)
        elif not args.quiet:
            print(f"{out} not written: the verdict is {result.verdict}", file=sys.stderr)
    return 0 if result.verdict == "placed" else 1
