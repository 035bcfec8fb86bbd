"""The app's fleet view without a browser, on the nightly dataset of ``regress_support`` (batched on
real worker processes, read by a real DuckDB): the table and chart against the raw JSON's peaks
(``compare_support.peaks_of``), grouping by folder, opening a row from its file or from the
dataset's partitions, refusals, a bad dataset, the compare link, and the whole page
(``app.main.build_app``) showing the fleet and a profile opened from it.
"""

from __future__ import annotations

import shutil
from urllib.parse import parse_qs

import pytest
from async_support import run_on_own_loop
from compare_support import peaks_of
from regress_support import BASE, BROKEN, HEAD, MID_V2, SEARCH, SMALL, VIT

from tilescope.app.fleet_open import RowSource, compare_link, load_fleet, open_row, requested_dataset, row_source
from tilescope.app.loading import AppOptions, parse_app_args
from tilescope.app.shared import SharedProfiles
from tilescope.derived.fleet_rows import chart_bars, failures, folder_groups, natural_key, table_frame
from tilescope.derived.opening import OpenedProfile
from tilescope.models.errors import TilescopeError

PEAK_COLUMNS = {
    "standard_peak": "standard",
    "interleaved_peak": "interleaved",
    "total_peak": "total",
    "effective_peak_bytes": "effective_peak_bytes",
}


run = run_on_own_loop


@pytest.fixture(scope="module")
def fleet(nightly):
    return load_fleet(nightly.dataset, "fleet-data")


def position_of(fleet, path: str) -> int:
    return int(fleet.profiles.index[fleet.profiles["path"] == path][0])


# ----------------------------------------------------------------------------- pure rows


def test_folder_groups_are_the_first_folder_below_the_shared_ones():
    paths = [
        "nightly/2024-05-01/a.json",
        "nightly/2024-05-01/deep/b.json",
        "nightly/2024-05-02/a.json",
        "nightly/c.json",
    ]
    assert folder_groups(paths) == (
        ["nightly/2024-05-01", "nightly/2024-05-01", "nightly/2024-05-02", "nightly/"],
        ["a.json", "deep/b.json", "a.json", "c.json"],
    )
    assert folder_groups(["x/a.json", "x/b.json"]) == (["x/", "x/"], ["a.json", "b.json"])
    assert folder_groups(["a.json"]) == (["./"], ["a.json"])
    assert sorted(["run-10", "run-2", "run-1"], key=natural_key) == ["run-1", "run-2", "run-10"]


def test_the_table_holds_every_row_with_the_raw_jsons_peaks(nightly, fleet):
    frame = table_frame(fleet.profiles)
    assert len(frame) == len(list((nightly.root / "nightly").rglob("*.json"))) == 16
    by_path = frame.set_index("path")
    for path, raw in nightly.raw.items():
        if path.startswith(BROKEN) and path.endswith(SMALL):
            continue
        expected = peaks_of(raw)
        row = by_path.loc[path]
        assert row["status"] == "loaded" and row["fits"] == ("yes" if expected["fits_budget"] else "no")
        for column, key in PEAK_COLUMNS.items():
            assert row[column] == expected[key], (path, column)
    assert by_path.loc[f"{BROKEN}/{SMALL}", "status"] == "failed"
    assert by_path.loc[f"{BASE}/{SEARCH}", "status"] == "search state"
    assert by_path.loc[f"{BASE}/{SEARCH}", ["total_peak", "fits"]].tolist()[1] == ""


def test_the_chart_groups_bars_by_nightly_folder_in_order(nightly, fleet):
    bars = chart_bars(fleet.profiles, "standard_peak")
    assert bars.groups == ["nightly/2024-05-01", "nightly/2024-05-02", "nightly/2024-05-03", "nightly/2024-05-04"]
    assert [g for g, _ in bars.factors] == sorted((g for g, _ in bars.factors), key=natural_key)
    expected = {
        p: peaks_of(r)["standard"] for p, r in nightly.raw.items() if not (p.startswith(BROKEN) and p.endswith(SMALL))
    }
    assert dict(zip(bars.paths, bars.values)) == expected  # one bar per loaded profile, its exact peak
    # a bar's colour is the profile's fit (#27 item 11), its mark the budget, as the raw JSON records them
    fits = {p: "fits the budget" if peaks_of(r)["fits_budget"] else "does not fit" for p, r in nightly.raw.items()}
    assert dict(zip(bars.paths, bars.fits)) == {p: fits[p] for p in expected}
    assert dict(zip(bars.paths, bars.budgets)) == {p: nightly.raw[p]["budget_bytes"] for p in expected}
    interleaved = chart_bars(fleet.profiles, "interleaved_peak")
    assert interleaved.budget_label == "interleaved budget"
    assert dict(zip(interleaved.paths, interleaved.budgets)) == {
        p: nightly.raw[p]["interleaved_budget_bytes"] for p in expected
    }


