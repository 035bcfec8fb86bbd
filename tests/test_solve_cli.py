"""``tilescope solve`` and the two loaders of placement problems: the JSON contract, exit codes,
``--out``, located one-line errors for bad CSV and JSON files."""

from __future__ import annotations

import csv
import io
import json

import pytest
from solver_support import BENCH, rule_violations

from tilescope.cli import main
from tilescope.loaders.minimalloc_csv import load_minimalloc_csv
from tilescope.loaders.placement_dump import load_placement_dump, looks_like_placement_dump
from tilescope.models.errors import InputError

FIXTURES = BENCH / "ipu-stack-placement"
KEYS = {
    "file",
    "kind",
    "requests",
    "verdict",
    "lower_bound",
    "height",
    "deficit_bytes",
    "proof",
    "seconds",
    "nodes",
    "placement",
}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["solve", *argv])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_dump_json_contract_and_spans(capsys):
    code, out, err = run(capsys, str(FIXTURES / "fragmented.json"), "--json", "--quiet")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert set(doc) == KEYS and doc["verdict"] == "placed" and doc["deficit_bytes"] is None
    problem = load_placement_dump(FIXTURES / "fragmented.json")
    roots = {str(root): r for r in problem.requests for root, _ in r.roots}
    assert set(doc["placement"]) == set(roots)
    # Every member of a group has the group's span; re-check the spans' starts independently.
    starts = [doc["placement"][str(r.roots[0][0])][0] for r in problem.requests]
    for r, s in zip(problem.requests, starts):
        assert all(doc["placement"][str(root)] == [s, s + r.bytes] for root, _ in r.roots)
    assert rule_violations(problem, starts) == []
    assert doc["height"] == max(e for _, e in doc["placement"].values())


def test_infeasible_exits_1_with_the_deficit(capsys):
    code, out, _ = run(capsys, str(FIXTURES / "overcapacity.json"), "--json")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "infeasible" and doc["deficit_bytes"] == 16328 and doc["height"] is None
    code, out, _ = run(capsys, str(FIXTURES / "overcapacity.json"))
    assert code == 1 and "INFEASIBLE" in out and "16,328" in out


def test_csv_placement_and_out_file(capsys, tmp_path):
    source = tmp_path / "p.csv"
    source.write_bytes(b"id,lower,upper,size\nx,0,2,4\ny,1,3,4\nz,2,4,4\n")
    out = tmp_path / "sol.csv"
    code, text, _ = run(capsys, str(source), "--capacity", "8", "--json", "--out", str(out))
    doc = json.loads(text)
    assert code == 0 and doc["verdict"] == "placed"
    assert [p["id"] for p in doc["placement"]] == ["x", "y", "z"]
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(r["id"], r["lower"], r["upper"], r["size"]) for r in rows] == [
        ("x", "0", "2", "4"),
        ("y", "1", "3", "4"),
        ("z", "2", "4", "4"),
    ]
    offsets = {r["id"]: int(r["offset"]) for r in rows}
    assert offsets == {p["id"]: p["offset"] for p in doc["placement"]}
    assert offsets["x"] != offsets["y"] and offsets["y"] != offsets["z"] and max(offsets.values()) <= 4
    # Never over the input, nor over an existing file without --overwrite.
    code, _, err = run(capsys, str(source), "--capacity", "8", "--out", str(source), "--overwrite")
    assert code == 2 and "input" in err and err.count("\n") == 1
    code, _, err = run(capsys, str(source), "--capacity", "8", "--out", str(out))
    assert code == 2 and "--overwrite" in err


def test_unknown_is_exit_1_and_says_so(capsys, tmp_path):
    code, out, _ = run(capsys, str(FIXTURES / "bank-branching.json"), "--time-limit", "0.000001")
    assert code == 1 and "UNKNOWN" in out and "not proved infeasible" in out


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (b"", "line 1"),
        (b"id,lower,size\n", "line 1"),
        (b"id,lower,upper,size\na,0,2,x\n", "line 2, column size"),
        (b"id,lower,upper,size\na,0,2,4\nb,3,3,4\n", "line 3, column upper"),
        (b"id,lower,upper,size\na,0,2,4\na,1,2,4\n", "line 3, column id"),
        (b"id,lower,upper,size\na,0,2\n", "line 2"),
    ],
)
def test_bad_csv_files_give_located_errors(capsys, tmp_path, text, where):
    path = tmp_path / "bad.csv"
    path.write_bytes(text)
    with pytest.raises(InputError) as info:
        load_minimalloc_csv(path, capacity=16)
    assert where in str(info.value) and str(path) in str(info.value)
    code, _, err = run(capsys, str(path), "--capacity", "16")
    assert code == 2 and where in err and err.count("\n") == 1 and "Traceback" not in err


def _fixture() -> dict:
    return json.loads((FIXTURES / "bank-branching.json").read_bytes())


def _set(doc: dict, path: list, value) -> dict:
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (["requests", 3, "class"], "Ipu21Bogus", "$.requests[3].class"),
        (["requests", 5, "lifetime", "first"], -1, "$.requests[5].lifetime.first"),
        (["requests", 2, "alignment"], 3, "$.requests[2].alignment"),
        (["requests", 0, "assignments"], [], "$.requests[0].assignments"),
        (["ranges", 0], [10, 5], "$.ranges[0]"),
        (["version"], 2, "$.version"),
        (["interleaved_offset"], 40000, "$.interleaved_offset"),
    ],
)
def test_bad_dumps_give_located_errors(capsys, tmp_path, path, value, where):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_set(_fixture(), path, value)))
    with pytest.raises(InputError) as info:
        load_placement_dump(bad)
    assert where in str(info.value)
    code, _, err = run(capsys, str(bad))
    assert code == 2 and where in err and err.count("\n") == 1


def test_broken_json_and_the_sniff(capsys, tmp_path):
    bad = tmp_path / "cut.json"
    data = (FIXTURES / "fragmented.json").read_bytes()
    bad.write_bytes(data[:1000])
    code, _, err = run(capsys, str(bad))
    assert code == 2 and "line 1" in err and err.count("\n") == 1
    assert looks_like_placement_dump(data) and looks_like_placement_dump(
        (FIXTURES / "bank-branching.json").read_bytes()
    )
    assert not looks_like_placement_dump(b'{"version": 3, "peak": {}, "timeline": {}}')
    assert not looks_like_placement_dump(b"id,lower,upper,size\n")
    code, _, err = run(capsys, str(FIXTURES / "fragmented.json"), "--capacity", "10")
    assert code == 2 and "--capacity" in err


def test_progress_lines_and_quiet(capsys, monkeypatch):
    import tilescope.cli.solve as solve_cli

    monkeypatch.setattr(solve_cli, "PROGRESS_AFTER", 0.0)
    code, _, err = run(capsys, str(FIXTURES / "bank-branching.json"))
    assert code == 0 and "solving bank-branching.json: search" in err
    code, _, err = run(capsys, str(FIXTURES / "bank-branching.json"), "--quiet")
    assert code == 0 and err == ""
