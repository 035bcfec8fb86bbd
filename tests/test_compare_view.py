"""The app's compare views without a browser: opening B (``app.compare_open``: a data-root name, an
upload, the what-if; refusals keep everything open), the summary A | B | Δ, the linked selection,
the overlaid timelines at scale, the waterfall, edits while comparing, escaping, and the export
(the files ``tilescope report A --compare B`` writes).

Expected figures come from the raw JSON by an independent path (tests/compare_support.py: layout
text edited with regular expressions, figures recomputed by docs/formats.md §2 written out again).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import zipfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from async_support import run_on_own_loop
from bokeh.document import Document
from compare_support import expected_comparison, lcs_length, peaks_of, with_edits, write
from opening_support import open_into

from benchmarks.bench_app import edits_to_apply
from tilescope.app.compare_open import CompareOpener, data_root_files
from tilescope.app.loading import AppOptions
from tilescope.app.open_flow import SessionOpener
from tilescope.app.shared import SharedProfiles
from tilescope.app.state import SessionState
from tilescope.app.views.compare import CompareView
from tilescope.app.views.compare_export import ZIP_NAME
from tilescope.app.views.compare_timeline import PIXEL_COLUMNS
from tilescope.cli import main as cli_main
from tilescope.derived.compare import CompareSide, compare_plans
from tilescope.derived.compare_json import comparison_json
from tilescope.models.edits import TilingEdit
from tilescope.synth import write_synthetic_profile

EDITS = [
    (84, 1, 18),
    (84, "replicas", 27),
    (20, 0, 27),
    (153, 1, 3),
]  # all three peaks move (docs: tests/test_compare.py)
HOSTILE = '<img src=x onerror="window.__pwned=1">'
HOSTILE_FILE = "<i onclick=alert(1)>hostile.json"  # a file name is text from the disk, too


def kib(n: int) -> str:
    return f"{n:,} B ({n / 1024:,.1f} KiB)"


def signed(n: int) -> str:
    return (
        "±0 B" if n == 0 else f"{'+' if n > 0 else '−'}{abs(n):,} B ({'+' if n > 0 else '−'}{abs(n) / 1024:,.1f} KiB)"
    )


def live_runs(raw: dict, value_id: int) -> list[tuple[int, int]]:
    """(first, last) of each run of steps whose live list holds the value, from the raw JSON."""
    steps = [s["index"] for s in raw["timeline"]["steps"] if value_id in s["live"]]
    runs: list[list[int]] = []
    for step in steps:
        if runs and step == runs[-1][1] + 1:
            runs[-1][1] = step
        else:
            runs.append([step, step])
    return [tuple(r) for r in runs]


def compare_opener(state: SessionState, root: Path) -> CompareOpener:
    """The compare opener of a session outside a server (no document lock: changes made directly)."""
    return CompareOpener(SessionOpener(state, SharedProfiles(), AppOptions(None, root), lambda: None))


run = run_on_own_loop


@pytest.fixture(scope="module")
def root(tmp_path_factory, raw) -> Path:
    folder = tmp_path_factory.mktemp("compare_root")
    shutil.copy(
        Path(__file__).resolve().parent.parent / "sample_data" / "vit_finalist5.memory_profile.json",
        folder / "vit.json",
    )
    write(with_edits(raw, EDITS), folder / "vit_edited.json")
    hostile = with_edits(raw, [])
    next(v for v in hostile["timeline"]["values"] if v["id"] == 85)["name"] = HOSTILE
    write(hostile, folder / HOSTILE_FILE)
    (folder / "bad.json").write_text('{"version": 1, "timeline": {"values": [], "steps": 7}}')
    shutil.copy(
        Path(__file__).resolve().parent.parent / "sample_data" / "flash_attention.search_state.json",
        folder / "search.json",
    )
    write_synthetic_profile(folder / "s2x2.json", 2, 2)
    write_synthetic_profile(folder / "s2x3.json", 2, 3)
    return folder


def session(root: Path, first: str = "vit.json") -> tuple[SessionState, CompareOpener, CompareView, Document]:
    state = SessionState()
    assert open_into(state, root / first, name=first), state.error
    opener = compare_opener(state, root)
    view = CompareView(state=state, opener=opener)
    doc = Document()
    doc.add_root(view.__panel__().get_root(doc))  # the Bokeh models exist, as in a served page
    return state, opener, view, doc


def texts_by_testid(html: str) -> dict[str, str]:
    """testid → the text of the element carrying it (elements holding text only)."""
    return {m[1]: m[2] for m in re.finditer(r'data-testid=["\']([^"\']+)["\'][^>]*>([^<]*)</', html)}


def test_compare_side_of_plan_data_is_the_sides_of_its_plan(root, raw):
    state = SessionState()
    assert open_into(state, root / "vit.json")
    base = state.data
    assert state.apply_edits([TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)]) is None
    side = CompareSide.of(state.data)
    assert (
        side.plan is state.data.whatif.plan and side.whatif is state.data.whatif and side.label == "vit.json (edited)"
    )
    by_of = comparison_json(compare_plans(CompareSide.of(base), side))
    by_hand = comparison_json(
        compare_plans(
            CompareSide(base.profile, base.arrays, base.plan),
            CompareSide.edited(base.profile, base.arrays, state.data.whatif),
        )
    )
    assert by_of == by_hand


def test_open_by_name_shows_a_b_delta_with_the_exact_figures(root, raw):
    state, opener, view, _ = session(root)
    assert run(opener.open_name("vit_edited.json")), state.error
    expected = expected_comparison(raw, with_edits(raw, EDITS))
    texts = texts_by_testid(view.summary._pane.object)
    for key, figure in (
        ("standard", "standard"),
        ("interleaved", "interleaved"),
        ("total", "total"),
        ("effective", "effective_peak_bytes"),
    ):
        assert texts[f"ts-compare-a-{key}"] == kib(expected["a"][figure])
        assert texts[f"ts-compare-b-{key}"] == kib(expected["b"][figure])
        assert texts[f"ts-compare-delta-{key}"] == signed(expected["delta"][figure])
    for key in ("standard", "interleaved", "total"):
        assert texts[f"ts-compare-a-{key}-step"] == f"step {expected['a'][key + '_peak_step']}"
        assert texts[f"ts-compare-b-{key}-step"] == f"step {expected['b'][key + '_peak_step']}"
    assert texts["ts-compare-a-fits"] == ("yes" if expected["a"]["fits_budget"] else "no")
    assert texts["ts-compare-a-name"] == "vit.json" and texts["ts-compare-b-name"] == "vit_edited.json"
    assert "steps matched by index" in view.summary._pane.object
    # The changed-values table: exactly the expected pairs and deltas, largest |Δ| first.
    frame = view.values.table.value
    assert {(r.name, int(r.a_id), int(r.b_id)): int(r.delta_bytes) for r in frame.itertuples()} == expected["changed"]
    assert list(np.abs(frame["delta_bytes"])) == sorted(np.abs(frame["delta_bytes"]), reverse=True)
    # The waterfall adds up: A's peak + the bars = B's peak, for every figure.
    for figure in ("total", "standard", "interleaved"):
        view.waterfall.figure_name = figure
        bars = view.waterfall.bars.data
        assert bars["running"][0] == expected["a"][figure] and bars["running"][-1] == expected["b"][figure]
        assert bars["bytes"][0] + sum(bars["bytes"][1:-1]) == expected["b"][figure]
        assert texts_by_testid(view.waterfall._figures.object)["ts-compare-waterfall-sum"] == signed(
            expected["delta"][figure]
        )
    # Clicking the standard waterfall's first part (value 84: its bytes live at B's peak step 10 minus
    # at A's step 45) selects that value; clicking the overlaid timeline selects A's step there.
    view.waterfall.figure_name = "standard"
    largest = max(expected["attribution"]["standard"]["parts"].items(), key=lambda item: abs(item[1]))[0]
    view.waterfall._on_tap(SimpleNamespace(x=0, y=1))
    assert state.selected_values == [largest[1]] and view.selection.entry >= 0
    view.timeline._on_tap(SimpleNamespace(x=20.2, y=0))
    assert state.selected_step == 20


def test_selection_follows_both_ways_and_shows_the_value_in_both(root, raw):
    state, opener, view, _ = session(root)
    edited = with_edits(raw, EDITS)
    assert run(opener.open_name("vit_edited.json"))
    frame = view.values.table.value
    position = int(np.flatnonzero(frame["a_id"].to_numpy() == 84)[0])
    view.values.table.selection = [position]  # what a click on the row's checkbox sends
    assert state.selected_values == [84]
    runs_a, runs_b = live_runs(raw, 84), live_runs(edited, 84)
    bars = view.lifetimes.bars.data
    assert [
        (l + 0.5, r - 0.5) for l, r, side in zip(bars["left"], bars["right"], bars["side"]) if side == "A"
    ] == runs_a
    assert [
        (l + 0.5, r - 0.5) for l, r, side in zip(bars["left"], bars["right"], bars["side"]) if side == "B"
    ] == runs_b
    assert set(bars["bytes"]) == {62976, 32256}
    lives = view.timeline.lives.data
    assert sorted(zip((lives["left"] + 0.5).tolist(), (lives["right"] - 0.5).tolist())) == sorted(runs_a + runs_b)
    entry = texts_by_testid(view.lifetimes._text.object)
    assert entry["ts-compare-entry-delta"] == f"Δ {signed(32256 - 62976)}; axis 1 partitions 9 → 18; replicas 54 → 27"
    # One value at a time: checking a second row selects that one; unchecking it selects none.
    other = int(np.flatnonzero(frame["a_id"].to_numpy() == 153)[0])
    view.values.table.selection = [position, other]
    assert state.selected_values == [153] and view.values.table.selection == [other]
    view.values.table.selection = []
    assert (
        state.selected_values == []
        and view.selection.entry == -1
        and "ts-compare-entry-none" in view.lifetimes._text.object
    )
    # From the session's side: selecting value 20 elsewhere selects its row here.
    state.select_values([20])
    assert frame["a_id"].iloc[view.values.table.selection[0]] == 20
    # An unchanged value shows in both with no table row selected.
    state.select_values([1])
    assert view.values.table.selection == [] and "the same in both" in view.lifetimes._text.object


def test_a_value_found_only_in_b_is_selected_here_and_nowhere_else(root, raw):
    state, opener, view, _ = session(root)
    assert run(opener.open_name(HOSTILE_FILE))
    frame = view.values.table.value
    only_b = int(np.flatnonzero(frame["status"].to_numpy() == "only_b")[0])
    view.values.table.selection = [only_b]
    assert state.selected_values == [] and view.selection.entry == int(frame["entry"].iloc[only_b])
    bars = view.lifetimes.bars.data
    assert set(bars["side"]) == {"B"} and set(bars["value_id"]) == {85}
    assert [(l + 0.5, r - 0.5) for l, r in zip(bars["left"], bars["right"])] == live_runs(raw, 85)


def test_refusals_keep_everything_open(root, raw):
    state, opener, view, _ = session(root)
    assert run(opener.open_name("vit_edited.json"))
    compare, data = state.compare, state.data
    for name, words in (
        ("../vit.json", "'..' is not allowed"),
        ("/etc/passwd", "absolute paths"),
        ("missing.json", "missing.json"),
        ("bad.json", "bad.json: at $"),
        ("search.json", "a search state, not a memory profile"),
    ):
        assert not run(opener.open_name(name))
        assert state.error.startswith("compare: ") and words in state.error and "\n" not in state.error, state.error
        assert state.compare is compare and state.data is data and not state.loading
    assert not run(opener.open_upload(b'{"version": 1}', "up.json"))
    assert "up.json" in state.error and state.compare is compare
    assert not run(opener.compare_whatif()) and "no what-if edits" in state.error
    # With a search state open there is no plan to compare.
    searching = SessionState()
    assert open_into(searching, root / "search.json")
    assert not run(compare_opener(searching, root).open_name("vit.json"))
    assert searching.error == "compare: no memory profile is open" and searching.compare is None


def test_an_upload_and_the_what_if_compare_like_the_file(root, raw):
    expected = expected_comparison(raw, with_edits(raw, EDITS))
    state, opener, view, _ = session(root)
    assert run(opener.open_upload((root / "vit_edited.json").read_bytes(), "upload.json"))
    assert state.compare.comparison.delta.to_json() == expected["delta"] and state.compare.b_name == "upload.json"
    edits = [TilingEdit(v, replicas=n) if a == "replicas" else TilingEdit(v, axis=a, partitions=n) for v, a, n in EDITS]
    assert state.apply_edits(edits) is None
    # Comparing against the file, A (the current plan) now has B's tilings: nothing differs.
    assert state.compare.a is state.data and state.compare.comparison.delta.to_json() == dict.fromkeys(
        expected["delta"], 0
    )
    assert view.values.table.value.empty
    assert run(opener.compare_whatif())
    c = state.compare
    assert c.a is state.data.base and c.b is state.data and c.comparison.delta.to_json() == expected["delta"]
    assert {(v.name, v.a_id, v.b_id): v.delta_bytes for v in c.comparison.changed_values} == expected["changed"]
    state.undo()  # the what-if comparison follows the edits
    assert state.compare.b is state.data and len(state.compare.comparison.b.edits) == len(EDITS) - 1
    state.stop_compare()
    assert state.compare is None and view.values.table.value.empty


def test_an_edit_while_comparing_keeps_the_matching_and_recomputes_the_figures(root, raw):
    state, opener, view, _ = session(root, "s2x2.json")
    assert run(opener.open_name("s2x3.json"))
    before = state.compare
    (edit,) = edits_to_apply(state.arrays, state.base_plan, 1)  # a doubling the tiling rules allow
    assert state.apply_edit(edit) is None
    after = state.compare
    assert after is not before and after.a is state.data
    assert after.comparison.steps is before.comparison.steps and after.comparison.values is before.comparison.values
    assert after.comparison.a.plan is state.data.plan


def test_profiles_of_different_programs_say_how_steps_were_aligned(root):
    state, opener, view, _ = session(root, "s2x2.json")
    assert run(opener.open_name("s2x3.json"))
    raw_a, raw_b = json.loads((root / "s2x2.json").read_text()), json.loads((root / "s2x3.json").read_text())
    keys = lambda r: [(s["source"], s["operation"]) for s in r["timeline"]["steps"]]  # noqa: E731
    matched = lcs_length(keys(raw_a), keys(raw_b))
    only_a, only_b = len(keys(raw_a)) - matched, len(keys(raw_b)) - matched
    line = f"steps aligned by LCS: {matched:,} matched, {only_a:,} only in A, {only_b:,} only in B"
    assert texts_by_testid(view.summary._pane.object)["ts-compare-steps"] == line
    # Positions with one side only are shaded, exactly those.
    shaded = sum(
        int(r - l) for l, r in zip(view.timeline.one_sided.data["left"], view.timeline.one_sided.data["right"])
    )
    assert shaded == only_a + only_b
    points = view.timeline.points["standard"].data
    a_usage = [s["usage"]["standard"] + raw_a["peak"]["exchange_rows"] for s in raw_a["timeline"]["steps"]]
    for _x, a, a_step in zip(points["x"].tolist(), points["a"].tolist(), points["a_step"].tolist()):
        assert (np.isnan(a) and a_step < 0) or a == a_usage[a_step]


def test_overlay_at_scale_keeps_every_peak_within_the_point_budget(tmp_path):
    path_a = write_synthetic_profile(tmp_path / "a.json", 60, 2)  # 6,960 steps: more than a window's budget
    raw = json.loads(path_a.read_text())
    edited = with_edits(raw, [(85, 1, 5)])  # a value of the first block grows: B's standard peak differs
    write(edited, tmp_path / "b.json")
    state, opener, view, _ = session(tmp_path, "a.json")
    assert run(opener.open_name("b.json"))
    n = len(raw["timeline"]["steps"])
    for region in ("standard", "interleaved", "total"):
        points = view.timeline.points[region].data
        assert len(points["x"]) <= PIXEL_COLUMNS * 8 < n
        assert points["x"][0] == 0 and points["x"][-1] == n - 1
    pa, pb = peaks_of(raw), peaks_of(edited)
    points = view.timeline.points["standard"].data
    assert max(points["a"]) == pa["standard"] and max(points["b"]) == pb["standard"]
    delta = [s["usage"]["standard"] for s in edited["timeline"]["steps"]]
    delta = [b - a["usage"]["standard"] for a, b in zip(raw["timeline"]["steps"], delta)]
    assert max(points["delta"]) == max(delta) > 0  # the difference's spike survives downsampling
    peaks = view.timeline.peaks["standard"].data
    assert sorted(zip(peaks["x"], peaks["y"])) == sorted(
        [(pa["standard_peak_step"], pa["standard"]), (pb["standard_peak_step"], pb["standard"])]
    )


def test_text_from_files_is_escaped(root):
    state, opener, view, _ = session(root)
    assert run(opener.open_name(HOSTILE_FILE))
    html = view.summary._pane.object + view.export._note.object
    assert "<i onclick" not in html and "&lt;i onclick=alert(1)&gt;hostile.json" in html
    entry = view.values.table.value
    position = int(np.flatnonzero(entry["name"].to_numpy() == HOSTILE)[0])
    view.values.table.selection = [position]
    assert HOSTILE not in view.lifetimes._text.object and "&lt;img src=x" in view.lifetimes._text.object
    for column in ("status", "name", "a_tiling", "b_tiling", "changes"):
        assert view.values.table.formatters[column] == {"type": "plaintext"}
    view.waterfall.figure_name = "standard"
    assert "<img" not in view.waterfall._figures.object


def test_data_root_files_stay_inside_the_root(root, tmp_path):
    names = data_root_files(root)
    assert {"vit.json", "vit_edited.json", "bad.json", HOSTILE_FILE} <= set(names) and names == sorted(names)
    linked = tmp_path / "linked"
    linked.mkdir()
    planner_output = '{"version": 1, "context": {}}'  # (listed by content: the head of a search state)
    (tmp_path / "secret.json").write_text(planner_output)
    os.symlink(tmp_path / "secret.json", linked / "out.json")
    (linked / "in.json").write_text(planner_output)
    assert data_root_files(linked) == ["in.json"]


def test_export_is_what_report_compare_writes(root, raw, tmp_path, capsys, monkeypatch):
    state, opener, view, _ = session(root)
    assert run(opener.open_name("vit_edited.json"))
    monkeypatch.chdir(root)  # so the CLI is given the same names the page shows
    # the PNG's provenance carries its creation time: one fixed time for both, so the bytes compare
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764633600")
    out = tmp_path / "report"
    assert cli_main(["report", "vit.json", "--compare", "vit_edited.json", "--out", str(out)]) == 0
    capsys.readouterr()
    buttons = view.export._buttons
    sent = {name: run(button.callback()).getvalue() for name, button in buttons.items()}
    for path in out.iterdir():
        assert sent[path.name] == path.read_bytes(), path.name
    with zipfile.ZipFile(io.BytesIO(sent[ZIP_NAME])) as archive:
        assert {n: archive.read(n) for n in archive.namelist()} == {p.name: p.read_bytes() for p in out.iterdir()}
    expected = expected_comparison(raw, with_edits(raw, EDITS))
    rows = list(csv.DictReader(io.StringIO(sent["compare_values.csv"].decode())))
    assert {(r["name"], int(r["a_id"]), int(r["b_id"])): int(r["delta_bytes"]) for r in rows} == expected["changed"]
