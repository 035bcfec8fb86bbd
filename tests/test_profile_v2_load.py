"""Memory profiles v2 and v3 (docs/formats.md §7) load into the per-tile run tables; bad per-tile
input is refused with one located line. Expected figures come from ``tests/profile_generator.py``
(an independent implementation of the compiler's estimate), never from the loader."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tilescope import cli
from tilescope.loaders.memory_profile import load_memory_profile, parse_memory_profile
from tilescope.models.errors import InputError

sys.path.insert(0, str(Path(__file__).parent))
import profile_generator as gen

REPO = Path(__file__).resolve().parent.parent


def _dense(table, key: str, n: int, tiles: int, columns: list[str]) -> np.ndarray:
    """The run table spread back into [n, tiles, columns] by a plain loop (the test's own path)."""
    out = np.zeros((n, tiles, len(columns)), np.int64)
    rows = table.to_pylist()
    for r in rows:
        for c, name in enumerate(columns):
            out[r[key], r["tile_start"] : r["tile_stop"], c] = r[name]
    return out


@pytest.fixture(scope="module")
def program():
    return gen.program_18()


@pytest.mark.parametrize("version,later", [(2, False), (3, False), (3, True)])
def test_per_tile_arrays_load_as_runs(tmp_path, program, version, later):
    path = gen.write(program, version, tmp_path / "p.json", later_v3=later)
    doc = json.loads(path.read_text())
    e = gen.estimate(program, parameters_live_to_end=later)
    p = load_memory_profile(path)
    assert p.version == version and p.per_tile
    tiles = program.tiles
    dense = _dense(p.value_tiles, "value_row", len(program.values), tiles, ["shard", "bytes"])
    for row, v in enumerate(program.values):
        assert dense[row, :, 0].tolist() == e.shards[v.id].tolist()
        assert dense[row, :, 1].tolist() == e.held[v.id].tolist()
    steps = _dense(
        p.step_tiles,
        "step",
        len(program.steps),
        tiles,
        ["scratch_standard", "scratch_interleaved", "usage_standard", "usage_interleaved"],
    )
    assert steps[:, :, 0:2].tolist() == e.tile_scratch.tolist()
    assert steps[:, :, 2:4].tolist() == e.tile_usage.tolist()
    # runs are maximal and leave out all-zero spans
    for table, key, cols in (
        (p.value_tiles, "value_row", ["shard", "bytes"]),
        (p.step_tiles, "step", ["scratch_standard", "scratch_interleaved", "usage_standard", "usage_interleaved"]),
    ):
        rows = table.to_pylist()
        for a, b in itertools.pairwise(rows):
            if a[key] == b[key] and a["tile_stop"] == b["tile_start"]:
                assert [a[c] for c in cols] != [b[c] for c in cols]
        assert all(any(r[c] for c in cols) for r in rows)
    assert p.steps.column("coarse_standard").to_pylist() == [
        s["coarse_usage"]["standard"] for s in doc["timeline"]["steps"]
    ]
    header = p.header
    assert (header["gemm_output_packing"] is None) == later


def test_v1_has_empty_tile_tables(tmp_path, program):
    p = load_memory_profile(gen.write(program, 1, tmp_path / "p.json"))
    assert p.version == 1 and not p.per_tile
    assert p.value_tiles.num_rows == 0 and p.step_tiles.num_rows == 0
    assert p.steps.column("coarse_standard").null_count == p.n_steps


def test_worked_vectors_of_the_spec():
    """§2.7, by hand: value 0 holds 5,120 B on every owner; value 89 (Linear, grain 4) 4,264 B on
    owners 0…1299 and 4,256 B on 1300…1471."""
    zero = gen.owner_elements([1, 729, 588], gen.SAMPLE_VALUE_0)
    assert {n * 2 for n in zero} == {5120} and len(zero) == 1472
    e89 = gen.owner_elements([1, 729, 4304], gen.SAMPLE_VALUE_89)
    assert [n * 2 for n in e89] == [4264] * 1300 + [4256] * 172


def _mutated(tmp_path, program, version, mutate, compact: bool = False) -> Path:
    """The profile with one thing made wrong, written spaced (as json.dumps does) or compact (as
    the compiler does: the loader's fast path for regular lists)."""
    doc = gen.profile_json(program, version)
    mutate(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc, separators=(",", ":")) if compact else json.dumps(doc))
    return path


