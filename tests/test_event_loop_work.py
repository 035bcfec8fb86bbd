"""Issue #24, item 1, by mechanism: no work sized by the file runs on a session's event loop.

A whole session page (``app.explorer.build_app``: every side tab built and shown, the served
session's runner and load pool) is driven on an asyncio loop of its own, as the server's loop
drives it: the sample opened, an edit (a gesture), undo, the advisor's ranking and its suggestion
applied, a comparison with another file and an edit while comparing, the Tiles tab, the report
PNG and the compare report, a placement dump's solve and its picture, then the heavy profile
(``tests/heavy_profile.py``) opened, edited and undone. Every planner, placement, solver and report
function the app calls is wrapped, recording the thread it ran in; none may have run in the
loop's thread, and each must have run (the scenario reached it).

Then the time limit: a re-plan and a placement that pass a small limit end with one honest line
and the page keeps the plan it had.
"""

from __future__ import annotations

import asyncio
import importlib
import shutil
import threading
import time
from functools import partial
from pathlib import Path

import panel as pn
import pytest
from async_support import run_on_own_loop
from browser_support import SAMPLE
from compare_support import with_edits, write
from heavy_profile import write_heavy_profile

from tilescope.app.explorer import build_app
from tilescope.app.load_pool import CACHE_KEY, LoadPool
from tilescope.app.side_tabs import TAB_KEYS
from tilescope.derived.series import StepSeries
from tilescope.derived.tile_rows import tiles_ready
from tilescope.models.edits import TilingEdit

DUMP = Path(__file__).resolve().parent.parent / ".." / "shared" / "bench" / "ipu-stack-placement" / "fragmented.json"
WAIT_S = 240.0

# module → the functions in it (as the app's modules see them) whose thread is recorded
RECORDED = {
    "tilescope.app.state": ["apply_edits"],  # the re-plan of an edit
    "tilescope.derived.plan_data": ["place", "values_frame", "gantt_bars"],  # placement, values table, lifetimes
    "tilescope.app.views.advisor": ["advise"],  # the advisor's ranking (re-plans every candidate)
    "tilescope.derived.compare_data": ["compare_plans"],  # a comparison (and its follow-up after an edit)
    "tilescope.app.views.export": ["png_of"],  # the report PNG
    "tilescope.app.views.compare_export": ["compare_files"],  # the compare report's files
    "tilescope.app.views.placement_problem": ["solved", "problem_png"],  # a dump's solve and picture
    "tilescope.app.views.tiles": ["prepare_tiles"],  # the Tiles tab's per-tile figures
    "tilescope.app.views.tile_map": ["prepare_tiles"],  # the Placement tab tile map, the same figures
}


class Recorder:
    """Wraps the functions of ``RECORDED`` (and ``StepSeries.of``, the timeline's series): each call
    noted with whether it ran in ``loop_thread``."""

    def __init__(self, monkeypatch):
        self.calls: list[tuple[str, bool]] = []
        self.loop_thread: int | None = None
        self._lock = threading.Lock()
        for module_name, names in RECORDED.items():
            module = importlib.import_module(module_name)
            for name in names:
                monkeypatch.setattr(module, name, self._wrap(f"{module_name}.{name}", getattr(module, name)))
        monkeypatch.setattr(StepSeries, "of", staticmethod(self._wrap("StepSeries.of", StepSeries.of)))

    def _wrap(self, label: str, fn):
        def recording(*args, **kwargs):
            with self._lock:
                self.calls.append((label, threading.get_ident() == self.loop_thread))
            return fn(*args, **kwargs)

        return recording

    def on_loop(self) -> list[str]:
        return sorted({label for label, on in self.calls if on})

    def ran(self) -> set[str]:
        return {label for label, _ in self.calls}


async def until(condition, what: str, timeout: float = WAIT_S) -> None:
    """Let the loop run (the workers' results come back through it) until ``condition()``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def placed(state) -> bool:
    """The current plan's placement is there (asked for as the views ask: ``SessionState.result``)."""
    return state.data is not None and state.result(state.data, "placement") is not None


@pytest.fixture()
def root(tmp_path, raw) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    shutil.copyfile(SAMPLE, folder / "vit.json")
    write(with_edits(raw, [(84, 1, 18), (84, "replicas", 27), (20, 0, 27)]), folder / "vit_edited.json")
    shutil.copyfile(DUMP, folder / "fragmented.json")
    write_heavy_profile(folder / "heavy.json", 1200, 160)
    return folder


async def open_file(app, name: str) -> None:
    assert await app.opener.open_name(name, partial(app.router.adopt, name=name)), app.state.error


def show_every_tab(app) -> None:
    """Build every side tab and open every gate, so each view follows every change (as if shown)."""
    tabs = app.profile_page.tabs
    for key in TAB_KEYS:
        tabs.view(key)
    for view in tabs.views.values():
        for gate in {getattr(view, "gate", None), getattr(getattr(view, "editor", None), "gate", None)} - {None}:
            gate.set_shown(True)


