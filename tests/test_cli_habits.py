"""The command line's habits: ``--version``, ``--quiet``, usage errors that point at ``--help``,
progress in logs, ``--json`` on every command a script reads, one number format, file-system errors
without JSON paths, and outputs created with the permissions of a normal file."""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tilescope import cli
from tilescope.cli import progress as progress_module
from tilescope.models.edits import TilingEdit, save_edit_set
from tilescope.report.csv_safe import write_csv
from tilescope.synth import SAMPLE_PATH, write_synthetic_profile


def kib(n: int) -> str:
    """The byte format, written out independently of models.format."""
    return f"{n:,} B ({n / 1024:,.1f} KiB)"


@pytest.fixture
def sample(tmp_path) -> Path:
    path = tmp_path / "in" / "vit.memory_profile.json"
    path.parent.mkdir()
    shutil.copyfile(SAMPLE_PATH, path)
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:  # argparse's exits (usage errors, --version)
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


# ----------------------------------------------------------------------------- version, usage, quiet


def test_version_is_the_installed_distributions(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out == f"tilescope {importlib.metadata.version('tilescope')}\n"


@pytest.mark.parametrize(
    "argv, command",
    [
        (["plan", "--bogus"], "tilescope plan"),
        (["plan"], "tilescope plan"),
        (["synth", "--blocks", "0", "--out", "x.json"], "tilescope synth"),
        (["serve", "--port", "70000"], "tilescope serve"),
        (["cache", "wipe"], "tilescope cache"),
        (["frobnicate"], "tilescope"),
        ([], "tilescope"),
    ],
)
def test_usage_errors_are_one_line_that_points_at_help(capsys, argv, command):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"{command}: ")
    assert err.endswith(f"; try '{command} --help'\n")


def test_quiet_prints_results_but_no_confirmations(sample, tmp_path, capsys, monkeypatch, raw):
    monkeypatch.setattr(progress_module, "LARGE_FILE_BYTES", 0)  # progress would show for this file
    assert run(capsys, "--quiet", "check", str(sample)) == (0, "", "")
    assert run(capsys, "check", "-q", str(sample)) == (0, "", "")
    assert run(capsys, "normalise", str(sample), "--out", str(tmp_path / "pq"), "--quiet") == (0, "", "")
    assert sorted(p.name for p in (tmp_path / "pq").iterdir()) == sorted(
        f"{t}.parquet" for t in ("profile", "values", "axes", "steps", "live_intervals")
    )
    assert run(capsys, "-q", "report", str(sample), "--out", str(tmp_path / "report")) == (0, "", "")
    assert (tmp_path / "report" / "report.png").exists()
    assert run(capsys, "synth", "--blocks", "1", "--layers", "1", "--out", str(tmp_path / "s.json"), "-q") == (
        0,
        "",
        "",
    )
    code, out, err = run(capsys, "-q", "plan", "--json", str(sample))  # what was asked for still comes
    assert code == 0 and err == "" and json.loads(out)["peak"]["total"] == raw["peak"]["total"]
    # without --quiet the same commands confirm what they did (and show progress: stderr is a log here)
    code, out, err = run(capsys, "check", str(sample))
    assert code == 0 and out.startswith("ok: ") and "loading vit.memory_profile.json: done 100%" in err


# ----------------------------------------------------------------------------- progress


def stages_of(err: str) -> list[str]:
    assert "\r" not in err
    return [
        re.match(r"^loading vit\.memory_profile\.json: (.+) \d+% \(\d+\.\d s\)$", line).group(1)
        for line in err.splitlines()
    ]


def test_progress_in_a_log_is_one_line_per_stage_in_order(sample, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "LARGE_FILE_BYTES", 0)
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))  # a first open, then a cached one
    code, _, err = run(capsys, "summary", str(sample))
    assert code == 0
    # "reading": the open path reads the bytes once to tell the kind (derived.opening.recognise)
    assert stages_of(err) == [
        "hashing",
        "reading",
        "decoding JSON",
        "values and layouts",
        "live lists",
        "steps",
        "writing cache",
        "done",
    ]
    code, _, err = run(capsys, "summary", str(sample))  # now from the cache
    assert code == 0 and stages_of(err) == ["hashing", "reading cache", "done"]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_an_error_never_continues_a_progress_line(tmp_path, monkeypatch):
    broken = tmp_path / "broken.memory_profile.json"
    broken.write_bytes(SAMPLE_PATH.read_bytes()[:60_000])
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert cli.main(["check", str(broken)]) == 2
    text = terminal.getvalue()
    assert "loading broken.memory_profile.json: hashing" in text  # the progress line was shown ...
    before, error = text.rsplit("\r", 1)
    assert before.split("\r")[-1].strip() == ""  # ... and cleared
    assert error.startswith(f"tilescope: {broken}: ") and error.endswith("\n") and error.count("\n") == 1


