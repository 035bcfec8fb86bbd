"""What a click costs in a real browser, as a multiple of the framework's floor.

    .venv/bin/python -m benchmarks.bench_browser [--tries 9] [--no-large] [--large-profile FILE]

Serves, on this machine, the floor page (``benchmarks/floor_page.py``: a minimal Panel page whose
button sets a text) and the app (``panel serve app``, as ``tests/browser_support.py`` does), and
drives Debian's Chromium (Playwright, 1440×900) against both in one run. Every figure is the time
from the input event (``pointerup``, ``keydown`` or ``wheel``, stamped in the page by a capturing
listener) to the first animation frame in which the page shows the answer (checked in that frame,
inside the page, so Playwright's own round trips are not in it). Each is the median and max over
``--tries`` tries, and the median's ratio to the floor's median, measured in the same run:

- **floor**: click the button → its text shows the new count;
- **step click**: click the timeline at a step → the side panel's step header and its live-values
  table show that step (as many rows as the file lists live there);
- **step key**: → (ArrowRight) → the same for the next step;
- **drag → summary**: release the what-if editor's partition handle on a new count → the summary's
  total peak shows a new figure and the timeline's series has been redrawn;
- **wheel zoom**: one wheel notch over the timeline → the series re-sampled for the new window
  has arrived and is drawn (alternately in and out);
- **undo**: after a drag (as above), click the editor's Undo → the summary's total peak shows the
  file's figure again and the timeline's series has been redrawn;
- **Placement tab**: in a page just opened, click the Placement tab → its address view's head
  and chart data have arrived (the first time the tab is shown in the session: its views are built then); fewer
  tries (a page load each).

On the sample and on a 92.5 MB synthetic profile (``tilescope.synth.write_synthetic_profile(path,
200, 24)``, written into a temporary folder, opened once before timing so its cache is warm).
Targets (issue #17): step ≤ 2× the floor, drag ≤ 3×, zoom ≤ 4× on the sample; on the 92.5 MB
profile ≤ 2× those.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.browser_support (run from anywhere)

from tests.browser_support import JS_DATA_TO_PAGE, SAMPLE, AppServer, launch_chromium  # noqa: E402

VIEWPORT = {"width": 1440, "height": 900}
TIMEOUT_MS = 60_000

# The page's half of the benchmark (stamping input events, polling for the answer): its own file,
# installed in every page before the page's scripts (``_new_page``).
PAGE_SCRIPT = (Path(__file__).resolve().parent / "bench_browser.js").read_text()
JS_SETUP = "(names) => window.__tsBench.setup(names)"
JS_TEXT = "(selector) => window.__tsBench.text(selector)"
JS_FLOOR_DONE = "(want) => window.__tsBench.floorDone(want)"
JS_STEP_DONE = "(arg) => window.__tsBench.stepDone(arg)"
JS_DRAG_DONE = "(arg) => window.__tsBench.dragDone(arg)"
JS_ZOOM_DONE = "(arg) => window.__tsBench.zoomDone(arg)"
JS_COUNT = "(name) => window.__tsBench.count(name)"
JS_ADDRESSES_DONE = "(names) => window.__tsBench.addressesDone(names)"
ADDRESS_SOURCES = [f"ts-address-{r}{part}" for r in ("standard", "interleaved") for part in ("", "-cells")]


def _new_page(browser):
    page = browser.new_page(viewport=VIEWPORT)
    page.add_init_script(PAGE_SCRIPT)
    return page


@dataclass
class Figure:
    name: str
    times: list[float] = field(default_factory=list)  # ms

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def worst(self) -> float:
        return max(self.times)


def _wait(page, script: str, arg, timeout_ms: int = TIMEOUT_MS) -> float:
    return float(page.wait_for_function(script, arg=arg, polling="raf", timeout=timeout_ms).json_value())


def _settle(page, seconds: float = 0.4) -> None:
    page.wait_for_timeout(seconds * 1000)


def measure_floor(browser, tries: int) -> Figure:
    server = AppServer(app="benchmarks/floor_page.py")
    figure = Figure("floor: click → text set")
    try:
        page = _new_page(browser)
        page.goto(server.url)
        page.locator(".floor-button button, button").first.wait_for()
        page.evaluate(JS_SETUP, [])
        button = page.locator("button").first
        for k in range(1, tries + 2):
            button.click()
            elapsed = _wait(page, JS_FLOOR_DONE, k)
            if k > 1:  # the first click warms the connection
                figure.times.append(elapsed)
            _settle(page, 0.2)
        page.close()
    finally:
        server.stop()
    return figure


@dataclass
class Profile:
    """What the benchmark needs to know of a profile, read from its JSON (not from the app)."""

    name: str
    path: Path
    n_steps: int
    live_counts: list[int]
    total_peak_step: int

    @staticmethod
    def read(name: str, path: Path) -> Profile:
        with open(path, "rb") as handle:
            raw = json.load(handle)
        steps = raw["timeline"]["steps"]
        return Profile(name, path, len(steps), [len(set(s["live"])) for s in steps], raw["total_peak_step"])


def drag_target(path: Path) -> tuple[int, str, int, int]:
    """(value id, axis, the file's partitions, a new count) whose edit changes the total peak: a
    value live at the total peak's step, largest first, with one axis's partitions halved (its
    shards grow; the editor shows that value, ``?value=``). Checked with the planner."""
    from tilescope.derived.opening import open_file
    from tilescope.models.edits import TilingEdit
    from tilescope.planner.edits import EditError, apply_edits

    opened = open_file(path)
    arrays, plan = opened.arrays, opened.plan
    live = opened.base.live_at(plan.peaks.total_step)
    for row in live.rows.tolist():
        value = int(arrays.value_ids[row])
        for axis, tiling in enumerate(arrays.tiling(row).axes):
            if tiling.partitions < 2:
                continue
            edit = TilingEdit(value, axis=axis, partitions=tiling.partitions // 2)
            try:
                whatif = apply_edits(arrays, plan, [edit])
            except EditError:
                continue
            if whatif.plan.peaks.total != plan.peaks.total:
                return value, str(axis), int(tiling.partitions), int(edit.partitions)
    raise SystemExit(f"{path}: no edit found that changes the total peak")


def _drag(page, axis: str, count: int) -> None:
    """Press the handle, move over the track, release on the stop nearest ``count``."""
    track = page.locator(f".ts-track[data-axis='{axis}']")
    stops = json.loads(track.get_attribute("data-stops"))
    index = min(range(len(stops)), key=lambda i: abs(stops[i] - count))
    box = track.bounding_box()
    handle = page.locator(f".ts-handle[data-axis='{axis}']").bounding_box()
    x0, y0 = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
    target = box["x"] + box["width"] * index / max(len(stops) - 1, 1)
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(target, y0 + 3, steps=8)
    page.mouse.up()


def measure_profile(browser, server: AppServer, profile: Profile, tries: int) -> dict[str, Figure]:
    figures = {
        k: Figure(k) for k in ("step click", "step key", "drag → summary", "wheel zoom", "undo", "Placement tab")
    }
    query = f"?file={profile.path.name}"
    page = _new_page(browser)
    page.goto(server.url + query)
    page.locator("[data-testid=ts-peak-total]").first.wait_for(timeout=240_000)
    page.locator("[data-testid=ts-step-index]").first.wait_for(timeout=240_000)
    page.wait_for_function(JS_SETUP, arg=["ts-timeline-usage"], timeout=TIMEOUT_MS)
    _settle(page, 1.0)

    # step click: steps spread over the profile, never the one shown
    n = profile.n_steps
    box = page.locator(".ts-timeline canvas").first.bounding_box()

    def click_step(step: int) -> float:
        point = page.evaluate(JS_DATA_TO_PAGE, ["ts-timeline", step, 0])
        page.mouse.click(point[0], box["y"] + box["height"] * 0.45)
        return _wait(page, JS_STEP_DONE, [step, profile.live_counts[step]])

    targets = [round(i * (n - 1) / (tries + 1)) for i in range(1, tries + 2)]
    for k, step in enumerate(targets):
        if step == profile.total_peak_step:
            step = (step + 1) % n
        elapsed = click_step(step)
        if k > 0:
            figures["step click"].times.append(elapsed)
        _settle(page)

    # step key: → from a step a third of the way in
    current = n // 3 if n // 3 != targets[-1] else n // 3 + 1
    click_step(current)
    _settle(page)
    for k in range(tries + 1):
        if current + 1 >= n:
            break
        page.keyboard.press("ArrowRight")
        current += 1
        elapsed = _wait(page, JS_STEP_DONE, [current, profile.live_counts[current]])
        if k > 0:
            figures["step key"].times.append(elapsed)
        _settle(page)

    # wheel zoom over the timeline's middle, alternately in and out
    box = page.locator(".ts-timeline canvas").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.45)
    for k in range(tries + 1):
        count = page.evaluate(JS_COUNT, "ts-timeline-usage")
        page.mouse.wheel(0, -120 if k % 2 == 0 else 120)
        elapsed = _wait(page, JS_ZOOM_DONE, [count, profile.n_steps])
        if k > 0:
            figures["wheel zoom"].times.append(elapsed)
        _settle(page, 0.6)
    page.close()

    # drag → summary: the editor on a value whose partitions change the total peak
    value, axis, before, after = drag_target(profile.path)
    page = _new_page(browser)
    page.goto(server.url + f"{query}&value={value}&tab=editor")
    page.locator(f".ts-handle[data-axis='{axis}']").wait_for(state="visible", timeout=240_000)
    page.wait_for_function(JS_SETUP, arg=["ts-timeline-usage"], timeout=TIMEOUT_MS)
    _settle(page, 1.0)
    for k in range(tries + 1):
        shown = page.evaluate(JS_TEXT, "[data-testid=ts-summary] table")
        count = page.evaluate(JS_COUNT, "ts-timeline-usage")
        _drag(page, axis, after if k % 2 == 0 else before)
        elapsed = _wait(page, JS_DRAG_DONE, [shown, count])
        if k > 0:
            figures["drag → summary"].times.append(elapsed)
        _settle(page, 0.6)

    # undo: a drag to the new count, then Undo (the drag's own time is not counted here)
    undo = page.get_by_role("button", name="Undo")
    for k in range(tries + 1):
        shown = page.evaluate(JS_TEXT, "[data-testid=ts-summary] table")
        count = page.evaluate(JS_COUNT, "ts-timeline-usage")
        _drag(page, axis, after)  # (the last try left no edit: undone)
        _wait(page, JS_DRAG_DONE, [shown, count])
        page.wait_for_function("(b) => !b.disabled", arg=undo.element_handle(), timeout=TIMEOUT_MS)
        _settle(page, 0.6)
        shown = page.evaluate(JS_TEXT, "[data-testid=ts-summary] table")
        count = page.evaluate(JS_COUNT, "ts-timeline-usage")
        undo.click()
        elapsed = _wait(page, JS_DRAG_DONE, [shown, count])
        if k > 0:
            figures["undo"].times.append(elapsed)
        _settle(page, 0.6)
    page.close()

    # the Placement tab, first shown in a page just opened
    for k in range(max(3, tries // 2) + 1):
        page = _new_page(browser)
        page.goto(server.url + query)
        page.locator("[data-testid=ts-peak-total]").first.wait_for(timeout=240_000)
        page.wait_for_function(JS_SETUP, arg=[], timeout=TIMEOUT_MS)
        _settle(page, 1.0)
        page.locator(".bk-tab", has_text="Placement").click()
        # (a large profile's placement is computed when the tab is first shown: minutes on a busy machine)
        elapsed = _wait(page, JS_ADDRESSES_DONE, ADDRESS_SOURCES, timeout_ms=5 * TIMEOUT_MS)
        if k > 0:
            figures["Placement tab"].times.append(elapsed)
        page.close()
    return figures


TARGETS = {
    "step click": 2.0,
    "step key": 2.0,
    "drag → summary": 3.0,
    "wheel zoom": 4.0,
    "undo": 3.0,
    "Placement tab": 5.0,
}


def report(floor: Figure, results: list[tuple[Profile, dict[str, Figure], float]]) -> str:
    lines = [
        f"floor (minimal Panel page, button → text): median {floor.median:.0f} ms, max {floor.worst:.0f} ms over {len(floor.times)} clicks",
        "",
    ]
    lines.append("| profile | interaction | median | max | median ÷ floor | target | met |")
    lines.append("|---|---|---:|---:|---:|---:|---|")
    for profile, figures, scale in results:
        for name, f in figures.items():
            if not f.times:
                continue
            ratio = f.median / floor.median
            target = TARGETS[name] * scale
            lines.append(
                f"| {profile.name} | {name} | {f.median:.0f} ms | {f.worst:.0f} ms | {ratio:.1f}× | ≤ {target:g}× | {'yes' if ratio <= target else 'no'} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_browser", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=9, help="timed tries per interaction (default 9; at least 7)")
    parser.add_argument("--no-large", action="store_true", help="the sample only")
    parser.add_argument(
        "--large-profile", type=Path, help="an existing 200×24 synthetic profile instead of writing one"
    )
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    print(f"load average at start: {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_browser.") as scratch:
        scratch = Path(scratch)
        profiles = [(Profile.read("sample", SAMPLE), 1.0)]
        if not args.no_large:
            path = args.large_profile
            if path is None:
                from tilescope.synth import write_synthetic_profile

                path = write_synthetic_profile(scratch / "synthetic_200x24.memory_profile.json", 200, 24)
            profiles.append((Profile.read(f"synthetic 200×24 ({path.stat().st_size / 1e6:.1f} MB)", path), 2.0))
        root = scratch / "root"
        root.mkdir()
        for profile, _ in profiles:
            try:  # (a symlink would resolve outside the data root: refused, as it should be)
                os.link(profile.path, root / profile.path.name)
            except OSError:
                shutil.copyfile(profile.path, root / profile.path.name)
        env = {"TILESCOPE_CACHE_DIR": str(scratch / "cache")}
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            try:
                floor = measure_floor(browser, args.tries)
                print(f"floor: median {floor.median:.0f} ms, max {floor.worst:.0f} ms", flush=True)
                server = AppServer(["--data-root", str(root)], env=env)
                results = []
                try:
                    for profile, scale in profiles:
                        warm = _new_page(browser)  # fills the cache and the shared profile
                        started = time.monotonic()
                        warm.goto(server.url + f"?file={profile.path.name}")
                        warm.locator("[data-testid=ts-peak-total]").first.wait_for(timeout=300_000)
                        print(f"{profile.name}: first open → summary {time.monotonic() - started:.1f} s", flush=True)
                        warm.close()
                        figures = measure_profile(browser, server, profile, args.tries)
                        results.append((profile, figures, scale))
                        for f in figures.values():
                            if f.times:
                                print(
                                    f"  {f.name}: median {f.median:.0f} ms, max {f.worst:.0f} ms ({f.median / floor.median:.1f}× the floor)",
                                    flush=True,
                                )
                finally:
                    server.stop()
            finally:
                browser.close()
    print()
    print(report(floor, results))
    print(f"\nload average at end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
