"""Placement dumps and placement profiles in the served app, in Chromium: a dump opened by ``?file=``
shows its picture (a rectangle per request), tilescope's verdict and proof; hovering a group outlines
exactly its conflict partners (counted from the raw JSON by ``dump_check``); the exports give a PNG and
a CSV/JSON whose placement passes ``dump_check`` (the fixture README's rules, no shared code). A
placement profile (``placement_profile_gen``) opens with its tile view, whose figures match the
generator's simple count, tile by tile; its hostile label stays text.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from browser_support import JS_DATA_TO_PAGE, JS_SOURCE_DATA, kib, served_app, watch_console
from dump_check import conflict_partners, problems
from placement_profile_gen import HOSTILE_LABEL, live_lower_bound, placed_top, placement_profile

pytestmark = pytest.mark.browser
BENCH = Path(
    os.environ.get("TILESCOPE_SHARED_BENCH", Path(__file__).resolve().parent.parent.parent / "shared" / "bench")
)
FRAGMENTED = BENCH / "ipu-stack-placement" / "fragmented.json"
PROFILE = "placement-4242.json"
MEMORY_PROFILE = "build.memory_profile.json"  # a v2 profile of 8 tiles (profile_generator.program_18)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not FRAGMENTED.exists():
        pytest.skip(f"{FRAGMENTED} is not here")
    root = tmp_path_factory.mktemp("placement-root")
    shutil.copy(FRAGMENTED, root / "fragmented.json")
    (root / PROFILE).write_text(json.dumps(placement_profile(tiles=3, seed=11)))
    from profile_generator import program_18, write

    write(program_18(), 2, root / MEMORY_PROFILE)
    with served_app("--data-root", str(root)) as app:
        app.data_root = root
        yield app


@pytest.fixture
def page_of(browser):
    contexts = []

    def make():
        context = browser.new_context(viewport={"width": 1500, "height": 1000}, accept_downloads=True)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(60_000)
        watch_console(page)
        return page

    yield make
    for context in contexts:
        context.close()


def source(page, name: str) -> dict:
    return page.evaluate(JS_SOURCE_DATA, name)


def download(page, label: str) -> tuple[str, bytes]:
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name=label).click()
    item = info.value
    assert item.failure() is None
    return item.suggested_filename, Path(item.path()).read_bytes()


def test_dump_picture_verdict_hover_and_exports(server, page_of):
    from playwright.sync_api import expect

    raw = json.loads(FRAGMENTED.read_text())
    page = page_of()
    page.goto(f"{server.url}?file=fragmented.json")
    verdict = page.locator("[data-testid=ts-dump-verdict]")
    expect(verdict).to_have_text("placed", timeout=90_000)
    proof = page.locator("[data-testid=ts-dump-proof]").inner_text()
    assert "nodes" in proof and "placement ends at address" in proof, proof
    rects = source(page, "ts-dump-rects")
    assert sorted(rects["request"]) == list(range(len(raw["requests"])))  # every request placed, once

    # Hover the group with the most conflict partners: exactly they are outlined.
    partners = conflict_partners(raw)
    k = max(range(len(partners)), key=lambda i: (len(partners[i]), raw["requests"][i]["bytes"]))
    assert len(partners[k]) > 1
    row = rects["request"].index(k)
    x = (rects["left"][row] + rects["right"][row]) / 2
    y = (rects["bottom"][row] + rects["top"][row]) / 2
    position = page.evaluate(JS_DATA_TO_PAGE, ["ts-dump-plot", x, y])
    page.mouse.move(*position)
    page.wait_for_function(
        "([name, n]) => { for (const d of Bokeh.documents) for (const m of d._all_models.values())"
        " if (m.name === name && m.data && m.data.request) return m.data.request.length === n; return false; }",
        arg=["ts-dump-partners", len(partners[k])],
    )
    assert sorted(source(page, "ts-dump-partners")["request"]) == sorted(partners[k])

    # The exports: a PNG, and the placement as CSV and JSON, each valid by the independent check.
    name, png = download(page, "Picture (PNG)")
    assert name == "fragmented.png" and png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    name, data = download(page, "Solution (CSV)")
    rows = list(csv.DictReader(io.StringIO(data.decode())))
    assert name == "fragmented.tilescope-placement.csv" and len(rows) == len(raw["requests"])
    assert problems(raw, {int(r["request"]): (int(r["start"]), int(r["end"])) for r in rows}) == []
    _, data = download(page, "Solution (JSON)")
    placed = json.loads(data)
    assert placed["verdict"] == "placed"
    assert problems(raw, {r["request"]: (r["start"], r["end"]) for r in placed["requests"]}) == []
    assert page.console_errors == []


def test_placement_profile_tile_view(server, page_of):
    from playwright.sync_api import expect

    raw = placement_profile(tiles=3, seed=11)
    estimate = json.loads((Path(server.data_root) / MEMORY_PROFILE).read_text())["timeline"]["steps"]
    page = page_of()
    page.goto(f"{server.url}?file={PROFILE}&profile={MEMORY_PROFILE}")
    for position in (0, 2):
        if position:
            page.locator(".ts-pp-tile select").select_option(index=position)
        rows = raw["tiles"][position]["allocations"]
        expect(page.locator("[data-testid=ts-pp-placed-top]")).to_have_text(f"{placed_top(rows):,}", timeout=60_000)
        expect(page.locator("[data-testid=ts-pp-live]")).to_have_text(f"{live_lower_bound(rows)[0]:,}")
        expect(page.locator("[data-testid=ts-pp-height]")).not_to_have_text("…", timeout=60_000)
        expect(page.locator("[data-testid=ts-pp-solver]")).to_contain_text("tilescope placed them up to address")
        drawn = source(page, "ts-pp-rects")
        assert len(drawn["left"]) == len(rows)
        assert sorted(zip(drawn["bottom"], drawn["top"], drawn["payload"])) == sorted(
            (r["start"], r["end"], r["payload_end"] - r["start"]) for r in rows
        )
        # the planner's estimate of the same logical tile, its peak read from the raw tile_usage
        totals = [sum(s["tile_usage"][position]) for s in estimate]
        peak = max(totals)
        expect(page.locator("[data-testid=ts-pp-estimate]")).to_contain_text(
            f"at most {kib(peak)} on tile {position} (step {totals.index(peak)})"
        )
    page.locator(".ts-pp-tile select").select_option(index=0)
    expect(page.locator("[data-testid=ts-pp-placed-top]")).to_have_text(
        f"{placed_top(raw['tiles'][0]['allocations']):,}"
    )
    page.wait_for_function(
        "(label) => { for (const d of Bokeh.documents) for (const m of d._all_models.values())"
        " if (m.name === 'ts-pp-rects' && m.data && m.data.label) return Array.from(m.data.label).includes(label); return false; }",
        arg=HOSTILE_LABEL,
    )
    assert page.evaluate("() => window.__xss") is None
    assert page.console_errors == []
