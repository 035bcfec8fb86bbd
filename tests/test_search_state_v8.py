"""Search states of versions 8 and 3 (docs/compiler-formats.md §3), written by
tests/search_state_generator.py from the v1 sample's content: the recipe of the later shape, the
visited recipes and how each differs from the incumbent, the bookkeeping, located errors.

Expected figures come from the written JSON, read here with plain ``json`` and compared by hand-made
rules (a plan is "alternative i" when it equals the i-th entry of the alternatives; options differ
when their JSON values differ), never from tilescope's reader.
"""

from __future__ import annotations

import copy
import json

import pytest
from search_state_generator import OPERATION, VISITED_CHANGES, v3_document, v8_document, write

from tilescope.app.views.search_html import recipe_html, visited_html
from tilescope.cli import main
from tilescope.derived.opening import open_file
from tilescope.derived.search_rows import SearchData
from tilescope.loaders.detect import detect_kind
from tilescope.loaders.search_state import parse_search_state
from tilescope.loaders.search_tables import search_state_tables
from tilescope.models.errors import InputError


@pytest.fixture(scope="module")
def doc() -> dict:
    return v8_document()


@pytest.fixture(scope="module")
def state(doc):
    return parse_search_state(json.dumps(doc).encode(), "v8.search_state.json")


def alternative_of(doc: dict, plan: dict) -> int | None:
    """The index of ``plan`` among the operation's alternatives, by JSON equality (None: none)."""
    for i, candidate in enumerate(doc["alternatives"][OPERATION]):
        if candidate == plan:
            return i
    return None


def flat(obj, prefix=""):
    out = {}
    for k, v in obj.items():
        name = f"{prefix}_{k}" if prefix else k
        out.update(flat(v, name) if isinstance(v, dict) and v else {name: v})
    return out