def test_each_verdict_has_its_colour_and_a_missing_budget_no_mark():
    import pandas as pd

    frame = pd.DataFrame(
        {
            "path": ["a/x.json", "a/y.json", "a/z.json"],
            "error": [None, None, None],
            "kind": ["memory_profile"] * 3,
            "total_peak": pd.array([10, 20, 30], dtype="Int64"),
            "interleaved_peak": pd.array([1, 2, 3], dtype="Int64"),
            "fits_budget": pd.array([True, False, None], dtype="boolean"),
            "budget_bytes": pd.array([15, 15, None], dtype="Int64"),
        }
    )
    bars = chart_bars(frame, "total_peak")
    assert bars.fits == ["fits the budget", "does not fit", "fit unknown"] and bars.budgets == [15, 15, None]
    assert chart_bars(frame, "interleaved_peak").budgets == [None, None, None]  # (no interleaved budget column)


def test_a_failure_names_its_path_once(fleet):
    (failure,) = failures(fleet.profiles)
    assert failure[0] == f"{BROKEN}/{SMALL}" and failure[1].startswith("at byte 20000")


# ----------------------------------------------------------------------------- which dataset, which source


def test_the_requested_dataset(nightly, tmp_path):
    options = AppOptions(None, nightly.root)
    request = requested_dataset({"dataset": [b"fleet-data"]}, options)
    assert (request.path, request.name, request.problem) == (nightly.dataset.resolve(), "fleet-data", None)
    for name in ("../etc", "/etc", "fleet-data/../../x"):
        refused = requested_dataset({"dataset": [name.encode()]}, options)
        assert refused.path is None and refused.problem.startswith(f"refused dataset name {name!r}")
    assert requested_dataset({}, options) is None
    served = parse_app_args(["--data-root", str(nightly.root), "--dataset", str(tmp_path)])
    assert served.dataset == tmp_path and requested_dataset({}, served).path == tmp_path
    assert requested_dataset({"dataset": [b"fleet-data"]}, served).name == "fleet-data"  # the URL wins


def test_a_bad_dataset_is_one_located_line(nightly, tmp_path):
    with pytest.raises(TilescopeError) as caught:
        load_fleet(nightly.root / BASE, BASE)
    assert str(caught.value).startswith(f"{BASE}: at $: expected a dataset directory written by `tilescope batch`")
    copy = tmp_path / "data"
    shutil.copytree(nightly.dataset, copy)
    broken = sorted((copy / "profiles").rglob("*.parquet"))[0]
    broken.write_bytes(b"not parquet")
    with pytest.raises(TilescopeError) as caught:
        load_fleet(copy, "data")
    message = str(caught.value)
    named = f"data/{broken.relative_to(copy).as_posix()}"
    assert (
        message.startswith(f"{named}: at $: expected a Parquet file of the dataset's profiles table")
        and "repairs" in message
    )
    assert "\n" not in message


def test_a_row_opens_from_its_unchanged_file_under_the_data_root(nightly, fleet):
    position = position_of(fleet, f"{HEAD}/{VIT}")
    assert row_source(fleet, position, nightly.root) == RowSource(
        f"{HEAD}/{VIT}", (nightly.root / HEAD / VIT).resolve()
    )
    shared = SharedProfiles()
    opened = open_row(fleet, position, nightly.root, shared)
    assert opened.name == f"{HEAD}/{VIT}" and shared.loads == 1
    assert opened.plan.peaks.standard == peaks_of(nightly.raw[f"{HEAD}/{VIT}"])["standard"]
    search = open_row(fleet, position_of(fleet, f"{BASE}/{SEARCH}"), nightly.root, shared)
    assert search.kind == "search_state"


