"""The placement's views without a browser: the summary's figures, the address × step view, the tile
map and the allocations CSV, on the sample, after a what-if edit, on a hostile copy and on a device
of 2⁵³ tiles.

Expected figures come from the raw sample JSON: lower bounds from the recorded usage
(``test_placement.raw_lower_bounds``), the placement checked against the raw allocations and by a
sweep (``test_placement.check_placement``, ``placement_support``), the capacity by docs/formats.md §5
written out here, edited bytes by ``editor_support``; the tile map's per-tile bytes from the raw
JSON: the sample's (v1) worst tile holds its step's recorded usage, a generated v3 file's tiles its
recorded ``tile_usage`` and, per tile, the spec's rule applied to the raw values.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import re
import time
from collections import Counter

import numpy as np
import pytest
from async_support import run_on_own_loop
from bokeh.events import RangesUpdate, Tap
from browser_support import SAMPLE, kib
from editor_support import RawProfile, edited_bytes
from hostile import VALUE_NAMES, write_hostile_profile
from opening_support import open_into
from placement_support import expected_allocations, sweep_overlaps
from test_placement import check_placement, raw_lower_bounds

from tilescope.app.state import SessionState
from tilescope.app.views.addresses import SHADE_SELECTED, AddressesView
from tilescope.app.views.export import ExportView
from tilescope.app.views.summary import summary_html
from tilescope.app.views.tile_map import TileMapView
from tilescope.derived.tile_map import MAX_MAP_TILES, TileMapUnavailable, tile_map
from tilescope.models.edits import TilingEdit
from tilescope.synth import write_synthetic_profile

# Value 20 (vit.encoder.layer0.mlp.up.weight, interleaved, live at steps 0–61): axis 0 (FromEnd(1),
# 269 blocks of 16) from 54 to 108 partitions shrinks its shard from 30,720 B to 18,432 B.
VALUE, AXIS, PARTITIONS = 20, 0, 108
PEAK_STEP = 47  # the total peak; selected when the file opens


def plain_markup(html: str) -> str:
    """The markup without the line-break helpers (``<wbr>`` in names, ``ts-nb`` spans around a
    figure's parts): what is left is the escaped text itself, as before those helpers."""
    html = html.replace("<wbr>", "")
    return re.sub(r'<span class="ts-nb">([^<]*)</span>', r"\1", html)


def figure_text(html: str, name: str) -> str:
    """The text of the element carrying ``data-testid=name`` (figures hold no markup)."""
    found = re.search(rf'data-testid="{name}"[^>]*>([^<]*)<', html)
    assert found, name
    return found.group(1).replace("&gt;", ">").replace("&amp;", "&")


def capacities(raw: dict, placed_standard: int, placed_interleaved: int) -> tuple[int, int]:
    """docs/formats.md §5, written out: both regions and the support reserve share budget_bytes."""
    usable = raw["budget_bytes"] - raw["support_reserve_bytes"]
    return max(usable - placed_interleaved, 0), max(min(raw["interleaved_budget_bytes"], usable - placed_standard), 0)


@pytest.fixture
def state() -> SessionState:
    s = SessionState()
    assert open_into(s, SAMPLE), s.error
    return s


@pytest.fixture(scope="module")
def edited_raw(raw):
    """The edit's figures from the raw JSON: the value's new bytes and the new lower bounds."""
    profile = RawProfile(raw)
    value = profile.value(VALUE)
    new_bytes = edited_bytes(value, {AXIS: PARTITIONS})[2]
    return {"bytes": new_bytes, "peaks": profile.peaks_with({VALUE: new_bytes - value["bytes"]})}


def edit(state: SessionState) -> None:
    assert state.apply_edit(TilingEdit(VALUE, axis=AXIS, partitions=PARTITIONS)) is None, state.error


# ----------------------------------------------------------------------------- summary


def test_summary_shows_the_placement_of_the_file(state, raw):
    placement = state.data.placement
    check_placement(raw, placement)
    html = summary_html(state)
    bounds = raw_lower_bounds(raw)
    placed = (placement.standard.placed, placement.interleaved.placed)
    capacity = capacities(raw, *placed)
    for k, region in enumerate(("standard", "interleaved")):
        assert figure_text(html, f"ts-lower-bound-{region}") == kib(bounds[k])
        assert figure_text(html, f"ts-placed-{region}") == kib(placed[k])
        assert figure_text(html, f"ts-fragmentation-{region}") == kib(placed[k] - bounds[k])
        assert figure_text(html, f"ts-capacity-{region}") == kib(capacity[k])
        assert figure_text(html, f"ts-fits-{region}") == ("yes" if placed[k] <= capacity[k] else "no")
    assert placed == (206_032, 286_848) and capacity == (250_960, 331_776)  # README's figures for the sample
    assert figure_text(html, "ts-overflow-bytes") == kib(raw["standard_contiguous_overflow_bytes"])
    rule = figure_text(html, "ts-capacity-rule")
    assert "docs/formats.md §5" in rule and "budget_bytes − support_reserve_bytes − placed(interleaved)" in rule
    for k, region in enumerate(("standard", "interleaved")):  # both fit: placed, and the proof says within what
        assert figure_text(html, f"ts-verdict-{region}") == "placed"
        assert (
            f"within the capacity ({capacity[k]:,} B)"
            in html.split(f'data-testid="ts-proof-{region}"')[1].split("</div>")[0]
        )


def test_a_budget_below_the_bounds_is_infeasible_by_its_deficit(tmp_path, raw):
    """The budget 5,000 B short of both peaks and the support reserve: each region's lower bound
    exceeds the most the capacity rule can leave it; the summary and the Placement tab say
    "infeasible by" the excess, worked out here from the raw figures, with the proof."""
    import json

    short = 5000
    tight = dict(
        raw, budget_bytes=raw["peak"]["standard"] + raw["peak"]["interleaved"] + raw["support_reserve_bytes"] - short
    )
    path = tmp_path / "tight.json"
    path.write_text(json.dumps(tight))
    state = SessionState()
    assert open_into(state, path), state.error
    bounds = raw_lower_bounds(raw)
    usable = tight["budget_bytes"] - tight["support_reserve_bytes"]
    deficits = (
        bounds[0] - (usable - bounds[1]),
        bounds[1] - min(tight["interleaved_budget_bytes"], usable - bounds[0]),
    )
    html = summary_html(state)
    view = AddressesView(state=state)
    view.set_shown(True)
    for k, region in enumerate(("standard", "interleaved")):
        assert deficits[k] > 0
        assert figure_text(html, f"ts-verdict-{region}") == f"infeasible by {kib(deficits[k])}"
        assert figure_text(view._header.object, f"ts-address-verdict-{region}") == f"infeasible by {kib(deficits[k])}"
        assert f"by {deficits[k]:,} B" in figure_text(view._header.object, f"ts-address-proof-{region}")


def test_summary_follows_an_edit(state, raw, edited_raw):
    before = state.data.placement
    edit(state)
    after = state.data.placement
    check_placement(raw, after, bytes_of={VALUE: edited_raw["bytes"]})
    html = summary_html(state)
    new_bound = edited_raw["peaks"]["interleaved"]
    assert new_bound < raw_lower_bounds(raw)[1]  # the edit shrinks the interleaved peak
    assert figure_text(html, "ts-lower-bound-interleaved").startswith(
        f"{kib(raw_lower_bounds(raw)[1])} → {kib(new_bound)}"
    )
    shown = figure_text(html, "ts-placed-interleaved")
    drop = before.interleaved.placed - after.interleaved.placed
    assert (
        shown
        == f"{kib(before.interleaved.placed)} → {kib(after.interleaved.placed)} (−{drop:,} B (−{drop / 1024:,.1f} KiB))"
    )
    assert after.interleaved.placed == new_bound  # the placer reaches the new bound
    assert figure_text(html, "ts-placed-standard") == kib(before.standard.placed)  # nothing changed there
    capacity = capacities(raw, after.standard.placed, after.interleaved.placed)
    assert figure_text(html, "ts-capacity-standard").endswith(
        f"→ {kib(capacity[0])} (+{drop:,} B (+{drop / 1024:,.1f} KiB))"
    )


def test_a_refused_placement_is_said_not_drawn(tmp_path):
    """1,160 steps each with 2⁵² B of interleaved scratch (as large as the loader lets a step be,
    docs/formats.md §6): the region's Σ passes 2⁶², the placer refuses, and the summary and the
    address view say why instead of showing figures."""
    path = write_synthetic_profile(tmp_path / "s.memory_profile.json", 10, 2)
    doc = json.loads(path.read_text())
    for step in doc["timeline"]["steps"]:
        step["usage"]["interleaved"] += (1 << 52) - step["scratch"]["interleaved"]
        step["scratch"]["interleaved"] = 1 << 52
    assert len(doc["timeline"]["steps"]) > 1024  # 1,024 scratch allocations of 2⁵² B reach 2⁶²
    path.write_text(json.dumps(doc))
    s = SessionState()
    assert open_into(s, path), s.error
    html = summary_html(s)
    view = AddressesView(state=s)
    assert "placement refused: interleaved region:" in figure_text(html, "ts-placement-error")
    assert "too large to place exactly in int64" in view._header.object
    assert all(len(view.sources[r].data["left"]) == 0 for r in ("standard", "interleaved"))
    assert "ts-peak-total" in html  # the rest of the summary stays


# ----------------------------------------------------------------------------- address view


def rects_of(view: AddressesView, region: str) -> dict:
    """The allocations drawn alone."""
    return {k: np.asarray(v) for k, v in view.sources[region].data.items()}


def cells_of(view: AddressesView, region: str) -> dict:
    """The cells aggregating allocations too small to draw alone."""
    return {k: np.asarray(v) for k, v in view.cells[region].data.items()}


def individual(view: AddressesView, region: str) -> Counter:
    """(offset, bytes, first, last, id) of the rectangles that stand for one allocation."""
    d = rects_of(view, region)
    columns = [d[k].astype(np.int64).tolist() for k in ("bottom", "size", "first", "last", "id")]
    return Counter(zip(*columns))


def allocations(placement, region_code: int, rows) -> Counter:
    p = placement
    return Counter(
        (int(p.offset[k]), int(p.bytes[k]), int(p.first_step[k]), int(p.last_step[k]), int(p.value_id[k]))
        for k in rows
        if p.region[k] == region_code
    )


def test_address_view_draws_every_allocation_at_its_offset(state, raw):
    view = AddressesView(state=state)
    p = state.data.placement
    check_placement(raw, p)
    for code, region in enumerate(("standard", "interleaved")):
        d = rects_of(view, region)
        assert d["left"].size > 0
        # every rectangle drawn alone is an allocation of the region, at its offset over its live steps
        drawn = individual(view, region)
        assert drawn <= allocations(p, code, range(p.n_allocations))
        np.testing.assert_array_equal(d["left"], d["first"] - 0.5)
        np.testing.assert_array_equal(d["top"], d["bottom"] + d["size"])
        # the others are inside the cells: each counted by at least one, the cells inside the region
        in_region = (p.region == code) & (p.bytes > 0)
        rest = int(in_region.sum()) - sum(drawn.values())
        c = cells_of(view, region)
        assert rest > 0 and int(c["count"].sum()) >= rest
        assert c["bottom"].min() >= 0 and c["top"].max() <= p.regions[region].placed
        assert c["left"].min() >= -0.5 and c["right"].max() <= state.arrays.n_steps - 0.5
        assert np.all((c["fill"] > 0) & (c["fill"] <= 1))
        assert f"{rest:,} smaller than 3 px drawn as cells" in view._notes[region].object
        figures = p.regions[region]
        marks = view.marks[region]["spans"]
        assert (marks["placed"].location, marks["lower_bound"].location, marks["capacity"].location) == (
            figures.placed,
            raw_lower_bounds(raw)[code],
            capacities(raw, p.standard.placed, p.interleaved.placed)[code],
        )
        assert f"{figures.placed:,} B" in view._header.object


def test_selected_value_is_drawn_alone_and_highlighted(state):
    view = AddressesView(state=state)
    p = state.data.placement
    small = int(
        p.value_id[
            np.flatnonzero((p.value_id >= 0) & (p.region == 0))[np.argmin(p.bytes[(p.value_id >= 0) & (p.region == 0)])]
        ]
    )
    state.select_values([small])
    d = rects_of(view, "standard")
    mine = d["id"] == small
    assert mine.sum() == np.count_nonzero(p.value_id == small)  # every live range of it, never aggregated
    assert np.all(d["shade"][mine] == SHADE_SELECTED) and not np.any(d["shade"][~mine] == SHADE_SELECTED)


def tap(view: AddressesView, region: str, step: float, address: float) -> None:
    view.figures[region]._trigger_event(Tap(view.figures[region], x=step, y=address))


def test_clicking_an_allocation_selects_its_value(state):
    view = AddressesView(state=state)
    p = state.data.placement
    k = int(np.flatnonzero(p.value_id == VALUE)[0])
    tap(view, "interleaved", (p.first_step[k] + p.last_step[k]) / 2, p.offset[k] + p.bytes[k] / 2)
    assert state.selected_values == [VALUE]
    assert f"value #{VALUE} vit.encoder.layer0.mlp.up.weight" in view._picked.object
    # the exchange rows: said, nothing selected
    rows = int(np.flatnonzero(p.kind_names() == "exchange_rows")[0])
    state.select_values([])
    tap(view, "standard", 10, p.offset[rows] + 1)
    assert state.selected_values == [] and "exchange rows" in view._picked.object
    # free space above the placed top
    tap(view, "standard", 10, p.standard.placed + 10)
    assert state.selected_values == [] and view._picked.object == ""


def test_zooming_re_aggregates_the_window(state):
    view = AddressesView(state=state)
    p = state.data.placement
    fig = view.figures["standard"]
    whole = rects_of(view, "standard")
    assert cells_of(view, "standard")["left"].size  # the whole program has allocations smaller than 3 px
    low, high = 0, 20_000
    fig._trigger_event(RangesUpdate(fig, x0=39.5, x1=52.5, y0=low, y1=high))
    d = rects_of(view, "standard")
    assert (
        np.all(d["last"] >= 40) and np.all(d["first"] <= 52) and np.all(d["bottom"] < high) and np.all(d["top"] > low)
    )
    code = 0
    end = p.offset + p.bytes
    inside = np.flatnonzero(
        (p.region == code)
        & (p.bytes > 0)
        & (p.last_step >= 40)
        & (p.first_step <= 52)
        & (p.offset < high)
        & (end > low)
    )
    # 13 steps × 20,000 B over the pixel budget: every allocation there is large enough to draw alone
    assert individual(view, "standard") == allocations(p, code, inside) and not cells_of(view, "standard")["left"].size
    assert "steps 40–52" in view._notes["standard"].object
    # the step axis is shared: the interleaved region follows
    assert np.all(rects_of(view, "interleaved")["last"] >= 40)
    # back to the whole program (the range the view set): everything again
    fig._trigger_event(RangesUpdate(fig, x0=-0.5, x1=state.arrays.n_steps - 0.5, y0=0, y1=view._fitted["standard"][1]))
    assert rects_of(view, "standard")["left"].size == whole["left"].size


def test_an_edit_moves_allocations_and_undo_restores_them(state, raw, edited_raw):
    view = AddressesView(state=state)
    before = {r: rects_of(view, r) for r in ("standard", "interleaved")}
    placed_before = state.data.placement.interleaved.placed
    edit(state)
    after = state.data.placement
    check_placement(raw, after, bytes_of={VALUE: edited_raw["bytes"]})
    d = rects_of(view, "interleaved")
    mine = d["id"] == VALUE
    assert mine.any() and np.all(d["size"][mine] == edited_raw["bytes"])
    # the drawn allocations are the new placement's (some moved), the placed line too
    assert individual(view, "interleaved") <= allocations(after, 1, range(after.n_allocations))
    moved = set(zip(before["interleaved"]["id"].tolist(), before["interleaved"]["bottom"].tolist())) ^ set(
        zip(d["id"].tolist(), d["bottom"].tolist())
    )
    assert moved
    assert (
        view.marks["interleaved"]["spans"]["placed"].location
        == after.interleaved.placed
        == edited_raw["peaks"]["interleaved"]
        < placed_before
    )
    assert kib(after.interleaved.placed) in view._header.object
    state.undo()
    for region in ("standard", "interleaved"):
        for field in ("left", "right", "bottom", "top", "id"):
            np.testing.assert_array_equal(rects_of(view, region)[field], before[region][field])


# ----------------------------------------------------------------------------- tile map


def live_at(raw: dict, step: int) -> list[dict]:
    values = {v["id"]: v for v in raw["timeline"]["values"]}
    return [values[i] for i in raw["timeline"]["steps"][step]["live"]]


def test_tile_map_shows_the_worst_tile_against_the_old_bound(state, raw):
    """The sample is a v1 file: the map shows tilescope's §2 estimate, labelled so. Every value's
    partition 0 is on the same tiles (v1 records no rotation), so the worst tile holds the largest
    shard of every live value: the step's recorded usage (exchange rows are no per-tile figure)."""
    view = TileMapView(state=state)
    assert state.selected_step == PEAK_STEP
    step = raw["timeline"]["steps"][PEAK_STEP]
    bound = step["usage"]["standard"] + step["usage"]["interleaved"]
    assert bound + raw["peak"]["exchange_rows"] == raw["peak"]["total"]
    head = view._head.object
    assert figure_text(head, "ts-tile-worst-bytes") == kib(bound) and figure_text(head, "ts-tile-estimate") == kib(
        bound
    )
    assert "tilescope's estimate" in figure_text(head, "ts-tile-map-source")
    assert len(view.source.data["tile"]) == raw["tile_count"]
    got = np.asarray(view.source.data["bytes"])
    assert got.max() == bound
    worst = int(figure_text(head, "ts-tile-worst"))
    assert worst == int(np.flatnonzero(got == bound)[-1])  # the last tile holding the most
    # what the worst tile holds: one line per live root holding bytes there, none above its recorded bytes
    values = {v["id"]: v for v in raw["timeline"]["values"]}
    shown = re.findall(
        r'<tr data-kind="value"><td>#(\d+) ([^<]*)</td><td>(\w+)</td><td class="n">([^<]*)</td>',
        plain_markup(view._holdings.object),
    )
    assert len(shown) == 12 and len({int(i) for i, *_ in shown}) == 12
    for i, name, region, _ in shown:
        v = values[int(i)]
        assert int(i) in step["live"] and name == v["name"]
        assert region == ("standard" if v["class"] == "Ipu21Standard" else "interleaved")
    assert "exchange_rows" not in view._holdings.object
    # the standard region alone
    view.region = "standard"
    assert figure_text(view._head.object, "ts-tile-worst-bytes") == kib(step["usage"]["standard"])


def test_tile_map_shows_a_v3_files_own_per_tile_figures(tmp_path):
    """A v2/v3 file: the map's bytes are the file's tile_usage at every step (not re-estimated:
    the generator rotates some values' tiles, which tilescope's estimate cannot see), the worst
    tile the last most-loaded one, and a tile's lines are the spec's rule applied to the raw JSON
    (test_tileview.expected_rows) plus the tile's recorded scratch."""
    from profile_generator import program_18, write
    from test_tileview import expected_rows

    from tilescope.derived.tile_map import tile_map

    path = write(program_18(), 3, tmp_path / "p3.json")
    doc = json.loads(path.read_text())
    s = SessionState()
    assert open_into(s, path), s.error
    for number, step in enumerate(doc["timeline"]["steps"]):
        usage = np.asarray(step["tile_usage"])
        m = tile_map(s.data, number)
        assert m.source == "file"
        assert m.standard.tolist() == usage[:, 0].tolist() and m.interleaved.tolist() == usage[:, 1].tolist()
        totals = usage.sum(axis=1)
        assert (m.worst_tile, m.worst_bytes) == (int(np.flatnonzero(totals == totals.max())[-1]), int(totals.max()))
        for tile in range(m.device_tiles):
            lines, more = m.holdings(tile, limit=10_000)
            values = sorted((line.bytes, line.row) for line in lines if line.kind == "value")
            rows = expected_rows(doc, tile, number)
            assert more == 0 and [b for b, _ in values] == sorted(r[3] for r in rows)
            scratch = [line.bytes for line in lines if line.kind == "scratch"]
            assert sorted(scratch) == sorted(x for x in step["tile_scratch"][tile] if x)
            assert sum(line.bytes for line in lines) == int(totals[tile])
    view = TileMapView(state=s)
    assert figure_text(view._head.object, "ts-tile-map-source") == ""  # the file's own figures: no label


def test_clicking_a_tile_lists_what_it_holds(state):
    view = TileMapView(state=state)
    m = tile_map(state.data, PEAK_STEP)
    tile = m.device_tiles - 1
    column, row = m.position(tile)
    view.figure._trigger_event(Tap(view.figure, x=column + 0.3, y=row - 0.3))
    assert view.tile == tile and figure_text(view._holdings.object, "ts-tile-shown") == str(tile)
    lines, more = m.holdings(tile, limit=10_000)
    assert more == 0 and sum(line.bytes for line in lines) == int(m.bytes[tile]) <= m.estimate
    assert figure_text(view._holdings.object, "ts-tile-shown-bytes") == kib(int(m.bytes[tile]))
    assert "(clicked tile)" in view._holdings.object
    # outside the grid: nothing changes; "worst tile" goes back
    view.figure._trigger_event(Tap(view.figure, x=m.columns + 3, y=0))
    assert view.tile == tile
    view._worst_button.clicks += 1
    assert view.tile is None and figure_text(view._holdings.object, "ts-tile-shown") == str(m.worst_tile)


def test_tile_map_follows_the_step_and_the_edit(state, raw, edited_raw):
    view = TileMapView(state=state)
    edit(state)
    step = raw["timeline"]["steps"][PEAK_STEP]
    delta = edited_raw["bytes"] - RawProfile(raw).value(VALUE)["bytes"]
    expected = step["usage"]["standard"] + step["usage"]["interleaved"] + (delta if VALUE in step["live"] else 0)
    assert (
        figure_text(view._head.object, "ts-tile-estimate")
        == kib(expected)
        == figure_text(view._head.object, "ts-tile-worst-bytes")
    )
    assert "the what-if plan" in view._head.object
    state.select_step(100)
    later = raw["timeline"]["steps"][100]
    assert figure_text(view._head.object, "ts-tile-step") == "100"
    assert figure_text(view._head.object, "ts-tile-estimate") == kib(
        later["usage"]["standard"] + later["usage"]["interleaved"]
    )


def test_the_map_and_the_tiles_tab_show_the_same_figures(state):
    """One per-tile model: the map's bytes at a step are the Tiles tab's (derived.tile_usage), its
    worst tile the Tiles tab's peak tile of the step, before and after an edit."""
    from tilescope.derived.tile_rows import step_peak
    from tilescope.derived.tile_usage import at_step

    for edited in (False, True):
        if edited:
            edit(state)
        for number in (0, PEAK_STEP, 100):
            m = tile_map(state.data, number)
            standard, interleaved = at_step(state.data, number)
            assert m.standard.tolist() == np.asarray(standard).tolist()
            assert m.interleaved.tolist() == np.asarray(interleaved).tolist()
            assert (m.worst_tile, m.worst_bytes) == step_peak(state.data, number)


def test_the_grid_holds_every_tile_once_and_each_tile_itemised(state):
    m = tile_map(state.data, PEAK_STEP)
    assert (m.columns, m.rows) == (55, 27) and m.columns * m.rows >= m.device_tiles > m.columns * (m.rows - 1)
    assert [m.tile_at(*m.position(t)) for t in range(m.device_tiles)] == list(range(m.device_tiles))
    assert m.tile_at(-1, 0) is None and m.tile_at(m.columns, 0) is None and m.tile_at(m.columns - 1, m.rows - 1) is None
    for region in ("total", "standard", "interleaved"):
        m = tile_map(state.data, PEAK_STEP, region)
        for tile in range(m.device_tiles):
            lines, more = m.holdings(tile, limit=10_000)
            assert more == 0 and sum(line.bytes for line in lines) == int(m.bytes[tile]) <= m.estimate
            assert all(line.bytes <= line.planned for line in lines)  # no value holds more than the planner counts


def test_a_device_of_2_53_tiles_gets_no_grid(raw):
    doc = copy.deepcopy(raw)
    doc["tile_count"] = 2**53
    s = SessionState()
    assert open_into(s, json.dumps(doc).encode(), "big.json"), s.error
    started = time.perf_counter()
    view = TileMapView(state=s)
    assert time.perf_counter() - started < 5
    refused = figure_text(view._head.object, "ts-tile-map-refused")
    assert "9,007,199,254,740,992 tiles" in refused and f"{MAX_MAP_TILES:,}" in refused and "not drawn" in refused
    assert len(view.source.data["tile"]) == 0
    with pytest.raises(TileMapUnavailable):
        tile_map(s.data, PEAK_STEP)
    assert "ts-placed-standard" in summary_html(s)  # the rest of the page carries on


# ----------------------------------------------------------------------------- file text and export


def test_file_text_is_escaped(tmp_path):
    hostile = write_hostile_profile(tmp_path)
    s = SessionState()
    assert open_into(s, hostile.path), s.error
    tiles, addresses = TileMapView(state=s), AddressesView(state=s)
    html = plain_markup(tiles._holdings.object)  # the worst tile at the peak step holds 85 and 153
    p = s.data.placement
    k = int(np.flatnonzero(p.value_id == 85)[0])
    tap(addresses, "standard", p.first_step[k], p.offset[k] + 1)
    for value_id in (85, 153):
        name = VALUE_NAMES[value_id]
        assert (
            name not in html
            and name.replace("&", "&amp;")
            .replace("<", "&lt;")
            .replace(">", "&gt;")
            .replace('"', "&quot;")
            .replace("'", "&#x27;")
            in html
        )
    assert VALUE_NAMES[85] not in addresses._picked.object and "&lt;img src=x" in addresses._picked.object
    # Bokeh tooltips (@label) render text, never HTML: the name goes there as it is, not escaped twice
    addresses.state.select_values([85])
    assert f"value #85 {VALUE_NAMES[85]}" in addresses.sources["standard"].data["label"]


def test_export_sends_the_allocations_of_the_current_plan(state, raw, edited_raw):
    edit(state)
    view = ExportView(state=state)
    sent = run_on_own_loop(view._buttons["allocations.csv"].callback()).getvalue()
    rows = list(csv.DictReader(io.StringIO(sent.decode())))
    got = Counter(
        (
            r["kind"],
            int(r["id"]) if r["id"] else None,
            r["region"],
            int(r["bytes"]),
            int(r["first_step"]),
            int(r["last_step"]),
        )
        for r in rows
    )
    assert got == expected_allocations(raw, {VALUE: edited_raw["bytes"]})
    region = np.array([0 if r["region"] == "standard" else 1 for r in rows])
    column = {k: np.array([int(r[k]) for r in rows]) for k in ("offset", "bytes", "first_step", "last_step")}
    assert sweep_overlaps(region, column["offset"], column["bytes"], column["first_step"], column["last_step"]) == 0
    assert max(column["offset"][region == 1] + column["bytes"][region == 1]) == edited_raw["peaks"]["interleaved"]
