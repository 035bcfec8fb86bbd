"""Synthetic profiles (tilescope.synth): self-consistent at every size, faithful to the sample.

Expectations are read from the sample file with json (its recorded figures and live lists), or
from the synthetic file itself with json, never from the code under test.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from tilescope import cli
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.planner.check import check_plan
from tilescope.planner.model import plan_profile
from tilescope.synth import SAMPLE_PATH, write_synthetic_profile

SAMPLE = json.loads(SAMPLE_PATH.read_bytes())
SAMPLE_STEPS = SAMPLE["timeline"]["steps"]
SAMPLE_VALUES = SAMPLE["timeline"]["values"]
LAYER_NAME = re.compile(r"^(.*)\.layer(\d+)\.(.*)$")


def tilescope(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilescope", *args], capture_output=True, text=True, timeout=120)


def families() -> dict[int, list[dict]]:
    """The sample's per-layer weight families: storage group → [layer0, layer1] values."""
    out: dict[int, list[dict]] = {}
    for v in SAMPLE_VALUES:
        if LAYER_NAME.match(v["name"]) and v["root"] == v["id"]:
            out.setdefault(v["storage_group"], []).append(v)
    return out


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """blocks × layers → (path, json) for a few sizes, written once for the module."""
    folder = tmp_path_factory.mktemp("synth")
    made = {}
    for blocks, layers in [(1, 2), (2, 3), (3, 5), (1, 4)]:
        path = write_synthetic_profile(folder / f"b{blocks}l{layers}.json", blocks, layers)
        made[blocks, layers] = path, json.loads(path.read_bytes())
    return made


def test_one_block_of_two_layers_is_the_sample(synthetic):
    path, data = synthetic[1, 2]
    steps = data["timeline"]["steps"]
    assert [s["usage"] for s in steps] == [s["usage"] for s in SAMPLE_STEPS]
    assert [s["live"] for s in steps] == [s["live"] for s in SAMPLE_STEPS]
    assert {k: v for k, v in data.items() if k != "timeline"} == {k: v for k, v in SAMPLE.items() if k != "timeline"}
    assert [v["name"] for v in data["timeline"]["values"]] == [f"block0.{v['name']}" for v in SAMPLE_VALUES]
    assert path.read_bytes().startswith(b'{"version":1,"scope":"finalist-5",')  # the compact style


@pytest.mark.parametrize("blocks, layers", [(2, 3), (3, 5), (1, 4)])
def test_structure_follows_blocks_and_layers(synthetic, blocks, layers):
    _, data = synthetic[blocks, layers]
    values, steps = data["timeline"]["values"], data["timeline"]["steps"]
    per_block = len(SAMPLE_VALUES) + len(families()) * (layers - 2)
    assert len(values) == blocks * per_block and len(steps) == blocks * len(SAMPLE_STEPS)
    assert len({v["id"] for v in values}) == len(values)
    by_id = {v["id"]: v for v in values}

    # Steps: block b's come after block b-1's; loop steps run L times; the boundary says L.
    assert [s["index"] for s in steps] == list(range(len(steps)))
    for i, s in enumerate(steps):
        sample = SAMPLE_STEPS[i % len(SAMPLE_STEPS)]
        if sample["operation"] == "Repeat 2 boundary":
            assert s["operation"] == f"Repeat {layers} boundary"
        else:
            assert s["operation"] == sample["operation"]
            assert s["execution_count"] == (layers if sample["execution_count"] == 2 else 1)
        # A block's values are live only during its own steps.
        assert {by_id[v]["name"].split(".")[0] for v in s["live"]} <= {f"block{i // len(SAMPLE_STEPS)}"}

    for b in range(blocks):
        for _group, members in families().items():
            head, _, tail = LAYER_NAME.match(members[0]["name"]).groups()
            layer_values = [
                v
                for v in values
                if re.fullmatch(rf"block{b}\.{re.escape(head)}\.layer\d+\.{re.escape(tail)}", v["name"])
            ]
            assert sorted(int(LAYER_NAME.match(v["name"]).group(2)) for v in layer_values) == list(range(layers))
            assert len({v["storage_group"] for v in layer_values}) == 1
            assert all(v["root"] == v["id"] and v["bytes"] == members[0]["bytes"] for v in layer_values)
            # Every layer is live exactly where the sample's layer values are.
            sample_live = [i for i, s in enumerate(SAMPLE_STEPS) if members[1]["id"] in s["live"]]
            for v in layer_values:
                live = [i - b * len(SAMPLE_STEPS) for i, s in enumerate(steps) if v["id"] in s["live"]]
                assert live == sample_live


