"""``tilescope plan FILE --edit … --write-profile OUT`` on v2/v3 profiles: OUT is the input's
version with the edited values' per-tile arrays, every step's usage and the peaks recomputed, and
equals — field by field — what the independent generator (``tests/profile_generator.py``) writes
for the edited program; without edits OUT says what the input says."""

from __future__ import annotations

import functools
import json
import operator
import subprocess
import sys
from pathlib import Path

import profile_generator as gen
import pytest
from test_tile_whatif import edited_program

from tilescope.loaders.debug_text import parse_debug
from tilescope.loaders.layouts import layout_from_debug
from tilescope.models.edits import TilingEdit

TILESCOPE = [sys.executable, "-m", "tilescope"]

CASES = {
    "program_18": (
        gen.program_18,
        [TilingEdit(6, axis=1, partitions=3), TilingEdit(4, axis=0, partitions=2), TilingEdit(1, axis=0, partitions=5)],
    ),
    "program_scaled": (
        lambda: gen.program_scaled(2),
        [TilingEdit(4, axis=0, partitions=1000), TilingEdit(7, axis=0, partitions=5)],
    ),
}


def plan(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*TILESCOPE, "plan", *args], capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent
    )


def tiling_of(layout: str):
    return layout_from_debug(parse_debug(layout), "layout").tiling


def assert_same_profile(got: dict, expected: dict) -> None:
    """Every field equal; layouts compared as parsed (the writer renders Debug text its own way)."""
    assert {k: v for k, v in got.items() if k != "timeline"} == {k: v for k, v in expected.items() if k != "timeline"}
    assert len(got["timeline"]["values"]) == len(expected["timeline"]["values"])
    for g, e in zip(got["timeline"]["values"], expected["timeline"]["values"]):
        assert tiling_of(g.pop("layout")) == tiling_of(e.pop("layout")), e["id"]
        assert g == e, e["id"]
    assert got["timeline"]["steps"] == expected["timeline"]["steps"]


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_write_profile_is_the_generators_edited_program(tmp_path, name, version):
    make, edits = CASES[name]
    program = make()
    source = gen.write(program, version, tmp_path / "in.json")
    out = tmp_path / "out.json"
    arguments = [f"{e.value}:{e.axis}={e.partitions}" for e in edits]
    done = plan(
        str(source),
        *functools.reduce(operator.iadd, (["--edit", a] for a in arguments), []),
        "--write-profile",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert_same_profile(json.loads(out.read_text()), gen.profile_json(edited_program(program, edits), version))
    checked = subprocess.run([*TILESCOPE, "check", str(out)], check=False, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # Read back, its plan is the what-if's: the same peaks and peak tiles as `plan --json` with the edits.
    editing = [part for a in arguments for part in ("--edit", a)]
    edited = json.loads(plan("--json", str(source), *editing).stdout)
    reread = json.loads(plan("--json", str(out)).stdout)
    for key in (
        "peak",
        "peak_tiles",
        "usage",
        "standard_peak_step",
        "interleaved_peak_step",
        "total_peak_step",
        "effective_peak_bytes",
        "fits_budget",
    ):
        assert reread[key] == edited[key], key


@pytest.mark.parametrize("version", [2, 3])
def test_write_profile_without_edits_says_what_the_input_says(tmp_path, version):
    source = gen.write(gen.program_18(), version, tmp_path / "in.json")
    out = tmp_path / "out.json"
    done = plan(str(source), "--write-profile", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == json.loads(source.read_text())