def expected_differences(doc: dict, entry: dict) -> dict:
    """What a visited entry changes, from the JSON alone."""
    incumbent = doc["recipe"]
    mine, theirs = incumbent["plans"][OPERATION], entry["plans"][OPERATION]
    dispatch = {}
    if mine != theirs:
        a, b = (flat(mine["dispatch"]["Attention"]), flat(theirs["dispatch"]["Attention"]))
        dispatch = {k: (a.get(k), b.get(k)) for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
    return {
        "plan": None if mine == theirs else alternative_of(doc, theirs),
        "plan_changed": mine != theirs,
        "dispatch": dispatch,
        "added": sorted(set(entry["open_boundaries"]) - set(incumbent["open_boundaries"])),
        "removed": sorted(set(incumbent["open_boundaries"]) - set(entry["open_boundaries"])),
        "options": sorted(k for k in incumbent["options"] if incumbent["options"][k] != entry["options"][k]),
    }


def test_the_recipe_of_version_8_is_read(doc, state):
    options = doc["recipe"]["options"]
    assert state.version == 8
    assert state.plans[0].chosen == alternative_of(doc, doc["recipe"]["plans"][OPERATION]) == 128
    assert state.recipe.open_boundaries == tuple(str(v) for v in doc["recipe"]["open_boundaries"])
    o = state.recipe.options
    assert (
        o.cast_before_copies,
        o.reuse_cast_inputs,
        o.packing_rows,
        o.parallel_reductions,
        o.disjoint_copy_sources,
    ) == (
        options["cast_before_copies"],
        options["reuse_cast_inputs"],
        options["packing_rows"],
        options["parallel_reductions"],
        options["disjoint_copy_sources"],
    )
    assert list(o.tile_mapping) == options["tile_mapping"]
    assert [name for name, _ in state.recipe.settings] == list(options)
    assert state.bookkeeping.attempts == doc["attempts"] and state.bookkeeping.visited == len(doc["visited"])
    assert state.bookkeeping.mapping is None and state.bookkeeping.mapping_checked is None


def test_visited_recipes_differ_from_the_incumbent_as_written(doc, state):
    rows = SearchData.of(state).visited
    assert len(rows) == len(doc["visited"]) == len(VISITED_CHANGES)
    for row, entry in zip(rows, doc["visited"]):
        want = expected_differences(doc, entry)
        if want["plan_changed"]:
            (change,) = row.plans
            assert change.incumbent == 128 and change.visited == want["plan"]
            got = {name: (a, b) for name, a, b in change.dispatch}
            assert got == want["dispatch"]
        else:
            assert row.plans == ()
        assert list(row.boundaries_added) == [str(v) for v in want["added"]]
        assert list(row.boundaries_removed) == [str(v) for v in want["removed"]]
        assert sorted(s.name for s in row.settings) == want["options"]
        assert row.same_as_incumbent == (entry == doc["recipe"])
    # The generator's stated cases, read back: another alternative, a plan outside them, a copy.
    assert rows[0].plans[0].visited == 57
    assert rows[3].plans[0].visited is None and rows[3].plans[0].has_plan
    assert rows[4].same_as_incumbent


def test_the_view_lists_every_visited_recipe_and_says_no_reason_is_recorded(doc, state):
    html = visited_html(SearchData.of(state).visited)
    assert html.count("data-testid='ts-visited-row'") == len(doc["visited"])
    assert "no cost, verdict or rejection reason" in html
    assert "alternative 128 → alternative 57" in html
    assert "a plan outside the alternatives" in html
    assert "nothing: the same recipe as the incumbent" in html
    assert "packing_rows: 0 → 4" in html and "open boundaries added: value 0" in html
    recipe = recipe_html(state)
    assert "a rotation by 5 of 64 tiles" in recipe  # tile t → t + 5, as the generator writes it
    assert f"{doc['attempts']} attempts" in recipe


def test_tables_hold_the_recipe_and_the_visited_recipes(doc, state):
    tables = search_state_tables(state)
    (recipe,) = tables["recipe"].to_pylist()
    assert recipe["version"] == 8 and recipe["tile_mapping"] == doc["recipe"]["options"]["tile_mapping"]
    assert [s["name"] for s in recipe["settings"]] == list(doc["recipe"]["options"])
    visited = tables["visited"].to_pylist()
    assert [v["plans"][0]["alternative"] for v in visited] == [
        alternative_of(doc, e["plans"][OPERATION]) for e in doc["visited"]
    ]


def test_version_3_keys_are_read():
    doc = v3_document()
    state = parse_search_state(json.dumps(doc).encode(), "v3.search_state.json")
    assert state.version == 3
    assert state.bookkeeping.mapping_checked is True
    assert state.bookkeeping.mapping == "[" + ", ".join(map(str, doc["mapping"])) + "]"
    assert state.bookkeeping.attempts == doc["attempts"]
    assert dict(state.recipe.settings)["parallel_reductions"] == str(doc["recipe"]["parallel_reductions"])
    (row,) = SearchData.of(state).visited
    assert [(s.name, s.incumbent, s.visited) for s in row.settings] == [
        (
            "parallel_reductions",
            str(doc["recipe"]["parallel_reductions"]),
            str(doc["visited"][0]["parallel_reductions"]),
        )
    ]
    assert "mapping checked: yes" in recipe_html(state)


def test_files_open_through_the_one_open_path(tmp_path, doc):
    path = write(doc, tmp_path / "v8.search_state.json")
    assert detect_kind(path) == "search_state"
    opened = open_file(path)
    assert opened.kind == "search_state" and opened.search_state.version == 8
    assert len(opened.view_data.visited) == len(doc["visited"])


def _bad(doc: dict, change) -> dict:
    doc = copy.deepcopy(doc)
    change(doc)
    return doc


BAD = {
    "a version 3 key in version 8": (
        lambda d: d.__setitem__("mapping", None),
        "at $.mapping: expected only the keys of a version 8",
    ),
    "no attempts": (lambda d: d.pop("attempts"), "at $.attempts: expected a field `attempts`"),
    "option of the wrong type": (
        lambda d: d["recipe"]["options"].__setitem__("reuse_cast_inputs", 1),
        "at $.recipe.options.reuse_cast_inputs: expected true or false, found 1",
    ),
    "a tile outside the device": (
        lambda d: d["visited"][2]["options"]["tile_mapping"].__setitem__(3, 64),
        "at $.visited[2].options.tile_mapping[3]: expected a device tile from 0 to 63, found 64",
    ),
    "an open boundary that is no value": (
        lambda d: d["visited"][1].__setitem__("open_boundaries", [3, 9]),
        "at $.visited[1].open_boundaries[1]: expected a value of the graph, found 9",
    ),
    "a visited plan that is not a plan": (
        lambda d: d["visited"][3]["plans"][OPERATION].pop("requirements"),
        "at $.visited[3].plans.0.requirements: expected a field `requirements`",
    ),
    "an option missing": (
        lambda d: d["visited"][0]["options"].pop("tile_mapping"),
        "at $.visited[0].options.tile_mapping: expected a field `tile_mapping`",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_version_8_files_are_refused_where_they_are_wrong(case, doc, tmp_path, capsys):
    change, expected = BAD[case]
    path = write(_bad(doc, change), tmp_path / "bad.search_state.json")
    with pytest.raises(InputError) as caught:
        parse_search_state(path.read_bytes(), str(path))
    assert expected in str(caught.value) and str(path) in str(caught.value)
    code = main(["summary", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and expected in err
