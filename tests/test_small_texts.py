"""Wording of counts in the page (issue #27 item 11): no "the other 0 live values"."""

from __future__ import annotations

import numpy as np

from tilescope.app.views.lifetimes import lanes_note


def test_the_lifetimes_note_counts_in_words():
    assert "the other 12 live values form the grey band" in lanes_note(40, 12)
    assert "the other live value forms the grey band" in lanes_note(40, 1)
    none = lanes_note(7, 0)
    assert "0 live" not in none and "no other value is live" in none and "7 largest values" in none
    assert lanes_note(1, 0).startswith("1 value drawn in a lane of its own")


def live_steps(raw: dict) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {}
    for step in raw["timeline"]["steps"]:
        for vid in step["live"]:
            out.setdefault(int(vid), set()).add(int(step["index"]))
    return out


def test_a_hand_over_at_a_peak_step_is_flagged(sample_path, raw):
    """Issue #27 item 11: values 84 and 85 of storage group 83 are live together at step 45, the
    standard peak step the file records; their hand-over says so. A hand-over away from every peak
    step is not flagged. Expected pairs and steps from the raw JSON's live lists."""
    from opening_support import open_into

    from tilescope.app.state import SessionState
    from tilescope.app.views.storage_groups import group_html

    state = SessionState()
    assert open_into(state, sample_path)
    live = live_steps(raw)
    peaks = {raw["total_peak_step"], raw["standard_peak_step"], raw["interleaved_peak_step"]}
    assert live[84] & live[85] == {45} and raw["standard_peak_step"] == 45 and raw["total_peak_step"] != 45
    groups = state.data.arrays.storage_group_rows
    flagged = group_html(state, 83, np.asarray(groups[83]))
    assert flagged.count('data-testid="ts-handover-peak"') == 1 and "⚑ at the standard peak (step 45)" in flagged
    # group 86: values 86 and 87 both live at step 49 only, no peak step
    assert live[86] & live[87] == {49} and 49 not in peaks
    assert "ts-handover-peak" not in group_html(state, 86, np.asarray(groups[86]))


def test_the_value_search_goes_to_the_values_peak_while_live(sample_path, raw):
    """derived.value_focus against the raw JSON: value 120's live steps and the first step among
    them with the highest total (standard + interleaved; the exchange rows are the same at every step)."""
    from opening_support import open_into

    from tilescope.app.state import SessionState
    from tilescope.derived.value_focus import value_focus

    state = SessionState()
    assert open_into(state, sample_path)
    steps = raw["timeline"]["steps"]
    live = [s["index"] for s in steps if 120 in s["live"]]
    usage = {i: steps[i]["usage"]["standard"] + steps[i]["usage"]["interleaved"] for i in live}
    where = value_focus(state.data, 120)
    assert (where.first, where.last) == (min(live), max(live)) == (98, 101)
    assert where.peak_step == max(usage, key=lambda i: (usage[i], -i))
    assert value_focus(state.data, 10**9) is None
