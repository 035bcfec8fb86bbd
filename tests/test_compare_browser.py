"""Compare in a real Chromium: ``?file=A&compare=B`` on a served data root holding the sample and a
copy edited by an independent path (tests/compare_support.py), the summary A | B | Δ with the exact
figures, selecting a changed value (the overlaid timelines and the value's lifetimes in both
follow, and the page's own lifetimes outline it), the compare report downloaded (ZIP and one CSV),
a program of another shape (steps aligned by LCS), a refused and a bad second file (the first stays),
and file text never rendered as HTML.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import urllib.parse
import zipfile

import pytest
from browser_support import JS_SOURCE_DATA, SAMPLE, kib, served_app, wait_for_app
from compare_support import expected_comparison, lcs_length, with_edits, write
from hostile import HOSTILE_FILE_NAME, SCOPE, write_hostile_profile
from test_security_browser import JS_INJECTED, hover_data_point, tooltip_with

from tilescope.synth import write_synthetic_profile

pytestmark = pytest.mark.browser

EDITS = [(84, 1, 18), (84, "replicas", 27), (20, 0, 27), (153, 1, 3)]
REPORT_FILES = {"compare.png", "compare_values.csv", "compare_attribution.csv", "compare_steps.csv", "compare.json"}


def signed(n: int) -> str:
    return (
        "±0 B" if n == 0 else f"{'+' if n > 0 else '−'}{abs(n):,} B ({'+' if n > 0 else '−'}{abs(n) / 1024:,.1f} KiB)"
    )


def text_of(page, testid: str) -> str:
    return page.locator(f"[data-testid={testid}]").first.inner_text().strip()


def live_runs(raw: dict, value_id: int) -> list[list[int]]:
    runs: list[list[int]] = []
    for step in (s["index"] for s in raw["timeline"]["steps"] if value_id in s["live"]):
        if runs and step == runs[-1][1] + 1:
            runs[-1][1] = step
        else:
            runs.append([step, step])
    return runs


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    raw = json.loads(SAMPLE.read_text())
    root = tmp_path_factory.mktemp("compare_browser")
    shutil.copy(SAMPLE, root / "vit.json")
    edited = with_edits(raw, EDITS)
    write(edited, root / "vit_edited.json")
    (root / "bad.json").write_text('{"version": 1, "timeline": {"values": [], "steps": 7}}')
    write_synthetic_profile(root / "s2x2.json", 2, 2)
    write_synthetic_profile(root / "s2x3.json", 2, 3)
    with served_app("--data-root", str(root)) as server:
        yield server, root, raw, edited


def check_row(page, table, has, shown) -> None:
    """Check the table row holding ``has`` until the locator ``shown`` appears (a click landing
    while the freshly shown tab redraws its table is lost: click again)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(3):
        table.locator(".tabulator-row").filter(has=has).first.locator("input[type=checkbox]").click()
        try:
            shown.first.wait_for(timeout=10_000)
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise


def open_compare(page, url: str) -> None:
    page.goto(url)
    wait_for_app(page)
    page.wait_for_selector("[data-testid=ts-compare-summary]", timeout=90_000)


def test_open_a_compare_select_a_value_and_export(page, served):
    server, root, raw, edited = served
    expected = expected_comparison(raw, edited)
    open_compare(page, server.url + "?file=vit.json&compare=vit_edited.json")
    for key, figure in (
        ("standard", "standard"),
        ("interleaved", "interleaved"),
        ("total", "total"),
        ("effective", "effective_peak_bytes"),
    ):
        assert text_of(page, f"ts-compare-a-{key}") == kib(expected["a"][figure])
        assert text_of(page, f"ts-compare-b-{key}") == kib(expected["b"][figure])
        assert text_of(page, f"ts-compare-delta-{key}") == signed(expected["delta"][figure])
    assert text_of(page, "ts-compare-a-standard-step") == f"step {expected['a']['standard_peak_step']}"
    assert text_of(page, "ts-compare-b-standard-step") == f"step {expected['b']['standard_peak_step']}"
    assert (
        text_of(page, "ts-compare-delta-standard") == "−20,352 B (−19.9 KiB)"
    )  # value 84's edit, worked out in tests/test_compare.py
    assert text_of(page, "ts-compare-steps").startswith("steps matched by index")
    assert text_of(page, "ts-peak-total") == kib(raw["peak"]["total"])  # the page's own summary still shows A

    # Select value 84 (the standard peak's largest change) in the changed-values table.
    table = page.locator(".ts-compare-values-table")
    names = table.locator(".tabulator-cell[tabulator-field=name]")
    assert sorted(names.all_inner_texts()) == sorted(name for name, _, _ in expected["changed"])
    check_row(
        page,
        table,
        page.locator(".tabulator-cell[tabulator-field=a_id]", has_text="84"),
        page.locator("[data-testid=ts-compare-entry][data-entry='84']"),
    )
    assert text_of(page, "ts-compare-entry-name") == "operation 17 result 0"
    values_a = {v["id"]: v for v in raw["timeline"]["values"]}
    values_b = {v["id"]: v for v in edited["timeline"]["values"]}
    assert text_of(page, "ts-compare-entry-a-bytes") == kib(values_a[84]["bytes"])
    assert text_of(page, "ts-compare-entry-b-bytes") == kib(values_b[84]["bytes"])
    page.wait_for_function(
        f"() => {{ const d = ({JS_SOURCE_DATA})('ts-compare-lifetime-bars'); return d && d.value_id.length > 0 && d.value_id.every(v => v === 84); }}"
    )
    bars = page.evaluate(JS_SOURCE_DATA, "ts-compare-lifetime-bars")
    for side, source in (("A", raw), ("B", edited)):
        spans = [[l + 0.5, r - 0.5] for l, r, s in zip(bars["left"], bars["right"], bars["side"]) if s == side]
        assert spans == live_runs(source, 84)
    lives = page.evaluate(JS_SOURCE_DATA, "ts-compare-selected-lives")  # the overlaid timelines shade them too
    assert sorted([l + 0.5, r - 0.5] for l, r in zip(lives["left"], lives["right"])) == sorted(
        live_runs(raw, 84) + live_runs(edited, 84)
    )
    page.locator(".bk-tab", has_text="Lifetimes").click()  # the page's lifetimes follow the selection
    page.wait_for_function(f"""() => {{ const d = ({JS_SOURCE_DATA})('ts-lifetime-bars');
        return d && d.value_id.some((v, i) => v === 84 && d.line_color[i] === '#000000'); }}""")
    page.locator(".bk-tab", has_text="Compare").click()

    # Export: all five files in one ZIP, and one CSV alone.
    with page.expect_download(timeout=120_000) as info:
        page.get_by_text("All five (ZIP)", exact=True).click()
    assert info.value.failure() is None and info.value.suggested_filename == "compare_report.zip"
    with zipfile.ZipFile(info.value.path()) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    assert set(files) == REPORT_FILES
    assert files["compare.png"].startswith(b"\x89PNG\r\n\x1a\n")
    report = json.loads(files["compare.json"])
    assert (
        report["delta"] == expected["delta"]
        and report["a"]["file"] == "vit.json"
        and report["b"]["file"] == "vit_edited.json"
    )
    rows = list(csv.DictReader(io.StringIO(files["compare_values.csv"].decode())))
    assert {(r["name"], int(r["a_id"]), int(r["b_id"])): int(r["delta_bytes"]) for r in rows} == expected["changed"]
    attribution = list(csv.DictReader(io.StringIO(files["compare_attribution.csv"].decode())))
    for figure in ("total", "standard", "interleaved"):
        parts = [r for r in attribution if r["figure"] == figure and r["kind"] != "peak"]
        assert sum(int(r["delta_bytes"]) for r in parts) == expected["delta"][figure]
    with page.expect_download(timeout=120_000) as info:
        page.get_by_text("Changed values (CSV)", exact=True).click()
    assert info.value.suggested_filename == "compare_values.csv"
    with open(info.value.path(), "rb") as handle:
        assert handle.read() == files["compare_values.csv"]
    assert not [e for e in page.console_errors if "favicon" not in e]


