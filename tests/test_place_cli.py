"""``tilescope place``: the JSON contract, the text table, edits, exit codes and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from placement_support import expected_allocations, sweep_overlaps

from tilescope.cli import main
from tilescope.synth import SAMPLE_PATH

ALLOCATION_KEYS = {"kind", "id", "region", "offset", "bytes", "first_step", "last_step"}
REGION_KEYS = {"lower_bound", "placed", "fragmentation", "capacity", "fits", "verdict", "proof", "deficit_bytes"}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["place", *argv])
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_contract(capsys, raw):
    code, out, err = run(capsys, str(SAMPLE_PATH), "--json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert set(doc["regions"]) == {"standard", "interleaved"}
    for name, figures in doc["regions"].items():
        assert set(figures) == REGION_KEYS
        assert figures["lower_bound"] == raw["peak"][name]
        assert figures["fragmentation"] == figures["placed"] - figures["lower_bound"]
        assert figures["fits"] is (figures["placed"] <= figures["capacity"])
    assert isinstance(doc["algorithm"], str) and "first fit" in doc["algorithm"]
    assert "budget_bytes" in doc["capacity_rule"] and doc["fits"] is True
    rows = doc["allocations"]
    assert all(set(r) == ALLOCATION_KEYS for r in rows)
    assert {r["kind"] for r in rows} == {"value", "scratch", "exchange_rows"}
    assert all((r["id"] is None) == (r["kind"] != "value") for r in rows)
    got = sorted((r["kind"], r["id"], r["region"], r["bytes"], r["first_step"], r["last_step"]) for r in rows)
    assert got == sorted(
        expected_allocations(raw).elements(), key=lambda t: (t[0], -1 if t[1] is None else t[1], *t[2:])
    )
    columns = {k: np.array([r[k] for r in rows]) for k in ("offset", "bytes", "first_step", "last_step")}
    region = np.array([r["region"] == "interleaved" for r in rows], dtype=np.int8)
    assert sweep_overlaps(region, columns["offset"], columns["bytes"], columns["first_step"], columns["last_step"]) == 0
    for name in ("standard", "interleaved"):
        assert doc["regions"][name]["placed"] == max(r["offset"] + r["bytes"] for r in rows if r["region"] == name)


def test_edits_change_the_placement(capsys, tmp_path):
    code, before, _ = run(capsys, str(SAMPLE_PATH), "--json")
    edits = tmp_path / "edits.json"
    edits.write_text(json.dumps([{"value": 84, "axis": 1, "partitions": 18}]))
    code, after, err = run(capsys, str(SAMPLE_PATH), "--json", "--edits", str(edits), "--edit", "84:replicas=27")
    assert (code, err) == (0, "")
    before, after = json.loads(before), json.loads(after)
    assert after["edits"] == [
        {"value": 84, "axis": 1, "count": 18, "applied_to": [84]},
        {"value": 84, "replicas": 27, "count": 27, "applied_to": [84]},
    ]
    assert after["regions"]["standard"]["placed"] < before["regions"]["standard"]["placed"]
    sizes = {r["bytes"] for r in after["allocations"] if r["id"] == 84}
    assert sizes == {32256}  # 62976 → 32256 bytes (tests/test_whatif.py works it out)


def test_text_table(capsys, raw):
    code, out, err = run(capsys, str(SAMPLE_PATH))
    assert (code, err) == (0, "")
    assert f"{raw['peak']['standard']:,} B ({raw['peak']['standard'] / 1024:,.1f} KiB)" in out
    assert f"{raw['peak']['interleaved']:,} B" in out
    assert "fits: yes" in out and "capacity:" in out and "algorithm:" in out
    assert "171 allocations" in out


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--edit", "84:1=1000"], "value 84 axis 1: partitions must not exceed the axis's blocks"),
        (["--edit", "84:x=3"], "expected V:K=N or V:replicas=N"),
        (["--edit", "9999:0=2"], "value 9999"),
    ],
)
def test_bad_edits_exit_2_with_one_line(capsys, argv, fragment):
    code, out, err = run(capsys, str(SAMPLE_PATH), *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_bad_file_exits_2_with_one_line(tmp_path):
    broken = tmp_path / "broken.memory_profile.json"
    broken.write_text('{"version": 1, "timeline": {"values": [], "steps": [')
    env = {**os.environ, "TILESCOPE_NO_CACHE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "tilescope", "place", str(broken)], capture_output=True, text=True, env=env
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and str(broken) in result.stderr and "Traceback" not in result.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "tilescope", "place", str(tmp_path / "none.json")], capture_output=True, text=True
    )
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
