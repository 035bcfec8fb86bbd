"""Bad input and the user's data, in a real Chromium against ``panel serve app``:

- text from a file (value and group names, the scope, step operation strings, the file's own name)
  is shown as literal text in every view, table, tooltip and menu, and no payload runs;
- ``?file=`` names outside the data root (URL-encoded ``..``, a symlink out) are refused
  with a message and nothing of the named file reaches the page;
- a session that loads, edits and exports leaves its input file's bytes and mtime as they were,
  and writes nothing beside it.

The hostile file is tests/hostile.py's copy of the sample (every recorded figure unchanged).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from browser_support import JS_DATA_TO_PAGE, JS_SOURCE_DATA, SAMPLE, kib, served_app, wait_for_app
from hostile import GROUP_NAMES, HOSTILE_FILE_NAME, SCOPE, HostileProfile, write_hostile_profile

pytestmark = pytest.mark.browser

OFFLINE_CDN = "https://cdn.holoviz.org/"
# Elements a payload would create if any text were parsed as HTML, searched through shadow roots.
JS_INJECTED = """() => {
  const selector = "img[src='x'], svg[onload], iframe[srcdoc], [onerror], [onload], [onmouseover]";
  const found = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll(selector)) found.push(el.outerHTML.slice(0, 120));
    for (const el of root.querySelectorAll("script")) if (el.textContent.includes("__xss")) found.push(el.outerHTML.slice(0, 120));
    for (const el of root.querySelectorAll("*")) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return found;
}"""

# Whether a tooltip's text (read through its shadow root, case-sensitive) holds the given text.
JS_TOOLTIP_HAS_TEXT = """(text) => {
  const texts = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll(".bk-Tooltip")) texts.push((el.shadowRoot || el).textContent);
    for (const el of root.querySelectorAll("*")) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return texts.some((t) => t.includes(text));
}"""


OLD_MTIME_NS = 1_600_000_000_123_456_789  # 2020-09-13: any rewrite would move it


@dataclass
class DataRoot:
    root: Path
    hostile: HostileProfile  # root/hostile.json, opened with ?file=hostile.json
    default: Path  # the file a session opens when its ?file= is refused: its name is a payload too


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> DataRoot:
    """hostile.json; the default file, a hostile copy named like a payload; a symlink escaping
    the root, a symlinked folder outside it, and the file they point at. Input files get an old mtime."""
    base = tmp_path_factory.mktemp("security")
    root = base / "root"
    root.mkdir()
    hostile = write_hostile_profile(root)
    default = root / HOSTILE_FILE_NAME
    shutil.copyfile(hostile.path, default)
    for path in (hostile.path, default):
        os.utime(path, ns=(OLD_MTIME_NS, OLD_MTIME_NS))
    outside = base / "outside"
    outside.mkdir()
    secret = json.loads(SAMPLE.read_text())
    secret["scope"] = "OUTSIDE-THE-ROOT"
    (outside / "secret.memory_profile.json").write_text(json.dumps(secret))
    os.symlink(outside / "secret.memory_profile.json", root / "escape.json")
    os.symlink(outside, root / "elsewhere")
    return DataRoot(root, hostile, default)


@pytest.fixture(scope="module")
def server(data_root):
    with served_app(str(data_root.default), "--data-root", str(data_root.root)) as running:
        yield running


@pytest.fixture
def watched(page):
    """The page, with every dialog (alert/confirm/prompt) recorded and dismissed, and failed requests."""
    page.dialogs = []

    def on_dialog(dialog):
        page.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.failed_requests = []
    page.on("requestfailed", lambda request: page.failed_requests.append(request.url))
    return page


def assert_nothing_ran(page) -> None:
    assert page.evaluate("() => window.__xss") is None
    assert page.dialogs == []
    assert page.evaluate(JS_INJECTED) == []
    # An injected <img src=x> would request .../x; the only request allowed to fail is Panel's
    # loading-spinner stylesheet on its CDN (no network here), which logs one console error each.
    assert all(url.startswith(OFFLINE_CDN) for url in page.failed_requests), page.failed_requests
    unreachable = "Failed to load resource: net::ERR_NAME_NOT_RESOLVED"
    assert [e for e in page.console_errors if e != unreachable] == []


def hover_data_point(page, figure: str, x: float, y: float) -> None:
    px, py = page.evaluate(JS_DATA_TO_PAGE, [figure, x, y])
    page.mouse.move(px - 25, py + 3)
    page.mouse.move(px, py, steps=5)


def tooltip_with(page, text: str) -> None:
    """Until a shown Bokeh tooltip holds ``text`` as text (tooltips draw inside shadow roots)."""
    page.locator(".bk-Tooltip").filter(has_text=text).first.wait_for(state="visible", timeout=15_000)
    page.wait_for_function(JS_TOOLTIP_HAS_TEXT, arg=text, timeout=15_000)


def value_row(table, value_id: int):
    """The table row whose id cell reads exactly ``value_id``."""
    id_cell = table.page.locator(".tabulator-cell[tabulator-field=id]", has_text=re.compile(rf"^{value_id}$"))
    return table.locator(".tabulator-row").filter(has=id_cell)


def pick_value(page, value_id: int, name: str) -> None:
    """Choose ``#id name`` in the editor's value picker; the menu item and heading read it as text."""
    from playwright.sync_api import expect

    picker = page.get_by_placeholder("type an id or part of a name…")
    picker.click()
    picker.fill("")
    picker.press_sequentially(f"#{value_id} ", delay=30)
    item = page.locator(".bk-menu div", has_text=f"#{value_id} {name}").first
    expect(item).to_have_text(f"#{value_id} {name}")
    item.click()
    expect(page.locator(".ts-value-head")).to_contain_text(f"#{value_id} {name}")


