"""The search-state view on the sample (no browser): the chosen plan among its alternatives, the
formats side by side, the tiling editor's live shard bytes and its refusals, escaping.

Expected figures come from docs/formats.md (§3 states the sample's shard sizes; §2 gives the rule the
hand arithmetic below follows) or from the raw JSON, never from the code under test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from opening_support import open_into

from tilescope.app.state import SessionState
from tilescope.app.views.search_state import SearchStateView
from tilescope.derived.search_rows import CHOSEN, CHOSEN_MARK
from tilescope.loaders.search_state import load_search_state, parse_search_state

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "flash_attention.search_state.json"
KEY = "1"  # the key is input 1 of the attention
FROM_END_1 = "2"  # position of the FromEnd(1) axis (72 wide) in the key's required tiling


def figure(n: int) -> str:
    return f"{n:,} B ({n / 1024:,.1f} KiB)"


@pytest.fixture(scope="module")
def raw() -> dict:
    return json.loads(SAMPLE.read_bytes())


@pytest.fixture(scope="module")
def search_state():
    return load_search_state(SAMPLE)


@pytest.fixture
def view(search_state) -> SearchStateView:
    return SearchStateView(search_state=search_state)


def chosen_index_from_raw(raw: dict) -> int:
    """The recipe's plan located among the alternatives by plain JSON equality."""
    chosen = raw["recipe"]["plans"]["0"]
    matches = [i for i, alternative in enumerate(raw["alternatives"]["0"]) if alternative == chosen]
    assert len(matches) == 1
    return matches[0]


def test_table_marks_the_chosen_alternative_among_all(view, raw):
    expected = chosen_index_from_raw(raw)
    assert expected == 128 and len(raw["alternatives"]["0"]) == 384
    frame = view.table.value
    assert len(frame) == 384
    marked = frame[frame[CHOSEN] == CHOSEN_MARK]
    assert marked["alternative"].tolist() == [128]
    # The chosen row is pinned on top and is the only tinted row.
    assert [int(frame.iloc[i]["alternative"]) for i in view.table.frozen_rows] == [128]
    styled_rows = set(re.findall(r"row(\d+)_col\d+", view.table.style.to_html().split("</style>")[0]))
    assert styled_rows == {str(frame.index[frame["alternative"] == 128][0])}
    # The dispatch parameters are the file's, with the file's names as column titles.
    dispatch = raw["alternatives"]["0"][128]["dispatch"]["Attention"]
    row = marked.iloc[0]
    by_title = {title: column for column, title in view.table.titles.items()}
    assert row[by_title["query_key_rows"]] == dispatch["query_key"]["rows"] == 6
    assert row[by_title["probability_value_columns"]] == dispatch["probability_value"]["columns"] == 3
    assert "128" in view.choice_pane.object and "384" in view.choice_pane.object


def test_scatter_counts_every_alternative_and_stars_the_chosen(view, raw):
    by_title = {title: column for column, title in view.table.titles.items()}
    view.x_select.value = by_title["query_key_rows"]
    view.y_select.value = by_title["probability_value_columns"]
    dispatch = raw["alternatives"]["0"][128]["dispatch"]["Attention"]
    assert view._chosen.data["x"] == [dispatch["query_key"]["rows"]]
    assert view._chosen.data["y"] == [dispatch["probability_value"]["columns"]]
    points = view._points.data
    assert sum(points["count"]) == 384
    pairs = {
        (a["dispatch"]["Attention"]["query_key"]["rows"], a["dispatch"]["Attention"]["probability_value"]["columns"])
        for a in raw["alternatives"]["0"]
    }
    assert set(zip(points["x"], points["y"])) == pairs
    # Only numeric dispatch parameters (and the index) can be axes: not the fp8 list, not the flag.
    titles = set(view.x_select.options)
    assert "fp8_scales" not in titles and "materialized" not in titles and "alternative" in titles
    # The alternative's index can be an axis too.
    view.x_select.value = "alternative"
    assert sorted(view._points.data["x"]) == list(range(384)) and view._chosen.data["x"] == [128]
    # A row picked in the table is ringed in the chart.
    first = int(view.table.value.index[view.table.value["alternative"] == 3][0])
    view.table.selection = [first]
    assert view._selected.data["alternative"] == [3]


def test_formats_side_by_side_show_the_stated_conversions(view):
    # docs/formats.md §3: query 320 B on 64 tiles both ways; key and value 3040 B on 4 tiles → 10240 B on 4 tiles.
    figures = {
        p.key: (
            (p.arrives.shard_bytes, p.arrives.format.layout.tiling.tile_count) if p.arrives else None,
            (p.required.shard_bytes, p.required.format.layout.tiling.tile_count),
        )
        for p in view.pairs
    }
    assert figures["0"] == ((320, 64), (320, 64))
    assert figures["1"] == ((3040, 4), (10240, 4))
    assert figures["2"] == ((3040, 4), (10240, 4))
    assert [p.label for p in view.pairs[:3]] == ["query", "key", "value"]
    html = view.formats_pane.object
    assert f"data-testid='ts-arrives-0'>{figure(320)} on 64 tiles<" in html
    assert f"data-testid='ts-required-0'>{figure(320)} on 64 tiles<" in html
    for key in ("1", "2"):
        assert f"data-testid='ts-arrives-{key}'>{figure(3040)} on 4 tiles<" in html
        assert f"data-testid='ts-required-{key}'>{figure(10240)} on 4 tiles<" in html
        assert "+7,200 B (+7.0 KiB) per tile" in html  # 10240 - 3040
    assert "3,040 B (3.0 KiB) on 4 tiles" in html


