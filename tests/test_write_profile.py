"""``tilescope plan FILE --edit … --write-profile OUT.json``: a what-if written as a memory profile.

The written file is checked against a copy of the sample edited by an independent path
(tests/compare_support.py edits the raw layout text and recomputes every figure by docs/formats.md
§2): the two must be the same JSON. Then ``tilescope check`` passes on it, re-planning it gives the
edited plan, and the input file is untouched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from compare_support import with_edits

from tilescope.cli import main
from tilescope.loaders.debug_text import parse_debug, render
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.edits import TilingEdit
from tilescope.planner.edits import apply_edits
from tilescope.planner.model import plan_profile

CASES = {
    "84": (["--edit", "84:1=18", "--edit", "84:replicas=27"], [(84, 1, 18), (84, "replicas", 27)]),
    "alias and duplicate name": (["--edit", "20:0=27", "--edit", "153:1=3"], [(20, 0, 27), (153, 1, 3)]),
}


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def fingerprint(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


@pytest.fixture
def sample_copy(tmp_path, sample_path) -> Path:
    """A copy of the sample (so the test can watch its bytes and time stamp)."""
    copy = tmp_path / "input.memory_profile.json"
    copy.write_bytes(sample_path.read_bytes())
    return copy


def test_every_sample_layout_renders_to_its_own_text(raw):
    """What lets an edited layout keep the input's spelling."""
    for value in raw["timeline"]["values"]:
        assert render(parse_debug(value["layout"])) == value["layout"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_written_profile_is_the_independently_edited_profile(case, capsys, sample_copy, raw, tmp_path):
    arguments, edits = CASES[case]
    before = fingerprint(sample_copy)
    out = tmp_path / "edited.memory_profile.json"
    code, stdout, _ = run_cli(capsys, "plan", str(sample_copy), *arguments, "--write-profile", str(out))
    assert code == 0 and stdout.rstrip().endswith(f"wrote {out}")
    assert json.loads(out.read_text()) == with_edits(raw, edits)
    assert fingerprint(sample_copy) == before  # the input is never touched

    code, stdout, _ = run_cli(capsys, "check", str(out))
    assert code == 0, stdout

    # Re-planning the written file gives the edited plan.
    profile = load_memory_profile(sample_copy)
    arrays, plan = plan_profile(profile)
    tiling_edits = [
        TilingEdit(v, replicas=n) if a == "replicas" else TilingEdit(v, axis=a, partitions=n) for v, a, n in edits
    ]
    whatif = apply_edits(arrays, plan, tiling_edits)
    _, replanned = plan_profile(load_memory_profile(out))
    assert np.array_equal(replanned.figures.bytes, whatif.plan.figures.bytes)
    assert np.array_equal(replanned.figures.shard, whatif.plan.figures.shard)
    assert np.array_equal(replanned.usage_standard, whatif.plan.usage_standard)
    assert np.array_equal(replanned.usage_interleaved, whatif.plan.usage_interleaved)
    assert replanned.peaks == whatif.plan.peaks


def test_alias_layouts_follow_their_root(capsys, sample_copy, tmp_path):
    out = tmp_path / "edited.json"
    assert run_cli(capsys, "plan", str(sample_copy), "--edit", "20:0=27", "--write-profile", str(out))[0] == 0
    values = {v["id"]: v for v in json.loads(out.read_text())["timeline"]["values"]}
    assert values[57]["root"] == 20 and values[57]["layout"] == values[20]["layout"]
    assert "partitions: 27," in values[20]["layout"]


def test_without_edits_the_written_profile_is_the_input_byte_for_byte(capsys, sample_copy, tmp_path):
    """Every figure of the sample reproduces, and every other field is copied as it is."""
    out = tmp_path / "same.json"
    assert run_cli(capsys, "plan", str(sample_copy), "--write-profile", str(out))[0] == 0
    assert out.read_bytes() == sample_copy.read_bytes()


def test_json_form_names_the_written_file(capsys, sample_copy, tmp_path):
    out = tmp_path / "edited.json"
    code, stdout, _ = run_cli(
        capsys, "plan", str(sample_copy), "--json", "--edit", "84:1=6", "--write-profile", str(out)
    )
    assert code == 0
    assert json.loads(stdout)["written_profile"] == str(out)


def test_never_overwrites_without_overwrite(capsys, sample_copy, tmp_path):
    out = tmp_path / "exists.json"
    out.write_text("keep me")
    code, _, err = run_cli(capsys, "plan", str(sample_copy), "--edit", "84:1=6", "--write-profile", str(out))
    assert code == 2 and err.count("\n") == 1 and "--overwrite" in err and str(out) in err
    assert out.read_text() == "keep me"
    code, _, _ = run_cli(
        capsys, "plan", str(sample_copy), "--edit", "84:1=6", "--write-profile", str(out), "--overwrite"
    )
    assert (
        code == 0
        and json.loads(out.read_text())["peak"]["standard"] != json.loads(sample_copy.read_text())["peak"]["standard"]
    )


def test_never_writes_the_input_even_with_overwrite(capsys, sample_copy, tmp_path):
    before = fingerprint(sample_copy)
    os.symlink(sample_copy, tmp_path / "link.json")
    for target in (sample_copy, tmp_path / "link.json"):
        code, _, err = run_cli(
            capsys, "plan", str(sample_copy), "--edit", "84:1=18", "--write-profile", str(target), "--overwrite"
        )
        assert code == 2 and err.count("\n") == 1 and "input" in err
    assert fingerprint(sample_copy) == before


@pytest.mark.parametrize("extra, words", [(["--each"], "--each"), (["--edit", "84:1=100000"], "value 84 axis 1")])
def test_refusals_are_one_line(extra, words, capsys, sample_copy, tmp_path):
    out = tmp_path / "never.json"
    code, _, err = run_cli(capsys, "plan", str(sample_copy), "--edit", "84:1=18", *extra, "--write-profile", str(out))
    assert code == 2 and err.count("\n") == 1 and words in err
    assert not out.exists()


def test_missing_folder_is_one_line(capsys, sample_copy, tmp_path):
    code, _, err = run_cli(capsys, "plan", str(sample_copy), "--write-profile", str(tmp_path / "no" / "such.json"))
    assert code == 2 and err.count("\n") == 1 and "folder" in err