# ----------------------------------------------------------------------------- --json


def test_check_json_lists_mismatches_as_objects(sample, tmp_path, capsys, raw):
    code, out, _ = run(capsys, "check", "--json", str(sample))
    assert code == 0
    assert json.loads(out) == {
        "ok": True,
        "values": len(raw["timeline"]["values"]),
        "steps": len(raw["timeline"]["steps"]),
        "mismatches": [],
        "violations": [],
    }
    data = json.loads(sample.read_bytes())
    step = 10
    recorded = data["timeline"]["steps"][step]["usage"]["interleaved"]
    data["timeline"]["steps"][step]["usage"]["interleaved"] = recorded + 64
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    code, out, _ = run(capsys, "check", "--json", str(edited))
    found = json.loads(out)
    assert code == 1 and found["ok"] is False
    assert {
        "scope": "step",
        "key": step,
        "field": "usage.interleaved",
        "recorded": recorded + 64,
        "recomputed": recorded,
    } in found["mismatches"]
    code, out, err = run(capsys, "check", str(edited))
    assert (
        code == 1 and f"step {step}: usage.interleaved recorded {kib(recorded + 64)}, recomputed {kib(recorded)}" in out
    )
    n = len(found["mismatches"])
    assert err.endswith(f"{n} mismatch{'es' if n != 1 else ''}, 0 invariant violations\n")


def test_report_synth_and_advise_json(sample, tmp_path, capsys, raw):
    code, out, _ = run(capsys, "report", str(sample), "--out", str(tmp_path / "r"), "--json")
    report = json.loads(out)
    assert code == 0 and report["step"] == raw["total_peak_step"] and report["source"] == str(sample)
    assert sorted(report["files"]) == sorted(str(p) for p in (tmp_path / "r").iterdir())

    out_file = tmp_path / "synth.json"
    code, out, _ = run(capsys, "synth", "--blocks", "2", "--layers", "3", "--out", str(out_file), "--json")
    synth = json.loads(out)
    assert code == 0 and synth == {
        "path": str(out_file),
        "size_bytes": out_file.stat().st_size,
        "blocks": 2,
        "layers": 3,
        "gaps": False,
    }
    assert len(json.loads(out_file.read_bytes())["timeline"]["steps"]) == 2 * len(raw["timeline"]["steps"])

    code, out, _ = run(capsys, "advise", str(sample), "--json", "--limit", "3")
    advice = json.loads(out)
    assert code == 0 and advice["peak_bytes"] == raw["peak"]["total"] and advice["peak_step"] == raw["total_peak_step"]


# ----------------------------------------------------------------------------- one number format


def test_summary_plan_and_advise_write_bytes_one_way(sample, capsys, raw):
    code, out, _ = run(capsys, "summary", str(sample))
    assert code == 0
    assert f"  budget_bytes: {kib(raw['budget_bytes'])}\n" in out  # was "586960"
    assert f"  peak.total: {kib(raw['peak']['total'])}\n" in out
    assert f"  tile_count: {raw['tile_count']:,}\n" in out and f"  total_peak_step: {raw['total_peak_step']}\n" in out

    code, out, _ = run(capsys, "plan", str(sample), "--edit", "84:1=18", "--edit", "84:replicas=27")
    assert code == 0
    assert f"budget            {kib(raw['budget_bytes'])}; interleaved {kib(raw['interleaved_budget_bytes'])}" in out
    unchanged = raw["peak"]["interleaved"]
    assert (
        f"interleaved peak: {kib(unchanged)} at step {raw['interleaved_peak_step']} → {kib(unchanged)} at step {raw['interleaved_peak_step']} (±0 B)"
        in out
    )
    lowered = re.search(r"^standard peak: .* \((.)([\d,]+) B \(.([\d.,]+) KiB\)\)$", out, re.M)
    assert lowered and lowered.group(1) == "−"  # U+2212, as in the app
    assert "-" not in lowered.group(0).split("(")[-2]

    code, out, _ = run(capsys, "advise", str(sample), "--limit", "2")
    lines = out.splitlines()
    assert lines[0] == f"total peak {kib(raw['peak']['total'])} at step {raw['total_peak_step']}; 2 verified candidates"
    for line in lines[1:]:
        assert ": →" not in line
        assert re.fullmatch(
            r"  \d\. value \d+: axis \d+ \(\w+\(\d+\)\) partitions \d+ → \d+; total peak becomes "
            r"[\d,]+ B \([\d.,]+ KiB\) at step \d+ \(−[\d,]+ B \(−[\d.,]+ KiB\)\)",
            line,
        ), line


