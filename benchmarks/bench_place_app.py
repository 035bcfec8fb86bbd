"""Re-placement after a what-if edit, measured in the app: what one edit costs the session with the
placement's views on the page.

    .venv/bin/python -m benchmarks.bench_place_app [--blocks 200 --layers 24] [--profile FILE] [--edits 10] [--no-sample]

Opens the sample and the 23k-step synthetic profile (``benchmarks.__main__.synthetic``, 200 blocks ×
24 layers) as a session does and applies ``--edits`` edits one after another
(``bench_app.edits_to_apply``: the partitions of one axis of a large live value doubled, which
shrinks it), then undoes them down to one. Two pages, each its own session on its own Bokeh
document, every change serialised as a server would send it (``bench_app.PatchRecorder``):

- the whole profile page (``bench_app.VIEW_CLASSES``: the summary with its placement figures, the
  placement tab's ``AddressesView`` and ``TileMapView``, every other view);
- the same page without the placement tab (its summary still shows the placement figures, so it
  re-places too): the difference is what the address view and the tile map add.

Timed from ``state.apply_edit`` (or ``state.undo``) until it returns: param runs every view's
watcher synchronously, so the figure covers re-plan, incremental re-placement
(``PlanData.placement``: ``place(..., previous=the file plan's placement)``), the address view's
re-aggregation, the tile map of the selected step and the patches. In the same run, the baselines:
the bare re-plan (``planner.edits.apply_edits``) and the bare re-placement (``planner.placement.place``
with ``previous``) for the same cumulative edit sets. The goal is the app's interaction budget,
500 ms per edit.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from tilescope.app.views.addresses import AddressesView
from tilescope.app.views.tile_map import TileMapView
from tilescope.planner.edits import apply_edits
from tilescope.planner.placement import place
from tilescope.synth import SAMPLE_PATH

from .bench_app import GOAL_SECONDS, VIEW_CLASSES, Interaction, PatchRecorder, build_page, edits_to_apply, open_session

PLACEMENT_VIEWS = (AddressesView, TileMapView)
PAGES = {
    "whole page": VIEW_CLASSES,
    "page without the placement tab": tuple(c for c in VIEW_CLASSES if c not in PLACEMENT_VIEWS),
}


@dataclass
class PlaceAppFigures:
    name: str
    n_steps: int
    n_allocations: int
    edits: int
    replan: list[float]  # bare apply_edits per cumulative edit set (s)
    replace: list[float]  # bare place(previous=file plan's placement) per cumulative edit set (s)
    pages: dict[str, dict[str, Interaction]]  # page → {"apply edit", "undo"}


def _timed(action) -> tuple[float, float, object]:
    started, cpu = time.perf_counter(), time.process_time()
    result = action()
    return time.perf_counter() - started, time.process_time() - cpu, result


def _page_run(path: Path, classes, edits) -> dict[str, Interaction]:
    state = open_session(path)
    _views, doc, _build, _render = build_page(state, classes)
    patches = PatchRecorder(doc)
    found = {"apply edit": Interaction("apply edit", "bare re-plan"), "undo": Interaction("undo", "bare re-plan")}

    def record(kind: str, action) -> None:
        patches.take()
        seconds, cpu, _ = _timed(action)
        if state.error:
            raise SystemExit(f"{kind} failed on {path.name}: {state.error}")
        found[kind].times.append(seconds)
        found[kind].cpu.append(cpu)
        found[kind].patch_bytes.append(patches.take())

    gc.collect()
    for edit in edits:
        record("apply edit", lambda: state.apply_edit(edit))
    while len(state.edits) > 1:
        record("undo", state.undo)
    return found


def measure_place_app(path: str | Path, name: str | None = None, edits: int = 10) -> PlaceAppFigures:
    path = Path(path)
    probe = open_session(path)
    arrays, base_plan = probe.arrays, probe.base_plan
    base_placement = probe.data.placement
    chosen = edits_to_apply(arrays, base_plan, edits)
    replan, replace = [], []
    for k in range(1, len(chosen) + 1):
        seconds, _, whatif = _timed(lambda: apply_edits(arrays, base_plan, chosen[:k]))
        replan.append(seconds)
        replace.append(_timed(lambda: place(arrays, whatif.plan, previous=base_placement))[0])
    pages = {page: _page_run(path, classes, chosen) for page, classes in PAGES.items()}
    for interactions in pages.values():
        for interaction in interactions.values():
            interaction.baselines = list(replan)
    return PlaceAppFigures(
        name or path.name, arrays.n_steps, base_placement.n_allocations, len(chosen), replan, replace, pages
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def report(f: PlaceAppFigures) -> str:
    replan = statistics.median(f.replan) if f.replan else 0.0
    replace = statistics.median(f.replace) if f.replace else 0.0
    lines = [
        f"{f.name}: {f.n_steps:,} steps, {f.n_allocations:,} allocations, {f.edits} cumulative edits",
        f"  bare re-plan (apply_edits, baseline)            median {_ms(replan):>9}, worst {_ms(max(f.replan, default=0)):>9}",
        f"  bare re-placement (place, previous=file plan's)  median {_ms(replace):>9}, worst {_ms(max(f.replace, default=0)):>9} "
        f"({replace / replan if replan else 0:,.1f}× the re-plan)",
    ]
    for page, interactions in f.pages.items():
        for kind, i in interactions.items():
            if not i.times:
                continue
            verdict = "met" if i.worst < GOAL_SECONDS else "NOT met"
            lines.append(
                f"  {kind:10} {page:31} ×{len(i.times):<3} median {_ms(i.median):>9}, worst {_ms(i.worst):>9} "
                f"(goal < 500 ms: {verdict}; median CPU {_ms(i.cpu_median)}; {i.median / replan if replan else 0:,.1f}× the re-plan; "
                f"patches median {statistics.median(i.patch_bytes) / 1e3:,.1f} kB)"
            )
    whole, without = f.pages["whole page"]["apply edit"], f.pages["page without the placement tab"]["apply edit"]
    if whole.times and without.times:
        lines.append(
            f"  the placement tab adds {_ms(whole.median - without.median)} per edit (median − median; "
            f"{(whole.median - without.median) / GOAL_SECONDS:.1%} of the budget; CPU {_ms(whole.cpu_median - without.cpu_median)})"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_place_app", description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=200)
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--profile", type=Path, help="an existing memory profile instead of the synthetic one")
    parser.add_argument(
        "--edits", type=int, default=10, help="edits to apply one after another, then undo (default 10)"
    )
    parser.add_argument("--no-sample", action="store_true", help="skip the sample")
    args = parser.parse_args(argv)
    if not args.no_sample:
        print(report(measure_place_app(SAMPLE_PATH, "sample", args.edits)), flush=True)
    if args.profile:
        path, name = args.profile, args.profile.name
    else:
        from benchmarks.__main__ import synthetic  # generates the profile once into benchmarks/data

        path, name = synthetic(args.blocks, args.layers), f"synthetic {args.blocks}×{args.layers}"
    print(report(measure_place_app(path, name, args.edits)), flush=True)
    print("times: the state call until every view has updated and its Bokeh patches are serialised (no browser).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