async def scenario(app, recorder: Recorder) -> dict:
    recorder.loop_thread = threading.get_ident()
    state = app.state
    recorder.state = state
    seen: dict = {}

    await open_file(app, "vit.json")
    show_every_tab(app)
    page, tabs = app.profile_page, app.profile_page.tabs
    await until(lambda: placed(state), "the file plan's placement")

    # an edit (a gesture), then undo
    gesture = [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)]  # ("keep the tile count")
    state.apply_gesture(gesture)
    await until(lambda: list(state.edits) == gesture and placed(state), "the edit's plan and placement")
    seen["edited peak"] = int(state.plan.peaks.total)
    state.undo()
    await until(lambda: not state.edits and state.data is state.opened.base, "undo")

    # the Tiles tab's per-tile figures
    await until(lambda: tiles_ready(state.data), "the per-tile figures")

    # the advisor: rank, then apply the first suggestion
    advisor = tabs.views["editor"].advisor
    advisor.refresh(force=True)
    await until(lambda: any(isinstance(o, pn.Row) for o in advisor.advice.objects), "the advisor's suggestions")
    apply_button = advisor.advice.objects[0].objects[0]
    apply_button.clicks += 1
    await until(lambda: bool(state.edits) and placed(state), "the suggestion applied")

    # compare with another file, then an edit while comparing (the comparison follows the plan)
    assert await page.compare_opener.open_name("vit_edited.json")
    await until(lambda: state.compare is not None, "the comparison")
    state.apply_gesture([TilingEdit(153, axis=1, partitions=3)])
    await until(
        lambda: (
            state.compare is not None
            and state.compare.a is state.data
            and "comparison" in state.compare.__dict__
            and len(state.edits) >= 2
        ),
        "the comparison following the edit",
    )
    seen["compare follows"] = True

    # the reports: the PNG and the compare report
    png = await tabs.views["export"]._png_file()
    assert png.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
    files = await tabs.views["compare"].export._file("compare.png")
    assert files[:8] == b"\x89PNG\r\n\x1a\n"

    # a placement dump: its solve and its picture
    await open_file(app, "fragmented.json")
    dump_view = app.kind_views[state.kind].view
    await until(lambda: dump_view.result is not None or dump_view.error, "the dump's solve")
    assert dump_view.result is not None, dump_view.error
    picture = await dump_view._png()
    assert picture.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"

    # the heavy profile: open, edit, undo
    await open_file(app, "heavy.json")
    show_every_tab(app)
    await until(lambda: placed(state), "the heavy file plan's placement")
    row = int(state.arrays.row_of_id[0])
    partitions = state.arrays.tiling(row).axes[0].partitions
    state.apply_gesture([TilingEdit(0, axis=0, partitions=max(1, partitions // 2))])
    await until(lambda: bool(state.edits) and placed(state), "the heavy edit's plan and placement")
    state.undo()
    await until(lambda: not state.edits and state.data is state.opened.base, "the heavy undo")
    return seen


def test_no_file_sized_work_runs_on_the_event_loop(root, monkeypatch, tmp_path):
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    recorder = Recorder(monkeypatch)
    app = build_app(["--data-root", str(root)])
    try:
        seen = run_on_own_loop(scenario(app, recorder))
    except AssertionError as exc:  # (a wait that timed out: say what ran on the loop until then)
        state = app.state
        raise AssertionError(
            f"{exc}; ran on the event loop until then: {recorder.on_loop()} "
            f"(status {state.status!r}, error {state.error!r}, edits {list(state.edits)})"
        ) from None
    assert seen["compare follows"]
    assert recorder.on_loop() == [], f"ran on the event loop: {recorder.on_loop()}"
    expected = {f"{m}.{n}" for m, names in RECORDED.items() for n in names} | {"StepSeries.of"}
    assert expected <= recorder.ran(), f"never reached: {sorted(expected - recorder.ran())}"


async def time_limit_scenario(app, small: LoadPool) -> dict:
    state = app.state
    out: dict = {}
    await open_file(app, "heavy.json")
    await until(lambda: placed(state), "the heavy file plan's placement")
    before = state.data
    # From now on, every job of the session gets a limit too small for the heavy profile's work.
    pn.state.cache[CACHE_KEY] = small
    state.apply_gesture([TilingEdit(0, axis=0, partitions=1)])
    await until(lambda: bool(state.error), "the edit given up", timeout=60)
    out["edit error"] = state.error
    out["kept plan"] = state.data is before and not state.edits
    return out


def test_work_past_the_time_limit_is_given_up_and_the_page_keeps_its_plan(root, monkeypatch, tmp_path):
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    import tilescope.app.state as app_state

    real_apply = app_state.apply_edits

    def slow_apply(*args, **kwargs):  # a re-plan that takes 3 s of CPU (busy, so the pool keeps its worker)
        until_s = time.monotonic() + 3.0
        while time.monotonic() < until_s:
            sum(range(1000))
        return real_apply(*args, **kwargs)

    previous = pn.state.cache.get(CACHE_KEY)
    small = LoadPool(2, 0.5)
    try:
        app = build_app(["--data-root", str(root)])
        monkeypatch.setattr(app_state, "apply_edits", slow_apply)
        out = run_on_own_loop(time_limit_scenario(app, small))
    finally:
        small.close()
        if previous is not None:
            pn.state.cache[CACHE_KEY] = previous
        else:
            pn.state.cache.pop(CACHE_KEY, None)
    assert "0.5 s limit" in out["edit error"], out["edit error"]
    assert out["kept plan"]
