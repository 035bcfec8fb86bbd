"""The explorer tile by tile (issue #22), without a browser: one tile at one step as the compiler's
viewer lists it, one tile's timeline beside the old bound, the step's peak tile, the tiles view
following the session, and ``tile=`` in the URL.

Expected figures are computed here from the raw JSON that tests/profile_generator.py writes (the
spec's rules applied by hand: per live root, the alias with the largest ``tile_bytes[t]``; payload
``tile_shards[t] × copies``), never from tilescope's loader.
"""

from __future__ import annotations

import json

import pytest
from opening_support import open_into
from profile_generator import program_18, program_scaled, write

from tilescope.app.side_tabs import TAB_KEYS
from tilescope.app.state import SessionState
from tilescope.app.url_state import UrlState, parse_query
from tilescope.derived.opening import open_file
from tilescope.derived.tile_rows import step_peak, tile_lines, tile_step


def expected_rows(doc: dict, tile: int, step: int) -> list[tuple[int, int, int, int]]:
    """(value id, payload, padding, total) per live root on ``tile`` at ``step``, from the JSON."""
    values = doc["timeline"]["values"]
    out = []
    for root in doc["timeline"]["steps"][step]["live"]:
        aliases = [v for v in values if v["root"] == root]
        best = max(aliases, key=lambda v: v["tile_bytes"][tile])  # max keeps the first of equals
        total = best["tile_bytes"][tile]
        if total:
            payload = best["tile_shards"][tile] * best["copies"]
            out.append((best["id"], payload, total - payload, total))
    return sorted(out, key=lambda r: (-r[3], r[0]))


@pytest.fixture(scope="module", params=[2, 3])
def scaled(request, tmp_path_factory):
    path = write(program_scaled(2), request.param, tmp_path_factory.mktemp("tiles") / f"v{request.param}.json")
    return json.loads(path.read_text()), open_file(path)


def test_one_tile_at_one_step_lists_each_live_root_like_the_compiler(scaled):
    doc, opened = scaled
    data = opened.base
    steps = doc["timeline"]["steps"]
    for step in range(len(steps)):
        for tile in (0, 5, 1259, 1471):
            found = tile_step(data, tile, step)
            got = list(found.rows[["id", "payload", "padding", "total"]].itertuples(index=False, name=None))
            assert got == expected_rows(doc, tile, step), (step, tile)
            assert found.source == "file"
            # With the tile's scratch, the rows add up to the file's tile_usage (§1.6).
            usage = steps[step]["tile_usage"][tile]
            assert (found.standard, found.interleaved) == (usage[0], usage[1])


def test_a_tiles_timeline_is_its_tile_usage_beside_the_coarse_usage(scaled):
    doc, opened = scaled
    steps = doc["timeline"]["steps"]
    lines = tile_lines(opened.base, 17)
    assert lines.standard.tolist() == [s["tile_usage"][17][0] for s in steps]
    assert lines.interleaved.tolist() == [s["tile_usage"][17][1] for s in steps]
    assert lines.coarse.tolist() == [s["coarse_usage"]["standard"] + s["coarse_usage"]["interleaved"] for s in steps]


def test_the_steps_peak_tile_is_the_last_most_loaded_tile(scaled):
    doc, opened = scaled
    for step, s in enumerate(doc["timeline"]["steps"]):
        totals = [a + b for a, b in s["tile_usage"]]
        last = max(t for t, v in enumerate(totals) if v == max(totals))
        assert step_peak(opened.base, step) == (last, max(totals))
        # The file's usage is that tile's (§1.5).
        assert [s["usage"]["standard"], s["usage"]["interleaved"]] == s["tile_usage"][last]


def test_a_v1_file_gets_the_same_views_from_the_estimate_marked_as_such(sample_path):
    from tilescope.app.views.tiles import TilesView

    s = SessionState()
    assert open_into(s, sample_path), s.error
    view = TilesView(state=s)
    assert "data-source='estimate'" in view._source.object and "tilescope&#x27;s estimate" in view._source.object
    raw = json.loads(sample_path.read_text())
    step = raw["total_peak_step"]
    found = tile_step(s.data, view.tile, step)
    # No tile holds more than the v1 model's usage at the step (the bound the estimate refines).
    usage = raw["timeline"]["steps"][step]["usage"]
    assert found.standard + found.interleaved <= usage["standard"] + usage["interleaved"]
    assert found.source == "estimate"


