"""What-if edits on v2/v3 profiles, per tile (derived.tile_usage over planner.tile_whatif): the
edited values re-estimated, every other value's recorded figures kept, against the independent
implementation of compiler-formats.md §2 in ``tests/profile_generator.py`` applied to the edited
program; undo gives back the file's figures exactly; what tilescope's estimate infers from an
unedited file (``estimate_agreement``) against what the generator put in it."""

from __future__ import annotations

import copy
import json

import numpy as np
import profile_generator as gen
import pytest

from tilescope.derived import tile_usage
from tilescope.derived.opening import open_file
from tilescope.derived.plan_data import PlanData
from tilescope.models.edits import TilingEdit
from tilescope.planner.edits import apply_edits

REGIONS = ("standard", "interleaved", "total")


def edited_program(program: gen.Program, edits: list[TilingEdit]) -> gen.Program:
    """The program with each edit applied to the edited value's whole alias class (its root and
    every value sharing that root), as a tiling edit re-tiles a class."""
    out = copy.deepcopy(program)
    roots = {v.id: (v.root if v.root is not None else v.id) for v in out.values}
    for edit in edits:
        for value in out.values:
            if roots[value.id] != roots[edit.value]:
                continue
            tiling = copy.deepcopy(value.tiling)
            if edit.replicas is not None:
                tiling.replicas = edit.replicas
            else:
                tiling.axes[edit.axis].partitions = edit.partitions
            tiling.tile_count = tiling.replicas * int(np.prod([a.partitions for a in tiling.axes]))
            value.tiling = tiling
    return out


def expected_tiles(program: gen.Program, version: int) -> tuple[gen.Estimate, dict, dict]:
    figures = gen.expected_figures(program, version)
    return figures["estimate"], figures["doc"], figures["peak_tiles"]


