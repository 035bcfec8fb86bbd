"""Issue #24, item 1: no computation sized by the file runs on a session's event loop.

A valid profile whose placement is heavy (``tests/heavy_profile.py``: ~1,200 values with long
overlapping lifetimes, half 16 KiB-granular) used to be placed on the loop after its load, and
re-placed there after every edit, holding up every session of the server. Now:

- In one process: the summary and the Addresses view of a large plan ask ``SessionState.result``
  for the placement; with the served session's runner it is computed in a worker thread (recorded
  here by wrapping the planner's ``place``), the views say "placing…" until ``ready`` is bumped,
  then show it. An edit's what-if placement goes the same way; the advisor's ranking too.
- Served: one session opens the heavy profile while ``GET /app`` is asked again and again: every
  GET answers within seconds (bounded by its time alone, measured in the same run) until the heavy
  page is complete; then another session opens the sample in a bounded ratio of its time alone.
"""

from __future__ import annotations

import shutil
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from browser_support import SAMPLE, AppServer, kib
from heavy_profile import write_heavy_profile

import tilescope.derived.plan_data as plan_data
from tilescope.app.state import REPLANNING, SessionState
from tilescope.app.views.addresses import AddressesView
from tilescope.app.views.summary import summary_html
from tilescope.derived.opening import open_file
from tilescope.models.edits import TilingEdit

VALUES, STEPS = 1200, 160


@pytest.fixture(scope="module")
def heavy(tmp_path_factory) -> Path:
    return write_heavy_profile(tmp_path_factory.mktemp("heavy") / "heavy.json", VALUES, STEPS)


class ThreadRunner:
    """A runner as the served app's (``SessionOpener.background``): jobs queued; ``deliver`` runs
    each in a thread of its own (the load workers) and hands its outcome to ``done`` in the
    caller's thread (the loop)."""

    def __init__(self):
        self.queued: list = []

    def __call__(self, job, done) -> bool:
        self.queued.append((job, done))
        return True

    def deliver(self) -> None:
        while self.queued:
            job, done = self.queued.pop(0)
            outcome = []

            def work():
                try:
                    outcome.append(job())
                except Exception as exc:  # handed to done, as the app does
                    outcome.append(exc)

            thread = threading.Thread(target=work)
            thread.start()
            thread.join(300)
            done(outcome[0])


