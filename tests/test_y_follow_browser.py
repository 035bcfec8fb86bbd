"""The y axis follows the steps in view, in a real Chromium: the x range of the lifetimes and of the
address charts is set to a window through Bokeh's model in the page (as a zoom or a pan does), the
callback (app/static/y_follow.js) runs, and the y range is read back. The expected range comes from
an independent path: the lanes from the sample's JSON (the largest values, one lane each, ordered by
first live step then id: derived/lifetimes.py's rule written out again), the addresses from
``tilescope place --json`` run as a separate process.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from browser_support import SAMPLE, wait_for_app

pytestmark = pytest.mark.browser

WINDOW = (70, 110)  # steps 70–110 of the sample's 116: after the big interleaved values die at ~60

# The x and y ranges of the figure named `name`.
JS_RANGES = """(name) => {
  for (const m of Bokeh.documents[0]._all_models.values()) if (m.name === name)
    return {x: [m.x_range.start, m.x_range.end], y: [m.y_range.start, m.y_range.end]};
  return null;
}"""
# Set the x range of figure `name`, as a zoom or a pan does (the callbacks on it run).
JS_SET_X = """([name, start, end]) => {
  for (const m of Bokeh.documents[0]._all_models.values()) if (m.name === name) { m.x_range.setv({start, end}); return true; }
  return false;
}"""


def runs(steps: list[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s in steps:
        if out and s == out[-1][1] + 1:
            out[-1][1] = s
        else:
            out.append([s, s])
    return [(a, b) for a, b in out]


def expected_lanes(raw: dict, largest: int, window: tuple[float, float]) -> tuple[int, int]:
    """The first and last lane with a bar overlapping ``window`` (a step s drawn over s ± 0.5)."""
    bytes_of = {v["id"]: v["bytes"] for v in raw["timeline"]["values"]}
    live: dict[int, list[int]] = {}
    for step in raw["timeline"]["steps"]:
        for value in step["live"]:
            live.setdefault(value, []).append(step["index"])
    chosen = sorted(live, key=lambda v: (-bytes_of[v], v))[:largest]
    lanes = sorted(chosen, key=lambda v: (min(live[v]), v))
    seen = [
        lane
        for lane, value in enumerate(lanes)
        for first, last in runs(sorted(live[value]))
        if last + 0.5 >= window[0] and first - 0.5 <= window[1]
    ]
    return min(seen), max(seen)


def test_the_lifetimes_lanes_follow_the_window(page, app_server, raw):
    name = "ts-lifetimes"
    page.goto(app_server + "?tab=lifetimes")
    wait_for_app(page)
    page.wait_for_function(f"() => {{ const r = ({JS_RANGES})({name!r}); return r && r.x[1] > 100; }}")
    whole = page.evaluate(JS_RANGES, name)
    assert page.evaluate(JS_SET_X, [name, *WINDOW])
    page.wait_for_function(f"() => ({JS_RANGES})({name!r}).y[0] !== {whole['y'][0]}")
    first, last = expected_lanes(raw, 150, WINDOW)  # 150: the view's default "values drawn individually"
    # a real zoom: the lanes in view (some values live from the start to the end) and no band
    assert (last + 0.6) - (first - 0.6) < 0.7 * (whole["y"][0] - whole["y"][1])
    y = page.evaluate(JS_RANGES, name)["y"]
    # lanes drawn top to bottom: from the last lane in view (+0.6, a bar's half thickness at most 0.45) up to the first
    assert y == pytest.approx([last + 0.6, first - 0.6])
    # panned: the lanes of the new window
    assert page.evaluate(JS_SET_X, [name, 20, 40])
    first2, last2 = expected_lanes(raw, 150, (20, 40))
    page.wait_for_function(f"() => Math.abs(({JS_RANGES})({name!r}).y[0] - {last2 + 0.6}) < 1e-6")
    assert page.evaluate(JS_RANGES, name)["y"] == pytest.approx([last2 + 0.6, first2 - 0.6])
    # back at every step: the whole view, the band under the lanes included
    n = len(raw["timeline"]["steps"])
    assert page.evaluate(JS_SET_X, [name, -0.5, n - 0.5])
    page.wait_for_function(f"() => ({JS_RANGES})({name!r}).y[0] === {whole['y'][0]}")
    assert page.evaluate(JS_RANGES, name)["y"] == whole["y"]
    assert page.console_errors == []


def placed_allocations() -> list[dict]:
    run = subprocess.run(
        [sys.executable, "-m", "tilescope", "place", str(SAMPLE), "--json", "-q", "--exact-seconds", "0"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(run.stdout)["allocations"]


def test_the_address_charts_offsets_follow_the_window(page, app_server, raw):
    allocations = placed_allocations()
    n = len(raw["timeline"]["steps"])

    def top_in(region: str, window: tuple[float, float]) -> int:
        return max(
            a["offset"] + a["bytes"]
            for a in allocations
            if a["region"] == region and a["last_step"] + 0.5 >= window[0] and a["first_step"] - 0.5 <= window[1]
        )

    page.goto(app_server + "?tab=placement")
    wait_for_app(page)
    names = {r: f"ts-address-{r}-plot" for r in ("standard", "interleaved")}
    page.wait_for_function(
        f"() => {{ const r = ({JS_RANGES})({names['interleaved']!r}); return r && r.x[1] > 100 && r.y[1] > 1; }}"
    )
    whole = {r: page.evaluate(JS_RANGES, name) for r, name in names.items()}
    assert page.evaluate(JS_SET_X, [names["standard"], *WINDOW])  # one x range, shared by both charts
    page.wait_for_function(f"() => ({JS_RANGES})({names['interleaved']!r}).y[1] < {whole['interleaved']['y'][1]}")
    for region, name in names.items():
        expected = top_in(region, WINDOW)
        # the top: 1.06 × the highest allocation in view, as drawn: small allocations are drawn as
        # cells of 3 px (a 260 px chart), whose top may stand up to one cell above theirs
        cell = whole[region]["y"][1] / 260 * 3
        y = page.evaluate(JS_RANGES, name)["y"]
        assert y[0] == 0 and expected * 1.06 <= y[1] + 1e-6 <= (expected + cell) * 1.06 + 1e-6, (region, y, expected)
    # (on the sample the placement keeps the long-lived values on top, so the window's top is the
    # region's: the interleaved axis drops the capacity line, 1.06 × 331,776 B, and ends at its top)
    assert page.evaluate(JS_RANGES, names["interleaved"])["y"][1] < whole["interleaved"]["y"][1]
    # back at every step: the whole view
    assert page.evaluate(JS_SET_X, [names["standard"], -0.5, n - 0.5])
    page.wait_for_function(f"() => ({JS_RANGES})({names['interleaved']!r}).y[1] === {whole['interleaved']['y'][1]}")
    assert page.console_errors == []