def assert_plan_matches(data: PlanData, program: gen.Program, version: int) -> None:
    e, doc, peak_tiles = expected_tiles(program, version)
    usage = tile_usage.tile_usage(data)
    n_steps, device = e.tile_usage.shape[:2]
    for step in range(n_steps):
        standard, interleaved = tile_usage.at_step(data, step)
        assert standard.tolist() == e.tile_usage[step, :, 0].tolist(), step
        assert interleaved.tolist() == e.tile_usage[step, :, 1].tolist(), step
    for tile in sorted({0, 1, device // 2, device - 1}):
        standard, interleaved = tile_usage.tile_series(data, tile)
        assert standard.tolist() == e.tile_usage[:, tile, 0].tolist()
        assert interleaved.tolist() == e.tile_usage[:, tile, 1].tolist()
    assert usage.step_peaks.usage_standard.tolist() == e.usage[:, 0].tolist()
    assert usage.step_peaks.usage_interleaved.tolist() == e.usage[:, 1].tolist()
    steps = {
        "standard": doc["standard_peak_step"],
        "interleaved": doc["interleaved_peak_step"],
        "total": doc["total_peak_step"],
    }
    assert tile_usage.peak_tiles(data) == {r: (steps[r], peak_tiles[r]) for r in REGIONS}
    rows = doc["peak"]["exchange_rows"] if version == 2 else 0  # v2 adds the rows to standard and total
    peaks = tile_usage.tile_peaks(data)
    assert peaks["standard"] + rows == doc["peak"]["standard"]
    assert peaks["interleaved"] == doc["peak"]["interleaved"]
    assert peaks["total"] + rows == doc["peak"]["total"]
    # The plan itself (what the summary, the timeline and `plan --json` show) is the plan per tile.
    plan = data.plan
    assert plan.usage_standard.tolist() == e.usage[:, 0].tolist()
    assert plan.usage_interleaved.tolist() == e.usage[:, 1].tolist()
    p = plan.peaks
    assert (p.standard, p.interleaved, p.total) == (
        doc["peak"]["standard"],
        doc["peak"]["interleaved"],
        doc["peak"]["total"],
    )
    assert (p.standard_step, p.interleaved_step, p.total_step) == (
        steps["standard"],
        steps["interleaved"],
        steps["total"],
    )
    assert (p.effective_peak_bytes, p.fits_budget) == (doc["effective_peak_bytes"], doc["fits_budget"])
    assert plan.peak_tiles == peak_tiles


CASES = {
    # §1.8's program on 8 tiles: the GEMM's result (step 0's scratch on its owners) re-cut from 4
    # to 3 column partitions (11 blocks of 3: 4, 4, 3); the carried state (an alias class of three
    # values, the GEMM's left operand with its tail, rotated by 3; step 1's scratch on its owners)
    # from 3 to 2 row partitions; the first weight (rotated by 0, its body argument aliasing it)
    # from 8 to 5 column partitions (11 blocks: 3, 2, 2, 2, 2).
    "program_18": (
        gen.program_18,
        [TilingEdit(6, axis=1, partitions=3), TilingEdit(4, axis=0, partitions=2), TilingEdit(1, axis=0, partitions=5)],
    ),
    # Two layers on 1,472 tiles: layer 0's GEMM result (Linear, rotated by 3, the first result of
    # steps 1 and 2 through its alias) over 1,000 owners, layer 1's weight (rotated by 37) from 7
    # to 5 partitions.
    "program_scaled": (
        lambda: gen.program_scaled(2),
        [TilingEdit(4, axis=0, partitions=1000), TilingEdit(7, axis=0, partitions=5)],
    ),
}


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_edits_per_tile_equal_the_generator_on_the_edited_program(tmp_path, name, version):
    make, edits = CASES[name]
    program = make()
    opened = open_file(gen.write(program, version, tmp_path / f"{name}.json"), use_cache=False)
    assert tile_usage.source(opened.base) == "file"
    assert_plan_matches(opened.base, program, version)  # the file's own figures
    base = tile_usage.tile_usage(opened.base)
    for count in range(1, len(edits) + 1):  # each prefix of the edit set
        whatif = apply_edits(opened.arrays, opened.plan, edits[:count])
        data = PlanData(opened, whatif)
        assert tile_usage.source(data) == "file"
        assert_plan_matches(data, edited_program(program, edits[:count]), version)
        n_steps = opened.arrays.n_steps
        assert any(
            not np.array_equal(tile_usage.at_step(data, s)[k], base.at_step(s)[k])
            for s in range(n_steps)
            for k in (0, 1)
        )
    # The first edit re-tiles a step's first result: that step's scratch was spread again.
    first = tile_usage.tile_usage(PlanData(opened, apply_edits(opened.arrays, opened.plan, edits[:1])))
    assert not np.array_equal(first.figures.scratch.start, base.figures.scratch.start) or not all(
        np.array_equal(a, b) for a, b in zip(first.figures.scratch.columns, base.figures.scratch.columns)
    )


def test_undo_gives_back_the_files_figures_exactly(tmp_path):
    program = gen.program_18()
    path = gen.write(program, 3, tmp_path / "p.json")
    raw = json.loads(path.read_text())
    opened = open_file(path, use_cache=False)
    edited = PlanData(opened, apply_edits(opened.arrays, opened.plan, [TilingEdit(6, axis=1, partitions=3)]))
    before = [tile_usage.at_step(edited, s)[0].tolist() for s in range(len(raw["timeline"]["steps"]))]
    undone = PlanData(opened, apply_edits(opened.arrays, opened.plan, []))
    for s, step in enumerate(raw["timeline"]["steps"]):
        standard, interleaved = tile_usage.at_step(undone, s)
        assert standard.tolist() == [pair[0] for pair in step["tile_usage"]]
        assert interleaved.tolist() == [pair[1] for pair in step["tile_usage"]]
    assert any(b != [pair[0] for pair in step["tile_usage"]] for b, step in zip(before, raw["timeline"]["steps"]))
    assert tile_usage.tile_usage(undone).figures is tile_usage.base_figures(opened)


@pytest.mark.parametrize("make", [gen.program_18, lambda: gen.program_scaled(2)])
def test_estimate_agreement_names_the_rotated_values(tmp_path, make):
    """The generator rotates some values' owners (a tile offset the file does not record): the
    estimate reproduces every value's recorded figures, and names exactly the rotated ones, with
    the rotation the generator used."""
    program = make()
    opened = open_file(gen.write(program, 3, tmp_path / "p.json"), use_cache=False)
    notes = dict(tile_usage.estimate_agreement(opened))
    expected = {
        f"value {v.id}": f"reproduced with tile offset {v.offset}, which the file does not record"
        for v in program.values
        if v.offset
    }
    assert notes == expected


def test_v1_file_has_no_agreement_notes(tmp_path):
    opened = open_file(gen.write(gen.program_18(), 1, tmp_path / "p.json"), use_cache=False)
    assert tile_usage.source(opened.base) == "estimate" and tile_usage.estimate_agreement(opened) == []


def test_check_prints_the_estimates_notes_as_notes(tmp_path, capsys):
    """``tilescope check`` on a v3 file the generator rotated: it passes (exit 0), and lists the
    rotations as notes, in the text form and in --json."""
    from tilescope import cli

    program = gen.program_18()
    path = gen.write(program, 3, tmp_path / "p.json")
    assert cli.main(["check", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rotated = [v for v in program.values if v.offset]
    assert lines[0].startswith("ok:")
    assert lines[1:] == [
        f"note: value {v.id}: reproduced with tile offset {v.offset}, which the file does not record" for v in rotated
    ]
    assert cli.main(["check", "--json", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and [n["where"] for n in out["notes"]] == [f"value {v.id}" for v in rotated]


def _with_groups(path, groups: int) -> None:
    """Value 1's layout (the first weight, 8 partitions of 32 columns; its alias 5's too) with
    ``groups`` padding groups."""
    raw = json.loads(path.read_text())
    for value in raw["timeline"]["values"]:
        if value["root"] == 1:
            value["layout"] = value["layout"].replace("padding_groups: 1", f"padding_groups: {groups}")
    path.write_text(json.dumps(raw))


def test_an_edit_the_compilers_resolution_refuses_is_an_edit_error(tmp_path):
    """Value 1 in 2 padding groups: 5 partitions cannot be split between them (§2.2), so the per-tile
    re-estimate of a v3 profile refuses the edit, naming the value and why; nothing is applied."""
    from tilescope.planner.edits import RULE_UNRESOLVABLE, EditError

    path = gen.write(gen.program_18(), 3, tmp_path / "p.json")
    _with_groups(path, 2)
    opened = open_file(path, use_cache=False)
    apply_edits(opened.arrays, opened.plan, [TilingEdit(1, axis=0, partitions=4)])  # 4 = 2 × 2: fine
    with pytest.raises(EditError) as refused:
        apply_edits(opened.arrays, opened.plan, [TilingEdit(1, axis=0, partitions=5)])
    assert refused.value.value == 1 and refused.value.rule == RULE_UNRESOLVABLE
    assert "padding groups" in str(refused.value)


def test_v1_plan_json_without_an_estimate_says_why(tmp_path, capsys):
    """A v1 file whose layout the compiler's resolution refuses (3 groups of 8 partitions):
    ``plan --json`` still answers, its peak tiles null with the reason."""
    from tilescope import cli

    path = gen.write(gen.program_18(), 1, tmp_path / "p.json")
    _with_groups(path, 3)
    assert cli.main(["plan", "--json", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (
        out["peak_tiles"] is None and "value 1" in out["peak_tiles_note"] and "padding groups" in out["peak_tiles_note"]
    )
