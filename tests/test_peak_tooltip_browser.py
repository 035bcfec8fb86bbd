"""At the peak step the timeline shows one tooltip (issue #27 item 11): the peak marks' own tooltip
covered the step's; the step's tooltip now says which peak the step is. Expected figures from the
raw JSON."""

from __future__ import annotations

import pytest
from browser_support import JS_DATA_TO_PAGE, wait_for_app

pytestmark = pytest.mark.browser

JS_VISIBLE_TIPS = """() => Array.from(document.querySelectorAll('*')).flatMap(e => e.shadowRoot ? Array.from(e.shadowRoot.querySelectorAll('.bk-tooltip-content')) : [])
  .filter(t => { const b = t.getBoundingClientRect(); return b.width > 0 && b.height > 0 && getComputedStyle(t).visibility !== 'hidden'; })
  .map(t => t.innerText)"""


def test_one_tooltip_at_the_peak_mark_naming_the_peak(page, app_server, raw):
    page.goto(app_server)
    wait_for_app(page)
    peak, total = raw["total_peak_step"], raw["peak"]["total"]
    x, y = page.evaluate(JS_DATA_TO_PAGE, ["ts-timeline", peak, total])  # on the total peak's mark
    page.mouse.move(x, y)
    tip = page.locator(".bk-tooltip-content").filter(has_text=f"step {peak} ").first
    tip.wait_for(state="visible")
    text = tip.inner_text()
    assert f"⚑ total peak {total:,} B at step {peak}" in text, text
    assert f"{total:,} B" in tip.inner_text()
    page.wait_for_timeout(300)  # (a second tooltip, if any, shows on the same mouse move)
    shown = page.evaluate(JS_VISIBLE_TIPS)
    assert len(shown) == 1, shown
    # a step that is no peak: no peak line
    other = 20
    assert other not in (peak, raw["standard_peak_step"], raw["interleaved_peak_step"])
    usage = raw["timeline"]["steps"][other]["usage"]
    x, y = page.evaluate(JS_DATA_TO_PAGE, ["ts-timeline", other, (usage["standard"] + usage["interleaved"]) / 2])
    page.mouse.move(x, y)
    tip = page.locator(".bk-tooltip-content").filter(has_text=f"step {other} ").first
    tip.wait_for(state="visible")
    assert "⚑" not in tip.inner_text()
    assert page.console_errors == []
