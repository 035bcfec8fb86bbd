"""``tilescope compare`` and ``tilescope report A --compare B``: the JSON contract, the text form,
exit codes and one-line errors, and the compare report's files. Expected figures come from the raw
JSON (tests/compare_support.py), never from the code under test."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from compare_support import expected_comparison, with_edits, write
from PIL import Image

from tilescope.cli import main
from tilescope.models.format import fmt_bytes, fmt_signed_bytes

EDITS = [(84, 1, 18), (84, "replicas", 27)]
EDIT_SET = [{"value": 84, "axis": 1, "partitions": 18}, {"value": 84, "replicas": 27}]
SIDE_FIELDS = {
    "file",
    "scope",
    "peak",
    "effective_peak_bytes",
    "fits_budget",
    "standard_peak_step",
    "interleaved_peak_step",
    "total_peak_step",
}
VALUE_FIELDS = {"name", "a_id", "b_id", "a_bytes", "b_bytes", "delta_bytes", "a_tiling", "b_tiling", "changed"}


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse refusals
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def files(tmp_path_factory, raw) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("cli")
    edits = folder / "edits.json"
    edits.write_text(json.dumps(EDIT_SET))
    bad = folder / "bad_edits.json"
    bad.write_text(json.dumps([{"value": 84, "axis": 1, "partitions": 100000}]))
    return {
        "edited": write(with_edits(raw, EDITS), folder / "edited.memory_profile.json"),
        "edits": edits,
        "bad_edits": bad,
    }


def test_json_has_every_field_of_the_contract(capsys, sample_path, files, raw):
    code, out, _ = run_cli(capsys, "compare", str(sample_path), str(files["edited"]), "--json")
    assert code == 0
    result = json.loads(out)
    expected = expected_comparison(raw, with_edits(raw, EDITS))
    assert {"a", "b", "delta", "steps", "values", "attribution", "unmatched_values", "unmatched_steps"} <= set(result)
    for key in ("a", "b"):
        assert set(result[key]) >= SIDE_FIELDS
        e = expected[key]
        assert result[key]["peak"] == {"standard": e["standard"], "interleaved": e["interleaved"], "total": e["total"]}
        assert result[key]["effective_peak_bytes"] == e["effective_peak_bytes"]
        assert result[key]["fits_budget"] == e["fits_budget"]
        assert [result[key][f"{k}_peak_step"] for k in ("standard", "interleaved", "total")] == [
            e[f"{k}_peak_step"] for k in ("standard", "interleaved", "total")
        ]
    assert result["a"]["file"] == str(sample_path) and result["b"]["file"] == str(files["edited"])
    assert result["delta"] == expected["delta"]
    assert result["steps"] == "same"
    assert {(v["name"], v["a_id"], v["b_id"]): v["delta_bytes"] for v in result["values"]} == expected["changed"]
    for v in result["values"]:
        assert set(v) >= VALUE_FIELDS
        assert v["delta_bytes"] == v["b_bytes"] - v["a_bytes"]
    for figure, a in result["attribution"].items():
        assert {"a_step", "b_step", "parts", "scratch_delta", "exchange_rows_delta"} <= set(a)
        assert (
            sum(p["bytes"] for p in a["parts"]) + a["scratch_delta"] + a["exchange_rows_delta"]
            == expected["delta"][figure]
        )
    assert result["unmatched_values"] == {"a": [], "b": []} and result["unmatched_steps"] == {"a": [], "b": []}


def test_recorded_figures_are_not_copied(capsys, sample_path, files, raw, tmp_path):
    """A file whose recorded peaks lie: the comparison shows the recomputed ones."""
    lying = json.loads(json.dumps(raw))
    lying["peak"]["standard"] += 1000
    lying["standard_peak_step"] = 3
    path = write(lying, tmp_path / "lying.json")
    code, out, _ = run_cli(capsys, "compare", str(path), str(sample_path), "--json")
    result = json.loads(out)
    assert (
        code == 0
        and result["a"]["peak"]["standard"] == raw["peak"]["standard"]
        and result["a"]["standard_peak_step"] == 45
    )
    assert result["delta"]["standard"] == 0


def test_edits_b_without_b_compares_a_with_a_edited(capsys, sample_path, files):
    code, out, _ = run_cli(capsys, "compare", str(sample_path), "--edits-b", str(files["edits"]), "--json")
    in_memory = json.loads(out)
    code_file, out_file, _ = run_cli(capsys, "compare", str(sample_path), str(files["edited"]), "--json")
    from_file = json.loads(out_file)
    assert code == code_file == 0
    assert in_memory["b"]["edits"] == EDIT_SET and in_memory["b"]["file"] == str(sample_path)
    for result in (in_memory, from_file):
        del result["b"]["file"], result["b"]["edits"]
    assert in_memory == from_file


def test_edits_a_reverses_the_comparison(capsys, sample_path, files):
    code, out, _ = run_cli(
        capsys,
        "compare",
        str(sample_path),
        "--edits-a",
        str(files["edits"]),
        "--edits-b",
        str(files["edits"]),
        "--json",
    )
    assert code == 0 and json.loads(out)["delta"] == {
        "standard": 0,
        "interleaved": 0,
        "total": 0,
        "effective_peak_bytes": 0,
    }
    code, out, _ = run_cli(capsys, "compare", str(files["edited"]), str(sample_path), "--json")
    assert code == 0 and json.loads(out)["delta"]["standard"] == 20352


def test_text_form(capsys, sample_path, files):
    code, out, _ = run_cli(capsys, "compare", str(sample_path), str(files["edited"]))
    assert code == 0
    lines = out.splitlines()
    standard = next(line for line in lines if line.startswith("standard peak"))
    assert fmt_bytes(206032) in standard and fmt_bytes(185680) in standard and fmt_signed_bytes(-20352) in standard
    assert "steps: same" in out
    assert any("operation 17 result 0 [84 → 84]" in line and fmt_signed_bytes(-30720) in line for line in lines)
    assert f"= {fmt_signed_bytes(-20352)}" in out  # the standard attribution's sum


@pytest.mark.parametrize(
    "argv, words",
    [
        (["compare", "{sample}"], "--edits-b"),
        (["compare", "{sample}", "/no/such/file.json"], "/no/such/file.json"),
        (["compare", "{sample}", "--edits-b", "{bad_edits}"], "value 84 axis 1"),
        (["compare", "{sample}", "--edits-b", "/no/such/edits.json"], "/no/such/edits.json"),
        (["compare", "{sample}", "{sample}", "--top", "-1"], "--top"),
        (["compare"], "A"),
    ],
)
def test_refusals_exit_2_with_one_line(argv, words, capsys, sample_path, files):
    argv = [a.format(sample=sample_path, bad_edits=files["bad_edits"]) for a in argv]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err and "Traceback" not in err


# ----------------------------------------------------------------------------- report --compare


def rows_of(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))


def test_report_compare_writes_its_files(capsys, sample_path, files, raw, tmp_path):
    out = tmp_path / "report"
    code, stdout, _ = run_cli(capsys, "report", str(sample_path), "--compare", str(files["edited"]), "--out", str(out))
    assert code == 0
    names = {"compare.png", "compare_values.csv", "compare_attribution.csv", "compare_steps.csv", "compare.json"}
    assert {Path(line).name for line in stdout.splitlines()} == names == {p.name for p in out.iterdir()}
    expected = expected_comparison(raw, with_edits(raw, EDITS))
    # Attribution: per figure, parts + scratch + exchange rows = the peak row's delta = the expected delta.
    attribution = rows_of((out / "compare_attribution.csv").read_bytes())
    for figure in ("total", "standard", "interleaved"):
        rows = [r for r in attribution if r["figure"] == figure]
        (peak,) = [r for r in rows if r["kind"] == "peak"]
        assert int(peak["delta_bytes"]) == expected["delta"][figure]
        assert sum(int(r["delta_bytes"]) for r in rows if r["kind"] != "peak") == expected["delta"][figure]
        parts = {
            (r["name"], int(r["a_id"]), int(r["b_id"])): int(r["delta_bytes"]) for r in rows if r["kind"] == "part"
        }
        assert parts == expected["attribution"][figure]["parts"]
    values = rows_of((out / "compare_values.csv").read_bytes())
    assert {(r["name"], int(r["a_id"]), int(r["b_id"])): int(r["delta_bytes"]) for r in values} == expected["changed"]
    steps = rows_of((out / "compare_steps.csv").read_bytes())
    assert len(steps) == len(raw["timeline"]["steps"])
    edited = with_edits(raw, EDITS)["timeline"]["steps"]
    assert [int(r["delta_standard"]) for r in steps] == [
        b["usage"]["standard"] - a["usage"]["standard"] for a, b in zip(raw["timeline"]["steps"], edited)
    ]
    with Image.open(out / "compare.png") as image:
        assert image.size == (1800, 1700)
        assert (
            len(image.convert("RGB").resize((90, 85)).getcolors(maxcolors=90 * 85)) > 20
        )  # a drawing, not a blank page
    assert json.loads((out / "compare.json").read_text())["delta"] == expected["delta"]


def test_report_compare_with_edits_only_and_its_refusals(capsys, sample_path, files, tmp_path):
    out = tmp_path / "report"
    code, _, _ = run_cli(capsys, "report", str(sample_path), "--compare-edits", str(files["edits"]), "--out", str(out))
    assert code == 0
    assert json.loads((out / "compare.json").read_text())["delta"]["standard"] == -20352
    code, _, err = run_cli(
        capsys, "report", str(sample_path), "--compare-edits", str(files["edits"]), "--out", str(out)
    )
    assert code == 2 and err.count("\n") == 1 and "--overwrite" in err
    code, _, err = run_cli(
        capsys, "report", str(sample_path), "--compare", str(sample_path), "--step", "3", "--out", str(tmp_path / "x")
    )
    assert code == 2 and err.count("\n") == 1 and "--step" in err
