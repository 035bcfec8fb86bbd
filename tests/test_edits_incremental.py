"""``planner.edits.extend_edits`` (what ``tilescope plan --each`` re-plans with, edit after edit)
gives exactly what ``apply_edits`` gives for the whole set so far: the same figures, usage, peaks,
changed values and applied edits, or the same ``EditError``. Its time per edit does not grow with
the edits before it (``python -m benchmarks.bench_each`` measures that). Also: an edit that makes a
``padding: Reject`` axis need padding (a Linear axis after an edited one) is refused.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from tilescope.cli import main as cli_main
from tilescope.loaders.memory_profile import load_memory_profile, parse_memory_profile
from tilescope.models.edits import TilingEdit, save_edit_set
from tilescope.planner.edits import EditError, apply_edits, extend_edits
from tilescope.planner.model import plan_profile
from tilescope.planner.tiling_rules import RULE_REJECT_PADDING

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "vit_finalist5.memory_profile.json"


@pytest.fixture(scope="module")
def loaded():
    return plan_profile(load_memory_profile(SAMPLE))


def random_edit(rng: random.Random, ids: list[int]) -> TilingEdit:
    value = rng.choice(ids) if rng.random() < 0.97 else 10**6
    if rng.random() < 0.3:
        return TilingEdit(value, replicas=rng.choice([0, 1, 2, 3, 8, 27, 54, 100, 2000]))
    return TilingEdit(
        value,
        axis=rng.choice([0, 0, 1, 1, 2, 3]),
        partitions=rng.choice([0, 1, 2, 3, 4, 8, 9, 16, 18, 46, 72, 200, 1472]),
    )


def same_whatif(a, b) -> None:
    for name in ("shard", "aligned", "bytes"):
        assert np.array_equal(getattr(a.plan.figures, name), getattr(b.plan.figures, name)), name
    assert np.array_equal(a.plan.usage_standard, b.plan.usage_standard)
    assert np.array_equal(a.plan.usage_interleaved, b.plan.usage_interleaved)
    assert a.plan.peaks == b.plan.peaks
    assert a.diff.changed_values == b.diff.changed_values
    assert np.array_equal(a.diff.step_standard, b.diff.step_standard) and np.array_equal(
        a.diff.step_interleaved, b.diff.step_interleaved
    )
    assert a.edits == b.edits and a.applied == b.applied and a.tilings == b.tilings


@pytest.mark.parametrize("whole_storage_group", [False, True])
def test_extend_edits_equals_apply_edits_of_the_set_so_far(loaded, whole_storage_group):
    arrays, base = loaded
    rng = random.Random(18 + whole_storage_group)
    ids = arrays.value_ids.tolist()
    whatif = apply_edits(arrays, base, [], whole_storage_group=whole_storage_group)
    accepted = refused = 0
    for _ in range(400):
        edit = random_edit(rng, ids)
        try:
            extended = extend_edits(arrays, whatif, [edit])
        except EditError as exc:
            with pytest.raises(EditError) as full:
                apply_edits(arrays, base, (*whatif.edits, edit), whole_storage_group=whole_storage_group)
            assert str(full.value) == str(exc)
            refused += 1
            continue
        same_whatif(extended, apply_edits(arrays, base, (*whatif.edits, edit), whole_storage_group=whole_storage_group))
        whatif = extended
        accepted += 1
    assert accepted > 100 and refused > 50, (accepted, refused)


def test_extending_leaves_the_earlier_whatif_as_it_was(loaded):
    arrays, base = loaded
    first = apply_edits(arrays, base, [TilingEdit(8, axis=0, partitions=72)])
    snapshot = apply_edits(arrays, base, first.edits)
    extend_edits(arrays, first, [TilingEdit(8, axis=0, partitions=18), TilingEdit(84, replicas=27)])
    same_whatif(first, snapshot)


def test_cli_each_prints_what_the_set_so_far_gives(loaded, tmp_path, capsys):
    arrays, base = loaded
    rng = random.Random(7)
    edits, whatif = [], apply_edits(arrays, base, [])
    while len(edits) < 200:  # a sequence every prefix of which is valid
        edit = random_edit(rng, arrays.value_ids.tolist())
        try:
            whatif = extend_edits(arrays, whatif, [edit])
        except EditError:
            continue
        edits.append(edit)
    path = save_edit_set(tmp_path / "edits.json", edits)
    assert cli_main(["plan", str(SAMPLE), "--edits", str(path), "--each"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["index"] for line in lines] == list(range(len(edits)))
    for k in (0, 1, 57, 199):
        p = apply_edits(arrays, base, edits[: k + 1]).plan.peaks
        assert (lines[k]["standard"], lines[k]["interleaved"], lines[k]["total"]) == (
            p.standard,
            p.interleaved,
            p.total,
        )
        assert lines[k]["steps"] == {
            "standard": p.standard_step,
            "interleaved": p.interleaved_step,
            "total": p.total_step,
        }
        assert lines[k]["edit"]["value"] == edits[k].value


def _linear_after_cut_profile() -> bytes:
    """The corpus base with value 0 ([1, 729, 588], F16) re-tiled as FromEnd(1) (588 → 4 blocks of
    160, padded to 640) then Linear with padding Reject and padding_multiple 320: the Linear axis
    sees 1 × 729 × (640 / partitions) elements, a multiple of 320 for 1 or 2 partitions, not 4."""
    doc = json.loads((ROOT / "tests" / "corpus" / "base_valid.json").read_bytes())
    v = doc["timeline"]["values"][0]
    v["layout"] = (
        "Layout { order: RowMajor, tiling: TensorTiling { tile_count: 2, replicas: 1, axes: ["
        "AxisTiling { axis: FromEnd(1), partitions: 2, padding_groups: 1, block_size: 160, padding_multiple: 160, "
        "shard_padding_multiple: 1, padding: Zero, tile_stride: None }, "
        "AxisTiling { axis: Linear, partitions: 1, padding_groups: 1, block_size: 1, padding_multiple: 320, "
        "shard_padding_multiple: 1, padding: Reject, tile_stride: None }] }, memory_class: Ipu21Interleaved }"
    )
    return json.dumps(doc).encode()


def test_an_edit_that_makes_a_reject_axis_need_padding_is_refused():
    profile = parse_memory_profile(_linear_after_cut_profile(), "linear.json")
    arrays, base = plan_profile(profile)
    apply_edits(arrays, base, [TilingEdit(0, axis=0, partitions=1)])  # 729 × 640 = 1458 × 320: fine
    with pytest.raises(EditError) as info:
        apply_edits(arrays, base, [TilingEdit(0, axis=0, partitions=4)])  # 729 × 160 is not a multiple of 320
    assert info.value.rule == RULE_REJECT_PADDING and info.value.value == 0 and info.value.axis == 0
    assert "axis 1 would have size 116640, not a multiple of 320" in str(info.value)


def test_bench_each_runs_and_prints_its_ratios(capsys):
    """The benchmark (``python -m benchmarks.bench_each``) runs; its figures are for the README."""
    from benchmarks.bench_each import main

    assert main(["--edits", "20", "--baseline", "5", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "ratio" in out and "plan --each, whole command: 20 edits" in out and "40 edits" in out