def download(page, label: str) -> bytes:
    with page.expect_download(timeout=90_000) as info:
        page.get_by_text(label, exact=True).click()
    assert info.value.failure() is None
    return Path(info.value.path()).read_bytes()


def test_text_from_the_file_shows_as_text_in_every_view_and_nothing_runs(watched, server, data_root):
    from playwright.sync_api import expect

    page = watched
    hostile = data_root.hostile
    before = {path: path.read_bytes() for path in (hostile.path, data_root.default)}
    listing = sorted(os.listdir(data_root.root))
    names, operations = hostile.names, hostile.operations
    doc = hostile.doc
    peak_step = doc["total_peak_step"]
    assert peak_step in operations and 85 in names  # 85 heads the peak step's live values

    page.goto(server.url + "?file=hostile.json")
    wait_for_app(page)

    # Summary: the scope, as text.
    expect(page.locator("[data-testid=ts-scope]")).to_have_text(SCOPE)
    expect(page.locator("[data-testid=ts-peak-total]")).to_have_text(kib(doc["peak"]["total"]))

    # At this step (opens at the total peak): the step's operation and the largest value's name.
    expect(page.locator("[data-testid=ts-step-header] code")).to_have_text(operations[peak_step])
    first_name = page.locator(".ts-step-values .tabulator-cell[tabulator-field=name]").first
    expect(first_name).to_have_text(names[85])

    # Timeline hover at the peak step: the operation in the tooltip, as text.
    steps = doc["timeline"]["steps"]
    hover_data_point(page, "ts-timeline", peak_step, steps[peak_step]["usage"]["standard"] / 2)
    tooltip_with(page, operations[peak_step])

    # The at-step bar: hovering value 85's segment names it.
    segments = page.evaluate(JS_SOURCE_DATA, "ts-step-split")
    k = segments["value_id"].index(85)
    hover_data_point(page, "ts-step-bar", (segments["left"][k] + segments["right"][k]) / 2, segments["lane"][k])
    tooltip_with(page, f"value 85: {names[85]}")

    # Lifetimes (a side tab): hovering value 4's bar (live 0–61) names it.
    page.locator(".bk-tab", has_text="Lifetimes").click()
    page.wait_for_function(f"() => ({JS_SOURCE_DATA})('ts-lifetime-bars') !== null")
    bars = page.evaluate(JS_SOURCE_DATA, "ts-lifetime-bars")
    k = bars["value_id"].index(4)
    hover_data_point(page, "ts-lifetimes", (bars["left"][k] + bars["right"][k]) / 2, bars["lane"][k])
    tooltip_with(page, names[4])

    # Another hostile step, through the step input: header and timeline tooltip.
    page.locator(".bk-tab", has_text="At this step").click()
    page.get_by_role("button", name="standard peak").click()
    std_step = doc["standard_peak_step"]
    expect(page.locator("[data-testid=ts-step-index]")).to_have_text(str(std_step))
    expect(page.locator("[data-testid=ts-step-header] code")).to_have_text(operations[std_step])
    hover_data_point(page, "ts-timeline", std_step, steps[std_step]["usage"]["standard"] / 2)
    tooltip_with(page, operations[std_step])
    hover_data_point(page, "ts-timeline", 46, steps[46]["usage"]["standard"] / 2)
    tooltip_with(page, operations[46])

    # Values table (a side tab): filter the names on the payloads' common marker; each name is a literal cell.
    page.locator(".bk-tab", has_text="Values").click()
    table = page.locator(".ts-values-table")
    name_filter = table.locator(".tabulator-col[tabulator-field=name] input")
    name_filter.click()
    name_filter.press_sequentially("__xss", delay=40)
    name_filter.press("Enter")
    id_cells = table.locator(".tabulator-cell[tabulator-field=id]")
    expect(id_cells).to_have_count(len(names), timeout=20_000)
    for value_id, name in names.items():
        expect(value_row(table, value_id).locator(".tabulator-cell[tabulator-field=name]")).to_have_text(name)
    expect(value_row(table, 85).locator(".tabulator-cell[tabulator-field=group]")).to_have_text(GROUP_NAMES[85])

    # Editor: the picker's menu and the heading show names as text. Pick the alias 49 ...
    page.locator(".bk-tab", has_text="What-if editor").click()
    pick_value(page, 49, names[49])
    # ... and storage group 4 (4, 5, 49) opens with the names as text.
    page.locator(".bk-tab", has_text="Storage groups").click()
    detail = page.locator("[data-testid=ts-group-detail][data-group='4']")
    expect(detail).to_be_visible()
    expect(detail.locator("li[data-value='4'] code")).to_have_text(names[4])
    expect(detail.locator("li[data-value='49'] code")).to_have_text(names[49])

    # An edit of 85, and the advisor.
    page.locator(".bk-tab", has_text="What-if editor").click()
    pick_value(page, 85, names[85])
    # the figures are drawn after the tiling widget's inputs: once they show 85's shard, typing reaches 85
    shard_85 = next(v["shard_bytes"] for v in doc["timeline"]["values"] if v["id"] == 85)
    expect(page.locator("[data-testid=ts-editor-figures] tr[data-figure='shard'] td")).to_have_text(kib(shard_85))
    field = page.locator(".ts-row[data-axis='1'] input")
    field.fill("5")
    field.press("Enter")
    expect(page.locator("[data-testid=ts-edit-list]")).to_contain_text("85")
    expect(page.locator("[data-testid=ts-peak-total]")).to_contain_text("→")
    page.get_by_role("button", name="Suggest edits").click()
    expect(page.locator(".ts-suggestion").first).to_be_visible(timeout=60_000)

    # Export: the CSVs carry the names and operations as they are (they start with < or ", not a formula).
    page.locator(".bk-tab", has_text="Export").click()
    expect(page.locator("[data-testid=ts-export-note]")).to_contain_text("hostile.json")
    rows = {int(r["id"]): r for r in csv.DictReader(io.StringIO(download(page, "Values (CSV)").decode()))}
    assert {value_id: rows[value_id]["name"] for value_id in names} == names
    step_rows = list(csv.DictReader(io.StringIO(download(page, "Steps (CSV)").decode())))
    assert {step: step_rows[step]["operation"] for step in operations} == operations

    # Edits saved and exported too.
    saved = json.loads(download(page, "Edit set (JSON)"))
    assert "85" in json.dumps(saved)
    assert download(page, "Edits (CSV)")

    page.wait_for_timeout(500)  # let any late onerror/onload fire
    assert_nothing_ran(page)

    # Nothing lost: the session loaded, edited and exported; its input is as it was, and nothing
    # was written beside it.
    for path, data in before.items():
        assert path.read_bytes() == data
        assert path.stat().st_mtime_ns == OLD_MTIME_NS
    assert sorted(os.listdir(data_root.root)) == listing


@pytest.mark.parametrize(
    "query, shown_name",
    [
        ("%2e%2e%2f%2e%2e%2fetc%2fpasswd", "../../etc/passwd"),  # URL-encoded traversal arrives decoded
        ("escape.json", "escape.json"),  # a symlink in the root pointing outside it
    ],
)
def test_names_outside_the_data_root_are_refused_in_the_page(watched, server, data_root, query, shown_name):
    """(Absolute names, symlinked folders and the rest: tests/test_app_paths.py.)"""
    from playwright.sync_api import expect

    page = watched
    page.goto(f"{server.url}?file={query}")
    wait_for_app(page)
    expect(page.locator("[data-testid=ts-error]")).to_contain_text(f"refused file name {shown_name!r}")
    # the served default file opens instead (its name, a payload, shown as text); nothing of the
    # named file reached the page
    expect(page.locator("[data-testid=ts-source]")).to_have_text(str(data_root.default))
    expect(page.locator("[data-testid=ts-peak-total]")).to_have_text(kib(data_root.hostile.doc["peak"]["total"]))
    content = page.content()
    assert "OUTSIDE-THE-ROOT" not in content and "root:x:" not in content
    assert_nothing_ran(page)
