"""What-if tiling edits (planner.edits) and ``tilescope plan --edit/--edits/--each``.

Every expected figure is computed here, independently of the planner: a value's new shard bytes by
hand from docs/formats.md §2 (the arithmetic is written out), its live steps and the recorded per-step
usage read from the sample with ``json.load``, the new usage as recorded usage + the byte delta over
the value's live steps, and the new peaks as the max (first step reaching it) over that.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tilescope.cli import main as cli_main
from tilescope.loaders.edit_sets import load_edit_set
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.edits import TilingEdit, save_edit_set
from tilescope.models.errors import TilescopeError
from tilescope.planner.edits import (
    RULE_UNKNOWN_AXIS,
    RULE_UNKNOWN_VALUE,
    EditError,
    apply_edits,
    valid_partition_counts,
    valid_replica_counts,
)
from tilescope.planner.model import plan_profile
from tilescope.planner.tiling_rules import RULE_MAX_PARTITIONS, RULE_MIN_PARTITIONS, RULE_MIN_REPLICAS, RULE_TILE_COUNT

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "vit_finalist5.memory_profile.json"
DEVICE_TILES = 1472


# ----------------------------------------------------------------------------- independent figures


@pytest.fixture(scope="module")
def loaded():
    return plan_profile(load_memory_profile(SAMPLE))


def value(raw: dict, vid: int) -> dict:
    return next(v for v in raw["timeline"]["values"] if v["id"] == vid)


def live_steps(raw: dict, vid: int) -> list[int]:
    return [s["index"] for s in raw["timeline"]["steps"] if vid in s["live"]]


def recorded_usage(raw: dict, region: str) -> list[int]:
    return [s["usage"][region] for s in raw["timeline"]["steps"]]


def with_delta(usage: list[int], steps: list[int], delta: int) -> list[int]:
    out = list(usage)
    for step in steps:
        out[step] += delta
    return out


def peak_and_step(usage: list[int]) -> tuple[int, int]:
    top = max(usage)
    return top, usage.index(top)  # the first step reaching the maximum


def expected_peaks(raw: dict, standard: list[int], interleaved: list[int]) -> dict:
    exchange = raw["peak"]["exchange_rows"]
    both = [s + i for s, i in zip(standard, interleaved)]
    s_peak, s_step = peak_and_step(standard)
    i_peak, i_step = peak_and_step(interleaved)
    t_peak, t_step = peak_and_step(both)
    return {
        "standard": s_peak + exchange,
        "standard_step": s_step,
        "interleaved": i_peak,
        "interleaved_step": i_step,
        "total": t_peak + exchange,
        "total_step": t_step,
        "effective_peak_bytes": t_peak + raw["support_reserve_bytes"],
    }


def assert_plan(plan, raw: dict, standard: list[int], interleaved: list[int]) -> None:
    assert plan.usage_standard.tolist() == standard
    assert plan.usage_interleaved.tolist() == interleaved
    want = expected_peaks(raw, standard, interleaved)
    p = plan.peaks
    got = {
        "standard": p.standard,
        "standard_step": p.standard_step,
        "interleaved": p.interleaved,
        "interleaved_step": p.interleaved_step,
        "total": p.total,
        "total_step": p.total_step,
        "effective_peak_bytes": p.effective_peak_bytes,
    }
    assert got == want


def figures_of(whatif, arrays, vid: int) -> tuple[int, int, int]:
    row = arrays.row_of_id[vid]
    f = whatif.plan.figures
    return int(f.shard[row]), int(f.aligned[row]), int(f.bytes[row])


# ----------------------------------------------------------------------------- valid edits


def test_partition_edit_value_8(raw, loaded):
    arrays, base = loaded
    v = value(raw, 8)
    assert v["shape"] == [1152, 3456] and v["precision"].startswith("F8") and v["class"] == "Ipu21Interleaved"
    # Value 8, FP8 (1 byte), axes [FromEnd(1) 36 partitions block 16 pad 16, FromEnd(2) 4 partitions block 288 pad 288]:
    #   FromEnd(1) = 3456: padded 3456, 3456 / 16 = 216 blocks; 72 partitions → ceil(216/72) = 3 blocks → 48
    #   FromEnd(2) = 1152: padded 1152, 1152 / 288 = 4 blocks; 4 partitions → 1 block → 288
    #   shard = 288 * 48 * 1 = 13824; granule 1 (recorded aligned == shard), copies 1 → 13824 bytes
    assert v["aligned_bytes"] == v["shard_bytes"] == 27648
    new_bytes = 288 * 48 * 1
    whatif = apply_edits(arrays, base, [TilingEdit(8, axis=0, partitions=72)])
    assert figures_of(whatif, arrays, 8) == (13824, 13824, 13824)
    members = alias_class(raw, 8)  # 8 and its loop-body alias 51
    assert members == [8, 51]
    interleaved = recorded_usage(raw, "interleaved")
    for vid in members:
        interleaved = with_delta(interleaved, live_steps(raw, vid), new_bytes - v["bytes"])
    assert_plan(whatif.plan, raw, recorded_usage(raw, "standard"), interleaved)
    assert whatif.applied[0].applied_to == members
    assert whatif.tilings[arrays.row_of_id[8]].tile_count == 72 * 4  # tile count follows: 72 × 4 × 1 replica
    assert whatif.diff.changed_values == [(8, 27648, 13824), (51, 27648, 13824)]
    assert whatif.diff.step_interleaved.tolist() == [
        b - a for a, b in zip(recorded_usage(raw, "interleaved"), interleaved)
    ]
    assert not whatif.diff.step_standard.any()
    assert whatif.diff.peaks_before == base.peaks


def test_replica_edit_changes_tile_count_not_bytes(raw, loaded):
    arrays, base = loaded
    # Replicas do not enter the shard rule: value 84 keeps 62976 bytes; tile count 3 × 9 × 27 = 729.
    whatif = apply_edits(arrays, base, [TilingEdit(84, replicas=27)])
    tiling = whatif.tilings[arrays.row_of_id[84]]
    assert (tiling.replicas, tiling.tile_count) == (27, 729)
    assert figures_of(whatif, arrays, 84) == (62976, 62976, 62976)
    assert whatif.diff.changed_values == []
    assert_plan(whatif.plan, raw, recorded_usage(raw, "standard"), recorded_usage(raw, "interleaved"))


def test_combined_edit_moves_standard_peak(raw, loaded):
    arrays, base = loaded
    v = value(raw, 84)
    assert v["shape"] == [1, 729, 1152] and v["precision"] == "F16" and v["bytes"] == 62976
    assert live_steps(raw, 84) == [44, 45] and raw["standard_peak_step"] == 45
    # Value 84, F16 (2 bytes), axes [FromEnd(1) 3 partitions block 384 pad 384, FromEnd(2) 9→18 partitions block 2 pad 2]:
    #   FromEnd(1) = 1152: padded 1152, 3 blocks, 3 partitions → 1 block → 384
    #   FromEnd(2) = 729: padded 730, 365 blocks, 18 partitions → ceil(365/18) = 21 blocks → 42
    #   shard = 1 * 42 * 384 * 2 = 32256; granule 1 → 32256 bytes (was 1 * 82 * 384 * 2 = 62976)
    # Tile count 3 × 18 × 27 = 1458 ≤ 1472 (18 partitions alone, with 54 replicas, would be 2916).
    new_bytes = 1 * 42 * 384 * 2
    edits = [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)]
    whatif = apply_edits(arrays, base, edits)
    assert figures_of(whatif, arrays, 84) == (32256, 32256, 32256)
    standard = with_delta(recorded_usage(raw, "standard"), [44, 45], new_bytes - 62976)
    assert_plan(whatif.plan, raw, standard, recorded_usage(raw, "interleaved"))
    want_step = peak_and_step(standard)[1]
    assert want_step != 45  # the peak moved off step 45 ...
    assert whatif.plan.peaks.standard_step == want_step == 10  # ... to step 10 (computed above from the file)
    assert whatif.tilings[arrays.row_of_id[84]].tile_count == 1458
    assert [a.applied_to for a in whatif.applied] == [[84], [84]]


def test_granule_stays_as_inferred(raw, loaded):
    arrays, base = loaded
    v = value(raw, 85)
    # Value 85 is FP8 with shard 31488 rounded up to 32768: granule 16384 (inferred from the file).
    assert (v["shard_bytes"], v["aligned_bytes"]) == (31488, 32768)
    # Same tiling as 84 with 18 partitions on FromEnd(2): shard = 1 * 42 * 384 * 1 = 16128;
    # aligned = ceil(16128 / 16384) * 16384 = 16384.
    whatif = apply_edits(arrays, base, [TilingEdit(85, axis=1, partitions=18), TilingEdit(85, replicas=27)])
    assert figures_of(whatif, arrays, 85) == (16128, 16384, 16384)
    standard = with_delta(recorded_usage(raw, "standard"), live_steps(raw, 85), 16384 - 32768)
    assert_plan(whatif.plan, raw, standard, recorded_usage(raw, "interleaved"))


def alias_class(raw: dict, root: int) -> list[int]:
    return sorted(v["id"] for v in raw["timeline"]["values"] if v["root"] == root)


def test_edit_of_alias_48_reaches_root_45(raw, loaded):
    arrays, base = loaded
    assert value(raw, 48)["root"] == 45 and live_steps(raw, 48) == []
    members = alias_class(raw, 45)
    assert 45 in members and 48 in members
    # Root 45: [1, 729, 1152] F16, axes [FromEnd(2) 729 partitions block 1, FromEnd(1) 2→1 partitions block 4 pad 4]:
    #   FromEnd(2) = 729: 729 blocks, 729 partitions → 1; FromEnd(1) = 1152: 288 blocks, 1 partition → 1152
    #   shard = 1 * 1 * 1152 * 2 = 2304 (was 1152); tile count 729 × 1 × 1 = 729
    whatif = apply_edits(arrays, base, [TilingEdit(48, axis=1, partitions=1)])
    assert whatif.applied[0].applied_to == members
    for vid in members:
        assert figures_of(whatif, arrays, vid) == (2304, 2304, 2304)
    standard = recorded_usage(raw, "standard")
    for vid in members:  # only the root is live in the sample, but every member's live steps count
        standard = with_delta(standard, live_steps(raw, vid), 2304 - 1152)
    assert_plan(whatif.plan, raw, standard, recorded_usage(raw, "interleaved"))
    assert whatif.diff.changed_values == [(vid, 1152, 2304) for vid in members]


def test_edit_of_alias_49_reaches_root_4(raw, loaded):
    arrays, base = loaded
    assert value(raw, 49)["root"] == 4
    # Root 4: [1, 1, 1152] F16, replicas 729, axis FromStart(2) 1→2 partitions block 4 pad 4:
    #   1152 / 4 = 288 blocks; 2 partitions → 144 blocks → 576; shard = 1 * 1 * 576 * 2 = 1152 (was 2304)
    #   tile count 2 × 729 = 1458 ≤ 1472
    whatif = apply_edits(arrays, base, [TilingEdit(49, axis=0, partitions=2)])
    assert whatif.applied[0].applied_to == alias_class(raw, 4) == [4, 49]
    assert figures_of(whatif, arrays, 4) == (1152, 1152, 1152)
    standard = with_delta(recorded_usage(raw, "standard"), live_steps(raw, 4), 1152 - 2304)
    assert_plan(whatif.plan, raw, standard, recorded_usage(raw, "interleaved"))


def test_linear_axis_value_89(raw, loaded):
    arrays, base = loaded
    v = value(raw, 89)
    assert v["shape"] == [1, 729, 4304] and "Linear" in v["layout"] and v["bytes"] == 4264
    # Linear flattens [1, 729, 4304] into 3137616 elements; block 4 → 784404 blocks.
    # 736 partitions (was 1472) → ceil(784404 / 736) = 1066 blocks → 4264 elements → 8528 bytes (F16).
    assert -(-784404 // 736) == 1066
    new_bytes = 1066 * 4 * 2
    whatif = apply_edits(arrays, base, [TilingEdit(89, axis=0, partitions=736)])
    assert figures_of(whatif, arrays, 89) == (8528, 8528, 8528) and new_bytes == 8528
    standard = with_delta(recorded_usage(raw, "standard"), live_steps(raw, 89), new_bytes - 4264)
    assert_plan(whatif.plan, raw, standard, recorded_usage(raw, "interleaved"))


def test_whole_storage_group(raw, loaded):
    arrays, base = loaded
    group = sorted(v["id"] for v in raw["timeline"]["values"] if v["storage_group"] == 4)
    assert group == [4, 5, 49]
    # 4 and 5 share 4's layout shape (see test above): 2304 → 1152 bytes each; 49 is 4's alias.
    whatif = apply_edits(arrays, base, [TilingEdit(4, axis=0, partitions=2)], whole_storage_group=True)
    assert whatif.applied[0].applied_to == [4, 5, 49]
    standard = recorded_usage(raw, "standard")
    for vid in (4, 5):
        standard = with_delta(standard, live_steps(raw, vid), 1152 - 2304)
    assert_plan(whatif.plan, raw, standard, recorded_usage(raw, "interleaved"))
    # Without the option only the alias class changes.
    alone = apply_edits(arrays, base, [TilingEdit(4, axis=0, partitions=2)])
    assert alone.applied[0].applied_to == [4, 49]


def test_whole_storage_group_refuses_an_invalid_member(raw, loaded):
    arrays, base = loaded
    assert sorted(v["id"] for v in raw["timeline"]["values"] if v["storage_group"] == 83) == [83, 84, 85]
    # 10 partitions fit 83's FromEnd(2) axis (729 blocks) but not 84's FromEnd(1) axis (1152 / 384 = 3 blocks).
    with pytest.raises(EditError) as caught:
        apply_edits(arrays, base, [TilingEdit(83, axis=0, partitions=10)], whole_storage_group=True)
    assert (caught.value.value, caught.value.axis, caught.value.rule) == (84, 0, RULE_MAX_PARTITIONS)
    assert "storage group 83" in str(caught.value)


def test_valid_counts(loaded):
    arrays, base = loaded
    row = arrays.row_of_id[84]
    # Axis 1 of 84: 365 blocks, the other factors 3 × 54 = 162 → at most 1472 // 162 = 9 partitions.
    assert list(valid_partition_counts(arrays, row, 1)) == list(range(1, 10))
    # Replicas: 3 × 9 = 27 tiles per replica → at most 1472 // 27 = 54.
    assert list(valid_replica_counts(arrays, row)) == list(range(1, 55))
    whatif = apply_edits(arrays, base, [TilingEdit(84, replicas=27)])
    assert list(valid_partition_counts(arrays, row, 1, whatif.tilings)) == list(range(1, 1472 // (3 * 27) + 1))
    assert list(valid_partition_counts(arrays, arrays.row_of_id[89], 0)) == list(range(1, 1473))
    assert list(valid_partition_counts(arrays, row, 5)) == []


# ----------------------------------------------------------------------------- invalid edits


@pytest.mark.parametrize(
    "edits, value_id, axis, rule",
    [
        ([TilingEdit(84, axis=1, partitions=0)], 84, 1, RULE_MIN_PARTITIONS),
        # 366 > 365 blocks (with 1 replica the tile count 3 × 366 = 1098 would fit)
        ([TilingEdit(84, replicas=1), TilingEdit(84, axis=1, partitions=366)], 84, 1, RULE_MAX_PARTITIONS),
        # 3 × 18 × 54 = 2916 > 1472
        ([TilingEdit(84, axis=1, partitions=18)], 84, 1, RULE_TILE_COUNT),
        ([TilingEdit(9999, axis=0, partitions=2)], 9999, 0, RULE_UNKNOWN_VALUE),
        ([TilingEdit(84, axis=2, partitions=2)], 84, 2, RULE_UNKNOWN_AXIS),
        ([TilingEdit(84, replicas=0)], 84, "replicas", RULE_MIN_REPLICAS),
        # an alias is named as the user named it
        ([TilingEdit(48, axis=1, partitions=0)], 48, 1, RULE_MIN_PARTITIONS),
    ],
)
def test_invalid_edit_sets_are_refused(raw, loaded, edits, value_id, axis, rule):
    arrays, base = loaded
    before = (base.usage_standard.copy(), base.figures.bytes.copy())
    valid_first = [TilingEdit(8, axis=0, partitions=72)]  # a valid edit in the same set is not applied either
    with pytest.raises(EditError) as caught:
        apply_edits(arrays, base, valid_first + edits)
    err = caught.value
    assert isinstance(err, TilescopeError)
    assert (err.value, err.axis, err.rule) == (value_id, axis, rule)
    message = str(err)
    assert f"value {value_id}" in message and rule in message and "\n" not in message
    assert message.startswith(f"value {value_id} " + ("replicas" if axis == "replicas" else f"axis {axis}"))
    assert np.array_equal(base.usage_standard, before[0]) and np.array_equal(base.figures.bytes, before[1])
    assert base.usage_standard.tolist() == recorded_usage(raw, "standard")


def test_set_validated_as_a_whole(loaded):
    arrays, base = loaded
    with pytest.raises(EditError):
        apply_edits(arrays, base, [TilingEdit(84, axis=1, partitions=18)])
    apply_edits(arrays, base, [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)])  # no error


# ----------------------------------------------------------------------------- saved edit sets


def test_saved_edit_set_reproduces_the_plan(loaded, tmp_path):
    arrays, base = loaded
    edits = [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27), TilingEdit(89, axis=0, partitions=736)]
    direct = apply_edits(arrays, base, edits)
    path = save_edit_set(tmp_path / "edits.json", edits)
    reloaded = apply_edits(arrays, base, load_edit_set(path))
    assert reloaded.edits == tuple(edits)
    for name in ("shard", "aligned", "bytes"):
        assert np.array_equal(getattr(direct.plan.figures, name), getattr(reloaded.plan.figures, name))
    assert np.array_equal(direct.plan.usage_standard, reloaded.plan.usage_standard)
    assert np.array_equal(direct.plan.usage_interleaved, reloaded.plan.usage_interleaved)
    assert direct.plan.peaks == reloaded.plan.peaks
    assert direct.diff.changed_values == reloaded.diff.changed_values


# ----------------------------------------------------------------------------- CLI


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli_main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_cli_exit(capsys, *argv: str) -> tuple[int, str, str]:
    """For argparse errors, which exit through SystemExit."""
    try:
        code = cli_main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_plan_json_with_edits(raw, capsys):
    code, out, err = run_cli(
        capsys, "plan", str(SAMPLE), "--json", "--edit", "84:1=18", "--edit", "84:replicas=27", "--edit", "48:1=1"
    )
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["edits"] == [
        {"value": 84, "axis": 1, "count": 18, "applied_to": [84]},
        {"value": 84, "replicas": 27, "count": 27, "applied_to": [84]},
        {"value": 48, "axis": 1, "count": 1, "applied_to": alias_class(raw, 45)},
    ]
    # 84: 62976 → 32256 on its live steps; root 45: 1152 → 2304 on its live steps (see the tests above).
    standard = with_delta(recorded_usage(raw, "standard"), live_steps(raw, 84), 32256 - 62976)
    standard = with_delta(standard, live_steps(raw, 45), 2304 - 1152)
    assert doc["usage"]["standard"] == standard
    want = expected_peaks(raw, standard, recorded_usage(raw, "interleaved"))
    assert doc["peak"]["standard"] == want["standard"] and doc["standard_peak_step"] == want["standard_step"]
    assert doc["effective_peak_bytes"] == want["effective_peak_bytes"]
    by_id = {v["id"]: v for v in doc["values"]}
    assert by_id[84]["bytes"] == 32256 and by_id[48]["bytes"] == 2304


def test_cli_edits_file_matches_edit_arguments(capsys, tmp_path):
    path = save_edit_set(tmp_path / "e.json", [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)])
    _, from_file, _ = run_cli(capsys, "plan", str(SAMPLE), "--json", "--edits", str(path))
    _, from_args, _ = run_cli(capsys, "plan", str(SAMPLE), "--json", "--edit", "84:1=18", "--edit", "84:replicas=27")
    assert json.loads(from_file) == json.loads(from_args)


def test_cli_each(raw, capsys, tmp_path):
    path = save_edit_set(
        tmp_path / "e.json",
        [TilingEdit(84, replicas=27), TilingEdit(84, axis=1, partitions=18), TilingEdit(8, axis=0, partitions=72)],
    )
    code, out, err = run_cli(capsys, "plan", str(SAMPLE), "--edits", str(path), "--each")
    assert code == 0 and err == ""
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["edit"] for line in lines] == [
        {"value": 84, "replicas": 27, "count": 27, "applied_to": [84]},
        {"value": 84, "axis": 1, "count": 18, "applied_to": [84]},
        {"value": 8, "axis": 0, "count": 72, "applied_to": alias_class(raw, 8)},
    ]
    assert live_steps(raw, 51) == []  # only the root of a class is live
    std0, intl0 = recorded_usage(raw, "standard"), recorded_usage(raw, "interleaved")
    std1 = with_delta(std0, live_steps(raw, 84), 32256 - 62976)
    intl2 = with_delta(intl0, live_steps(raw, 8), 13824 - 27648)
    for line, (std, intl) in zip(lines, [(std0, intl0), (std1, intl0), (std1, intl2)]):
        want = expected_peaks(raw, std, intl)
        assert line["standard"] == want["standard"] and line["interleaved"] == want["interleaved"]
        assert line["total"] == want["total"] and line["effective_peak_bytes"] == want["effective_peak_bytes"]
        assert line["steps"] == {
            "standard": want["standard_step"],
            "interleaved": want["interleaved_step"],
            "total": want["total_step"],
        }
        assert line["fits_budget"] is True


@pytest.mark.parametrize(
    "argument, named",
    [
        ("84:1=0", "value 84 axis 1"),
        ("84:1=18", "value 84 axis 1"),
        ("9999:0=2", "value 9999 axis 0"),
        ("84:7=2", "value 84 axis 7"),
        ("84:replicas=0", "value 84 replicas"),
        ("84:1=400", "value 84 axis 1"),
    ],
)
def test_cli_invalid_edit_exits_2_with_one_line(capsys, argument, named):
    code, out, err = run_cli(capsys, "plan", str(SAMPLE), "--json", "--edit", argument)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and named in err


@pytest.mark.parametrize("argument", ["84", "84:1", "84:a=2", "x:1=2", "84:replica=2", "84:1=2.5", ""])
def test_cli_malformed_edit_exits_2_with_one_line(capsys, argument):
    code, out, err = run_cli_exit(capsys, "plan", str(SAMPLE), "--edit", argument)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "V:K=N" in err


def test_granules_of_all_values_at_once_match_one_at_a_time():
    """planner.shards.infer_granules (numpy) against infer_granule per value, on figures that take
    every branch: aligned == shard, the region's granule, another power of two, and none."""
    import numpy as np

    from tilescope.planner.shards import infer_granule, infer_granules

    rng = np.random.default_rng(7)
    shard = rng.integers(0, 200_000, 4000)
    kind = rng.integers(0, 4, shard.size)
    pick = rng.choice([1 << k for k in range(1, 21)], shard.size)
    interleaved = rng.integers(0, 2, shard.size).astype(np.int8)
    region = np.where(interleaved == 1, 32768, 16384)
    aligned = np.select(
        [kind == 0, kind == 1, kind == 2],
        [shard, -(-shard // region) * region, -(-shard // pick) * pick],
        shard + 3,  # no granule reproduces it
    )
    expected = [
        infer_granule(int(s), int(a), "interleaved" if i else "standard")
        for s, a, i in zip(shard, aligned, interleaved)
    ]
    assert infer_granules(shard, aligned, interleaved).tolist() == expected
    assert len(set(expected)) > 5