def test_a_large_plans_placement_is_computed_off_the_callers_thread(heavy, monkeypatch, tmp_path):
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    placed_in = []
    real_place = plan_data.place

    def recording_place(*args, **kwargs):
        placed_in.append(threading.current_thread())
        return real_place(*args, **kwargs)

    monkeypatch.setattr(plan_data, "place", recording_place)
    opened = open_file(heavy)
    assert opened.arrays.n_values == VALUES
    state, runner = SessionState(), ThreadRunner()
    state.runner = runner
    state.adopt(opened)
    addresses = AddressesView(state=state)
    assert 'data-testid="ts-placement-pending"' in summary_html(state)
    assert 'data-testid="ts-address-pending"' in addresses._header.object
    before = state.ready
    runner.deliver()
    assert state.ready > before
    assert placed_in and threading.current_thread() not in placed_in  # placed in the runner's thread only
    html = summary_html(state)
    assert 'data-testid="ts-placed-standard"' in html and "ts-placement-pending" not in html
    assert "ts-address-pending" not in addresses._header.object
    # An edit: its re-plan, then its what-if placement, the same way (the caller's thread never places)
    placed_in.clear()
    row = int(opened.arrays.row_of_id[0])
    axis = opened.arrays.tiling(row).axes[0]
    file_plan = state.data
    assert state.apply_edit(TilingEdit(0, axis=0, partitions=max(1, axis.partitions // 2))) is None, state.error
    assert state.data is file_plan and state.status == REPLANNING and state.replanning  # (queued, not made here)
    runner.deliver()
    assert state.data is not file_plan and state.edits
    assert placed_in and threading.current_thread() not in placed_in
    assert 'data-testid="ts-placed-standard"' in summary_html(state)
    # Without a runner (a notebook, a test): at once, here
    alone = SessionState()
    alone.adopt(open_file(heavy))
    assert 'data-testid="ts-placed-standard"' in summary_html(alone)


@pytest.mark.browser
def test_a_heavy_profile_holds_up_no_other_session(heavy, tmp_path, browser, monkeypatch, request, capsys):
    """GET /app is asked again and again while one session opens the heavy profile (cached, so its
    open is mostly its placement), until that session's summary arrives; then another session opens
    the sample beside an edit of the heavy profile."""
    import json

    from playwright.sync_api import expect
    from test_app_robust_server import open_and_time, report

    root = tmp_path / "root"
    root.mkdir()
    shutil.copyfile(SAMPLE, root / "vit.json")
    shutil.copyfile(heavy, root / "heavy.json")
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    opened = open_file(
        root / "heavy.json"
    )  # normalised and planned once (its placement is not kept: each server places anew)
    partitions = opened.arrays.tiling(int(opened.arrays.row_of_id[0])).axes[0].partitions
    edit = f"0:0={max(1, partitions // 2)}"  # (the URL's compact edit: value 0, axis 0)
    sample_total = kib(json.loads(SAMPLE.read_bytes())["peak"]["total"])
    heavy_total = kib(json.loads(heavy.read_bytes())["peak"]["total"])

    def get_app() -> float:
        started = time.perf_counter()
        urllib.request.urlopen(server.url, timeout=300).read()  # a plain GET /app: a new session's page
        return time.perf_counter() - started

    server = AppServer(["--data-root", str(root)], env={"TILESCOPE_CACHE_DIR": str(tmp_path / "cache")})
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        probe = context.new_page()
        open_and_time(probe, f"{server.url}?file=vit.json", sample_total)  # warm: the first session's imports
        alone = min(open_and_time(probe, f"{server.url}?file=vit.json", sample_total) for _ in range(2))
        get_alone = min(get_app() for _ in range(3))

        heavy_page = context.new_page()
        started = time.perf_counter()
        heavy_page.goto(f"{server.url}?file=heavy.json", wait_until="commit")
        summary = heavy_page.locator("[data-testid=ts-placed-standard]")
        gets = []
        while summary.count() == 0 and time.perf_counter() - started < 300:
            gets.append(get_app())
            heavy_page.wait_for_timeout(500)  # (Playwright's own wait: the page's messages keep arriving)
        heavy_seconds = time.perf_counter() - started
        expect(heavy_page.locator("[data-testid=ts-peak-total]")).to_have_text(heavy_total)
        other = context.new_page()
        during = open_and_time(other, f"{server.url}?file=vit.json", sample_total)

        # An edit of the heavy profile (a session opening it with the URL's edit: the re-plan and the
        # what-if placement in the load workers), GET /app asked meanwhile until its placement shows.
        edited_page = context.new_page()
        started = time.perf_counter()
        edited_page.goto(f"{server.url}?file=heavy.json&edits={edit}", wait_until="commit")
        edit_gets = []
        while time.perf_counter() - started < 300 and not (
            edited_page.locator("[data-testid=ts-summary-edits]").count()
            and edited_page.locator("[data-testid=ts-placed-standard]").count()
        ):
            edit_gets.append(get_app())
            edited_page.wait_for_timeout(200)
        edit_seconds = time.perf_counter() - started
        expect(edited_page.locator("[data-testid=ts-summary-edits]")).to_have_count(1)
        expect(edited_page.locator("[data-testid=ts-placed-standard]")).to_have_count(1)
        log = server.output()
    finally:
        context.close()
        server.stop()
    assert "Traceback" not in log
    report(
        request,
        capsys,
        f"heavy profile ({VALUES:,} values, {STEPS} steps, cached): its page complete after {heavy_seconds:.1f} s; "
        f"meanwhile GET /app {len(gets)}× answered in at worst {max(gets):.2f} s (alone {get_alone:.2f} s); "
        f"the sample opened in {alone:.2f} s alone, {during:.2f} s after ({during / alone:.2f}×); "
        f"the heavy profile edited (?edits={edit}) placed after {edit_seconds:.1f} s, GET /app {len(edit_gets)}× "
        f"meanwhile, at worst {max(edit_gets, default=0):.2f} s",
    )
    assert len(gets) >= 3  # the heavy open lasted long enough to be asked during
    assert max(gets) < 3 * get_alone + 3  # no GET waited for the heavy profile's placement
    assert during < 3 * alone + 3
    assert edit_gets and max(edit_gets) < 3 * get_alone + 3  # no GET waited for the edit's re-plan or placement