def test_programs_of_another_shape_and_refused_second_files(page, served):
    server, root, raw, _ = served
    open_compare(page, server.url + "?file=s2x2.json&compare=s2x3.json")
    raw_a, raw_b = (json.loads((root / n).read_text()) for n in ("s2x2.json", "s2x3.json"))
    keys = lambda r: [(s["source"], s["operation"]) for s in r["timeline"]["steps"]]  # noqa: E731
    matched = lcs_length(keys(raw_a), keys(raw_b))
    assert text_of(page, "ts-compare-steps") == (
        f"steps aligned by LCS: {matched:,} matched, {len(keys(raw_a)) - matched:,} only in A, {len(keys(raw_b)) - matched:,} only in B"
    )

    for name, words in (("../vit.json", "compare: refused file name"), ("bad.json", "compare: bad.json: at $")):
        page.goto(server.url + f"?file=vit.json&compare={name}")
        wait_for_app(page)
        error = page.locator("[data-testid=ts-error]").first
        error.wait_for()
        assert error.inner_text().strip().startswith(words)
        assert text_of(page, "ts-peak-total") == kib(raw["peak"]["total"])  # the first file stays open


def test_file_text_is_never_rendered_as_html(page, served):
    """B is tests/hostile.py's copy of the sample (value and group names, the scope and three step
    operations replaced by payloads) under a file name that is a payload too."""
    server, root, raw, _ = served
    hostile = write_hostile_profile(root, HOSTILE_FILE_NAME)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    open_compare(page, server.url + "?file=vit.json&compare=" + urllib.parse.quote(HOSTILE_FILE_NAME, safe=""))
    assert text_of(page, "ts-compare-b-name") == HOSTILE_FILE_NAME
    assert SCOPE in page.locator("[data-testid=ts-compare-summary]").first.inner_text()
    # The renamed values are on one side only: the table shows their names as text; select value 85.
    table = page.locator(".ts-compare-values-table")
    name_85 = page.locator(".tabulator-cell[tabulator-field=name]", has_text=hostile.names[85])
    cell = table.locator(".tabulator-cell[tabulator-field=name]", has_text=hostile.names[85]).first
    cell.wait_for()
    assert cell.inner_text().strip() == hostile.names[85]
    check_row(page, table, name_85, page.locator("[data-testid=ts-compare-entry-name]", has_text="onerror"))
    assert text_of(page, "ts-compare-entry-name") == hostile.names[85]
    # The waterfall's figures name the total peak's parts, hostile names among them (cut to 34
    # characters, as in the PNG), as text.
    assert hostile.names[85][:33] + "…" in page.locator("[data-testid=ts-compare-waterfall]").first.inner_text()
    # B's hostile operations are steps of B alone (another operation than A's): the total chart's
    # hover names the operation there, as text.
    points = page.evaluate(JS_SOURCE_DATA, "ts-compare-points-total")
    step = 47
    k = next(i for i, b in enumerate(points["b_step"]) if b == step and points["a_step"][i] < 0)
    page.locator(".ts-compare-timeline").first.scroll_into_view_if_needed()
    hover_data_point(page, "ts-compare-total", points["x"][k], points["hi"][k] / 2)
    tooltip_with(page, hostile.operations[step])
    assert page.evaluate("() => window.__xss") is None and page.evaluate(JS_INJECTED) == [] and dialogs == []
