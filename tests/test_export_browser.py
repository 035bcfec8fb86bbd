"""The Export tab: the downloads a user clicks arrive whole and hold the session's current plan.

The browser tests click the buttons of the served app in Chromium and read the downloaded files;
expected figures come from the sample file (json.load). One test drives the view without a browser
to check that it follows the session (edits, selected step).
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from async_support import run_on_own_loop
from browser_support import SAMPLE, wait_for_app
from opening_support import open_into
from PIL import Image

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
KNOWN_VALUE = 84  # "operation 17 result 0", 62976 B in the file


def sample() -> dict:
    with open(SAMPLE) as handle:
        return json.load(handle)


def rows_of(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def open_export_tab(page, url: str) -> None:
    page.goto(url)
    wait_for_app(page)
    page.locator(".bk-tab", has_text="Export").click()
    page.get_by_text("Report (PNG)", exact=True).wait_for(state="visible")


def download(page, label: str) -> tuple[str, bytes]:
    """Click the button labelled ``label``; the browser's download: (suggested name, content)."""
    with page.expect_download(timeout=90_000) as info:
        page.get_by_text(label, exact=True).click()
    item = info.value
    assert item.failure() is None
    with open(item.path(), "rb") as handle:
        return item.suggested_filename, handle.read()


@pytest.mark.browser
def test_png_and_csv_downloads(app_server, page):
    doc = sample()
    open_export_tab(page, app_server)

    name, png = download(page, "Report (PNG)")
    assert name == "report.png"
    assert png.startswith(PNG_SIGNATURE)
    image = Image.open(io.BytesIO(png))
    image.load()
    assert image.size[0] >= 1200 and image.size[1] >= 900

    name, data = download(page, "Values (CSV)")
    assert name == "values.csv"
    rows = rows_of(data)
    assert len(rows) == len(doc["timeline"]["values"]) == 176
    known = next(v for v in doc["timeline"]["values"] if v["id"] == KNOWN_VALUE)
    row = next(r for r in rows if int(r["id"]) == KNOWN_VALUE)
    assert int(row["bytes"]) == known["bytes"] == 62976
    assert row["name"] == known["name"]

    name, data = download(page, "Steps (CSV)")
    assert name == "steps.csv"
    steps = rows_of(data)
    assert [int(r["usage_interleaved"]) for r in steps] == [s["usage"]["interleaved"] for s in doc["timeline"]["steps"]]

    # The session opens on the total peak step: the breakdown is that step's live values.
    name, data = download(page, "Breakdown (CSV)")
    assert name == f"step_{doc['total_peak_step']}_breakdown.csv"
    live = doc["timeline"]["steps"][doc["total_peak_step"]]["live"]
    assert sorted(int(r["id"]) for r in rows_of(data)) == sorted(live)

    name, data = download(page, "Edit set (JSON)")
    assert (name, json.loads(data)) == ("edits.json", [])
    assert not [e for e in page.console_errors if "favicon" not in e]


def test_view_follows_the_session_edits_and_step():
    """Without a browser: the callbacks the buttons run, after an edit and a step change."""
    from tilescope.app.state import SessionState
    from tilescope.app.views.export import ExportView
    from tilescope.models.edits import TilingEdit

    state = SessionState()
    view = ExportView(state=state)
    assert all(button.disabled for button in view._buttons.values())  # nothing open: nothing to export
    assert open_into(state, SAMPLE)
    assert not any(button.disabled for button in view._buttons.values())
    # Value 84: FromEnd(2) 365 blocks, 9 → 18 partitions with replicas 54 → 27 (3·18·27 = 1458 tiles):
    # ceil(365/18) = 21 blocks of 2 → 42 rows × 384 columns × 2 B = 32256 B.
    assert state.apply_edits([TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)]) is None
    state.select_step(45)
    assert view._buttons["breakdown"].filename == "step_45_breakdown.csv"

    def fetch(key: str) -> bytes:
        """Run the button's coroutine callback on a loop of its own (Playwright's sync API may hold
        this thread's loop when browser tests ran before)."""
        return run_on_own_loop(view._buttons[key].callback()).getvalue()

    values = rows_of(fetch("values.csv"))
    row = next(r for r in values if int(r["id"]) == 84)
    assert (int(row["bytes"]), int(row["bytes_before_edits"])) == (32256, 62976)
    breakdown = {int(r["id"]): int(r["bytes"]) for r in rows_of(fetch("breakdown"))}
    assert set(breakdown) == set(sample()["timeline"]["steps"][45]["live"]) and breakdown[84] == 32256
    assert json.loads(fetch("edits.json")) == [
        {"value": 84, "axis": 1, "partitions": 18},
        {"value": 84, "replicas": 27},
    ]
    assert fetch("report.png").startswith(PNG_SIGNATURE)
