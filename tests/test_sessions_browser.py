"""Sessions are isolated: two browser contexts on one served app edit different tilings, select
different steps, and one of them uploads a different file; neither sees the other's edits,
selection or file.

Expected peaks are computed from the raw sample JSON by docs/formats.md's rules (tests/editor_support.py),
and for the uploaded file from the fields it records.
"""

from __future__ import annotations

import json

import pytest
from browser_support import JS_STEP_TABLE_IDS, SAMPLE, kib, wait_for_app, watch_console
from editor_support import RawProfile, edited_bytes

pytestmark = pytest.mark.browser

# (value, axis position, new partitions): both are [1, 729, 1152]-shaped standard-region values of
# storage group 83 with axes FromEnd(1) × 3 and FromEnd(2) × 9 (and 54 replicas) in the file.
EDIT_A = (85, 1, 5)
EDIT_B = (84, 1, 3)
STEP_A, STEP_B = 20, 30
EXTRA_EXCHANGE_ROWS = 8192  # the uploaded file reserves this much more than the sample


def expected_peaks(raw: RawProfile, edit: tuple[int, int, int]) -> dict[str, int]:
    value_id, axis, partitions = edit
    value = raw.value(value_id)
    cost = edited_bytes(value, {axis: partitions})[2]
    return raw.peaks_with({value_id: cost - value["bytes"]})


def open_session(browser, url: str):
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    watch_console(page)
    page.goto(url)
    wait_for_app(page)
    return context, page


def edit_in_editor(page, edit: tuple[int, int, int], value: dict) -> None:
    """Pick the value in the editor and type the axis's new partition count."""
    from playwright.sync_api import expect

    value_id, axis, partitions = edit
    page.locator(".bk-tab", has_text="What-if editor").click()
    picker = page.get_by_placeholder("type an id or part of a name…")
    picker.click()
    picker.fill("")
    picker.press_sequentially(f"#{value_id} ", delay=30)
    page.locator(".bk-menu div", has_text=f"#{value_id} {value['name']}").first.click()
    expect(page.locator(".ts-value-head b")).to_have_text(f"#{value_id} {value['name']}")
    # The figures are drawn after the tiling widget and its inputs: once they show this value's
    # shard, typing reaches this value's input.
    expect(page.locator("[data-testid=ts-editor-figures] tr[data-figure='shard'] td")).to_have_text(
        kib(value["shard_bytes"])
    )
    field = page.locator(f".ts-row[data-axis='{axis}'] input")
    field.fill(str(partitions))
    field.press("Enter")
    expect(page.locator("[data-testid=ts-edit-list]")).to_contain_text(f"#{value_id}")


def select_step(page, step: int) -> None:
    page.locator(".bk-tab", has_text="At this step").click()  # the step input is in that side tab
    field = page.locator(".ts-step-input input").first
    field.fill(str(step))
    field.press("Enter")


def expect_session(
    page,
    *,
    recorded: dict[str, int],
    now: dict[str, int],
    step: int,
    live: list[int],
    edited: int | None,
    not_edited: int,
    source: str,
) -> None:
    """The summary's peaks (file → now), the selected step and its live values, the edit list, the file."""
    from playwright.sync_api import expect

    for kind in ("standard", "interleaved", "total"):
        figure = page.locator(f"[data-testid=ts-peak-{kind}]")
        if recorded[kind] == now[kind]:
            expect(figure).to_have_text(kib(now[kind]))
        else:
            expect(figure).to_contain_text(f"{kib(recorded[kind])} → {kib(now[kind])}")
    expect(page.locator("[data-testid=ts-step-index]")).to_have_text(str(step))
    page.wait_for_function(
        f"() => {{ const ids = ({JS_STEP_TABLE_IDS})(); return ids && ids.length === {len(set(live))}; }}"
    )
    assert sorted(page.evaluate(JS_STEP_TABLE_IDS)) == sorted(set(live))
    page.locator(".bk-tab", has_text="What-if editor").click()  # the edit list is in the editor's side tab
    edit_list = page.locator("[data-testid=ts-edit-list]")
    if edited is None:
        expect(page.locator("[data-testid=ts-summary-edits]")).to_have_count(0)
        expect(page.locator(".ts-edit-empty")).to_have_text("No edits: the plan is the file's.")
    else:
        expect(edit_list).to_contain_text(f"#{edited}")
        expect(edit_list).not_to_contain_text(f"#{not_edited}")
        expect(page.locator("[data-testid=ts-summary-edits]")).to_contain_text("with 1 what-if edit(s)")
    expect(page.locator("[data-testid=ts-source]")).to_contain_text(source)
    page.locator(".bk-tab", has_text="At this step").click()  # back to the step's tab (its buttons)


