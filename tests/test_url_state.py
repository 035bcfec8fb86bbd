"""The URL as the session's shareable state, without a browser: parsing (untrusted parts dropped
and said), writing, and a page restoring it; the keys and the header's value search."""

from __future__ import annotations

import pytest

from tilescope.app.side_tabs import TAB_KEYS
from tilescope.app.url_state import UrlState, parse_query
from tilescope.models.edits import TilingEdit


def test_a_query_round_trips():
    state = UrlState("x.json", 45, 84, "editor", (TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)))
    query = state.query()
    assert query == "?file=x.json&step=45&value=84&tab=editor&edits=84:1=18,84:r=27"
    assert parse_query(query, TAB_KEYS) == state


@pytest.mark.parametrize(
    "query, problem",
    [
        ("?step=-3", "step="),
        ("?step=1e9", "step="),
        ("?value=abc", "value="),
        ("?tab=<script>", "tab="),
        ("?edits=84:1=18,oops", "$[1]"),
        ("?step=" + "9" * 40, "step="),
    ],
)
def test_a_bad_part_is_dropped_and_said(query, problem):
    parsed = parse_query(query, TAB_KEYS)
    assert parsed.step is None or parsed.step >= 0
    assert any(problem in p for p in parsed.problems), parsed.problems
    assert parsed.tab in (None, *TAB_KEYS)


def test_session_args_bytes_are_read_like_a_query():
    parsed = parse_query({"step": [b"12"], "value": [b"85"], "tab": [b"values"]}, TAB_KEYS)
    assert (parsed.step, parsed.value, parsed.tab) == (12, 85, "values")


@pytest.fixture
def explorer(sample_path):
    from tilescope.app.explorer import build_app
    from tilescope.derived.opening import open_file

    app = build_app([str(sample_path)])
    app.router.adopt(open_file(sample_path), "sample")
    return app


def test_a_page_restores_a_url_and_writes_it_back(explorer, raw):
    explorer.router.apply_url(parse_query("?step=45&value=84&tab=editor&edits=84:1=18,84:r=27", TAB_KEYS))
    s = explorer.state
    assert s.selected_step == 45 and s.selected_values == [84] and explorer.profile_page.tabs.key == "editor"
    assert s.edits == [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)]
    assert explorer.controls.query == "?step=45&value=84&tab=editor&edits=84:1=18,84:r=27"
    s.select_step(46)
    assert explorer.controls.query.startswith("?step=46&")
    # back to a URL without edits or value: both go
    explorer.router.restore_query("?step=45")
    assert (
        s.edits == [] and s.selected_values == [] and s.selected_step == 45 and explorer.profile_page.tabs.key == "step"
    )


def test_a_url_naming_an_unknown_value_says_so(explorer):
    explorer.router.apply_url(parse_query("?value=99999", TAB_KEYS))
    assert "value=99999" in explorer.state.error and explorer.state.selected_values == []


def test_keys_move_the_step(explorer, raw):
    s = explorer.state
    s.select_step(10)
    explorer.on_key("ArrowRight")
    assert s.selected_step == 11
    explorer.on_key("ArrowLeft")
    explorer.on_key("ArrowLeft")
    assert s.selected_step == 9
    explorer.on_key("End")
    assert s.selected_step == len(raw["timeline"]["steps"]) - 1
    explorer.on_key("Home")
    assert s.selected_step == 0
    explorer.on_key("p")
    assert s.selected_step == raw["total_peak_step"]


def test_the_header_search_selects_the_value(explorer):
    label = explorer.state.data.opened.value_text.labels[explorer.state.arrays.row_of_id[85]]
    explorer.search.value = label
    assert explorer.state.selected_values == [85]


@pytest.mark.parametrize("query", ["?step=%C2%B2", "?step=¹⁰", "?value=²", "?value=%D9%A8%D9%A4", "?step=１２"])
def test_non_ascii_digits_are_not_numbers(query):
    """``'²'.isdigit()`` is true and ``int('²')`` raises (the page stayed blank); ``int('٨٤')`` is 84.
    Either way such a part is dropped and said, never read as a number nor raised."""
    parsed = parse_query(query, TAB_KEYS)
    assert parsed.step is None and parsed.value is None
    assert len(parsed.problems) == 1 and parsed.problems[0].endswith(" number; ignored"), parsed.problems


def test_non_ascii_digits_in_edits_are_refused():
    parsed = parse_query("?edits=%D9%A8%D9%A4:%D9%A1=%D9%A1%D9%A8", TAB_KEYS)  # ٨٤:١=١٨, which read as 84:1=18
    assert parsed.edits == () and "$[0]" in parsed.problems[0] and "not applied" in parsed.problems[0]
    assert parse_query("?edits=84:1=18", TAB_KEYS).edits == (TilingEdit(84, axis=1, partitions=18),)


def test_the_edit_count_of_a_url_is_bounded():
    from tilescope.models.edits import MAX_COMPACT_EDITS

    at_bound = ",".join(f"{v}:r=1" for v in range(MAX_COMPACT_EDITS))
    assert len(parse_query(f"?edits={at_bound}", TAB_KEYS).edits) == MAX_COMPACT_EDITS
    past = ",".join(["84:1=18"] * 8000)
    parsed = parse_query(f"?edits={past}&step=45", TAB_KEYS)
    assert parsed.edits == () and parsed.step == 45  # the rest of the URL still applies
    (problem,) = parsed.problems
    assert f"expected at most {MAX_COMPACT_EDITS:,} edits, found 8,000" in problem and "not applied" in problem


def test_the_header_names_the_file_once(explorer):
    """Issue #27 item 11: the status under the file's name said "opened NAME" again."""
    header = explorer.file_bar.source.object
    assert explorer.state.source == "sample" and header.count("sample") == 1, header
