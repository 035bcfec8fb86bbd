"""Every writer refuses to write over any of its inputs, however the two are spelled, even with
``--overwrite`` (``models.files.refuse_inputs``): ``report`` (its profile, ``--compare`` B, ``--edits``),
``normalise``, ``synth --sample`` and ``plan --write-profile``. For each, six spellings of "the file
to write is the input": the same path, a ``..`` detour, a symlinked folder, the input reached
through a symlinked folder, a hard link and a symlink. Each run is one line, exit 2, and the input's
bytes (and the name that reached it) are as they were."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from tilescope.cli import main

SPELLINGS = ["same-path", "dotdot", "symlinked-folder", "input-through-symlink", "hard-link", "symlink"]
EDITS = [{"value": 84, "axis": 1, "partitions": 6}]


def place_input(tmp_path: Path, content: bytes, name: str, spelling: str) -> tuple[Path, Path, Path]:
    """``(input as given, the folder to write into as given, the real input file)``: the writer's
    file ``name`` in that folder reaches the input by ``spelling``."""
    folder = tmp_path / "d"
    (folder / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(folder, target_is_directory=True)
    elsewhere = tmp_path / "e"
    elsewhere.mkdir()
    if spelling in ("hard-link", "symlink"):
        real = elsewhere / "real-input"
        real.write_bytes(content)
        if spelling == "hard-link":
            os.link(real, folder / name)
        else:
            (folder / name).symlink_to(real)
        return real, folder, real
    real = folder / name
    real.write_bytes(content)
    given, out = {
        "same-path": (real, folder),
        "dotdot": (real, folder / "sub" / ".."),
        "symlinked-folder": (real, tmp_path / "link"),
        "input-through-symlink": (tmp_path / "link" / name, folder),
    }[spelling]
    return given, out, real


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refused(capsys, argv: list[str], real: Path, written_name: Path) -> None:
    before, link_before = digest(real), os.lstat(written_name)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "is an input of this command" in err and "even with --overwrite" in err, err
    assert digest(real) == before
    link_after = os.lstat(written_name)  # the name that reached the input still does (not replaced)
    assert (link_after.st_ino, link_after.st_mode) == (link_before.st_ino, link_before.st_mode)


@pytest.fixture(scope="module")
def profile_bytes(sample_path) -> bytes:
    return sample_path.read_bytes()


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_report_compare_never_writes_its_profile(spelling, tmp_path, capsys, profile_bytes, sample_path):
    given, out, real = place_input(tmp_path, profile_bytes, "compare.json", spelling)
    refused(
        capsys,
        ["report", str(given), "--compare", str(sample_path), "--out", str(out), "--overwrite", "-q"],
        real,
        out / "compare.json",
    )


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_report_compare_never_writes_its_b_profile(spelling, tmp_path, capsys, profile_bytes, sample_path):
    given, out, real = place_input(tmp_path, profile_bytes, "compare.json", spelling)
    refused(
        capsys,
        ["report", str(sample_path), "--compare", str(given), "--out", str(out), "--overwrite", "-q"],
        real,
        out / "compare.json",
    )


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_report_never_writes_its_edit_set(spelling, tmp_path, capsys, sample_path):
    given, out, real = place_input(tmp_path, json.dumps(EDITS).encode(), "edits.json", spelling)
    refused(
        capsys,
        ["report", str(sample_path), "--edits", str(given), "--out", str(out), "--overwrite", "-q"],
        real,
        out / "edits.json",
    )


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_normalise_never_writes_its_input(spelling, tmp_path, capsys, profile_bytes):
    given, out, real = place_input(tmp_path, profile_bytes, "values.parquet", spelling)
    refused(capsys, ["normalise", str(given), "--out", str(out), "--overwrite", "-q"], real, out / "values.parquet")


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_synth_never_writes_its_sample(spelling, tmp_path, capsys, profile_bytes):
    given, out, real = place_input(tmp_path, profile_bytes, "x.json", spelling)
    argv = [
        "synth",
        "--blocks",
        "1",
        "--layers",
        "2",
        "--sample",
        str(given),
        "--out",
        str(out / "x.json"),
        "--overwrite",
        "-q",
    ]
    refused(capsys, argv, real, out / "x.json")


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("which", ["profile", "edit-set"])
def test_plan_write_profile_never_writes_its_inputs(which, spelling, tmp_path, capsys, profile_bytes, sample_path):
    content = profile_bytes if which == "profile" else json.dumps(EDITS).encode()
    given, out, real = place_input(tmp_path, content, "x.json", spelling)
    profile, edits = (given, tmp_path / "edits.json") if which == "profile" else (sample_path, given)
    if which == "profile":
        (tmp_path / "edits.json").write_text(json.dumps(EDITS))
    argv = ["plan", str(profile), "--edits", str(edits), "--write-profile", str(out / "x.json"), "--overwrite", "-q"]
    refused(capsys, argv, real, out / "x.json")


def test_a_different_file_is_still_replaced_with_overwrite(tmp_path, capsys, sample_path):
    """The refusal is about inputs only: an unrelated existing file is replaced as asked."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "values.parquet").write_text("old")
    shutil.copy(sample_path, tmp_path / "profile.json")
    assert main(["normalise", str(tmp_path / "profile.json"), "--out", str(out), "--overwrite", "-q"]) == 0
    assert (out / "values.parquet").read_bytes()[:4] == b"PAR1"


CSV = b"id,lower,upper,size\nb0,0,10,4\nb1,5,15,4\nb2,12,20,8\n"  # placed at capacity 12


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_solve_never_writes_its_problem(spelling, tmp_path, capsys):
    given, out, real = place_input(tmp_path, CSV, "x.csv", spelling)
    argv = ["solve", str(given), "--capacity", "12", "--out", str(out / "x.csv"), "--overwrite", "-q"]
    refused(capsys, argv, real, out / "x.csv")


def test_solve_capacity_is_a_size(tmp_path, capsys):
    """``--capacity`` is read by the one size parser: ``12B`` is 12 bytes; ``١٢`` is refused."""
    problem = tmp_path / "p.csv"
    problem.write_bytes(CSV)
    assert main(["solve", str(problem), "--capacity", "12B", "--json", "-q"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "placed"
    with pytest.raises(SystemExit) as exit_:
        main(["solve", str(problem), "--capacity", "١٢"])
    assert exit_.value.code == 2 and "expected a size such as" in capsys.readouterr().err
