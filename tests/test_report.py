"""The PNG report and CSV exports (tilescope.report, `tilescope report`), checked against the sample.

Expected figures come from the sample file itself (read with json.load) or are computed by hand
from the rules of docs/formats.md; never from the code under test.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tilescope.cli import main
from tilescope.derived.opening import opened_profile
from tilescope.derived.plan_data import PlanData
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.edits import TilingEdit
from tilescope.planner.edits import apply_edits
from tilescope.report.files import build_report, write_report
from tilescope.report.tables import report_tables

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "vit_finalist5.memory_profile.json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
EDITS_84 = [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)]
# Value 84: shape [1, 729, 1152] F16, axes FromEnd(1) (1152: padding 384, block 384, 3 partitions)
# and FromEnd(2) (729: padding 2 → 730, block 2 → 365 blocks). With 18 partitions on axis 1:
# ceil(365 / 18) = 21 blocks → 42 rows; FromEnd(1): 3 blocks / 3 → 384. 1 * 42 * 384 * 2 = 32256 B,
# granule 1 (recorded shard == aligned), copies 1. Tiles: 3 * 18 * 27 = 1458.
BYTES_84_EDITED = 32256
BYTES_84_RECORDED = 62976


@pytest.fixture(scope="module")
def sample() -> dict:
    with open(SAMPLE) as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def planned():
    return opened_profile(str(SAMPLE), load_memory_profile(SAMPLE))


@pytest.fixture(scope="module")
def report(planned):
    return build_report(planned.base)


@pytest.fixture(scope="module")
def edited_report(planned):
    return build_report(PlanData(planned, apply_edits(planned.arrays, planned.plan, EDITS_84)))


def rows_of(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def live_steps(sample: dict) -> dict[int, list[int]]:
    """Value id → the steps whose live list names it (from the file)."""
    out: dict[int, list[int]] = {}
    for step in sample["timeline"]["steps"]:
        for value_id in step["live"]:
            out.setdefault(value_id, []).append(step["index"])
    return out


# ----------------------------------------------------------------------------- the files


def test_report_files(report):
    assert list(report.files) == [
        "report.png",
        "values.csv",
        "steps.csv",
        "step_47_breakdown.csv",
        "edits.json",
        "edits.csv",
        "allocations.csv",
    ]
    assert report.step == 47


def test_png_is_a_real_picture(report):
    data = report.png
    assert data.startswith(PNG_SIGNATURE)
    image = Image.open(io.BytesIO(data))
    image.load()  # decodes every row: a truncated file fails here
    assert image.format == "PNG"
    width, height = image.size
    assert 1200 <= width <= 4000 and 900 <= height <= 4000
    pixels = np.asarray(image.convert("L"))
    assert pixels.std() > 10  # something is drawn, not a blank page
    assert 100_000 < len(data) < 5_000_000


def test_values_csv_has_every_value_with_recomputed_bytes_equal_to_the_file(report, sample):
    rows = rows_of(report.files["values.csv"])
    values = sample["timeline"]["values"]
    assert len(rows) == len(values) == 176
    lives = live_steps(sample)
    for row, value in zip(rows, values):
        assert int(row["id"]) == value["id"]
        assert row["name"] == value["name"]
        assert int(row["storage_group"]) == value["storage_group"]
        assert int(row["root"]) == value["root"]
        assert json.loads(row["shape"]) == value["shape"]
        assert row["region"] == {"Ipu21Standard": "standard", "Ipu21Interleaved": "interleaved"}[value["class"]]
        assert int(row["shard_bytes"]) == value["shard_bytes"]
        assert int(row["aligned_bytes"]) == value["aligned_bytes"]
        assert int(row["bytes"]) == value["bytes"]
        assert int(row["recorded_bytes"]) == value["bytes"]
        assert f"tile_count: {row['tile_count']}," in value["layout"]
        assert f"replicas: {row['replicas']}," in value["layout"]
        steps = lives.get(value["id"])
        if steps is None:  # an alias: never live itself
            assert row["first_live_step"] == row["last_live_step"] == ""
        else:
            assert (int(row["first_live_step"]), int(row["last_live_step"])) == (min(steps), max(steps))
    assert "bytes_before_edits" not in rows[0]


def test_steps_csv_usage_equals_the_recorded_usage(report, sample):
    rows = rows_of(report.files["steps.csv"])
    steps = sample["timeline"]["steps"]
    assert len(rows) == len(steps) == 116
    for row, step in zip(rows, steps):
        assert int(row["index"]) == step["index"]
        assert int(row["source"]) == step["source"]
        assert row["operation"] == step["operation"]
        assert int(row["execution_count"]) == step["execution_count"]
        assert int(row["scratch_standard"]) == step["scratch"]["standard"]
        assert int(row["scratch_interleaved"]) == step["scratch"]["interleaved"]
        assert int(row["usage_standard"]) == step["usage"]["standard"]
        assert int(row["usage_interleaved"]) == step["usage"]["interleaved"]
        assert int(row["usage_total"]) == step["usage"]["standard"] + step["usage"]["interleaved"]
    assert "usage_total_after_edits" not in rows[0]


def test_breakdown_of_the_total_peak_step_is_its_live_values(report, sample):
    assert sample["total_peak_step"] == 47
    step = sample["timeline"]["steps"][47]
    rows = rows_of(report.files["step_47_breakdown.csv"])
    ids = [int(r["id"]) for r in rows]
    assert sorted(ids) == sorted(step["live"])
    recorded_bytes = {v["id"]: v["bytes"] for v in sample["timeline"]["values"]}
    assert [int(r["bytes"]) for r in rows] == [recorded_bytes[i] for i in ids]
    usage = step["usage"]["standard"] + step["usage"]["interleaved"]
    scratch = step["scratch"]["standard"] + step["scratch"]["interleaved"]
    assert sum(int(r["bytes"]) for r in rows) == usage - scratch
    sizes = [int(r["bytes"]) for r in rows]
    assert sizes == sorted(sizes, reverse=True)
    assert [int(r["rank"]) for r in rows] == list(range(1, len(rows) + 1))
    for r in rows:
        assert float(r["share"]) == pytest.approx(int(r["bytes"]) / usage, abs=1e-6)


def test_selected_step_breakdown(planned, sample):
    tables = report_tables(planned.base, selected_step=45)
    assert "step_45_breakdown.csv" in tables and "step_47_breakdown.csv" not in tables
    ids = {int(r["id"]) for r in rows_of(tables["step_45_breakdown.csv"])}
    assert ids == set(sample["timeline"]["steps"][45]["live"])
    assert {84, 85} <= ids  # the hand-over of storage group 83 at the standard peak


def test_without_edits_the_edit_files_are_empty(report):
    assert json.loads(report.files["edits.json"]) == []
    assert rows_of(report.files["edits.csv"]) == []


# ----------------------------------------------------------------------------- with edits


def test_values_csv_reflects_the_edit(edited_report, sample):
    rows = {int(r["id"]): r for r in rows_of(edited_report.files["values.csv"])}
    assert len(rows) == 176
    row = rows[84]
    assert int(row["bytes"]) == int(row["shard_bytes"]) == BYTES_84_EDITED
    assert int(row["bytes_before_edits"]) == int(row["recorded_bytes"]) == BYTES_84_RECORDED
    assert (int(row["tile_count"]), int(row["replicas"])) == (1458, 27)
    assert row["partitions"] == "FromEnd(1)=3 FromEnd(2)=18"
    assert row["edited"] == "true"
    for value in sample["timeline"]["values"]:
        if value["id"] != 84:  # value 84 has no aliases: nothing else changes
            assert int(rows[value["id"]]["bytes"]) == value["bytes"]
            assert rows[value["id"]]["edited"] == "false"


def test_steps_csv_reflects_the_edit(edited_report, sample):
    saving = BYTES_84_RECORDED - BYTES_84_EDITED
    live_84 = set(live_steps(sample)[84])
    assert live_84 == {44, 45}
    rows = rows_of(edited_report.files["steps.csv"])
    for row, step in zip(rows, sample["timeline"]["steps"]):
        assert int(row["usage_standard"]) == step["usage"]["standard"]  # before the edit
        after = step["usage"]["standard"] - (saving if step["index"] in live_84 else 0)  # value 84 is standard
        assert int(row["usage_standard_after_edits"]) == after
        assert int(row["usage_interleaved_after_edits"]) == step["usage"]["interleaved"]
        assert int(row["usage_total_after_edits"]) == after + step["usage"]["interleaved"]


def test_edit_files_hold_the_edit_set(edited_report):
    assert json.loads(edited_report.files["edits.json"]) == [
        {"value": 84, "axis": 1, "partitions": 18},
        {"value": 84, "replicas": 27},
    ]
    rows = rows_of(edited_report.files["edits.csv"])
    assert [(r["value"], r["axis"], r["partitions"], r["replicas"], r["applied_to"]) for r in rows] == [
        ("84", "1", "18", "", "84"),
        ("84", "", "", "27", "84"),
    ]


def test_edited_breakdown_at_the_hand_over_step(planned, sample):
    tables = report_tables(PlanData(planned, apply_edits(planned.arrays, planned.plan, EDITS_84)), selected_step=45)
    rows = {int(r["id"]): r for r in rows_of(tables["step_45_breakdown.csv"])}
    assert int(rows[84]["bytes"]) == BYTES_84_EDITED and int(rows[84]["bytes_before_edits"]) == BYTES_84_RECORDED
    step = sample["timeline"]["steps"][45]
    total = sum(int(r["bytes"]) for r in rows.values())
    scratch = step["scratch"]["standard"] + step["scratch"]["interleaved"]
    assert total == step["usage"]["standard"] + step["usage"]["interleaved"] - scratch - (
        BYTES_84_RECORDED - BYTES_84_EDITED
    )


def test_edited_png_is_a_different_picture(edited_report, report):
    assert edited_report.png.startswith(PNG_SIGNATURE)
    edited = np.asarray(Image.open(io.BytesIO(edited_report.png)).convert("L"), dtype=np.int16)
    plain = np.asarray(Image.open(io.BytesIO(report.png)).convert("L"), dtype=np.int16)
    assert edited.shape == plain.shape
    assert (edited != plain).mean() > 0.001  # the ghost, the before → after figures, the edit list


# ----------------------------------------------------------------------------- hostile text


def hostile_copy(sample: dict, tmp_path: Path, names: dict[int, str]) -> Path:
    data = json.loads(json.dumps(sample))
    for value in data["timeline"]["values"]:
        if value["id"] in names:
            value["name"] = names[value["id"]]
    path = tmp_path / "hostile.memory_profile.json"
    path.write_text(json.dumps(data))
    return path


def test_formula_in_a_name_is_neutralised_and_mathtext_is_not_parsed(sample, tmp_path):
    formula = '=HYPERLINK("http://x")'
    # Value 85 is the largest value live at step 47: its name is drawn in the breakdown chart.
    # Unbalanced TeX: with mathtext on, matplotlib's parser would raise while drawing.
    tex = r"$\undefinedcommand{$ @SUM(A1)"
    path = hostile_copy(sample, tmp_path, {0: formula, 85: tex, 1: "-2+3"})
    profile = load_memory_profile(path)
    report = build_report(opened_profile("hostile", profile).base)
    assert report.png.startswith(PNG_SIGNATURE)
    rows = {int(r["id"]): r for r in rows_of(report.files["values.csv"])}
    assert rows[0]["name"] == "'" + formula
    assert rows[1]["name"] == "'-2+3"
    assert rows[85]["name"] == tex  # starts with '$': nothing to neutralise
    assert int(rows[0]["bytes"]) == 5120  # numbers stay numbers
    raw = report.files["values.csv"].decode()
    assert '\n0,"\'=HYPERLINK(""http://x"")"' in raw.replace("\r\n", "\n")
    breakdown = {int(r["id"]): r for r in rows_of(report.files["step_47_breakdown.csv"])}
    assert breakdown[85]["name"] == tex


# ----------------------------------------------------------------------------- writing and the CLI


def test_write_report_never_overwrites_unless_asked(report, tmp_path):
    out = tmp_path / "out"
    written = write_report(report, out)
    assert sorted(p.name for p in written) == sorted(report.files)
    assert (out / "report.png").read_bytes() == report.png
    (out / "values.csv").unlink()
    (out / "steps.csv").write_text("mine")
    from tilescope.models.errors import InputError

    with pytest.raises(InputError, match="exists already"):
        write_report(report, out)
    assert not (out / "values.csv").exists()  # nothing written when any target exists
    assert (out / "steps.csv").read_text() == "mine"
    write_report(report, out, overwrite=True)
    assert (out / "steps.csv").read_bytes() == report.files["steps.csv"]


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(["report", *argv])
    return code, capsys.readouterr().err


def test_cli_writes_the_report(tmp_path, capsys, sample):
    out = tmp_path / "report"
    edits = tmp_path / "edits.json"
    edits.write_text(json.dumps([{"value": 84, "axis": 1, "partitions": 18}, {"value": 84, "replicas": 27}]))
    code, err = run_cli(capsys, str(SAMPLE), "--edits", str(edits), "--step", "45", "--out", str(out))
    assert (code, err) == (0, "")
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["report.png", "values.csv", "steps.csv", "step_45_breakdown.csv", "edits.json", "edits.csv", "allocations.csv"]
    )
    assert (out / "report.png").read_bytes().startswith(PNG_SIGNATURE)
    assert json.loads((out / "edits.json").read_text()) == json.loads(edits.read_text())
    rows = {int(r["id"]): r for r in rows_of((out / "values.csv").read_bytes())}
    assert int(rows[84]["bytes"]) == BYTES_84_EDITED


def test_cli_refuses_to_overwrite(tmp_path, capsys):
    out = tmp_path / "report"
    assert run_cli(capsys, str(SAMPLE), "--out", str(out))[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    code, err = run_cli(capsys, str(SAMPLE), "--step", "3", "--out", str(out))
    assert code == 2
    assert err.count("\n") == 1 and "--overwrite" in err and "report.png" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no step_3 file either
    code, err = run_cli(capsys, str(SAMPLE), "--step", "3", "--out", str(out), "--overwrite")
    assert (code, err) == (0, "")
    assert (out / "step_3_breakdown.csv").exists()


@pytest.mark.parametrize(
    "make_args, message",
    [
        (lambda t: [str(SAMPLE), "--step", "116", "--out", str(t / "o")], "expected a step index in 0..115, found 116"),
        (lambda t: [str(SAMPLE), "--step", "-1", "--out", str(t / "o")], "found -1"),
        (lambda t: [str(t / "missing.json"), "--out", str(t / "o")], "missing.json"),
        (
            lambda t: [str(SAMPLE), "--edits", str(t / "bad_edits.json"), "--out", str(t / "o")],
            "partitions must not exceed",
        ),
        (
            lambda t: [str(SAMPLE), "--edits", str(t / "not_json.json"), "--out", str(t / "o")],
            "not_json.json: at byte 2 (line 1, column 3): expected more JSON",
        ),
        (lambda t: [str(SAMPLE), "--out", str(t / "a_file")], "a_file: is not a directory"),
    ],
    ids=["step-too-large", "step-negative", "missing-file", "invalid-edit", "edit-file-not-json", "out-is-a-file"],
)
def test_cli_bad_input_exits_2_with_one_line(tmp_path, capsys, make_args, message):
    (tmp_path / "bad_edits.json").write_text(json.dumps([{"value": 84, "axis": 1, "partitions": 366}]))
    (tmp_path / "not_json.json").write_text("[{")
    (tmp_path / "a_file").write_text("")
    code, err = run_cli(capsys, *make_args(tmp_path))
    assert code == 2
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "o").exists()


def test_cli_requires_out(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(SAMPLE)])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1