def test_config_key_figures(view, raw):
    html = view.config_pane.object
    assert "data-figure='tile_count'>64 tiles<" in html
    assert f"data-figure='tile_memory_budget_bytes'>{figure(586960)}<" in html
    assert f"data-figure='standard_memory_reservation_bytes'>{figure(49152)}<" in html
    for name in ("tile_count: 64", "tile_memory_budget_bytes: 586960", "standard_memory_reservation_bytes: 49152"):
        assert name in raw["context"]


def test_editing_the_key_axis_recomputes_shard_bytes(view):
    # The tiling editor starts on the input whose conversion costs most: the key (3040 → 10240 B).
    assert view.edit_target.value == KEY
    assert view.widget.axes[int(FROM_END_1)]["label"] == "FromEnd(1)"
    assert view.edited_shard_bytes(KEY) == 10240
    # Key [4, 19, 72] F16 as required (docs/formats.md §2):
    #   FromEnd(3) = 4:  padding 1, block 1 → 4 blocks, 4 partitions → 1
    #   FromEnd(2) = 19: padding 64 → 64, block 64 → 1 block, 1 partition → 64
    #   FromEnd(1) = 72: padding 16 → 80, block 16 → 5 blocks; 5 partitions → ceil(5/5)·16 = 16
    #   1 · 64 · 16 · 2 bytes = 2048 B per tile, on 4 · 1 · 5 = 20 tiles.
    view.count_inputs[int(FROM_END_1)].value = 5
    assert view.edited_shard_bytes(KEY) == 1 * 64 * 16 * 2 == 2048
    assert view.tiling_of(KEY).tile_count == 20
    assert f"data-testid='ts-edit-edited'>{figure(2048)} on 20 tiles<" in view.edit_figures.object
    assert view.widget.message == ""
    # 2 partitions: ceil(5/2) = 3 blocks of 16 = 48 → 1 · 64 · 48 · 2 = 6144 B on 8 tiles.
    assert view.commit(FROM_END_1, 2) is None
    assert view.edited_shard_bytes(KEY) == 6144
    assert f"{figure(6144)} on 8 tiles" in view.edit_figures.object
    # The plan's figure stays beside it.
    assert f"data-testid='ts-edit-plan'>{figure(10240)} on 4 tiles<" in view.edit_figures.object


def test_invalid_counts_are_refused_with_the_rule(view):
    axis = int(FROM_END_1)
    view.count_inputs[axis].value = 6  # the axis has 5 blocks
    assert "6 partitions refused" in view.widget.message and "5 blocks" in view.widget.message
    assert view.widget.message_axis == FROM_END_1
    assert view.count_inputs[axis].value == 1  # snapped back to the plan's count
    assert view.edited_shard_bytes(KEY) == 10240
    assert "blocks" in (view.commit(FROM_END_1, 0) or "")

    assert view.commit(FROM_END_1, 5) is None  # 20 tiles
    # 4 replicas: 4 · 1 · 5 · 4 = 80 tiles > the config's 64.
    refusal = view.commit("replicas", 4)
    assert refusal and "80 tiles" in refusal and "64" in refusal
    assert view.widget.message == refusal and view.widget.message_axis == "replicas"
    # 3 replicas: 60 tiles is allowed; the shard is unchanged, the tiles triple.
    assert view.commit("replicas", 3) is None
    assert view.widget.message == ""
    assert view.edited_shard_bytes(KEY) == 2048 and view.tiling_of(KEY).tile_count == 60
    # The widget's stops mark what is allowed: replicas up to 64 // 20 = 3.
    assert view.widget.valid_replica_counts == [1, 2, 3]
    view.reset_edit()
    assert view.edited_shard_bytes(KEY) == 10240 and view.tiling_of(KEY).tile_count == 4


def test_file_text_is_escaped(raw):
    hostile = "<img src=x onerror=alert(1)>"
    doc = json.loads(json.dumps(raw))
    doc["context"] = doc["context"].replace('name: "query"', f'name: "{hostile}"')
    for plan in [doc["recipe"]["plans"]["0"], *doc["alternatives"]["0"]]:
        attention = plan["dispatch"]["Attention"]
        attention["<b>rows</b>"] = attention.pop("key_block_rows")
    view = SearchStateView(search_state=parse_search_state(json.dumps(doc).encode(), "<i>evil</i>.json"))
    shown = view.graph_pane.object + view.formats_pane.object + view.header.object + view.edit_figures.object
    assert hostile not in shown and "&lt;img src=x onerror=alert(1)&gt;" in view.graph_pane.object
    assert "<i>evil" not in view.header.object and "&lt;i&gt;evil" in view.header.object
    assert "&lt;b&gt;rows&lt;/b&gt;" in view.table.titles.values()
    assert all("<" not in title for title in view.table.titles.values())


def test_a_session_opens_a_search_state_and_a_bad_file_says_where(raw):
    session = SessionState()
    assert open_into(session, SAMPLE.read_bytes(), "flash_attention.search_state.json"), session.error
    view = SearchStateView(state=session)
    assert view.error == "" and len(view.table.value) == 384

    doc = json.loads(json.dumps(raw))
    doc["context"] = doc["context"].replace("tile_count: 64, optimization_steps", "tile_count: -64, optimization_steps")
    assert not open_into(session, json.dumps(doc).encode(), "bad.search_state.json")
    assert session.error.startswith("bad.search_state.json: at $.context line 2")
    assert session.source == "flash_attention.search_state.json"  # what was open stays open
    assert len(SearchStateView(state=session).table.value) == 384