def test_a_row_whose_file_is_gone_changed_or_outside_opens_from_the_partitions(nightly, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(nightly.root, root)  # the batch record names the original root: outside this one
    fleet = load_fleet(root / "fleet-data", "fleet-data")
    position = position_of(fleet, f"{HEAD}/{MID_V2}")
    assert row_source(fleet, position, root) == RowSource(f"fleet-data:{HEAD}/{MID_V2}", None)
    opened = open_row(fleet, position, root, SharedProfiles())
    assert isinstance(opened, OpenedProfile) and opened.name == f"fleet-data:{HEAD}/{MID_V2}"
    expected = peaks_of(nightly.raw[f"{HEAD}/{MID_V2}"])
    assert (opened.plan.peaks.standard, opened.plan.peaks.total_step) == (
        expected["standard"],
        expected["total_peak_step"],
    )
    # under the original root: a changed file, then a deleted one, open from the partitions too
    original = load_fleet(nightly.dataset, "fleet-data")
    target = nightly.root / HEAD / MID_V2
    saved = target.read_bytes()
    try:
        target.write_bytes(saved + b" ")
        assert row_source(original, position, nightly.root).path is None
        target.unlink()
        assert row_source(original, position, nightly.root).path is None
        assert open_row(original, position, nightly.root, SharedProfiles()).plan.peaks.standard == expected["standard"]
    finally:
        target.write_bytes(saved)
    with pytest.raises(TilescopeError, match="a search state opens from its file"):
        open_row(fleet, position_of(fleet, f"{BASE}/{SEARCH}"), root, SharedProfiles())
    with pytest.raises(TilescopeError) as caught:
        open_row(fleet, position_of(fleet, f"{BROKEN}/{SMALL}"), root, SharedProfiles())
    assert str(caught.value).startswith(f"{BROKEN}/{SMALL} did not load when batched: at byte 20000")  # the path once


def test_the_compare_link_names_both_files(nightly, fleet):
    a = row_source(fleet, position_of(fleet, f"{BASE}/{VIT}"), nightly.root)
    b = row_source(fleet, position_of(fleet, f"{HEAD}/{VIT}"), nightly.root)
    link = compare_link(a, b)
    assert parse_qs(link[1:]) == {"file": [f"{BASE}/{VIT}"], "compare": [f"{HEAD}/{VIT}"]}
    assert compare_link(a, RowSource("fleet-data:x", None)) is None


# ----------------------------------------------------------------------------- the page


def test_the_page_shows_the_fleet_and_opens_a_row_in_the_session(nightly):
    from tilescope.app.main import build_app

    app = build_app(["--data-root", str(nightly.root), "--dataset", str(nightly.dataset)])

    async def scenario():
        await app.router.load_initial()
        shown = list(app.body.objects)
        assert app.state.error == "" and app.state.data is None  # the fleet, no profile yet
        view = app.fleet
        source = dict(view.source.data)
        opened = await view.open_position(position_of(view.fleet, f"{HEAD}/{VIT}"))
        after = list(app.body.objects)
        view.showing = True
        return shown, source, opened, after, list(app.body.objects)

    shown, source, opened, after, back = run(scenario())
    view = app.fleet
    assert shown == [view.page]
    assert len(view.table.value) == 16
    assert (
        dict(zip(source["path"], source["value"]))[f"{HEAD}/{VIT}"] == peaks_of(nightly.raw[f"{HEAD}/{VIT}"])["total"]
    )
    assert "at byte 20000" in view.failure_list.object and view.failure_list.object.count(f"{BROKEN}/{SMALL}") == 1
    assert source["fit"] == chart_bars(view.fleet.profiles, "total_peak").fits
    labels = [(getattr(i.label, "field", None), getattr(i.label, "value", None)) for i in view.chart.legend[0].items]
    assert ("fit", None) in labels and (None, "budget") in labels
    assert opened and app.state.source == f"{HEAD}/{VIT}"
    assert app.state.plan.peaks.standard == peaks_of(nightly.raw[f"{HEAD}/{VIT}"])["standard"]
    assert after[0] is view.back and after[1] is app.profile_page.layout() and len(after) == 2
    assert back == [view.page]


def test_a_bad_dataset_keeps_the_page_and_says_why(nightly, tmp_path):
    from tilescope.app.main import build_app

    app = build_app(["--dataset", str(tmp_path / "none")])
    run(app.router.load_initial())
    assert app.fleet is None and app.state.data is not None  # the default profile is open instead
    assert (
        app.state.error
        == f"{tmp_path / 'none'}: at $: expected a dataset directory written by `tilescope batch`, found no such directory"
    )


def test_text_from_the_dataset_is_escaped(nightly, tmp_path):
    root = tmp_path / "root"
    evil = '<img src=x onerror="window.__pwned=1">'
    folder = root / "runs" / evil
    folder.mkdir(parents=True)
    (folder / "cut.memory_profile.json").write_bytes((nightly.root / BASE / VIT).read_bytes()[:5000])
    from fleet_support import run_cli

    assert run_cli("batch", root, "--out", root / "data", "--workers", "1")[0] == 1
    from tilescope.app.main import build_app

    app = build_app(["--data-root", str(root), "--dataset", str(root / "data")])
    run(app.router.load_initial())
    html = app.fleet.failure_list.object
    assert evil not in html and "&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;" in html
    assert app.fleet.table.formatters["path"] == {"type": "plaintext"}


def test_two_ticked_rows_give_the_link_or_go_to_the_compare_entry_point(nightly):
    """Without a compare entry point the view shows the compare view's link; with one (the app
    passes it once the compare view is merged) A opens in the session and B's name goes to it."""
    from tilescope.app.fleet_open import DatasetRequest
    from tilescope.app.main import build_app
    from tilescope.app.views.fleet import FleetView

    app = build_app(["--data-root", str(nightly.root)])
    handed = []

    async def compare(name: str) -> bool:
        handed.append((app.state.source, name))
        return True

    async def scenario(entry_point):
        view = FleetView(state=app.state, opener=app.opener, adopt=app.router.adopt, compare=entry_point)
        await view.open(DatasetRequest(nightly.dataset, "fleet-data"))
        view.table.selection = [position_of(view.fleet, f"{HEAD}/{VIT}"), position_of(view.fleet, f"{BASE}/{VIT}")]
        assert not view.compare_button.disabled
        await view._on_compare()
        return view

    view = run(scenario(None))
    assert (
        'href="?file=nightly%2F2024-05-01%2Fvit.memory_profile.json&amp;compare=nightly%2F2024-05-02%2Fvit.memory_profile.json"'
        in view.compare_note.object
    )
    assert handed == [] and app.state.data is None
    view = run(scenario(compare))
    assert handed == [(f"{BASE}/{VIT}", f"{HEAD}/{VIT}")] and not view.showing