def test_two_sessions_keep_their_own_edits_steps_and_files(browser, app_server, tmp_path):
    from playwright.sync_api import expect

    raw = RawProfile.load(SAMPLE)
    doc = raw.doc
    steps = doc["timeline"]["steps"]
    recorded = {k: doc["peak"][k] for k in ("standard", "interleaved", "total")}
    peaks_a, peaks_b = expected_peaks(raw, EDIT_A), expected_peaks(raw, EDIT_B)
    assert len({tuple(recorded.values()), tuple(peaks_a.values()), tuple(peaks_b.values())}) == 3

    # The file B uploads: the sample reserving more exchange rows (recorded peaks follow, by §2's rules).
    other = json.loads(SAMPLE.read_text())
    other["scope"] = "session-b-upload"
    other["peak"]["exchange_rows"] += EXTRA_EXCHANGE_ROWS
    other["peak"]["standard"] += EXTRA_EXCHANGE_ROWS
    other["peak"]["total"] += EXTRA_EXCHANGE_ROWS
    upload = tmp_path / "other.memory_profile.json"
    upload.write_text(json.dumps(other))
    other_peaks = {k: other["peak"][k] for k in ("standard", "interleaved", "total")}

    context_a, a = open_session(browser, app_server)
    context_b, b = open_session(browser, app_server)
    try:
        edit_in_editor(a, EDIT_A, raw.value(EDIT_A[0]))
        edit_in_editor(b, EDIT_B, raw.value(EDIT_B[0]))
        select_step(a, STEP_A)
        select_step(b, STEP_B)
        expect_session(
            a,
            recorded=recorded,
            now=peaks_a,
            step=STEP_A,
            live=steps[STEP_A]["live"],
            edited=EDIT_A[0],
            not_edited=EDIT_B[0],
            source=SAMPLE.name,
        )
        expect_session(
            b,
            recorded=recorded,
            now=peaks_b,
            step=STEP_B,
            live=steps[STEP_B]["live"],
            edited=EDIT_B[0],
            not_edited=EDIT_A[0],
            source=SAMPLE.name,
        )
        for page, (value_id, _, _) in ((a, EDIT_A), (b, EDIT_B)):  # each editor shows its own selection
            expect(page.locator(".ts-value-head b")).to_have_text(f"#{value_id} {raw.value(value_id)['name']}")

        # B opens another file (upload): its edits go, its figures are that file's; A keeps everything.
        b.locator(".filepond--browser").first.set_input_files(str(upload))
        expect(b.locator("[data-testid=ts-source]")).to_contain_text(upload.name)
        expect(b.locator("[data-testid=ts-scope]")).to_have_text("session-b-upload")
        expect_session(
            b,
            recorded=other_peaks,
            now=other_peaks,
            step=other["total_peak_step"],
            live=steps[other["total_peak_step"]]["live"],
            edited=None,
            not_edited=EDIT_A[0],
            source=upload.name,
        )
        expect(b.locator("[data-testid=ts-exchange-rows]")).to_have_text(kib(other["peak"]["exchange_rows"]))

        expect(a.locator("[data-testid=ts-scope]")).to_have_text(doc["scope"])
        expect(a.locator("[data-testid=ts-exchange-rows]")).to_have_text(kib(doc["peak"]["exchange_rows"]))
        # A's server-side state still holds the sample and its edit: its next step is the sample's.
        a.get_by_role("button", name="▶").click()
        expect_session(
            a,
            recorded=recorded,
            now=peaks_a,
            step=STEP_A + 1,
            live=steps[STEP_A + 1]["live"],
            edited=EDIT_A[0],
            not_edited=EDIT_B[0],
            source=SAMPLE.name,
        )
        expect(a.locator(".ts-value-head b")).to_have_text(
            f"#{EDIT_A[0]} {raw.value(EDIT_A[0])['name']}"
        )  # A's selection
        assert a.console_errors == [] and b.console_errors == []
    finally:
        context_a.close()
        context_b.close()
