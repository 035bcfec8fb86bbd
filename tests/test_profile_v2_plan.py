"""Versions 1, 2 and 3 of one program (``tests/profile_generator.py``, an independent implementation
of the compiler's estimate): ``check`` passes, ``plan --json`` reproduces every recorded figure and
the generator's per-tile figures, and ``check`` names the step and tile of a one-byte change."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from tilescope import cli

sys.path.insert(0, str(Path(__file__).parent))
import profile_generator as gen

CASES = [
    ("p18", 1, False),
    ("p18", 2, False),
    ("p18", 3, False),
    ("p18", 3, True),
    ("scaled", 1, False),
    ("scaled", 2, False),
    ("scaled", 3, False),
]
PROGRAMS = {"p18": gen.program_18, "scaled": lambda: gen.program_scaled(2)}


def _run(capsys, *args: str) -> tuple[int, str]:
    code = cli.main(list(args))
    return code, capsys.readouterr().out


@pytest.fixture(scope="module")
def programs():
    return {name: make() for name, make in PROGRAMS.items()}


@pytest.mark.parametrize("name,version,later", CASES)
def test_round_trip(tmp_path, capsys, programs, name, version, later):
    program = programs[name]
    path = gen.write(program, version, tmp_path / f"{name}.json", later_v3=later)
    expected = gen.expected_figures(program, version, later)
    doc, e = expected["doc"], expected["estimate"]
    code, out = _run(capsys, "check", str(path))
    assert code == 0, out
    code, out = _run(capsys, "plan", "--json", str(path))
    plan = json.loads(out)
    assert plan["peak"] == doc["peak"]
    for key in (
        "standard_peak_step",
        "interleaved_peak_step",
        "total_peak_step",
        "effective_peak_bytes",
        "fits_budget",
    ):
        assert plan[key] == doc[key], key
    usage = e.usage if version >= 2 else e.coarse  # (the generator's own arrays, not the JSON)
    assert plan["usage"]["standard"] == usage[:, 0].tolist()
    assert plan["usage"]["interleaved"] == usage[:, 1].tolist()
    assert [v["bytes"] for v in plan["values"]] == [e.aligned[v.id] * v.copies for v in program.values]
    if version == 1:
        assert plan["peak_tiles_source"] == "estimate" and set(plan["peak_tiles"]) == {
            "standard",
            "interleaved",
            "total",
        }
        return
    assert plan["peak_tiles"] == expected["peak_tiles"] and plan["peak_tiles_source"] == "file"
    for tile in random.Random(version).sample(range(program.tiles), 3):
        code, out = _run(capsys, "plan", "--json", "--tile", str(tile), str(path))
        series = json.loads(out)["tile_usage"]
        assert series["tile"] == tile
        assert series["standard"] == e.tile_usage[:, tile, 0].tolist()
        assert series["interleaved"] == e.tile_usage[:, tile, 1].tolist()
    code, out = _run(capsys, "summary", "--json", str(path))
    assert json.loads(out)["version"] == version


def _corrupt(tmp_path, program, version, change) -> Path:
    doc = gen.profile_json(program, version)
    change(doc)
    path = tmp_path / "corrupt.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("version", [2, 3])
def test_check_names_step_and_tile_of_a_one_byte_change(tmp_path, capsys, programs, version):
    program = programs["scaled"]
    rng = random.Random(20261202 + version)
    steps = len(program.steps)
    for _ in range(4):
        s, t, c = rng.randrange(steps), rng.randrange(program.tiles), rng.randrange(2)
        delta = rng.choice([1, -1])
        e = gen.estimate(program)
        if e.tile_usage[s, t, c] == 0:
            delta = 1

        def change(d, s=s, t=t, c=c, delta=delta):
            d["timeline"]["steps"][s]["tile_usage"][t][c] += delta

        path = _corrupt(tmp_path, program, version, change)
        code, out = _run(capsys, "check", str(path))
        assert code == 1
        field = ("standard", "interleaved")[c]
        lines = [line for line in out.splitlines() if line.startswith(f"step {s} tile {t}: tile_usage.{field} ")]
        assert len(lines) == 1, out
        code, out = _run(capsys, "check", "--json", str(path))
        found = [m for m in json.loads(out)["mismatches"] if m.get("tile") == t and m["key"] == s]
        assert found and found[0]["recorded"] - found[0]["recomputed"] == delta


@pytest.mark.parametrize(
    "change,expect",
    [
        (
            lambda d: d["timeline"]["steps"][1]["tile_scratch"][4].__setitem__(
                0, d["timeline"]["steps"][1]["tile_scratch"][4][0] + 1
            ),
            "step 1 tile 4: tile_usage.standard",
        ),
        (
            lambda d: d["timeline"]["steps"][2]["usage"].__setitem__(
                "standard", d["timeline"]["steps"][2]["usage"]["standard"] + 1
            ),
            "step 2: usage.standard",
        ),
        (
            lambda d: d["timeline"]["steps"][0]["coarse_usage"].__setitem__("interleaved", 5),
            "step 0: coarse_usage.interleaved",
        ),
        (
            lambda d: d["timeline"]["values"][3].__setitem__("bytes", d["timeline"]["values"][3]["bytes"] + 1),
            "value 3: bytes (aligned_bytes × copies)",
        ),
        (
            lambda d: d["timeline"]["values"][2].__setitem__(
                "shard_bytes", d["timeline"]["values"][2]["shard_bytes"] - 2
            ),
            "value 2: shard_bytes (largest tile_shards)",
        ),
        (lambda d: d["peak"].__setitem__("standard", d["peak"]["standard"] + 1), "profile: peak.standard"),
        (lambda d: d["peak"].__setitem__("total", d["peak"]["total"] - 1), "profile: peak.total"),
        (lambda d: d.__setitem__("total_peak_step", d["total_peak_step"] + 1), "profile: total_peak_step"),
        (  # value 0 has 6 owners, on tiles 3…7 and 0: a held tile 1 with no shard
            lambda d: d["timeline"]["values"][0]["tile_bytes"].__setitem__(1, 16384),
            "value 0 tile 1: tile_bytes (0 where tile_shards is 0) recorded 16,384 B (16.0 KiB), recomputed 0 B",
        ),
        (
            lambda d: d["timeline"]["values"][0]["tile_bytes"].__setitem__(1, 16384),
            "value 0: tiles with a shard (at most the layout's tile_count) recorded 7, recomputed 6",
        ),
        (
            lambda d: d["timeline"]["values"][1]["tile_shards"].__setitem__(5, 0),
            "value 1 tile 5: tile_bytes (0 where tile_shards is 0) recorded 192 B",
        ),
        (
            lambda d: d["timeline"]["values"][1]["tile_bytes"].__setitem__(5, 0),
            "value 1 tile 5: tile_shards (0 where tile_bytes is 0) recorded 192 B",
        ),
        (lambda d: d.__setitem__("effective_peak_bytes", 7), "profile: effective_peak_bytes"),
        (lambda d: d.__setitem__("fits_budget", not d["fits_budget"]), "profile: fits_budget"),
        (
            lambda d: d["peak"].__setitem__("maximum_standard_allocation", 1),
            "profile: peak.maximum_standard_allocation",
        ),
    ],
)
def test_check_catches_one_field_corruptions(tmp_path, capsys, programs, change, expect):
    path = _corrupt(tmp_path, programs["p18"], 2, change)
    code, out = _run(capsys, "check", str(path))
    assert code == 1 and any(line.startswith(expect) for line in out.splitlines()), out


def test_rows_in_v2_out_in_v3(programs):
    """The one difference between v2 and v3 (spec §1.3): the exchange rows in peak.standard and
    peak.total, not in the effective peak."""
    program = programs["p18"]
    v2, v3 = gen.profile_json(program, 2), gen.profile_json(program, 3)
    rows = program.exchange_rows
    assert v2["peak"]["total"] - v3["peak"]["total"] == rows and v2["peak"]["standard"] - v3["peak"]["standard"] == rows
    assert v2["effective_peak_bytes"] == v3["effective_peak_bytes"]


def test_program_18_has_what_the_compiler_test_asserts(programs):
    """Spec §1.8: fewer roots than values, GEMM alignment, a step run 3 times, the weights group."""
    doc = gen.profile_json(programs["p18"], 3)
    values, steps = doc["timeline"]["values"], doc["timeline"]["steps"]
    assert len({v["root"] for v in values}) < len(values)
    assert any(v["aligned_bytes"] > v["shard_bytes"] for v in values)
    assert any(s["execution_count"] == 3 for s in steps)
    assert any(v["group"] == "weights" for v in values) and values[0]["name"] == "state</script>"
    e = gen.estimate(programs["p18"])
    assert np.array_equal(
        e.usage[doc["total_peak_step"]],
        [steps[doc["total_peak_step"]]["usage"][k] for k in ("standard", "interleaved")],
    )


def test_check_lists_a_thousand_mismatches_per_field_and_counts_the_rest(tmp_path, capsys, programs):
    """Every tile_usage.standard entry one byte high: 1,000 lines name a step and a tile, one line
    counts the rest, and --json counts them in more_mismatches."""
    program = programs["scaled"]
    steps = len(program.steps)

    def change(d):
        for s in d["timeline"]["steps"]:
            for pair in s["tile_usage"]:
                pair[0] += 1

    path = _corrupt(tmp_path, program, 3, change)
    code, out = _run(capsys, "check", str(path))
    assert code == 1
    lines = out.splitlines()
    per_tile = [line for line in lines if " tile " in line.split(":")[0] and "tile_usage.standard" in line]
    assert len(per_tile) == 1000
    total = steps * program.tiles
    assert f"… and {total - 1000:,} more tile_usage.standard mismatches" in lines
    code, out = _run(capsys, "check", "--json", str(path))
    assert json.loads(out)["more_mismatches"]["tile_usage.standard"] == total - 1000


def test_a_live_alias_counts_its_roots_tiles(tmp_path, capsys, programs):
    """docs/formats.md §7: a `live` entry that is not a root (the compiler lists roots only)
    counts its root's per-tile requirement, so naming the alias instead of the root changes no
    figure and check still passes."""
    program = programs["p18"]
    alias, root = 4, 0  # the carried body argument and the state it aliases

    def change(d):
        live = d["timeline"]["steps"][3]["live"]
        live[live.index(root)] = alias
        live.sort()

    path = _corrupt(tmp_path, program, 2, change)
    code, out = _run(capsys, "check", str(path))
    assert code == 0, out
    code, out = _run(capsys, "plan", "--json", str(path))
    e = gen.estimate(program)
    assert json.loads(out)["usage"]["standard"] == e.usage[:, 0].tolist()
