"""Interactive latency of the explorer: what one click costs with every view of the page listening.

    .venv/bin/python -m benchmarks.bench_app [--blocks 200 --layers 24] [--profile FILE] [--steps 20] [--edits 10] [--values 10]

Opens the sample and a ~90 MB synthetic profile (``benchmarks.__main__.synthetic``; 200 blocks ×
24 layers) the way a session does (``derived.opening.open_file``: the content-hash cache, then the
plan; then ``SessionState.adopt``), builds every view the page builds for a memory profile (``app.views.profile_page.ProfilePage``)
and renders each on one Bokeh ``Document``, so the Bokeh models exist and every update really runs.
Each interaction is timed from the state call until it returns: param runs the views' watchers
synchronously, and every document change is serialised into the PATCH-DOC message a Bokeh server
would send (``Protocol.create``, one message per event, as ``ServerSession`` does), so the figure
covers the server's whole share of the click. The browser's drawing is not included.

Interactions, with the baseline measured on the same profile in the same run:

- select a step (``state.select_step``) at ~20 steps spread over the profile (and the peaks);
  baseline: the live rows of that step computed with numpy from the live intervals;
- apply an edit (``state.apply_edit``: double one axis's partitions) to ~10 different large live
  values, one after another (the largest whose doubled tile count fits the device); baseline: the
  bare planner call ``planner.edits.apply_edits`` for the same edit set;
- undo those edits one by one (down to one edit); baseline: ``apply_edits`` for what remains;
- select a value (``state.select_values``) for ~10 values; baseline: the numpy look-up of the
  value's row and its storage group's members.

Each is printed as median / worst ms against the 500 ms goal, and as the ratio median ÷ baseline
median, which is comparable across machines.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from bokeh.document import Document
from bokeh.protocol import Protocol

from tilescope.app.state import SessionState
from tilescope.app.views.addresses import AddressesView
from tilescope.app.views.at_step import AtStepView
from tilescope.app.views.editor import EditorView
from tilescope.app.views.export import ExportView
from tilescope.app.views.lifetimes import LifetimesView
from tilescope.app.views.storage_groups import StorageGroupsView
from tilescope.app.views.summary import SummaryView
from tilescope.app.views.tile_map import TileMapView
from tilescope.app.views.timeline import TimelineView
from tilescope.app.views.values_table import ValuesTableView
from tilescope.derived.opening import Source, open_file
from tilescope.models.edits import TilingEdit
from tilescope.models.errors import TilescopeError
from tilescope.planner.edits import EditError, apply_edits
from tilescope.planner.model import Plan, ProfileArrays
from tilescope.synth import SAMPLE_PATH

GOAL_SECONDS = 0.5


def open_session(path: Path, name: str | None = None) -> SessionState:
    """A session with ``path`` open, as the app opens it (``derived.opening.open_file``, then
    ``SessionState.adopt``); a bad file ends the benchmark with its message."""
    state = SessionState()
    try:
        state.adopt(open_file(Source.of_path(path, name)))
    except TilescopeError as exc:
        raise SystemExit(f"cannot open {path}: {exc}") from None
    return state


# The page's views in page order (app.views.profile_page.ProfilePage): summary, timeline, at-step
# and lifetimes side by side, then the tabs (the placement tab: addresses and the tile map).
VIEW_CLASSES = (
    SummaryView,
    TimelineView,
    AtStepView,
    LifetimesView,
    ValuesTableView,
    StorageGroupsView,
    EditorView,
    AddressesView,
    TileMapView,
    ExportView,
)
INTERACTIONS = ("select step", "apply edit", "undo", "select value")


@dataclass
class Interaction:
    """Wall times of one kind of interaction and of its baseline (seconds), the interaction's CPU
    time (on a busy machine closer to what an idle one would take), and the patch bytes sent."""

    name: str
    baseline_name: str
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    baselines: list[float] = field(default_factory=list)
    patch_bytes: list[int] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def worst(self) -> float:
        return max(self.times)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def baseline(self) -> float:
        return statistics.median(self.baselines)

    @property
    def ratio(self) -> float:
        return self.median / self.baseline if self.baseline > 0 else float("inf")

    @property
    def met(self) -> bool:
        return self.worst < GOAL_SECONDS


@dataclass
class AppFigures:
    name: str
    size: int
    n_steps: int
    n_values: int
    n_intervals: int
    open_seconds: float  # open_file and adopt: read (or reuse the cache), validate, plan
    build_seconds: float  # constructing the views
    render_seconds: float  # their Bokeh models, and the document's first JSON (what a new page is sent)
    interactions: dict[str, Interaction]


class PatchRecorder:
    """Serialises every change of the document as a Bokeh server does for a connected browser."""

    def __init__(self, doc: Document):
        self.protocol = Protocol()
        self.sent = 0
        doc.on_change(self._on_change)

    def _on_change(self, event) -> None:
        message = self.protocol.create("PATCH-DOC", [event])
        self.sent += len(message.header_json) + len(message.content_json) + sum(len(b.data) for b in message.buffers)

    def take(self) -> int:
        sent, self.sent = self.sent, 0
        return sent


# ----------------------------------------------------------------------------- the page


def build_page(state: SessionState, classes=VIEW_CLASSES) -> tuple[list, Document, float, float]:
    """Every view of the profile page (or ``classes``), rendered on one document; (views, doc, build s, render s)."""
    started = time.perf_counter()
    views = [cls(state=state) for cls in classes]
    built = time.perf_counter()
    doc = Document()
    for view in views:
        doc.add_root(view.__panel__().get_root(doc))
    doc.to_json()  # the first page load: every model now counts as known to the browser
    return views, doc, built - started, time.perf_counter() - built


# ----------------------------------------------------------------------------- what to click


def steps_to_visit(arrays: ProfileArrays, plan: Plan, count: int) -> list[int]:
    """``count`` steps spread evenly over the profile, the three peak steps among them."""
    peaks = plan.peaks
    spread = np.linspace(0, max(arrays.n_steps - 1, 0), max(count - 3, 1)).astype(int).tolist()
    return [peaks.standard_step, peaks.interleaved_step, *spread, peaks.total_step][:count]


def largest_live_roots(arrays: ProfileArrays, cost: np.ndarray) -> np.ndarray:
    """Rows of live root values (never aliases), largest bytes first, lowest id on ties."""
    live = np.unique(arrays.interval_row)
    live = live[arrays.root_rows[live] == live]
    return live[np.lexsort((arrays.value_ids[live], -cost[live]))]


def edits_to_apply(arrays: ProfileArrays, base_plan: Plan, count: int) -> list[TilingEdit]:
    """Up to ``count`` partition doublings, each of a different live value, largest values first,
    valid together and each changing the value's bytes (checked with the planner, outside any timing).

    Only values whose tile count doubled still fits the device can take a doubling alone, so those
    are the candidates (in the synthetic profiles the very largest values use nearly every tile).
    """
    roots = largest_live_roots(arrays, base_plan.figures.bytes)
    roots = roots[arrays.tile_counts[roots] * 2 <= arrays.device_tiles]
    chosen: list[TilingEdit] = []
    for row in roots.tolist():
        value = int(arrays.value_ids[row])
        for position, axis in enumerate(arrays.tiling(row).axes):
            edit = TilingEdit(value, axis=position, partitions=axis.partitions * 2)
            try:
                whatif = apply_edits(arrays, base_plan, [*chosen, edit])
            except EditError:
                continue
            if any(value_id == value for value_id, _, _ in whatif.diff.changed_values):
                chosen.append(edit)
                break
        if len(chosen) == count:
            break
    return chosen


def values_to_select(arrays: ProfileArrays, plan: Plan, count: int) -> list[int]:
    """Value ids: half the largest live values, half spread over the values table."""
    largest = arrays.value_ids[largest_live_roots(arrays, plan.figures.bytes)[: (count + 1) // 2]].tolist()
    spread = arrays.value_ids[np.linspace(0, arrays.n_values - 1, count - len(largest)).astype(int)].tolist()
    return [int(v) for v in [*largest, *spread]]


# ----------------------------------------------------------------------------- baselines


def live_rows_numpy(arrays: ProfileArrays, step: int) -> np.ndarray:
    """The baseline of a step selection: which value rows are live at ``step``."""
    hit = (arrays.interval_first <= step) & (arrays.interval_last >= step)
    return np.unique(arrays.interval_row[hit])


def group_mates_numpy(arrays: ProfileArrays, storage_group: np.ndarray, value_id: int) -> np.ndarray:
    """The baseline of a value selection: the value's row and its storage group's member rows."""
    row = np.flatnonzero(arrays.value_ids == value_id)
    return np.flatnonzero(np.isin(storage_group, storage_group[row]))


# ----------------------------------------------------------------------------- measuring


def _timed(action: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def _timed_with_cpu(action: Callable[[], object]) -> tuple[float, float, object]:
    started, cpu = time.perf_counter(), time.process_time()
    result = action()
    return time.perf_counter() - started, time.process_time() - cpu, result


def measure_app(
    path: str | Path, name: str | None = None, steps: int = 20, edits: int = 10, values: int = 10
) -> AppFigures:
    """Open ``path`` as a session does, build and render the page, and time the interactions."""
    path = Path(path)
    open_seconds, state = _timed(lambda: open_session(path))
    arrays, base_plan = state.arrays, state.base_plan
    _views, doc, build_seconds, render_seconds = build_page(state)
    patches = PatchRecorder(doc)
    storage_group = state.profile.values.column("storage_group").to_numpy()
    found = {
        "select step": Interaction("select step", "numpy live rows of the step"),
        "apply edit": Interaction("apply edit", "planner.edits.apply_edits"),
        "undo": Interaction("undo", "planner.edits.apply_edits of what remains"),
        "select value": Interaction("select value", "numpy row + storage-group members"),
    }

    def record(kind: str, action: Callable[[], object], baseline: Callable[[], object]) -> object:
        interaction = found[kind]
        patches.take()
        seconds, cpu, result = _timed_with_cpu(action)
        interaction.times.append(seconds)
        interaction.cpu.append(cpu)
        interaction.patch_bytes.append(patches.take())
        interaction.baselines.append(_timed(baseline)[0])
        if state.error:
            raise SystemExit(f"{kind} failed on {path.name}: {state.error}")
        return result

    gc.collect()
    for step in steps_to_visit(arrays, base_plan, steps):
        record("select step", lambda: state.select_step(step), lambda: live_rows_numpy(arrays, step))
    for value_id in values_to_select(arrays, base_plan, values):
        record(
            "select value",
            lambda: state.select_values([value_id]),
            lambda: group_mates_numpy(arrays, storage_group, value_id),
        )
    for edit in edits_to_apply(arrays, base_plan, edits):
        wanted = [*state.edits, edit]
        record("apply edit", lambda: state.apply_edit(edit), lambda: apply_edits(arrays, base_plan, wanted))
    while len(state.edits) > 1:
        remaining = state.edits[:-1]
        record("undo", state.undo, lambda: apply_edits(arrays, base_plan, remaining))
    return AppFigures(
        name or path.name,
        path.stat().st_size,
        arrays.n_steps,
        arrays.n_values,
        int(arrays.interval_row.size),
        open_seconds,
        build_seconds,
        render_seconds,
        found,
    )


# ----------------------------------------------------------------------------- report


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def report(figures: AppFigures) -> str:
    f = figures
    lines = [
        f"{f.name}: {f.size / 1e6:,.1f} MB, {f.n_steps:,} steps, {f.n_values:,} values, {f.n_intervals:,} live intervals",
        f"  open {f.open_seconds:.2f} s, build views {f.build_seconds:.2f} s, render + first document {f.render_seconds:.2f} s",
    ]
    for name in INTERACTIONS:
        i = f.interactions[name]
        if not i.times:
            lines.append(f"  {name:13} not measured (nothing to {name} in this profile)")
            continue
        verdict = "met" if i.met else "NOT met"
        lines.append(
            f"  {name:13} ×{len(i.times):<3} median {_ms(i.median):>9}, worst {_ms(i.worst):>9} (goal < 500 ms: {verdict}; "
            f"median CPU {_ms(i.cpu_median)}); "
            f"baseline ({i.baseline_name}) {_ms(i.baseline)}, ratio {i.ratio:,.0f}×; "
            f"patches sent median {statistics.median(i.patch_bytes) / 1e3:,.1f} kB"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_app", description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=200)
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--profile", type=Path, help="an existing memory profile instead of the synthetic one")
    parser.add_argument("--steps", type=int, default=20, help="steps to select (default 20)")
    parser.add_argument("--edits", type=int, default=10, help="edits to apply, then undo (default 10)")
    parser.add_argument("--values", type=int, default=10, help="values to select (default 10)")
    parser.add_argument("--no-sample", action="store_true", help="skip the sample")
    args = parser.parse_args(argv)
    counts = {"steps": args.steps, "edits": args.edits, "values": args.values}
    if not args.no_sample:
        print(report(measure_app(SAMPLE_PATH, "sample", **counts)), flush=True)
    if args.profile:
        path, name = args.profile, args.profile.name
    else:
        from benchmarks.__main__ import synthetic  # generates the profile once into benchmarks/data

        path, name = synthetic(args.blocks, args.layers), f"synthetic {args.blocks}×{args.layers}"
    print(report(measure_app(path, name, **counts)), flush=True)
    print(
        "times: the state call until every view has updated and its Bokeh patches are serialised (no browser); "
        "ratio = median ÷ the baseline's median in the same run."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