@pytest.mark.parametrize("blocks, layers", [(2, 3), (3, 5)])
def test_usage_is_the_sample_plus_the_extra_layers(synthetic, blocks, layers):
    """By hand: each step of each block uses what the sample's step does, plus one layer value's
    bytes per weight family and extra layer wherever the layer values are live."""
    _, data = synthetic[blocks, layers]
    extra = {"standard": 0, "interleaved": 0}
    for members in families().values():
        extra["standard" if members[0]["class"] == "Ipu21Standard" else "interleaved"] += members[0]["bytes"] * (
            layers - 2
        )
    layer_id = next(iter(families().values()))[0]["id"]
    for i, s in enumerate(data["timeline"]["steps"]):
        sample = SAMPLE_STEPS[i % len(SAMPLE_STEPS)]
        layers_live = layer_id in sample["live"]
        for region in ("standard", "interleaved"):
            assert s["usage"][region] == sample["usage"][region] + (extra[region] if layers_live else 0)


@pytest.mark.parametrize("blocks, layers", [(1, 2), (2, 3), (3, 5), (1, 4)])
def test_every_size_reproduces(synthetic, blocks, layers):
    path, data = synthetic[blocks, layers]
    profile = load_memory_profile(path)
    assert profile.n_values == len(data["timeline"]["values"]) and profile.n_steps == len(data["timeline"]["steps"])
    arrays, plan = plan_profile(profile)
    assert check_plan(profile, arrays, plan) == []


def test_check_command_exits_0(synthetic):
    path, _ = synthetic[3, 5]
    done = tilescope("check", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reproduce exactly" in done.stdout


@pytest.mark.parametrize("blocks, layers", [(1, 2), (2, 3), (3, 5)])
def test_check_and_normalise_commands_round_trip(synthetic, blocks, layers, tmp_path, capsys):
    """The commands' code in this process (the subprocess test above covers the process boundary)."""
    path, _ = synthetic[blocks, layers]
    assert cli.main(["check", str(path)]) == 0
    out = tmp_path / "tables"
    assert cli.main(["normalise", str(path), "--out", str(out)]) == 0
    loaded = load_memory_profile(path).file_tables()
    for name, table in loaded.items():
        assert pq.read_table(out / f"{name}.parquet").equals(table), name


def test_gaps_make_live_ranges_non_contiguous(tmp_path):
    path = write_synthetic_profile(tmp_path / "gaps.json", 2, 3, gaps=True)
    data = json.loads(path.read_bytes())
    steps = data["timeline"]["steps"]
    # The runs of each value, read from the live lists by hand.
    runs: dict[int, list[list[int]]] = {}
    for i, s in enumerate(steps):
        for v in s["live"]:
            value_runs = runs.setdefault(v, [])
            if value_runs and value_runs[-1][1] == i - 1:
                value_runs[-1][1] = i
            else:
                value_runs.append([i, i])
    split = {v: r for v, r in runs.items() if len(r) > 1}
    assert len(split) > 10  # many values have a hole

    profile = load_memory_profile(path)
    rows = profile.live_intervals.to_pylist()
    got: dict[int, list[list[int]]] = {}
    for r in rows:
        got.setdefault(r["value_id"], []).append([r["first_step"], r["last_step"]])
    assert got == runs
    value, value_runs = next(iter(split.items()))
    assert sum(1 for r in rows if r["value_id"] == value) == len(value_runs) >= 2

    arrays, plan = plan_profile(profile)
    assert check_plan(profile, arrays, plan) == []


def test_corrupted_usage_is_reported_with_its_step(tmp_path):
    path = write_synthetic_profile(tmp_path / "bad.json", 2, 3)
    data = json.loads(path.read_bytes())
    data["timeline"]["steps"][150]["usage"]["interleaved"] += 64
    path.write_text(json.dumps(data, separators=(",", ":")))
    done = tilescope("check", str(path))
    assert done.returncode == 1
    assert "step 150: usage.interleaved recorded" in done.stdout


def test_synth_command_writes_the_file(tmp_path, capsys):
    out = tmp_path / "cli.json"
    assert cli.main(["synth", "--blocks", "2", "--layers", "3", "--gaps", "--out", str(out)]) == 0
    size = out.stat().st_size
    assert capsys.readouterr().out == f"{out}: {size:,} B ({size / 1024:,.1f} KiB), 2 blocks of 3 layers\n"
    assert len(json.loads(out.read_bytes())["timeline"]["steps"]) == 2 * len(SAMPLE_STEPS)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["synth", "--blocks", "0", "--out", str(out)])
    assert exit_.value.code == 2 and "positive integer" in capsys.readouterr().err
