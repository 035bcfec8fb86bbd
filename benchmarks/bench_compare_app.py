"""What comparing costs in the app, on two ~23k-step profiles, with every view of the page listening.

    .venv/bin/python -m benchmarks.bench_compare_app [--blocks 200 --layers 24] [--edits 50] [--repeat 3] [--values 10]

A is the synthetic profile (``benchmarks.__main__.synthetic``; 200 blocks × 24 layers: 23,200
steps, 88,000 values, ~92 MB); B is A with ``--edits`` byte-changing edits written as a profile
(``report.profile_json``, what ``plan --write-profile`` writes), and C a profile of another program
(``--layers`` + 1: steps aligned by LCS, values on one side only). A session opens A
(``derived.opening.open_file``, adopted), the page is built and rendered on one Bokeh document
(``benchmarks.bench_app.build_page``, plus ``app.views.compare.CompareView``), and every document
change is serialised as the PATCH-DOC a Bokeh server would send (``bench_app.PatchRecorder``).

Measured, with the baseline measured in the same run:

- **open a compare** (``CompareOpener.open_name``, as ``?compare=`` and the picker do), B and C:
  the worker-thread part (open and plan the file, compare, ``CompareData.warm``) and the part on
  the session's event loop (``state.adopt_compare``: every compare view redrawn, patches
  serialised); baseline: opening the same file as the session's own (``bench_app.open_session``),
  content-hash cache warm for both;
- **select a changed value** in the changed-values table (``table.selection = [row]``, what a click
  sends) for ``--values`` rows spread over the table; baseline: the numpy look-up of both sides'
  live intervals of that value;
- **apply an edit while comparing** (``state.apply_edit``: the page and the comparison follow),
  then the same edits with the comparison closed (what comparing adds); baseline:
  ``planner.edits.apply_edits`` for the same edit set.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from tilescope.app.compare_open import CompareOpener
from tilescope.app.loading import AppOptions
from tilescope.app.open_flow import SessionOpener
from tilescope.app.shared import SharedProfiles
from tilescope.app.views.compare import CompareView
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.planner.edits import apply_edits
from tilescope.planner.model import plan_profile
from tilescope.report.profile_json import profile_json_bytes

from .bench_app import (
    GOAL_SECONDS,
    Interaction,
    PatchRecorder,
    _timed,
    _timed_with_cpu,
    build_page,
    edits_to_apply,
    open_session,
)
from .bench_replan import pick_edits


def write_pair(folder: Path, path_a: Path, n_edits: int) -> Path:
    """B: A with ``n_edits`` byte-changing edit sets spread over it, written as a profile."""
    profile = load_memory_profile(path_a)
    arrays, plan = plan_profile(profile)
    whatif = apply_edits(arrays, plan, [e for edits in pick_edits(arrays, plan, n_edits) for e in edits])
    path_b = folder / path_a.name.replace(".memory_profile.json", "_edited.memory_profile.json")
    path_b.write_bytes(profile_json_bytes(path_a.read_bytes(), str(path_a), arrays, whatif.plan, whatif.tilings))
    return path_b


class _TimedOpener(SessionOpener):
    """The session's opener, its changes on the loop timed (that is the event loop's share)."""

    loop_seconds: list[float]

    async def in_session(self, change) -> None:
        seconds, _ = _timed(change)
        self.loop_seconds.append(seconds)


class Session:
    """A opened, the page and the compare view rendered, every patch recorded."""

    def __init__(self, path_a: Path, root: Path):
        self.state = open_session(path_a, path_a.name)
        timed = _TimedOpener(self.state, SharedProfiles(), AppOptions(None, root), lambda: None)
        self.loop_seconds = timed.loop_seconds = []
        self.opener = CompareOpener(timed)
        self.views, self.doc, _, _ = build_page(self.state)
        self.compare_view = CompareView(state=self.state, opener=self.opener)
        self.doc.add_root(self.compare_view.__panel__().get_root(self.doc))
        self.doc.to_json()
        self.patches = PatchRecorder(self.doc)

    def open_compare(self, name: str) -> tuple[float, float, int]:
        """(worker seconds, event-loop seconds, patch bytes) of opening ``name`` as B."""
        self.state.stop_compare()
        self.opener.shared = SharedProfiles()  # B is opened and planned, not served from memory
        self.loop_seconds.clear()
        self.patches.take()
        # A thread of its own: the caller's thread may already run a loop (pytest's session-wide
        # Playwright keeps one running in the main thread once a browser test has started).
        with ThreadPoolExecutor(1) as worker:
            total, ok = _timed(lambda: worker.submit(asyncio.run, self.opener.open_name(name)).result())
        if not ok:
            raise SystemExit(f"compare with {name} failed: {self.state.error}")
        loop = sum(self.loop_seconds)
        return total - loop, loop, self.patches.take()


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def bench_open(session: Session, path: Path, label: str, repeat: int) -> None:
    open_session(path)  # the content-hash cache now holds the file, as it does for the compare's opens
    baseline = statistics.median(_timed(lambda: open_session(path))[0] for _ in range(repeat))
    runs = [session.open_compare(path.name) for _ in range(repeat)]
    worker, loop, sent = (statistics.median(r[k] for r in runs) for k in range(3))
    c = session.state.compare
    print(f"open a compare with {label} ({c.step_line()}; {len(c.changed_frame):,} values differ), median of {repeat}:")
    print(
        f"  worker thread {_ms(worker)} (open + plan B, compare, warm), event loop {_ms(loop)} (goal < 500 ms: "
        f"{'met' if max(r[1] for r in runs) < GOAL_SECONDS else 'NOT met'}), patches {sent / 1e3:,.1f} kB; "
        f"baseline (open B as the session's file) {_ms(baseline)}; (worker + loop) ÷ baseline {(worker + loop) / baseline:.2f}×"
    )


def bench_interactions(session: Session, count: int, n_edits: int) -> None:
    state, table = session.state, session.compare_view.values.table
    compare = state.compare
    frame = compare.changed_frame
    select = Interaction("select a changed value", "numpy live intervals of both sides")
    for position in np.linspace(0, len(frame) - 1, min(count, len(frame))).astype(int).tolist():
        entry = int(frame["entry"].iloc[position])
        rows = compare.comparison.values.a_row[entry], compare.comparison.values.b_row[entry]
        session.patches.take()
        seconds, cpu, _ = _timed_with_cpu(lambda: setattr(table, "selection", [position]))
        if session.compare_view.selection.entry != entry:
            raise SystemExit(f"selecting row {position} did not select entry {entry}")
        select.times.append(seconds)
        select.cpu.append(cpu)
        select.patch_bytes.append(session.patches.take())
        select.baselines.append(
            _timed(lambda: [np.flatnonzero(d.arrays.interval_row == r) for d, r in zip((compare.a, compare.b), rows)])[
                0
            ]
        )
    edit = Interaction("apply an edit while comparing", "planner.edits.apply_edits")
    for change in edits_to_apply(state.arrays, state.base_plan, n_edits):
        wanted = [*state.edits, change]
        session.patches.take()
        seconds, cpu, _ = _timed_with_cpu(lambda: state.apply_edit(change))
        if state.error or state.compare.a is not state.data:
            raise SystemExit(f"edit failed: {state.error}")
        edit.times.append(seconds)
        edit.cpu.append(cpu)
        edit.patch_bytes.append(session.patches.take())
        edit.baselines.append(_timed(lambda: apply_edits(state.arrays, state.base_plan, wanted))[0])
    # The same edits with the comparison closed: what comparing adds to an edit.
    edits, compare = list(state.edits), state.compare
    state.stop_compare()
    state.reset()
    alone = Interaction("apply the same edit, not comparing", "planner.edits.apply_edits")
    for change in edits:
        wanted = [*state.edits, change]
        session.patches.take()
        seconds, cpu, _ = _timed_with_cpu(lambda: state.apply_edit(change))
        alone.times.append(seconds)
        alone.cpu.append(cpu)
        alone.patch_bytes.append(session.patches.take())
        alone.baselines.append(_timed(lambda: apply_edits(state.arrays, state.base_plan, wanted))[0])
    state.reset()
    state.adopt_compare(compare)
    for i in (select, edit, alone):
        if not i.times:
            print(f"  {i.name}: nothing to measure")
            continue
        print(
            f"  {i.name} ×{len(i.times)}: median {_ms(i.median)}, worst {_ms(i.worst)} (goal < 500 ms: {'met' if i.met else 'NOT met'}; "
            f"median CPU {_ms(i.cpu_median)}); baseline ({i.baseline_name}) {_ms(i.baseline)}, ratio {i.ratio:,.0f}×; "
            f"patches median {statistics.median(i.patch_bytes) / 1e3:,.1f} kB"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_compare_app", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--blocks", type=int, default=200)
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--edits", type=int, default=50, help="edit sets written into B")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--values", type=int, default=10, help="changed values to select")
    parser.add_argument("--session-edits", type=int, default=5, help="edits applied while comparing")
    args = parser.parse_args(argv)
    from benchmarks.__main__ import synthetic  # generates the profiles once into benchmarks/data

    path_a = synthetic(args.blocks, args.layers)
    path_c = synthetic(args.blocks, args.layers + 1)
    root = path_a.parent  # the data root: benchmarks/data (B is written beside A, and rewritten each run)
    path_b = write_pair(root, path_a, args.edits)
    session = Session(path_a, root)
    print(
        f"A: {path_a.name}, {path_a.stat().st_size / 1e6:,.1f} MB, {session.state.arrays.n_steps:,} steps, "
        f"{session.state.arrays.n_values:,} values; B: A with {args.edits} edit sets; C: {path_c.name}",
        flush=True,
    )
    bench_open(session, path_c, "C (another program)", args.repeat)
    bench_open(session, path_b, "B (A edited)", args.repeat)
    bench_interactions(session, args.values, args.session_edits)
    print(
        "times: the call until every view (the page's and the compare view's) has updated and its Bokeh patches are serialised "
        "(no browser); ratios against the baseline measured in the same run."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
