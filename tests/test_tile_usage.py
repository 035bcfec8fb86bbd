"""The per-tile view of a v1 profile (derived.tile_usage, source "estimate"), against a brute-force
computation written here from compiler-formats.md §2 alone: owner by owner, value by value, step
by step, in plain Python over the sample's raw JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from tilescope.derived import tile_usage
from tilescope.derived.opening import open_file
from tilescope.derived.plan_data import PlanData
from tilescope.models.edits import TilingEdit
from tilescope.planner.edits import apply_edits

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "vit_finalist5.memory_profile.json"
AXIS = re.compile(
    r"axis: (FromStart|FromEnd|Linear)(?:\((\d+)\))?, partitions: (\d+), padding_groups: 1, block_size: (\d+), "
    r"padding_multiple: (\d+), shard_padding_multiple: 1, padding: \w+, tile_stride: (?:Some\((\d+)\)|None)"
)


def owner_elements(shape: list[int], layout: str) -> list[int]:
    """§2.2 for the sample's layouts (one padding group, shard padding 1), one owner at a time."""
    tiles = int(re.search(r"tile_count: (\d+)", layout)[1])
    replicas = int(re.search(r"replicas: (\d+)", layout)[1])
    axes = AXIS.findall(layout)
    if len(axes) == 1 and axes[0][0] == "Linear":
        grain = int(axes[0][3])
        grains = -(-int(np.prod(shape)) // grain)
        return [(grains // tiles + (o < grains % tiles)) * grain for o in range(tiles)]
    widths, strides, below, tiled = [], [], replicas, set()
    for kind, index, partitions, block, multiple, stride in axes:
        p, b, m = int(partitions), int(block), int(multiple)
        d = int(index) if kind == "FromStart" else len(shape) - int(index)
        tiled.add(d)
        blocks = -(-shape[d] // m) * m // b
        widths.append([(blocks // p + (c < blocks % p)) * b for c in range(p)])
        strides.append(int(stride) if stride else below)
        below *= p
    rest = int(np.prod([e for d, e in enumerate(shape) if d not in tiled]))
    out = []
    for o in range(tiles):
        n = rest
        for w, s in zip(widths, strides):
            n *= w[(o // s) % len(w)]
        out.append(n)
    return out


def brute_force(profile: dict, edited: dict[int, str] | None = None) -> np.ndarray:
    """[step, tile, region] bytes: each live value's allocation on each owner's tile (offset 0),
    plus the scratch on the owners of the lowest-id value first live at the step."""
    edited = edited or {}
    device = profile["tile_count"]
    values = {v["id"]: v for v in profile["timeline"]["values"]}
    held, elements = {}, {}
    for v in values.values():
        e = owner_elements(v["shape"], edited.get(v["id"], v["layout"]))
        size = 1 if v["precision"].startswith("F8") else (4 if v["precision"] == "F32" else 2)
        element = 32768 if v["class"] == "Ipu21Interleaved" else 16384
        align = 1 if v["aligned_bytes"] == v["shard_bytes"] else element
        row = np.zeros(device, dtype=np.int64)
        for o, n in enumerate(e):
            row[o] = -(-n * size // align) * align * v["copies"] if n else 0
        held[v["id"]], elements[v["id"]] = row, e
    steps = profile["timeline"]["steps"]
    out = np.zeros((len(steps), device, 2), dtype=np.int64)
    seen: set[int] = set()
    for s, step in enumerate(steps):
        for vid in step["live"]:
            out[s, :, 1 if values[vid]["class"] == "Ipu21Interleaved" else 0] += held[vid]
        starting = sorted(v for v in step["live"] if v not in seen)
        seen |= set(step["live"])
        for code, key in ((0, "standard"), (1, "interleaved")):
            scratch = step["scratch"][key]
            if not scratch:
                continue
            if starting:
                e = elements[starting[0]]
                most = max(e)
                for o, n in enumerate(e):
                    out[s, o, code] += -(-scratch * n // most)
            else:
                out[s, :, code] += scratch
    return out


@pytest.fixture(scope="module")
def opened():
    return open_file(SAMPLE)


@pytest.fixture(scope="module")
def raw() -> dict:
    return json.loads(SAMPLE.read_text())


def _last_max(row: np.ndarray) -> int:
    """The last tile holding the row's maximum (the compiler's tie rule for a step's usage)."""
    return max(t for t, v in enumerate(row.tolist()) if v == row.max())


def _check_against(data: PlanData, expected: np.ndarray) -> None:
    total = expected.sum(axis=2)
    for region, matrix in (("standard", expected[:, :, 0]), ("interleaved", expected[:, :, 1]), ("total", total)):
        most = matrix.max(axis=1)
        step = int(np.argmax(most))
        assert tile_usage.peak_tiles(data)[region] == (step, _last_max(matrix[step]))
        assert tile_usage.tile_peaks(data)[region] == int(most.max())
        for s in range(matrix.shape[0]):
            assert tile_usage.step_peak_tile(data, s, region) == (_last_max(matrix[s]), int(most[s]))
    for tile in (0, 1, 7, 700, 1299, 1300, 1471):
        standard, interleaved = tile_usage.tile_series(data, tile)
        assert standard.tolist() == expected[:, tile, 0].tolist()
        assert interleaved.tolist() == expected[:, tile, 1].tolist()
    for step in (0, 45, 47, 115):
        standard, interleaved = tile_usage.at_step(data, step)
        assert standard.tolist() == expected[step, :, 0].tolist()


def test_v1_per_tile_view_is_the_estimate(opened, raw):
    data = opened.base
    assert tile_usage.source(data) == "estimate" and tile_usage.estimate_agreement(opened) == []
    expected = brute_force(raw)
    _check_against(data, expected)
    # No tile holds more than the v1 model's sum of maxima at any step.
    plan = opened.plan
    assert np.all(expected[:, :, 0].max(axis=1) <= plan.usage_standard)
    assert np.all(expected[:, :, 1].max(axis=1) <= plan.usage_interleaved)


def test_v1_what_if_re_estimates_the_edited_values(opened, raw):
    # Value 89 (Linear, 1472 tiles) re-cut over 736 owners, value 0's axis 0 into 23 partitions,
    # value 44 (the first result of step 3, whose scratch its owners hold) axis 1 into 20
    # partitions (576 blocks: 29 on the first 16, 28 on the rest).
    edits = [
        TilingEdit(89, axis=0, partitions=736),
        TilingEdit(0, axis=0, partitions=23),
        TilingEdit(44, axis=1, partitions=20),
    ]
    whatif = apply_edits(opened.arrays, opened.plan, edits)
    data = PlanData(opened, whatif)
    values = {v["id"]: v for v in raw["timeline"]["values"]}
    edited = {}
    for row, tiling in whatif.tilings.items():
        vid = int(opened.arrays.value_ids[row])
        layout = values[vid]["layout"]
        layout = re.sub(r"tile_count: \d+", f"tile_count: {tiling.tile_count}", layout)
        counts = iter(a.partitions for a in tiling.axes)
        edited[vid] = re.sub(r"partitions: \d+", lambda _, c=counts: f"partitions: {next(c)}", layout)
    assert {0, 44, 89} <= set(edited)
    _check_against(data, brute_force(raw, edited))
    assert tile_usage.source(data) == "estimate"
    assert tile_usage.peak_tiles(opened.base) == tile_usage.peak_tiles(
        PlanData(opened, apply_edits(opened.arrays, opened.plan, []))
    )


def test_v1_what_if_whose_recorded_strides_no_longer_fit(opened, raw):
    """Value 87's axes have strides 2 and 1; with axis 1 cut into 1 partition, owners 0…728 and
    stride 2 leave coordinates without owners: the estimate numbers the owners as a tiling without
    strides (replicas, then the axes in order)."""
    whatif = apply_edits(opened.arrays, opened.plan, [TilingEdit(87, axis=1, partitions=1)])
    data = PlanData(opened, whatif)
    value = next(v for v in raw["timeline"]["values"] if v["id"] == 87)
    layout = value["layout"].replace("tile_count: 1458", "tile_count: 729").replace("partitions: 2,", "partitions: 1,")
    layout = layout.replace("Some(2)", "None").replace("Some(1)", "None")
    _check_against(data, brute_force(raw, {87: layout}))


def test_plan_json_peak_tiles_of_a_v1_profile_are_the_estimate(capsys, raw):
    """``tilescope plan --json`` on the v1 sample: peak tiles from the estimate, labelled so, and
    ``--tile`` series, equal the brute force."""
    from tilescope import cli

    expected = brute_force(raw)
    assert cli.main(["plan", "--json", "--tile", "1300", str(SAMPLE)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["peak_tiles_source"] == "estimate"
    total = expected.sum(axis=2)
    for matrix, region in ((expected[:, :, 0], "standard"), (expected[:, :, 1], "interleaved"), (total, "total")):
        # peak_tiles: at the plan's (v1) peak step, the tile the estimate loads most.
        assert out["peak_tiles"][region] == _last_max(matrix[out[f"{region}_peak_step"]])
    assert out["tile_usage"]["source"] == "estimate"
    assert out["tile_usage"]["standard"] == expected[:, 1300, 0].tolist()
    assert out["tile_usage"]["interleaved"] == expected[:, 1300, 1].tolist()
