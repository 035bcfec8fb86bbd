"""The served app in Chromium on the files of ``tests/corpus/make_app_corpus.py``:

- numbers no view may size anything by — a device of 2^53 tiles, a value of 2^44 blocks on an
  axis, a search state of 2^40 tiles — open, and are edited by a drag and by typed counts (the
  what-if editor; the search view's editor), while the server's memory and event loop stay as they
  were: another session's load of the sample takes its usual time (measured before and right
  after each edit, in the same run), and the server's RSS stays within 300 MB of where it started;
- a broken file that looks like a search state (a cut ``context``, a chosen plan equal to none of
  the alternatives), uploaded or opened by ``?file=``, keeps the open profile, its edits and its
  views, and says why in one line.

Expected figures come from the raw JSON by docs/formats.md §2 (tests/editor_support.py, and the
search state's serde tiling below), not from tilescope.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import pytest
from browser_support import SAMPLE, AppServer, kib, wait_for_app, watch_console
from editor_support import RawProfile, edited_bytes
from test_app_robust_server import open_and_time, rss_mb
from test_editor_browser import drag_to_count, pick_value

from tilescope.planner.tiling_rules import MAX_STOPS

sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))
from make_app_corpus import CASES, DEVICE_TILES, HUGE_BLOCKS, HUGE_ID, SEARCH_TILES, write_app_corpus

pytestmark = pytest.mark.browser

RSS_BOUND_MB = 300


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A server whose data root holds the app corpus and the sample (as vit.json)."""
    root = tmp_path_factory.mktemp("app-corpus")
    expected = write_app_corpus(root)
    shutil.copyfile(SAMPLE, root / "vit.json")
    server = AppServer(["--data-root", str(root)])
    try:
        yield server, root, expected
    finally:
        server.stop()


def editor_tab(page) -> None:
    page.locator(".bk-tab", has_text="What-if editor").click()
    page.locator(".ts-handle").first.wait_for(state="visible")


def type_count(page, axis: str, count: int, row: bool = True) -> None:
    field = page.locator(f".ts-row[data-axis='{axis}'] input" if row else f".ts-count-{axis} input")
    field.fill(str(count))
    field.press("Enter")


