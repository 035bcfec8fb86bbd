"""The explorer on a ~90 MB profile (200 blocks × 24 layers: 23,200 steps, 88,000 values) in a
real Chromium: the summary's figures, a step's live values and the editor's value search.

Expected figures come from the synthetic file itself (read with json). Times are printed in the
pytest output, not asserted (two shared cores make them noisy; the goals live in benchmarks/):
the first open includes normalising the file and filling the cache.
"""

from __future__ import annotations

import json
import time

import pytest
from browser_support import JS_STEP_TABLE_IDS, kib, served_app, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    from tilescope.synth import write_synthetic_profile

    folder = tmp_path_factory.mktemp("scale")
    path = write_synthetic_profile(folder / "big.memory_profile.json", 200, 24)
    with open(path, "rb") as handle:
        raw = json.load(handle)
    step = raw["standard_peak_step"]
    values = {v["id"]: v for v in raw["timeline"]["values"]}
    live = sorted(set(raw["timeline"]["steps"][step]["live"]))
    expected = {
        "size": path.stat().st_size,
        "n_values": len(values),
        "n_steps": len(raw["timeline"]["steps"]),
        "peak": raw["peak"],
        "standard_peak_step": step,
        "live": live,
        # the value with the highest id: its label is the last of 88,000 sorted by id
        "pick": {"id": max(values), "name": values[max(values)]["name"]},
    }
    del raw, values
    return path, expected


def test_a_90_mb_profile_is_explored_live(page, big, tmp_path, monkeypatch, capsys):
    path, expected = big
    assert expected["size"] > 80e6 and expected["n_values"] == 88_000
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    with served_app("--data-root", str(path.parent)) as server:
        started = time.monotonic()
        page.goto(server.url + f"?file={path.name}")
        wait_for_app(page, timeout=240_000)
        page.locator("[data-testid=ts-peak-total]").first.wait_for(timeout=240_000)
        opened = time.monotonic() - started
        peak = expected["peak"]
        assert page.locator("[data-testid=ts-peak-total]").first.inner_text().strip() == kib(peak["total"])
        assert page.locator("[data-testid=ts-peak-standard]").first.inner_text().strip() == kib(peak["standard"])
        assert page.locator("[data-testid=ts-peak-interleaved]").first.inner_text().strip() == kib(peak["interleaved"])

        # The standard peak's step and every value live there.
        step, live = expected["standard_peak_step"], expected["live"]
        started = time.monotonic()
        page.get_by_role("button", name="standard peak").click()
        page.locator("[data-testid=ts-step-index]").filter(has_text=str(step)).first.wait_for()
        page.wait_for_function(
            f"() => {{ const ids = ({JS_STEP_TABLE_IDS})(); return ids && ids.length === {len(live)}; }}"
        )
        stepped = time.monotonic() - started
        assert sorted(page.evaluate(JS_STEP_TABLE_IDS)) == live

        # The editor finds a value among 88,000 by what is typed (searched on the server).
        pick = expected["pick"]
        page.locator(".bk-tab", has_text="What-if editor").click()
        field = page.get_by_placeholder("type an id or part of a name…")
        field.wait_for()
        started = time.monotonic()
        field.click()
        field.fill("")
        field.press_sequentially(f"#{pick['id']} ", delay=30)
        page.locator(".bk-menu div", has_text=f"#{pick['id']} {pick['name']}").first.click()
        page.locator(".ts-value-head", has_text=f"#{pick['id']} {pick['name']}").wait_for()
        picked = time.monotonic() - started
        menu_items = page.locator(".bk-menu div").count()
        assert menu_items <= 101
        assert page.console_errors == []
    with capsys.disabled():
        print(
            f"\nscale: {expected['size'] / 1e6:.1f} MB profile ({expected['n_steps']:,} steps, {expected['n_values']:,} values): "
            f"summary shown {opened:.1f} s after navigation (first open: normalise + cache + plan); "
            f"standard peak step with its {len(live):,} live values {stepped:.2f} s after the click; "
            f"value #{pick['id']} found by typing and shown {picked:.2f} s (typing included)"
        )