def test_the_view_follows_the_selected_tile_and_step(tmp_path):
    from tilescope.app.views.tiles import TilesView

    path = write(program_18(), 3, tmp_path / "p18.json")
    doc = json.loads(path.read_text())
    s = SessionState()
    assert open_into(s, path), s.error
    view = TilesView(state=s)
    step = doc["total_peak_step"]
    assert s.selected_step == step and s.selected_tile is None
    totals = [a + b for a, b in doc["timeline"]["steps"][step]["tile_usage"]]
    peak = max(t for t, v in enumerate(totals) if v == max(totals))
    assert view.tile == peak  # opens on the total-peak step and its peak tile
    assert s.select_tile(3) is None and view.tile == 3
    assert view.table.value["total"].tolist() == [r[3] for r in expected_rows(doc, 3, step)]
    assert s.select_tile(8) and s.selected_tile == 3  # 8 tiles: 0..7
    view.tile_input.value = 6
    assert s.selected_tile == 6
    s.select_step(0)
    assert view.table.value["total"].tolist() == [r[3] for r in expected_rows(doc, 6, 0)]
    view.go_to_step_peak_tile()
    totals0 = [a + b for a, b in doc["timeline"]["steps"][0]["tile_usage"]]
    assert s.selected_tile == max(t for t, v in enumerate(totals0) if v == max(totals0))


def test_tile_in_the_url_round_trips_and_a_bad_one_is_said():
    state = UrlState("x.json", 4, None, "tiles", (), tile=1259)
    assert state.query() == "?file=x.json&step=4&tile=1259&tab=tiles"
    assert parse_query(state.query(), TAB_KEYS) == state
    bad = parse_query("?tile=-1", TAB_KEYS)
    assert bad.tile is None and any("tile=" in p for p in bad.problems)


def test_after_an_edit_the_tile_shows_the_edited_programs_figures(tmp_path):
    """A what-if edit re-tiles the GEMM result (value 6) of §1.8's program: the view's table at each
    step equals what the generator writes for the edited program itself."""
    import copy

    import numpy as np
    from profile_generator import profile_json

    from tilescope.app.views.tiles import TilesView
    from tilescope.models.edits import TilingEdit

    program = program_18()
    path = write(program, 3, tmp_path / "p18.json")
    s = SessionState()
    assert open_into(s, path), s.error
    view = TilesView(state=s)
    assert s.select_tile(4) is None  # a tile the edit changes at steps 0 and 1
    assert s.apply_edits([TilingEdit(6, axis=1, partitions=3)]) is None
    edited = copy.deepcopy(program)
    for value in edited.values:
        if value.id == 6:
            value.tiling.axes[1].partitions = 3
            value.tiling.tile_count = value.tiling.replicas * int(np.prod([a.partitions for a in value.tiling.axes]))
    doc = profile_json(edited, 3)
    for step in range(len(doc["timeline"]["steps"])):
        s.select_step(step)
        shown = list(view.table.value[["id", "payload", "padding", "total"]].itertuples(index=False, name=None))
        assert shown == expected_rows(doc, 4, step), step


def test_a_page_restores_tile_from_its_url_and_writes_it_back(sample_path):
    from tilescope.app.explorer import build_app

    explorer = build_app([str(sample_path)])
    explorer.router.adopt(open_file(sample_path), "sample")
    s = explorer.state
    explorer.router.apply_url(parse_query("?step=45&tile=7&tab=tiles", TAB_KEYS))
    assert (s.selected_step, s.selected_tile) == (45, 7) and explorer.profile_page.tabs.key == "tiles"
    assert explorer.controls.query == "?step=45&tile=7&tab=tiles"
    s.select_tile(9)
    assert "tile=9" in explorer.controls.query
    explorer.router.restore_query("?step=45")  # back to a URL without a tile: the step's peak tile again
    assert s.selected_tile is None
    explorer.router.apply_url(parse_query("?tile=1472", TAB_KEYS))  # the sample has tiles 0 to 1,471
    assert "tile=1472" in s.error and s.selected_tile is None
