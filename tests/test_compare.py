"""The comparison (tilescope.derived.compare) on real data, every expected figure worked out by an
independent path (tests/compare_support.py: the raw JSON, docs/formats.md §2 written out again):

- the sample against profiles made from it with known edits (written by editing the raw JSON's
  layout Debug text and recomputing the figures in the test), and against the same edits applied
  as a what-if in memory;
- synthetic profiles of different programs (more layers, more blocks: steps aligned by LCS,
  values only on one side), and the sample against a synthetic profile whose names all differ.

Checked each time: the deltas, the exact set of changed values with their byte deltas, each
peak's parts (exactly, by value) and that parts + scratch + exchange rows add up to the delta.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from compare_support import expected_comparison, refigure, tiling_text, with_edits, write

from tilescope.derived.compare import FIGURES, CompareSide, compare_plans
from tilescope.derived.compare_json import comparison_json
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.edits import TilingEdit
from tilescope.planner.edits import apply_edits
from tilescope.planner.model import plan_profile
from tilescope.synth import write_synthetic_profile

# Known edits of the sample: the first lowers the standard peak (value 84, operation 17 result 0);
# the second grows an interleaved weight with an alias (20, aliased by 57) and re-tiles the second
# of the two values named "operation 18 result 0" (153), so occurrence matching matters.
EDITS = {"standard": [(84, 1, 18), (84, "replicas", 27)], "interleaved": [(20, 0, 27), (153, 1, 3)]}


def tiling_edits(edits) -> list[TilingEdit]:
    return [TilingEdit(v, replicas=n) if a == "replicas" else TilingEdit(v, axis=a, partitions=n) for v, a, n in edits]


def side_of(path: Path) -> CompareSide:
    profile = load_memory_profile(path)
    arrays, plan = plan_profile(profile)
    return CompareSide(profile, arrays, plan)


def check_against(comparison, expected: dict) -> None:
    """Every figure of the comparison against the independently expected one."""
    assert comparison.delta.to_json() == expected["delta"]
    for key, side in (("a", comparison.a), ("b", comparison.b)):
        p, e = side.plan.peaks, expected[key]
        assert (p.standard, p.interleaved, p.total, p.effective_peak_bytes) == (
            e["standard"],
            e["interleaved"],
            e["total"],
            e["effective_peak_bytes"],
        )
        assert (p.standard_step, p.interleaved_step, p.total_step) == (
            e["standard_peak_step"],
            e["interleaved_peak_step"],
            e["total_peak_step"],
        )
    assert comparison.steps.mode == expected["steps"]
    assert comparison.steps.matched.size == expected["matched_steps"]
    changed = {(v.name, v.a_id, v.b_id): v.delta_bytes for v in comparison.changed_values}
    assert changed == expected["changed"]
    deltas = [abs(v.delta_bytes) for v in comparison.changed_values]
    assert deltas == sorted(deltas, reverse=True)
    match = comparison.values
    assert sorted(comparison.a.arrays.value_ids[match.a_row[match.only_a]].tolist()) == expected["only_a"]
    assert sorted(comparison.b.arrays.value_ids[match.b_row[match.only_b]].tolist()) == expected["only_b"]
    for figure in FIGURES:
        got, want = comparison.attribution(figure), expected["attribution"][figure]
        assert (got.a_step, got.b_step) == (want["a_step"], want["b_step"])
        assert {(p.name, p.a_id, p.b_id): p.bytes for p in got.parts} == want["parts"]
        assert (got.scratch_delta, got.exchange_rows_delta) == (want["scratch_delta"], want["exchange_rows_delta"])
        assert got.delta == want["delta"]
        # The accounting is exact.
        assert sum(p.bytes for p in got.parts) + got.scratch_delta + got.exchange_rows_delta == got.delta
        sizes = [abs(p.bytes) for p in got.parts]
        assert sizes == sorted(sizes, reverse=True)


@pytest.fixture(scope="module")
def sample_side(sample_path) -> CompareSide:
    return side_of(sample_path)


@pytest.fixture(scope="module")
def edited_files(tmp_path_factory, raw) -> dict[str, tuple[Path, dict]]:
    folder = tmp_path_factory.mktemp("edited")
    out = {}
    for name, edits in EDITS.items():
        edited = with_edits(raw, edits)
        out[name] = (write(edited, folder / f"{name}.memory_profile.json"), edited)
    return out


@pytest.mark.parametrize("name", sorted(EDITS))
def test_sample_against_an_independently_edited_file(name, sample_side, edited_files, raw):
    path, edited = edited_files[name]
    comparison = compare_plans(sample_side, side_of(path))
    expected = expected_comparison(raw, edited)
    check_against(comparison, expected)
    assert (
        comparison.steps.mode == "same" and comparison.steps.unmatched_a.size == comparison.steps.unmatched_b.size == 0
    )
    assert comparison.values.only_a.size == comparison.values.only_b.size == 0
    assert expected["changed"], "the edit changes something"
    # The tiling text of each changed value is the edited layout's.
    by_id = {v["id"]: v for v in edited["timeline"]["values"]}
    for v in comparison.changed_values:
        assert v.b_tiling == tiling_text(by_id[v.b_id]["layout"])


def test_the_standard_edit_in_figures(sample_side, edited_files):
    """The first edit, by hand: value 84's shard 62,976 → 32,256 B; the standard peak moves from
    step 45 to step 10 and drops 20,352 B; total and interleaved peaks unchanged."""
    comparison = compare_plans(sample_side, side_of(edited_files["standard"][0]))
    assert comparison.delta.to_json() == {"standard": -20352, "interleaved": 0, "total": 0, "effective_peak_bytes": 0}
    (only,) = comparison.changed_values
    assert (only.name, only.a_id, only.b_id, only.a_bytes, only.b_bytes) == (
        "operation 17 result 0",
        84,
        84,
        62976,
        32256,
    )
    assert only.changes == {"partitions": [{"axis": 1, "a": 9, "b": 18}], "replicas": {"a": 54, "b": 27}}
    standard = comparison.attribution("standard")
    assert (standard.a_step, standard.b_step) == (45, 10)


@pytest.mark.parametrize("name", sorted(EDITS))
def test_a_what_if_in_memory_compares_as_the_edited_file(name, sample_side, edited_files):
    """A against A edited (apply_edits) gives what A against the edited file gives."""
    whatif = apply_edits(sample_side.arrays, sample_side.plan, tiling_edits(EDITS[name]))
    in_memory = comparison_json(
        compare_plans(sample_side, CompareSide.edited(sample_side.profile, sample_side.arrays, whatif))
    )
    from_file = comparison_json(compare_plans(sample_side, side_of(edited_files[name][0])))
    for side in (in_memory, from_file):
        side["b"].pop("file")
        side["b"].pop("edits")
    assert in_memory == from_file


def test_occurrence_matching_pairs_the_second_value_of_a_name_with_the_second(sample_side, edited_files):
    comparison = compare_plans(sample_side, side_of(edited_files["interleaved"][0]))
    pairs = {(v.name, v.a_id, v.b_id) for v in comparison.changed_values}
    assert ("operation 18 result 0", 153, 153) in pairs
    assert ("operation 18 result 0", 152, 152) not in pairs  # the first occurrence is unchanged
    # The alias (57) changes with its root (20): its tiling is the root's.
    assert {
        ("vit.encoder.layer0.mlp.up.weight", 20, 20),
        ("vit.encoder.mlp.up.weight (body argument)", 57, 57),
    } <= pairs


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("synthetic")
    return {
        "1x2": write_synthetic_profile(folder / "s1x2.json", 1, 2),
        "2x3": write_synthetic_profile(folder / "s2x3.json", 2, 3),
        "1x4": write_synthetic_profile(folder / "s1x4.json", 1, 4),
    }


@pytest.mark.parametrize("pair", [("1x2", "2x3"), ("2x3", "1x2"), ("1x2", "1x4")])
def test_profiles_of_different_programs(pair, synthetic):
    """More layers and more blocks: steps aligned by LCS, values found on one side only."""
    path_a, path_b = synthetic[pair[0]], synthetic[pair[1]]
    raw_a, raw_b = json.loads(path_a.read_text()), json.loads(path_b.read_text())
    comparison = compare_plans(side_of(path_a), side_of(path_b))
    expected = expected_comparison(raw_a, raw_b)
    assert expected["steps"] == "aligned" and (expected["only_a"] or expected["only_b"])
    check_against(comparison, expected)
    # Every step is on the axis once; matched steps have the same (source, operation), in order.
    steps = comparison.steps
    keys_a = [(s["source"], s["operation"]) for s in raw_a["timeline"]["steps"]]
    keys_b = [(s["source"], s["operation"]) for s in raw_b["timeline"]["steps"]]
    assert sorted(steps.a_step[steps.a_step >= 0].tolist()) == list(range(len(keys_a)))
    assert sorted(steps.b_step[steps.b_step >= 0].tolist()) == list(range(len(keys_b)))
    both = steps.matched
    assert all(keys_a[i] == keys_b[j] for i, j in zip(steps.a_step[both].tolist(), steps.b_step[both].tolist()))
    assert np.all(np.diff(steps.a_step[both]) > 0) and np.all(np.diff(steps.b_step[both]) > 0)
    assert steps.unmatched_a.size == len(keys_a) - expected["matched_steps"]
    assert steps.unmatched_b.size == len(keys_b) - expected["matched_steps"]


def test_sample_against_a_program_whose_names_all_differ(sample_path, raw, synthetic):
    """Synthetic names carry a block prefix: nothing matches by name, every value is listed on its
    side, and the accounting still adds up."""
    raw_b = json.loads(synthetic["1x4"].read_text())
    comparison = compare_plans(side_of(sample_path), side_of(synthetic["1x4"]))
    expected = expected_comparison(raw, raw_b)
    assert len(expected["only_a"]) == len(raw["timeline"]["values"]) and len(expected["only_b"]) == len(
        raw_b["timeline"]["values"]
    )
    check_against(comparison, expected)


def test_overlay_on_the_aligned_axis(synthetic):
    raw_a = json.loads(synthetic["1x2"].read_text())
    raw_b = json.loads(synthetic["2x3"].read_text())
    comparison = compare_plans(side_of(synthetic["1x2"]), side_of(synthetic["2x3"]))
    o = comparison.overlay
    usage_a = [s["usage"]["standard"] for s in raw_a["timeline"]["steps"]]
    usage_b = [s["usage"]["standard"] for s in raw_b["timeline"]["steps"]]
    for position in range(o.n_positions):
        i, j = int(o.a_step[position]), int(o.b_step[position])
        assert o.a_standard[position] == (usage_a[i] if i >= 0 else 0)
        assert o.b_standard[position] == (usage_b[j] if j >= 0 else 0)
        assert o.delta("standard")[position] == (usage_b[j] - usage_a[i] if i >= 0 and j >= 0 else 0)


def test_comparing_a_plan_with_itself_changes_nothing(sample_side):
    comparison = compare_plans(sample_side, sample_side)
    assert comparison.delta.to_json() == {"standard": 0, "interleaved": 0, "total": 0, "effective_peak_bytes": 0}
    assert comparison.changed_values == []
    assert all(not comparison.attribution(f).parts for f in FIGURES)


def test_a_what_if_side_must_compare_its_own_plan(sample_side):
    whatif = apply_edits(sample_side.arrays, sample_side.plan, tiling_edits(EDITS["standard"]))
    with pytest.raises(ValueError):
        CompareSide(sample_side.profile, sample_side.arrays, sample_side.plan, whatif)


def test_a_value_that_moved_region(sample_side, raw, tmp_path):
    """Value 31 moved to the standard region (its class and its layout's memory class edited in
    the raw JSON): it leaves the interleaved peak's parts and joins the standard one's, and the
    pair lists the region change."""
    moved = json.loads(json.dumps(raw))
    value = next(v for v in moved["timeline"]["values"] if v["id"] == 31)
    value["class"] = "Ipu21Standard"
    value["layout"] = value["layout"].replace("memory_class: Ipu21Interleaved", "memory_class: Ipu21Standard")
    refigure(moved)
    comparison = compare_plans(sample_side, side_of(write(moved, tmp_path / "moved.json")))
    check_against(comparison, expected_comparison(raw, moved))
    (only,) = comparison.changed_values
    assert (only.a_id, only.delta_bytes, only.changes) == (31, 0, {"region": {"a": "interleaved", "b": "standard"}})
    interleaved = {p.a_id: p.bytes for p in comparison.attribution("interleaved").parts}
    assert interleaved.get(31) == -18432
