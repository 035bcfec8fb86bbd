"""Issue #17, in a real Chromium against the served app: one user action reaches the browser as
one PATCH-DOC message (``app.one_message``; a drag, re-planned in the load workers, as at most three), and a view in a hidden side tab does not follow the
state until its tab is shown (``app.shown_gate``).

Messages are counted in the page itself (``tests/ws_messages.js`` notes the type of every Bokeh
message the server sends); the expected live values of a step come from the raw sample JSON.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_support import JS_DATA_TO_PAGE, JS_STEP_TABLE_IDS, SAMPLE, drag_to_count, kib, wait_for_app
from editor_support import RawProfile, edited_bytes

pytestmark = pytest.mark.browser

WS_MESSAGES = (Path(__file__).parent / "ws_messages.js").read_text()
SETTLE_MS = 1500  # after the answer is shown: time for any later message of the same action to arrive
VALUE, AXIS, NEW_PARTITIONS = 85, "1", 5  # as tests/test_editor_browser.py: an edit that changes the total peak

# Changes of the "at this step" table's data source (the one with a ``share`` column), counted in the page.
JS_COUNT_STEP_TABLE = """() => {
  for (const doc of Bokeh.documents) for (const m of doc._all_models.values())
    if (m.source && m.source.data && m.source.data.share !== undefined && !m.source.__tsCounted) {
      m.source.__tsCounted = true;
      window.__tsStepTableChanges = 0;
      m.source.change.connect(() => { window.__tsStepTableChanges += 1; });
    }
  return window.__tsStepTableChanges;
}"""


@pytest.fixture
def counted_page(browser):
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    context.add_init_script(WS_MESSAGES)
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        yield page
    finally:
        context.close()


def patches_after(page, action) -> list[str]:
    """The message types the server sent from just before ``action()`` until SETTLE_MS after it returned."""
    before = page.evaluate("window.__tsMessages.length")
    action()
    page.wait_for_timeout(SETTLE_MS)
    return [kind for kind, _ in page.evaluate("window.__tsMessages")[before:]]


def click_step(page, raw: dict, step: int) -> None:
    usage = raw["timeline"]["steps"][step]["usage"]
    x, y = page.evaluate(JS_DATA_TO_PAGE, ["ts-timeline", step, (usage["standard"] + usage["interleaved"]) / 2])
    page.mouse.click(x, y)


def wait_for_step_table(page, live: set[int]) -> None:
    page.wait_for_function(
        f"() => {{ const ids = ({JS_STEP_TABLE_IDS})(); return ids && ids.length === {len(live)}; }}"
    )
    assert sorted(page.evaluate(JS_STEP_TABLE_IDS)) == sorted(live)


def test_a_step_click_a_key_and_a_drag_each_arrive_as_one_message(counted_page, app_server, raw):
    page = counted_page
    steps = raw["timeline"]["steps"]
    page.goto(app_server)
    wait_for_app(page)
    wait_for_step_table(page, set(steps[raw["total_peak_step"]]["live"]))
    page.wait_for_timeout(SETTLE_MS)  # the page's own first messages are over

    step = 20
    assert step != raw["total_peak_step"]

    def click():
        click_step(page, raw, step)
        page.locator("[data-testid=ts-step-index]").filter(has_text=str(step)).first.wait_for()
        wait_for_step_table(page, set(steps[step]["live"]))

    assert patches_after(page, click).count("PATCH-DOC") == 1

    def key():
        page.keyboard.press("ArrowRight")
        page.locator("[data-testid=ts-step-index]").filter(has_text=str(step + 1)).first.wait_for()
        wait_for_step_table(page, set(steps[step + 1]["live"]))

    assert patches_after(page, key).count("PATCH-DOC") == 1

    # The editor's drag: the release re-plans and every view follows, in one message.
    profile = RawProfile.load(SAMPLE)
    value = profile.value(VALUE)
    _, _, cost = edited_bytes(value, {int(AXIS): NEW_PARTITIONS})
    expected_total = profile.peaks_with({VALUE: cost - value["bytes"]})["total"]
    assert expected_total != raw["peak"]["total"]
    page.goto(f"{app_server}?value={VALUE}&tab=editor")
    page.locator(f".ts-handle[data-axis='{AXIS}']").wait_for(state="visible")
    page.wait_for_timeout(SETTLE_MS)
    peak = page.locator("[data-testid=ts-peak-total]")

    def drag():
        drag_to_count(page, AXIS, NEW_PARTITIONS)
        peak.filter(has_text=f"→ {kib(expected_total)}").wait_for()

    # Since edits are planned in the load workers (issue #24), a drag's effect arrives in more than
    # one message: the plan is made off the loop and the placement after it. Bounded here, not one:
    # the release, the re-planned views, the placement's verdict (measured 3).
    assert 1 <= patches_after(page, drag).count("PATCH-DOC") <= 3


def test_a_hidden_step_tab_waits_and_catches_up_when_shown(counted_page, app_server, raw):
    page = counted_page
    steps = raw["timeline"]["steps"]
    page.goto(app_server)
    wait_for_app(page)
    shown_step = raw["total_peak_step"]
    wait_for_step_table(page, set(steps[shown_step]["live"]))
    page.evaluate(JS_COUNT_STEP_TABLE)

    page.locator(".bk-tab", has_text="Values").click()
    page.locator(".ts-values-table").first.wait_for(state="visible")
    step = 20
    assert step != shown_step and set(steps[step]["live"]) != set(steps[shown_step]["live"])
    click_step(page, raw, step)
    page.locator("[data-testid=ts-selected-step]").filter(
        has_text=f"Step {step} "
    ).first.wait_for()  # the timeline followed
    page.wait_for_timeout(SETTLE_MS)
    # the hidden "at this step" table was not sent the new step's rows
    assert page.evaluate(JS_COUNT_STEP_TABLE) == 0
    assert sorted(page.evaluate(JS_STEP_TABLE_IDS)) == sorted(set(steps[shown_step]["live"]))

    page.locator(".bk-tab", has_text="At this step").click()
    page.locator("[data-testid=ts-step-index]").filter(has_text=str(step)).first.wait_for()
    wait_for_step_table(page, set(steps[step]["live"]))
    assert page.evaluate(JS_COUNT_STEP_TABLE) >= 1


# Where the timeline's selected-step line is when the server's first PATCH-DOC after the click
# arrives (before the page applies it): noted by tests/ws_messages.js's hook.
JS_NOTE_LINE_AT_REPLY = """() => {
  let line = null;
  for (const doc of Bokeh.documents) for (const m of doc._all_models.values()) if (m.name === "ts-selected-step-line") line = m;
  window.__tsLineAtReply = undefined;
  window.__tsOnMessage = (kind) => {
    if (kind === "PATCH-DOC" && window.__tsLineAtReply === undefined) window.__tsLineAtReply = line.location;
  };
  return line.location;
}"""


def test_the_selected_step_line_moves_before_the_server_answers(counted_page, app_server, raw):
    page = counted_page
    steps = raw["timeline"]["steps"]
    page.goto(app_server)
    wait_for_app(page)
    wait_for_step_table(page, set(steps[raw["total_peak_step"]]["live"]))
    page.wait_for_timeout(SETTLE_MS)
    assert page.evaluate(JS_NOTE_LINE_AT_REPLY) == raw["total_peak_step"]
    step = 20
    click_step(page, raw, step)
    page.locator("[data-testid=ts-step-index]").filter(has_text=str(step)).first.wait_for()
    assert page.evaluate("window.__tsLineAtReply") == step