def shard_of_serde(shape: list[int], element_bytes: int, axes: list[dict], partitions: dict[int, int]) -> int:
    """docs/formats.md §2's shard rule over a search state's serde tiling (no Linear axes here)."""
    dims = list(shape)
    for position, axis in enumerate(axes):
        ((kind, index),) = axis["axis"].items()
        d = len(dims) - index if kind == "FromEnd" else index
        padded = -(-dims[d] // axis["padding_multiple"]) * axis["padding_multiple"]
        blocks = -(-padded // axis["block_size"])
        count = partitions.get(position, axis["partitions"])
        per = (
            -(-(-(-blocks // count) * axis["block_size"]) // axis["shard_padding_multiple"])
            * axis["shard_padding_multiple"]
        )
        dims[d] = per
    return math.prod(dims) * element_bytes


def test_huge_counts_open_and_edit_with_the_server_unaffected(served, browser, request, capsys):
    from playwright.sync_api import expect

    server, root, _ = served
    pid = server.process.pid
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    try:
        sample_total = kib(json.loads(SAMPLE.read_text())["peak"]["total"])
        other = context.new_page()
        open_and_time(other, f"{server.url}?file=vit.json", sample_total)  # warm
        usual = min(open_and_time(other, f"{server.url}?file=vit.json", sample_total) for _ in range(2))
        rss_start = rss_mb(pid)
        other_loads = []

        def another_session_loads() -> None:
            other_loads.append(open_and_time(other, f"{server.url}?file=vit.json", sample_total))

        page = context.new_page()
        page.set_default_timeout(60_000)

        # 1. The sample on a device of 2^53 tiles: drag value 85's axis 1, type 2^40 replicas.
        raw = RawProfile.load(root / "device_2_53_tiles.memory_profile.json")
        assert raw.doc["tile_count"] == DEVICE_TILES
        page.goto(f"{server.url}?file=device_2_53_tiles.memory_profile.json")
        wait_for_app(page)
        editor_tab(page)
        value = raw.value(85)
        pick_value(page, 85, value["name"])
        stops = json.loads(page.locator(".ts-track[data-axis='1']").get_attribute("data-stops"))
        assert len(stops) <= MAX_STOPS + 1
        drag_to_count(page, "1", 5)
        cost = edited_bytes(value, {1: 5})[2]
        expected = kib(raw.peaks_with({85: cost - value["bytes"]})["total"])
        peak = page.locator("[data-testid=ts-peak-total]")
        expect(peak).to_contain_text(f"→ {expected}")
        another_session_loads()
        type_count(page, "replicas", 2**40)  # 3 × 5 × 2^40 tiles: within 2^53, accepted; bytes unchanged
        expect(page.locator(".ts-handle[data-axis='replicas']")).to_have_attribute("data-count", str(2**40))
        expect(peak).to_contain_text(f"→ {expected}")
        another_session_loads()
        expect(page.locator("[data-testid=ts-tile-map-refused]")).to_have_count(0)  # (not on this tab)

        # 2. A value of 2^44 blocks on its axis: type 1024 partitions, then drag to a stop of the track.
        raw = RawProfile.load(root / "blocks_2_44.memory_profile.json")
        huge = raw.value(HUGE_ID)
        page.goto(f"{server.url}?file=blocks_2_44.memory_profile.json")
        wait_for_app(page)
        editor_tab(page)
        pick_value(page, HUGE_ID, huge["name"])
        track = page.locator(".ts-track[data-axis='0']")
        stops = json.loads(track.get_attribute("data-stops"))
        assert len(stops) <= MAX_STOPS + 1 and stops[-1] <= HUGE_BLOCKS
        type_count(page, "0", 1024)
        cost = edited_bytes(huge, {0: 1024})[2]
        assert cost == 2 * HUGE_BLOCKS // 1024
        expected = kib(raw.peaks_with({HUGE_ID: cost - huge["bytes"]})["total"])
        peak = page.locator("[data-testid=ts-peak-total]")
        expect(peak).to_contain_text(f"→ {expected}")
        another_session_loads()
        stops = json.loads(track.get_attribute("data-stops"))  # the track as the edit left it
        target = max(s for s in stops if s <= 1472 // 2)  # a stop the device's 1472 tiles allow
        drag_to_count(page, "0", target)
        # Up to 4,097 stops share the side panel's track, a few to a pixel: the drag lands on a stop
        # near the target, and the peak must be that stop's.
        handle = page.locator(".ts-handle[data-axis='0']")
        expect(handle).not_to_have_attribute("data-count", "1024")
        landed = int(handle.get_attribute("data-count"))
        assert landed in stops and abs(stops.index(landed) - stops.index(target)) <= len(stops) // 100, (landed, target)
        cost = edited_bytes(huge, {0: landed})[2]
        expected = kib(raw.peaks_with({HUGE_ID: cost - huge["bytes"]})["total"])
        expect(peak).to_contain_text(f"→ {expected}")
        another_session_loads()

        # 3. A search state of 2^40 tiles: re-tile the query's 2^44-long axis to 2^20 partitions.
        doc = json.loads((root / "config_2_40_tiles.search_state.json").read_text())
        required = doc["recipe"]["plans"]["0"]["requirements"]["inputs"][0]["format"]
        axes = required["layout"]["tiling"]["axes"]
        page.goto(f"{server.url}?file=config_2_40_tiles.search_state.json")
        page.locator("[data-testid=ts-search-header]").wait_for()
        expect(page.locator("[data-testid=ts-search-header]")).to_contain_text(f"{SEARCH_TILES:,} tiles")
        page.locator(".bk-input-group", has_text="Required format to re-tile").locator("select").select_option(
            label="query (input 0)"
        )
        expect(page.locator(".ts-count-0 input")).to_have_value("16")
        type_count(page, "0", 2**20, row=False)
        shard = shard_of_serde([4, HUGE_BLOCKS, 72], 2, axes, {0: 2**20})
        tiles = 2**20 * math.prod(a["partitions"] for a in axes[1:]) * required["layout"]["tiling"]["replicas"]
        expect(page.locator("[data-testid=ts-edit-edited]")).to_have_text(f"{kib(shard)} on {tiles:,} tiles")
        another_session_loads()
        rss_end = rss_mb(pid)
        log = server.output()
    finally:
        context.close()
    assert "Traceback" not in log
    worst = max(other_loads)
    report = request.config.pluginmanager.get_plugin("terminalreporter")
    line = (
        f"huge counts: another session opened the sample in {usual:.2f} s before the edits, {min(other_loads):.2f}–{worst:.2f} s "
        f"right after each of {len(other_loads)} edits ({worst / usual:.2f}× at worst); server RSS {rss_start:.0f} → {rss_end:.0f} MB"
    )
    if report is not None:
        with capsys.disabled():
            report.write_line("")
            report.write_line(line)
    assert worst < 3 * usual + 3, line  # the event loop was never held (without closed forms: 45 s, then MemoryError)
    assert rss_end - rss_start < RSS_BOUND_MB, line


def test_a_broken_search_state_keeps_the_profile_its_edits_and_views(served, browser, tmp_path):
    from playwright.sync_api import expect

    server, root, expected_cases = served
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        watch_console(page)
        raw = RawProfile.load(root / "vit.json")
        value = raw.value(85)
        recorded = kib(raw.doc["peak"]["total"])
        edited = kib(raw.peaks_with({85: edited_bytes(value, {1: 5})[2] - value["bytes"]})["total"])
        page.goto(f"{server.url}?file=vit.json")
        wait_for_app(page)
        editor_tab(page)
        pick_value(page, 85, value["name"])
        type_count(page, "1", 5)
        peak = page.locator("[data-testid=ts-peak-total]")
        expect(peak).to_contain_text(f"{recorded} → {edited}")
        canvases = page.locator("canvas").count()

        for name in ("bad_context.search_state.json", "chosen_not_among.search_state.json"):
            case = expected_cases[name]
            upload = tmp_path / name
            shutil.copyfile(root / name, upload)
            page.locator(".filepond--browser").first.set_input_files(str(upload))
            error = page.locator("[data-testid=ts-error]")
            expect(error).to_contain_text(f"{name}: at {case['path']}")
            for word in case["words"]:
                expect(error).to_contain_text(word)
            # the profile, its edit and its views are all still there
            expect(page.locator("[data-testid=ts-source]")).to_have_text("vit.json")
            expect(peak).to_contain_text(f"{recorded} → {edited}")
            expect(page.locator(".ts-handle[data-axis='1']")).to_have_attribute("data-count", "5")
            expect(page.locator("[data-testid=ts-search-header]")).to_have_count(0)
            # no view went away (a chart still drawing its first frame may add a canvas meanwhile)
            assert page.locator("canvas").count() >= canvases
        page.locator("button", has_text="Undo").click()  # and they still work
        expect(peak).to_have_text(recorded)

        for name, case in expected_cases.items():
            if case["outcome"] != "refused":
                continue
            fresh = context.new_page()
            fresh.goto(f"{server.url}?file={name}")
            wait_for_app(fresh)
            error = fresh.locator("[data-testid=ts-error]")
            expect(error).to_contain_text(f"{name}: at {case['path']}")
            expect(fresh.locator("[data-testid=ts-peak-total]")).to_have_text(recorded)  # the served default instead
            expect(fresh.locator("[data-testid=ts-search-header]")).to_have_count(0)
            fresh.close()
        assert page.console_errors == []
    finally:
        context.close()
    assert set(CASES) == set(expected_cases)
