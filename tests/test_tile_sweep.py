"""planner.tile_usage.TileUsage, the one per-tile sweep, against the test generator's dense
reconstruction (tests/profile_generator.py: compiler-formats.md §1.6 written one step and one tile
at a time, sharing no code with tilescope). The sweep is run over the file's own per-tile rows
(values' tile_bytes, steps' tile_scratch), not over its recorded tile_usage: every per-step figure,
tile series and step row must equal the generator's, and the file plan built from the sweep
(``planner.model.per_tile_plan``) must show the generator's peak tile per step."""

from __future__ import annotations

import json

import numpy as np
import profile_generator as gen
import pytest

from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.planner.check import Mismatch
from tilescope.planner.model import arrays_of, compute_plan
from tilescope.planner.tile_check import step_mismatches, value_mismatches
from tilescope.planner.tile_figures import recorded_figures, recorded_usage
from tilescope.planner.tile_usage import TileUsage

PROGRAMS = {"program_18": gen.program_18, "scaled_6": lambda: gen.program_scaled(6)}


@pytest.fixture(scope="module", params=[(name, version) for name in PROGRAMS for version in (2, 3)], ids=str)
def case(request, tmp_path_factory):
    name, version = request.param
    program = PROGRAMS[name]()
    path = gen.write(program, version, tmp_path_factory.mktemp("tiles") / f"{name}.v{version}.json")
    expected = gen.estimate(program)
    arrays = arrays_of(load_memory_profile(path))
    return name, arrays, expected


def test_the_sweep_of_the_files_rows_is_the_generators_usage(case):
    _, arrays, e = case
    figures = recorded_figures(arrays)
    assert figures is not None
    usage = TileUsage(arrays, figures)  # summed from the rows: the recorded tile_usage is not read
    n, tiles = e.tile_usage.shape[:2]
    assert (arrays.n_steps, arrays.device_tiles) == (n, tiles)
    for step in range(n):
        standard, interleaved = usage.at_step(step)
        assert np.array_equal(standard, e.tile_usage[step, :, 0]) and np.array_equal(
            interleaved, e.tile_usage[step, :, 1]
        )
    for tile in sorted({0, tiles // 3, tiles - 1}):
        standard, interleaved = usage.series(tile)
        assert np.array_equal(standard, e.tile_usage[:, tile, 0]) and np.array_equal(
            interleaved, e.tile_usage[:, tile, 1]
        )
    peaks = usage.step_peaks
    assert np.array_equal(peaks.usage_tile, e.usage_tile)
    assert np.array_equal(peaks.usage_standard, e.usage[:, 0]) and np.array_equal(
        peaks.usage_interleaved, e.usage[:, 1]
    )
    for c, region in enumerate(("standard", "interleaved")):
        assert np.array_equal(peaks.most[region], e.tile_usage[:, :, c].max(axis=1))
        last = tiles - 1 - np.argmax(e.tile_usage[:, ::-1, c], axis=1)  # ties: the last tile
        assert np.array_equal(peaks.tile[region], last)


def test_the_recorded_usage_reads_back_the_same(case):
    _, arrays, e = case
    figures, recorded = recorded_figures(arrays), recorded_usage(arrays)
    assert figures is not None and recorded is not None
    usage = TileUsage(arrays, figures, recorded)
    step = int(np.argmax(e.usage.sum(axis=1)))
    standard, interleaved = usage.at_step(step)
    assert np.array_equal(standard, e.tile_usage[step, :, 0]) and np.array_equal(interleaved, e.tile_usage[step, :, 1])
    assert np.array_equal(usage.step_peaks.usage_tile, e.usage_tile)


def test_the_file_plan_is_the_peak_tiles(case):
    _, arrays, e = case
    plan = compute_plan(arrays)
    assert plan.tiles is not None
    assert np.array_equal(plan.usage_standard, e.usage[:, 0]) and np.array_equal(plan.usage_interleaved, e.usage[:, 1])
    assert np.array_equal(plan.tiles.usage_tile, e.usage_tile)


def test_check_names_the_one_tile_changed(case, tmp_path):
    """planner.tile_check straight: the generated file has no mismatch; one recorded tile_usage
    cell one byte off (on a tile that stays below the step's peak) is exactly one mismatch, with
    the generator's figure as the recomputed one."""
    name, arrays, e = case
    recorded = e.usage.copy()
    assert value_mismatches(arrays) == [] and step_mismatches(arrays, recorded) == []
    total = e.tile_usage.sum(axis=2)
    step = int(np.argmax(total.max(axis=1)))
    tile = int(np.argmin(total[step]))  # the least held tile: one byte more keeps it below the peak
    assert total[step, tile] + 1 < total[step].max()
    doc = gen.profile_json(PROGRAMS[name](), arrays.version)
    doc["timeline"]["steps"][step]["tile_usage"][tile][0] += 1
    path = tmp_path / "one_off.json"
    path.write_text(json.dumps(doc))
    changed = arrays_of(load_memory_profile(path))
    found = step_mismatches(changed, recorded)
    assert found == [
        Mismatch(
            "step",
            step,
            "tile_usage.standard",
            int(e.tile_usage[step, tile, 0]) + 1,
            int(e.tile_usage[step, tile, 0]),
            tile,
        )
    ]
