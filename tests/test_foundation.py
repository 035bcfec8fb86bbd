"""The foundation: the sample profile loads into Arrow tables and every recorded figure reproduces.

Expected figures come from the sample file itself (read with the stdlib ``json``), never from the
code under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.planner.check import check_plan
from tilescope.planner.model import plan_profile

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "vit_finalist5.memory_profile.json"


@pytest.fixture(scope="module")
def loaded():
    profile = load_memory_profile(SAMPLE)
    arrays, plan = plan_profile(profile)
    return profile, arrays, plan


def test_tables_have_one_row_per_record(raw, loaded):
    profile, _, _ = loaded
    values, steps = raw["timeline"]["values"], raw["timeline"]["steps"]
    assert profile.values.num_rows == len(values) == 176
    assert profile.steps.num_rows == len(steps) == 116
    assert profile.axes.num_rows == sum(v["layout"].count("AxisTiling {") for v in values)
    assert profile.profile.num_rows == 1


def test_every_value_reproduces(raw, loaded):
    _, arrays, plan = loaded
    for row, v in enumerate(raw["timeline"]["values"]):
        assert int(arrays.value_ids[row]) == v["id"]
        assert int(plan.figures.shard[row]) == v["shard_bytes"], v["id"]
        assert int(plan.figures.aligned[row]) == v["aligned_bytes"], v["id"]
        assert int(plan.figures.bytes[row]) == v["bytes"], v["id"]


def test_every_step_reproduces(raw, loaded):
    _, _, plan = loaded
    steps = raw["timeline"]["steps"]
    assert plan.usage_standard.tolist() == [s["usage"]["standard"] for s in steps]
    assert plan.usage_interleaved.tolist() == [s["usage"]["interleaved"] for s in steps]


def test_peaks_reproduce(raw, loaded):
    _, _, plan = loaded
    p = plan.peaks
    assert (p.standard, p.interleaved, p.total) == (
        raw["peak"]["standard"],
        raw["peak"]["interleaved"],
        raw["peak"]["total"],
    )
    assert p.exchange_rows == raw["peak"]["exchange_rows"]
    assert p.maximum_standard_allocation == raw["peak"]["maximum_standard_allocation"]
    assert (p.standard_step, p.interleaved_step, p.total_step) == (
        raw["standard_peak_step"],
        raw["interleaved_peak_step"],
        raw["total_peak_step"],
    )
    assert p.effective_peak_bytes == raw["effective_peak_bytes"]
    assert p.fits_budget is raw["fits_budget"]


def test_check_finds_nothing_on_the_sample(loaded):
    assert check_plan(*loaded) == []


def test_worked_examples_of_the_spec(loaded):
    # docs/formats.md §2: value 0 → 1*16*160*2 = 5120; value 89 (Linear) → 533 blocks of 4 → 4264 bytes.
    _, arrays, plan = loaded
    assert int(plan.figures.shard[arrays.row_of_id[0]]) == 1 * 16 * 160 * 2
    blocks = -(-(1 * 729 * 4304) // 4)
    assert int(plan.figures.shard[arrays.row_of_id[89]]) == -(-blocks // 1472) * 4 * 2


def test_live_intervals_match_live_lists(raw, loaded):
    profile, _, _ = loaded
    expected = {}
    for s in raw["timeline"]["steps"]:
        for vid in s["live"]:
            expected.setdefault(vid, []).append(s["index"])
    got = {}
    for vid, first, last in zip(
        *(profile.live_intervals.column(c).to_pylist() for c in ("value_id", "first_step", "last_step"))
    ):
        got.setdefault(vid, []).extend(range(first, last + 1))
    assert {k: sorted(v) for k, v in got.items()} == expected


def test_values_table_columns(raw, loaded):
    profile, _, _ = loaded
    t = profile.values.to_pydict()
    v84 = raw["timeline"]["values"][84]
    row = t["id"].index(84)
    assert t["shape"][row] == v84["shape"]
    assert t["storage_group"][row] == v84["storage_group"] == 83
    assert t["region"][row] == "standard"
    assert (t["tile_count"][row], t["replicas"][row]) == (1458, 54)
    assert t["element_bytes"][t["id"].index(1)] == 1  # F8F143 { scale_exponent: -4 }
    steps = profile.steps.to_pydict()
    assert steps["operation_kind"][61] == "Repeat" and raw["timeline"]["steps"][61]["operation"] == "Repeat 2 boundary"
    assert steps["operation"] == [s["operation"] for s in raw["timeline"]["steps"]]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilescope", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_check_ok():
    result = run_cli("check", str(SAMPLE))
    assert result.returncode == 0, result.stderr


def test_cli_check_reports_corrupted_figure(tmp_path, raw):
    bad = json.loads(json.dumps(raw))
    bad["timeline"]["steps"][45]["usage"]["standard"] += 16
    bad["timeline"]["values"][84]["shard_bytes"] = 1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    result = run_cli("check", str(path))
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert any(l.startswith("value 84: shard_bytes") for l in lines)
    assert any(l.startswith("step 45: usage.standard") for l in lines)


def test_cli_plan_json_contract(raw):
    result = run_cli("plan", str(SAMPLE), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert set(out) >= {
        "usage",
        "peak",
        "standard_peak_step",
        "interleaved_peak_step",
        "total_peak_step",
        "effective_peak_bytes",
        "fits_budget",
        "values",
    }
    assert out["usage"]["standard"] == [s["usage"]["standard"] for s in raw["timeline"]["steps"]]
    assert out["peak"] == raw["peak"]
    assert [v["id"] for v in out["values"]] == [v["id"] for v in raw["timeline"]["values"]]
    assert all(set(v) == {"id", "shard_bytes", "aligned_bytes", "bytes", "layout_error"} for v in out["values"])


def test_cli_normalise_writes_parquet(tmp_path):
    import pyarrow.parquet as pq

    result = run_cli("normalise", str(SAMPLE), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    profile = load_memory_profile(SAMPLE)
    for name, table in profile.file_tables().items():
        assert pq.read_table(tmp_path / f"{name}.parquet").equals(table)


def test_cli_bad_input_is_one_line(tmp_path):
    path = tmp_path / "truncated.json"
    path.write_bytes(SAMPLE.read_bytes()[:1000])
    result = run_cli("plan", str(path))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert str(path) in result.stderr and "Traceback" not in result.stderr


def test_each_distinct_layout_is_parsed_once(monkeypatch, raw):
    import tilescope.loaders.profile_values as values

    calls = []
    real = values.layout_from_debug_text
    monkeypatch.setattr(values, "layout_from_debug_text", lambda text, where: calls.append(text) or real(text, where))
    load_memory_profile(SAMPLE)
    assert len(calls) == len({v["layout"] for v in raw["timeline"]["values"]})


def test_profile_with_non_contiguous_live_range(tmp_path, raw):
    data = json.loads(json.dumps(raw))
    steps = data["timeline"]["steps"]
    # Value 4 (a layer weight) is live over 0..61; drop it at step 30 and recompute that step's usage.
    steps[30]["live"].remove(4)
    steps[30]["usage"]["standard"] -= raw["timeline"]["values"][4]["bytes"]
    path = tmp_path / "gap.json"
    path.write_text(json.dumps(data))
    profile = load_memory_profile(path)
    t = profile.live_intervals.to_pydict()
    rows = [(f, l) for v, f, l in zip(t["value_id"], t["first_step"], t["last_step"]) if v == 4]
    assert rows == [(0, 29), (31, 61)]
    assert check_plan(profile, *plan_profile(profile)) == []


def test_cli_normalise_never_overwrites_unless_asked(tmp_path):
    first = run_cli("normalise", str(SAMPLE), "--out", str(tmp_path))
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    (tmp_path / "values.parquet").write_bytes(b"mine")
    again = run_cli("normalise", str(SAMPLE), "--out", str(tmp_path))
    assert again.returncode == 2 and "--overwrite" in again.stderr
    assert (tmp_path / "values.parquet").read_bytes() == b"mine"  # nothing at all was written
    forced = run_cli("normalise", str(SAMPLE), "--out", str(tmp_path), "--overwrite")
    assert forced.returncode == 0, forced.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
