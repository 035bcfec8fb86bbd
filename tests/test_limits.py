"""No figure can overflow (docs/formats.md §6): every figure tilescope computes, with or without
what-if edits, is at most 2^53 bytes, and a file that could make one pass it is refused at load.

The issue's cases: 1,100 (then 2,048) values of 2^53 bytes live together summed in int64 to a
negative usage (then to 0) and "fits_budget: true". The boundary itself (2^53 exactly, one byte
past it) is in the robustness corpus (``test_robust_corpus``); here the wide cases and the edits.
Expected figures are computed with Python integers from the files' shapes (docs/formats.md §2).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tilescope.loaders.memory_profile import parse_memory_profile
from tilescope.models.edits import TilingEdit
from tilescope.models.errors import InputError
from tilescope.planner.edits import apply_edits, extend_edits
from tilescope.planner.model import plan_profile

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "corpus"))
from make_robust_corpus import WHOLE_2_53, huge_profile, simple_value  # noqa: E402

BOUND = 2**53


@pytest.mark.parametrize("count", [1100, 2048])
def test_many_huge_values_live_together_are_refused_not_wrapped(count):
    doc = huge_profile([simple_value(i, **WHOLE_2_53) for i in range(count)], [list(range(count))])
    with pytest.raises(InputError) as info:
        parse_memory_profile(json.dumps(doc).encode(), "huge.json")
    message = str(info.value)
    # The running sum passes 2^53 at the second value (2^53 + 2^53).
    assert message.startswith(
        "huge.json: at $.timeline.steps[0].live: expected live values that together cost at most 2^53 bytes"
    )
    assert f"found {2 * BOUND:,} bytes once value 1 (values[1]) is counted" in message


def test_what_the_issue_summed_is_exact_when_the_values_are_tiled():
    """1,100 values each 2^53 bytes whole but never live together: accepted, and every figure is
    exact, even with every value edited to one partition (its largest)."""
    count = 1100
    doc = huge_profile([simple_value(i, **WHOLE_2_53) for i in range(count)], [[i] for i in range(count)])
    profile = parse_memory_profile(json.dumps(doc).encode(), "tiled.json")
    arrays, plan = plan_profile(profile)
    shard = -(-(2**52) // 1472) * 2  # docs/formats.md §2: 2^52 F16 elements over 1472 partitions
    assert plan.usage_standard.tolist() == [shard] * count
    whatif = apply_edits(arrays, plan, [TilingEdit(i, axis=0, partitions=1) for i in range(count)])
    assert whatif.plan.usage_standard.tolist() == [BOUND] * count
    assert whatif.plan.peaks.total == BOUND and whatif.plan.peaks.effective_peak_bytes == BOUND
    assert whatif.plan.peaks.fits_budget is False


def test_edits_at_the_bound_stay_exact_one_at_a_time():
    """The largest accepted profile (2^53 at one partition): every partition count from one to the
    device's gives the §2 figure exactly, and extend_edits agrees with apply_edits."""
    doc = huge_profile([simple_value(0, **WHOLE_2_53)], [[0], []])
    profile = parse_memory_profile(json.dumps(doc).encode(), "bound.json")
    arrays, plan = plan_profile(profile)
    whatif = apply_edits(arrays, plan, [])
    for partitions in (1, 2, 3, 7, 1000, 1472):
        edit = TilingEdit(0, axis=0, partitions=partitions)
        whatif = extend_edits(arrays, whatif, [edit])
        expected = -(-(2**52) // partitions) * 2
        assert whatif.plan.figures.bytes[0] == expected and whatif.plan.usage_standard.tolist() == [expected, 0]
        full = apply_edits(arrays, plan, whatif.edits)
        assert full.plan.usage_standard.tolist() == whatif.plan.usage_standard.tolist()
        assert full.plan.peaks == whatif.plan.peaks


def test_a_value_whose_copies_could_pass_the_bound_is_refused_by_its_largest_shard():
    """The recorded tiling costs 2 × 2^53 / 1472 bytes (fine), but one partition would cost 2^54."""
    doc = huge_profile([simple_value(0, **WHOLE_2_53, copies=2)], [[0]])
    assert doc["timeline"]["values"][0]["bytes"] < BOUND
    with pytest.raises(InputError) as info:
        parse_memory_profile(json.dumps(doc).encode(), "copies.json")
    assert str(info.value).startswith("copies.json: at $.timeline.values[0].copies:")