@pytest.mark.parametrize(
    "mutate,where,found",
    [
        (lambda d: d["timeline"]["values"][2]["tile_bytes"].pop(), "$.timeline.values[2].tile_bytes", "a list of 7"),
        (
            lambda d: d["timeline"]["values"][1]["tile_shards"].append(0),
            "$.timeline.values[1].tile_shards",
            "a list of 9",
        ),
        (lambda d: d["timeline"]["steps"][3]["tile_usage"].pop(), "$.timeline.steps[3].tile_usage", "a list of 7"),
        (
            lambda d: d["timeline"]["values"][4]["tile_bytes"].__setitem__(5, -3),
            "$.timeline.values[4].tile_bytes",
            "-3",
        ),
        (
            lambda d: d["timeline"]["steps"][1]["tile_scratch"].__setitem__(2, [1, -2]),
            "$.timeline.steps[1].tile_scratch",
            "-2",
        ),
        (
            lambda d: d["timeline"]["steps"][2]["tile_usage"].__setitem__(6, [1, 2, 3]),
            "$.timeline.steps[2].tile_usage[6]",
            "3 numbers",
        ),
        (
            lambda d: d["timeline"]["steps"][0]["tile_usage"].__setitem__(1, 5),
            "$.timeline.steps[0].tile_usage",
            "a number outside a pair",
        ),
        (
            lambda d: d["timeline"]["values"][3]["tile_bytes"].__setitem__(0, 1.5),
            "$.timeline.values[3].tile_bytes",
            "1.5",
        ),
        (lambda d: d["timeline"]["values"][0].pop("tile_shards"), "$.timeline.values[0].tile_shards", "none"),
        (lambda d: d["timeline"]["steps"][2].pop("tile_usage"), "$.timeline.steps[2].tile_usage", "none"),
        (lambda d: d["timeline"]["steps"][1].pop("coarse_usage"), "$.timeline.steps[1].coarse_usage", "none"),
        (lambda d: d.__setitem__("version", 4), "$.version", "4"),
    ],
)
@pytest.mark.parametrize("compact", [False, True])
def test_bad_per_tile_input_is_located(tmp_path, capsys, program, mutate, where, found, compact):
    path = _mutated(tmp_path, program, 2, mutate, compact)
    with pytest.raises(InputError) as raised:
        load_memory_profile(path)
    message = str(raised.value)
    assert f"at {where}:" in message and found in message, message
    # the CLI: one line, exit 2
    assert cli.main(["summary", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and where in err, err


def test_bytes_and_file_agree(tmp_path, program):
    """Loading bytes (an upload) gives the same tables as loading the file."""
    path = gen.write(program, 3, tmp_path / "p.json")
    a, b = load_memory_profile(path), parse_memory_profile(path.read_bytes())
    assert a.value_tiles.equals(b.value_tiles) and a.step_tiles.equals(b.step_tiles)


def test_cache_keeps_the_run_tables(tmp_path, program):
    """The cache (schema 5) stores value_tiles and step_tiles: a second open reads them back equal,
    memory-mapped, without the JSON."""
    from tilescope.loaders.cache import load_profile_cached
    from tilescope.models.schemas import SCHEMA_VERSION

    assert SCHEMA_VERSION >= 5
    path = gen.write(program, 3, tmp_path / "p.json")
    first = load_profile_cached(path, tmp_path / "cache")
    entry = sorted(p.name for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert any("value_tiles" in name for name in entry) and any("step_tiles" in name for name in entry)
    second = load_profile_cached(path, tmp_path / "cache")
    assert second.value_tiles.equals(first.value_tiles) and second.step_tiles.equals(first.step_tiles)
    assert second.value_tiles.num_rows > 0 and second.version == 3


def test_pretty_printed_file_gives_the_same_tables(tmp_path, program):
    """Indented JSON (whitespace inside the per-tile lists) takes the general parse: same runs."""
    compact = gen.write(program, 2, tmp_path / "compact.json")
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(json.loads(compact.read_text()), indent=2))
    a, b = load_memory_profile(compact), load_memory_profile(pretty)
    assert a.value_tiles.equals(b.value_tiles) and a.step_tiles.equals(b.step_tiles)
    assert a.steps.equals(b.steps)


def test_tile_list_numbers_of_up_to_sixteen_digits():
    """The numpy parse reads numbers of 1 to 16 digits exactly (two 8-digit windows) and refuses
    one above 2^53 or of more digits, at the list's path."""
    import msgspec

    from tilescope.loaders.tile_arrays import parse_tile_lists
    from tilescope.models.limits import MAX_INT

    numbers = [0, 7, 12345678, 123456789, 123456789012, 9007199254740991, MAX_INT]
    raws = [msgspec.Raw(json.dumps(numbers, separators=(",", ":")).encode()), msgspec.Raw(json.dumps(numbers).encode())]
    parsed = parse_tile_lists(raws, len(numbers), False, 0, lambda i: f"$.x[{i}]")
    assert parsed.tolist() == [numbers, numbers]
    for bad, found in ((MAX_INT + 1, f"{MAX_INT + 1:,}"), (10**16, "17 digits")):
        with pytest.raises(InputError) as raised:
            parse_tile_lists([msgspec.Raw(json.dumps([1, bad]).encode())], 2, False, 4, lambda i: f"$.x[{i}]")
        assert "at $.x[4]:" in str(raised.value) and found in str(raised.value)