def test_synth_counts_read_as_english(tmp_path, capsys):
    code, out, _ = run(capsys, "synth", "--blocks", "1", "--layers", "1", "--out", str(tmp_path / "one.json"))
    assert code == 0 and out.endswith(", 1 block of 1 layer\n")


# ----------------------------------------------------------------------------- files


def test_synth_never_replaces_a_file_unless_asked(tmp_path, capsys):
    out = tmp_path / "mine.json"
    out.write_text("precious")
    code, stdout, err = run(capsys, "synth", "--blocks", "1", "--layers", "1", "--out", str(out))
    assert code == 2 and stdout == "" and err == f"tilescope: {out}: exists already (pass --overwrite to replace it)\n"
    assert out.read_text() == "precious"
    code, _, _ = run(capsys, "synth", "--blocks", "1", "--layers", "1", "--out", str(out), "--overwrite")
    assert code == 0 and json.loads(out.read_bytes())["version"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.json"]  # no temporary left behind


@pytest.mark.parametrize(
    "argv, where",
    [
        (lambda t: ["check", str(t / "missing.json")], "missing.json: cannot read it: No such file or directory"),
        (lambda t: ["report", str(SAMPLE_PATH), "--out", str(t / "a_file")], "a_file: is not a directory"),
        (lambda t: ["normalise", str(SAMPLE_PATH), "--out", str(t / "a_file")], "a_file: is not a directory"),
        (
            lambda t: ["plan", str(SAMPLE_PATH), "--edits", str(t / "no_edits.json")],
            "no_edits.json: cannot read it: No such file or directory",
        ),
        (
            lambda t: ["synth", "--blocks", "1", "--layers", "1", "--out", str(t / "no_dir" / "s.json")],
            "s.json: cannot write it: No such file or directory",
        ),
        (
            lambda t: ["synth", "--sample", str(t / "nothing.json"), "--out", str(t / "s.json")],
            "nothing.json: cannot read it: No such file or directory",
        ),
    ],
    ids=[
        "missing-input",
        "report-into-a-file",
        "normalise-into-a-file",
        "missing-edits",
        "synth-no-folder",
        "synth-missing-sample",
    ],
)
def test_file_system_errors_name_the_file_not_a_json_path(tmp_path, capsys, argv, where):
    (tmp_path / "a_file").write_text("")
    code, _, err = run(capsys, *argv(tmp_path))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("tilescope: ") and err.rstrip("\n").endswith(where)
    assert "at $" not in err


@contextlib.contextmanager
def umask(mask: int):
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def modes(paths) -> dict[str, int]:
    return {Path(p).name: stat.S_IMODE(os.stat(p).st_mode) for p in paths}


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_every_output_has_the_mode_of_a_normal_file(sample, tmp_path, capsys, monkeypatch, mask, mode):
    cache = tmp_path / "cache"
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(cache))
    with umask(mask):
        plain = tmp_path / "plain.txt"
        plain.write_text("what open() gives")  # the reference
        assert modes([plain]) == {"plain.txt": mode}
        assert cli.main(["normalise", str(sample), "--out", str(tmp_path / "pq")]) == 0
        assert cli.main(["report", str(sample), "--out", str(tmp_path / "report")]) == 0
        assert cli.main(["synth", "--blocks", "1", "--layers", "1", "--out", str(tmp_path / "synth.json")]) == 0
        save_edit_set(tmp_path / "edits.json", [TilingEdit(84, replicas=27)])
        import pyarrow as pa

        write_csv(pa.table({"name": ["x"]}), tmp_path / "one.csv")
        write_synthetic_profile(tmp_path / "lib.json", 1, 1)
    capsys.readouterr()
    written = [
        *(tmp_path / "pq").iterdir(),
        *(tmp_path / "report").iterdir(),
        tmp_path / "synth.json",
        tmp_path / "edits.json",
        tmp_path / "one.csv",
        tmp_path / "lib.json",
        *(p for p in cache.rglob("*") if p.is_file()),
    ]
    assert {".parquet", ".png", ".csv", ".json", ".arrow"} <= {p.suffix for p in written}
    assert {name: m for name, m in modes(written).items() if m != mode} == {}


def test_the_cli_runs_as_a_module_and_as_a_script(sample):
    """``python -m tilescope`` and the ``tilescope`` script are the same command."""
    module = subprocess.run([sys.executable, "-m", "tilescope", "--version"], capture_output=True, text=True)
    script = Path(sys.executable).with_name("tilescope")
    assert module.returncode == 0 and module.stdout == f"tilescope {importlib.metadata.version('tilescope')}\n"
    if script.exists():
        assert subprocess.run([str(script), "--version"], capture_output=True, text=True).stdout == module.stdout
