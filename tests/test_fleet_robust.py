"""``tilescope batch``, ``fleet`` and ``regress`` on hostile trees and damaged datasets (issue #24,
fleet items) and the command line's promises (issue #25): a file replaced while its task runs,
damaged datasets (read refused in one line, repaired by the next batch), FIFOs, odd inputs
recorded with why, a consistently edited dataset, dataset paths holding ':', exit codes, --quiet,
compiler-named files.

Expected figures come from the raw JSON (``compare_support``: docs/formats.md §2 written out
again) or from hashlib over the bytes written; datasets are compared with pyarrow alone
(``fleet_support.dataset_content``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from pathlib import Path

import profile_generator as gen
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from compare_support import peaks_of, with_edits, write
from fleet_support import (
    PROFILE_SAMPLE,
    SEARCH_SAMPLE,
    dataset_content,
    local_batch,
    run_cli,
    tilescope,
    write_compiler_outputs,
)
from regress_support import BASE, HEAD, VIT

from tilescope.fleet.task import normalise_file
from tilescope.models.schemas import SCHEMA_VERSION
from tilescope.synth import write_synthetic_profile

REPO = Path(__file__).resolve().parent.parent
__all__ = ["local_batch"]  # the session fixture, used by name


def content_hash(data: bytes) -> str:
    return f"{hashlib.sha256(data).hexdigest()}-v{SCHEMA_VERSION}"


def small_tree(root: Path) -> dict[str, dict]:
    """Two nightly folders of small synthetic profiles; path → raw JSON."""
    raws = {}
    for rel, (blocks, layers) in {
        "2024-05-01/a.memory_profile.json": (1, 2),
        "2024-05-01/b.memory_profile.json": (2, 2),
        "2024-05-02/a.memory_profile.json": (1, 3),
        "2024-05-02/deep/c.memory_profile.json": (2, 3),
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        write_synthetic_profile(root / rel, blocks, layers)
        raws[rel] = json.loads((root / rel).read_text())
    return raws


def batch_json(root, dataset, *extra) -> tuple[int, dict, str]:
    code, out, err = run_cli("batch", root, "--out", dataset, "--workers", "1", "--json", *extra)
    return code, (json.loads(out) if out else {}), err


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A small tree and the dataset one batch wrote of it."""
    base = tmp_path_factory.mktemp("robust")
    root, dataset = base / "tree", base / "dataset"
    raws = small_tree(root)
    code, report, err = batch_json(root, dataset)
    assert code == 0 and report["processed"] == 4, err
    return root, dataset, raws


@pytest.fixture
def dataset_copy(reference, tmp_path) -> Path:
    """A copy of the reference dataset that a test may damage."""
    copy = tmp_path / "ds"
    shutil.copytree(reference[1], copy)
    return copy


def folders(root: Path, *names: str) -> None:
    for name in names:
        (root / name).mkdir(parents=True)


def one_line_exit_2(*args) -> str:
    code, out, err = run_cli(*args)
    assert (code, out) == (2, "") and err.count("\n") == 1 and "Traceback" not in err, (code, out, err)
    return err


# ----------------------------------------------------------------------------- #24.3


def test_a_file_replaced_while_its_task_runs_is_recorded_with_the_content_it_parsed(tmp_path):
    """60 trials while another thread swaps the file between two contents, by atomic rename and by
    rewriting in place: every loaded row's hash and peaks are of one and the same content."""
    contents = []
    for blocks in (1, 2):
        path = tmp_path / f"c{blocks}.json"
        write_synthetic_profile(path, blocks, 2)
        data = path.read_bytes()
        raw = json.loads(data)
        contents.append((data, content_hash(data), (len(raw["timeline"]["values"]), raw["peak"]["total"])))
    assert contents[0][2] != contents[1][2]
    root = tmp_path / "root"
    root.mkdir()
    target = root / "m.memory_profile.json"
    target.write_bytes(contents[0][0])
    stop = threading.Event()

    def swap() -> None:
        k = 0
        while not stop.is_set():
            data = contents[k % 2][0]
            if k % 4 < 2:  # atomic rename
                (root / ".next").write_bytes(data)
                os.replace(root / ".next", target)
            else:  # rewritten in place
                with open(target, "r+b") as handle:
                    handle.write(data)
                    handle.truncate()
            k += 1

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    rows = []
    try:
        for _ in range(60):
            item = {"path": target.name, "fs_path": target.name, "previous": None}
            rows.append(normalise_file(str(root), item, "b", "f", False, []))
    finally:
        stop.set()
        swapper.join()
    figures = {h: f for _, h, f in contents}
    loaded = [r for r in rows if r["status"] == "loaded"]
    assert loaded
    for row in loaded:  # a torn read fails to parse (a failed row); a loaded one is one content
        assert (
            row["content_hash"] in figures and (row["n_values"], row["total_peak"]) == figures[row["content_hash"]]
        ), row


# ----------------------------------------------------------------------------- #24.4, #24.5


def _first(dataset: Path, pattern: str) -> Path:
    return sorted(dataset.glob(pattern))[0]


def _other_schema(path: Path) -> None:
    pq.write_table(pa.table({"x": [1, 2]}), path)


DAMAGES = {
    "profiles garbage": lambda d: (
        _first(d, "profiles/folder=2024-05-01/*.parquet").write_bytes(b"garbage"),
        "profiles/folder=2024-05-01",
    ),
    "profiles emptied": lambda d: (
        _first(d, "profiles/folder=2024-05-02/*.parquet").write_bytes(b""),
        "profiles/folder=2024-05-02",
    ),
    "profiles of other columns": lambda d: (
        _other_schema(_first(d, "profiles/folder=2024-05-01/*.parquet")),
        "profiles/folder=2024-05-01",
    ),
    "values garbage": lambda d: (
        _first(d, "values/folder=2024-05-02/*.parquet").write_bytes(b"PAR1garbagePAR1"),
        "values/folder=2024-05-02",
    ),
    "a FIFO in steps": lambda d: (
        os.mkfifo(d / "steps" / "folder=2024-05-01" / "x.parquet"),
        "steps/folder=2024-05-01/x.parquet",
    ),
    ".lock a FIFO": lambda d: ((d / ".lock").unlink(), os.mkfifo(d / ".lock"), ".lock")[1:],
    ".lock a directory": lambda d: ((d / ".lock").unlink(), (d / ".lock").mkdir(), ".lock")[1:],
    ".staging a file": lambda d: (shutil.rmtree(d / ".staging"), (d / ".staging").write_text("x"), ".staging")[1:],
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_dataset_is_one_line_for_every_reader(dataset_copy, damage):
    _, where = DAMAGES[damage](dataset_copy)
    for args in (
        ("fleet", dataset_copy, "--sql", "SELECT count(*) FROM values"),
        ("regress", dataset_copy, dataset_copy),
    ):
        err = one_line_exit_2(*args)
        assert where in err and "repairs" in err, err


def test_a_fifo_in_a_dataset_never_hangs_fleet(dataset_copy):
    """As a shell runs it, in its own process: refused at once, not blocked in a read."""
    os.mkfifo(dataset_copy / "profiles" / "folder=2024-05-01" / "p.parquet")
    result = tilescope("fleet", str(dataset_copy), "--sql", "SELECT count(*) FROM profiles", timeout=60)
    assert result.returncode == 2 and "a FIFO (named pipe)" in result.stderr and result.stderr.count("\n") == 1


def test_the_app_refuses_a_dataset_holding_a_fifo_in_a_bounded_worker(dataset_copy, tmp_path):
    """The fleet view's read (in a load worker) returns the one line at once; no load worker is
    left blocked on the FIFO."""
    from async_support import run_on_own_loop

    from tilescope.app.fleet_open import DatasetRequest
    from tilescope.app.loading import AppOptions
    from tilescope.app.open_flow import SessionOpener
    from tilescope.app.shared import SharedProfiles
    from tilescope.app.state import SessionState
    from tilescope.app.views.fleet import FleetView

    os.mkfifo(dataset_copy / "profiles" / "folder=2024-05-01" / "v.parquet")  # where the view's rows are read
    state = SessionState()
    opener = SessionOpener(state, SharedProfiles(), AppOptions(None, tmp_path), lambda: None)
    view = FleetView(state=state, opener=opener)
    stuck_before = opener.pool.stats().get("stuck", 0)
    problem = run_on_own_loop(view.open(DatasetRequest(dataset_copy, "ds")))
    assert "v.parquet" in problem and "a FIFO (named pipe)" in problem and "\n" not in problem
    assert view.fleet is None and opener.pool.stats().get("stuck", 0) == stuck_before


def test_batch_repairs_every_damage_and_a_rerun_finds_nothing_left(reference, tmp_path):
    root, dataset, _ = reference
    groups = [
        ["profiles garbage", "values garbage", "a FIFO in steps", ".lock a FIFO", ".staging a file"],
        ["profiles of other columns", "profiles emptied", ".lock a directory"],
    ]
    for k, names in enumerate(groups):
        copy = tmp_path / f"ds{k}"
        shutil.copytree(dataset, copy)
        for name in names:
            DAMAGES[name](copy)
        code, report, err = batch_json(root, copy)
        assert code == 0, err
        assert report["repaired"]["damaged"], report
        assert dataset_content(copy) == dataset_content(dataset), names
        code, report, _ = batch_json(root, copy)
        assert code == 0 and report["repaired"]["damaged"] == [] and report["processed"] == 0


# ----------------------------------------------------------------------------- #24.7, #24.8


def test_every_input_is_recorded_and_nothing_outside_dir_is_read(raw, tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    shutil.copy(PROFILE_SAMPLE, root / "good.memory_profile.json")
    odd = os.fsdecode(b"caf\xe9.memory_profile.json")  # not UTF-8
    shutil.copy(PROFILE_SAMPLE, root / odd)
    os.mkfifo(root / "pipe.memory_profile.json")
    (root / "dir.memory_profile.json").mkdir()
    (root / "dangling.memory_profile.json").symlink_to(root / "missing.json")
    (root / "loop.memory_profile.json").symlink_to(root / "loop.memory_profile.json")
    secret = tmp_path / "outside.json"
    secret.write_text('{"version": 1, "scope": "SECRET-OUTSIDE-DIR"')
    (root / "outside.memory_profile.json").symlink_to(secret)
    (root / "folder-link").symlink_to(tmp_path)
    dataset = tmp_path / "ds"
    code, out, err = run_cli("batch", root, "--out", dataset, "--workers", "1", "--json")
    report = json.loads(out)
    assert code == 0, err  # nothing failed: every odd entry is skipped with why
    assert report["processed"] == 2 and report["failed"] == 0
    whys = {e["path"]: e["why"] for e in report["others"]}
    assert whys == {
        "pipe.memory_profile.json": "a FIFO (named pipe), not a regular file (not opened)",
        "dangling.memory_profile.json": "a dangling symlink",
        "loop.memory_profile.json": "a symlink loop",
        "outside.memory_profile.json": "a symlink to a file outside DIR (not read)",
        "folder-link": "a symlink to a folder (not followed)",
    }
    code, rows, _ = run_cli("fleet", dataset, "--json", "--sql", "SELECT path, total_peak FROM profiles ORDER BY path")
    peak = peaks_of(raw)["total"]
    assert json.loads(rows) == [
        {"path": "caf\\xe9.memory_profile.json", "total_peak": peak},
        {"path": "good.memory_profile.json", "total_peak": peak},
    ]
    text = (
        out
        + err
        + "".join(
            p.read_bytes().decode("latin-1")
            for p in dataset.rglob("*")
            if p.is_file() and not p.is_symlink() and p.name != ".lock"
        )
    )
    assert "SECRET-OUTSIDE-DIR" not in text
    code, again, _ = batch_json(root, dataset)
    assert code == 0 and again["skipped"] == 2  # recorded once, unchanged since


# ----------------------------------------------------------------------------- #24.9, #24.10


def _replace_rows(path: Path, key: str, columns: dict[str, list]) -> None:
    """Rewrite ``columns`` of the rows keyed ``key`` in one dataset file, in order."""
    table = pq.read_table(path)
    mine = pc.equal(table.column("profile_key"), key).to_pylist()
    for name, new in columns.items():
        old = table.column(name).to_pylist()
        it = iter(new)
        merged = [next(it) if m else o for o, m in zip(old, mine)]
        table = table.set_column(
            table.schema.get_field_index(name),
            table.schema.field(name),
            pa.array(merged, table.schema.field(name).type),
        )
    pq.write_table(table, path)


def test_regress_refuses_a_consistently_edited_dataset(nightly, tmp_path):
    """HEAD's vit grew (value 84 cut in 3, not 9). Its recomputed bytes, usage and peaks are set
    to BASE's, all together: the stored tiling still gives the larger size, so the row is refused."""
    copy = tmp_path / "data"
    shutil.copytree(nightly.dataset, copy)
    profiles = sorted(copy.glob("profiles/folder=nightly/*.parquet"))[0]
    rows = {r["path"]: r for r in pq.read_table(profiles).to_pylist()}
    base, head = rows[f"{BASE}/{VIT}"], rows[f"{HEAD}/{VIT}"]
    for table, names in (
        ("values", ("recomputed_shard_bytes", "recomputed_aligned_bytes", "recomputed_bytes")),
        ("steps", ("recomputed_usage_standard", "recomputed_usage_interleaved")),
    ):
        base_file = copy / table / "folder=nightly" / f"{base['fragment']}.parquet"
        found = pq.read_table(base_file)
        theirs = found.filter(pc.equal(found.column("profile_key"), base["profile_key"]))
        _replace_rows(
            copy / table / "folder=nightly" / f"{head['fragment']}.parquet",
            head["profile_key"],
            {n: theirs.column(n).to_pylist() for n in names},
        )
    peak_columns = (
        "standard_peak",
        "interleaved_peak",
        "total_peak",
        "effective_peak_bytes",
        "fits_budget",
        "standard_peak_step",
        "interleaved_peak_step",
        "total_peak_step",
    )
    _replace_rows(profiles, head["profile_key"], {c: [base[c]] for c in peak_columns})
    code, out, err = run_cli("regress", f"{copy}:{BASE}", f"{copy}:{HEAD}", "--json")
    report = json.loads(out)
    assert code == 1, err
    assert VIT not in [p["key"] for p in report["profiles"]]
    [failure] = [f for f in report["failed"] if f["path"] == f"{HEAD}/{VIT}"]
    assert failure["side"] == "head" and "recomputed_shard_bytes at value row" in failure["error"]


def test_a_relative_dataset_path_holding_a_colon(nightly, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(nightly.dataset, tmp_path / "ds:colon")
    shutil.copytree(nightly.dataset, tmp_path / "dsh")
    code, out, err = run_cli("regress", "ds:colon", "dsh", "--json")
    report = json.loads(out)  # the whole directories compared (exit 1: the truncated file fails HEAD)
    assert code == 1 and report["base"]["dataset"] == str(tmp_path / "ds:colon") and report["base"]["folder"] == "", err
    profiles = len(list((nightly.root / "nightly").rglob("*.memory_profile.json")))
    assert report["regressed"] == [] and report["compared"] == profiles - 1  # every one, less the truncated one
    code, out, err = run_cli("regress", f"ds:colon:{BASE}", f"dsh:{HEAD}", "--json")
    assert code == 1 and [r["key"] for r in json.loads(out)["regressed"]] == [VIT], err


# ----------------------------------------------------------------------------- #25.1, #25.2, #25.3


README_BATCH = "tilescope batch nightly --out fleet-data"
README_REGRESS = "tilescope regress fleet-data:2024-05-01 fleet-data:2024-05-02"


def test_the_readmes_batch_and_regress_examples_work_together(raw, tmp_path, monkeypatch):
    readme = (REPO / "README.md").read_text()
    assert README_BATCH in readme and README_REGRESS in readme
    nightly = tmp_path / "nightly"
    folders(nightly, "2024-05-01", "2024-05-02")
    write(raw, nightly / "2024-05-01" / "vit.memory_profile.json")
    write(with_edits(raw, [(84, 1, 3)]), nightly / "2024-05-02" / "vit.memory_profile.json")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(*README_BATCH.split()[1:], "--workers", "1")
    assert code == 0, err
    code, out, err = run_cli(*README_REGRESS.split()[1:])
    assert code == 1 and "1 regressed of 1 compared" in out, err
    err = one_line_exit_2("regress", "fleet-data:nightly/2024-05-01", "fleet-data:nightly/2024-05-02")
    assert "has no profiles under 'nightly/2024-05-01/'; its folders: '2024-05-01', '2024-05-02'" in err


def test_regress_exit_codes(raw, tmp_path):
    """0 compared and none grew; 1 a regression; 2 an empty side; 3 inconclusive (ambiguous scopes,
    or nothing compared), 0 with --allow-inconclusive."""
    tree = tmp_path / "tree"
    folders(tree, "2024-05-01", "2024-05-02", "grown", "searches")
    for day in ("2024-05-01", "2024-05-02"):
        write(raw, tree / day / "a.memory_profile.json")
        write(raw, tree / day / "b.memory_profile.json")  # the same scope twice in a day
    write(with_edits(raw, [(84, 1, 3)]), tree / "grown" / "a.memory_profile.json")
    shutil.copy(SEARCH_SAMPLE, tree / "searches" / "s.search_state.json")
    ds = tmp_path / "ds"
    code, _, err = batch_json(tree, ds)
    assert code == 0, err

    def exit_of(*args) -> int:
        return run_cli("regress", *map(str, args))[0]

    assert exit_of(f"{ds}:2024-05-01", f"{ds}:2024-05-02") == 0
    assert exit_of(f"{ds}:2024-05-01", f"{ds}:grown") == 1
    assert exit_of(f"{ds}:2024-05-01", f"{ds}:2024-05-01", "--by", "scope") == 3  # identical, scopes ambiguous
    assert exit_of(f"{ds}:2024-05-01", f"{ds}:2024-05-01", "--by", "scope", "--allow-inconclusive") == 0
    assert exit_of(f"{ds}:searches", f"{ds}:searches") == 3  # rows on both sides, nothing comparable
    assert exit_of(f"{ds}:2024-05-01", f"{ds}:2024-06-01") == 2  # an empty side
    code, out, _ = run_cli("regress", f"{ds}:2024-05-01", f"{ds}:2024-05-01", "--by", "scope")
    assert "inconclusive: no pair of memory profiles was compared; 1 ambiguous scopes were not compared" in out


def test_quiet_quiets_batch(reference, tmp_path):
    root, _, _ = reference
    code, out, err = run_cli("batch", root, "--out", tmp_path / "ds", "--workers", "1", "--quiet")
    assert code == 0 and err == "" and out.startswith("4 planner outputs under")


# ----------------------------------------------------------------------------- #25.11


def test_compiler_named_files_are_recognised_by_content(tmp_path):
    """The compiler's names: profiles {scope}-{pid}-{serial}.json (v1 and v3), its .html copy,
    placement-{pid}.json and tile-{tile}-{hash}.json: each told apart by its first bytes and
    loaded (placement files validated, a row without tables), the HTML listed as not a planner
    output."""
    root = tmp_path / "run"
    assert write_compiler_outputs(root) == [
        "finalist-5-12345-0001.json",
        "finalist-6-12345-0002.json",
        "placement-12345.json",
        "tile-3-0123456789abcdef.json",
    ]
    code, report, err = batch_json(root, tmp_path / "ds")
    assert code == 0, err
    assert (report["processed"], report["failed"], report["not_loaded"]) == (4, 0, [])
    assert [e["path"] for e in report["others"]] == ["finalist-5-12345-0001.html"]
    code, out, _ = run_cli("fleet", tmp_path / "ds", "--json", "--sql", "SELECT path, kind FROM profiles ORDER BY path")
    assert json.loads(out) == [
        {"path": "finalist-5-12345-0001.json", "kind": "memory_profile"},
        {"path": "finalist-6-12345-0002.json", "kind": "memory_profile"},
        {"path": "placement-12345.json", "kind": "placement_profile"},
        {"path": "tile-3-0123456789abcdef.json", "kind": "placement_dump"},
    ]
    # a broken placement file fails like any planner output, named and located
    (root / "placement-12345.json").write_text('{"schema_version": 1, "start": "x"}')
    code, report, _ = batch_json(root, tmp_path / "ds")
    assert code == 1 and [f["path"] for f in report["failures"]] == ["placement-12345.json"]
    # a folder with nothing to load says so and exits 1
    empty = tmp_path / "notes"
    empty.mkdir()
    (empty / "readme.txt").write_text("no profiles here")
    code, out, err = run_cli("batch", empty, "--out", tmp_path / "ds2", "--workers", "1")
    assert code == 1 and "no planner output found under DIR" in out, err


def test_regress_verifies_per_tile_profiles_from_the_dataset(tmp_path):
    """v2/v3 profiles keep their per-tile runs in the dataset (value_tiles, step_tiles), so regress
    rebuilds and verifies them as the file was planned: compared, not refused."""
    program = gen.program_scaled(2)
    tree = tmp_path / "tree"
    for day in ("2024-05-01", "2024-05-02"):
        (tree / day).mkdir(parents=True)
        for version in (1, 2, 3):
            gen.write(program, version, tree / day / f"p_v{version}.memory_profile.json")
    code, report, err = batch_json(tree, tmp_path / "ds")
    assert code == 0 and report["processed"] == 6, err
    code, out, err = run_cli("regress", f"{tmp_path / 'ds'}:2024-05-01", f"{tmp_path / 'ds'}:2024-05-02", "--json")
    result = json.loads(out)
    assert (code, result["compared"], result["failed"]) == (0, 3, []), err
    totals = {p["key"]: p["figures"]["total"]["base"] for p in result["profiles"]}
    assert totals == {
        f"p_v{v}.memory_profile.json": gen.expected_figures(program, v)["doc"]["peak"]["total"] for v in (1, 2, 3)
    }


# ----------------------------------------------------------------------------- #25.10


def test_the_dataset_reads_as_one_table_per_kind_with_folder_ints_and_units(local_batch):
    """pandas gives whole numbers as Int64 (NA where the file did not load), every reader sees the
    Hive column ``folder``, each figure's field names its unit, and a table is a few files."""
    import duckdb
    import pandas as pd
    import polars as pl
    import pyarrow.dataset as pads
    from fleet_support import BROKEN

    dataset = local_batch.dataset
    frame = pd.read_parquet(dataset / "profiles").set_index("path")
    assert str(frame["standard_peak"].dtype) == "Int64" and str(frame["n_values"].dtype) == "Int64"
    assert pd.isna(frame.loc[BROKEN, "standard_peak"]) and str(frame["fits_budget"].dtype) == "boolean"
    expected = {path: path.split("/")[0] for path in local_batch.kinds}
    assert {p: str(f) for p, f in frame["folder"].items()} == expected
    by_polars = pl.read_parquet(str(dataset / "profiles" / "**" / "*.parquet"), hive_partitioning=True)
    assert dict(zip(by_polars["path"], by_polars["folder"])) == expected
    by_duckdb = duckdb.sql(
        f"SELECT path, folder FROM read_parquet('{dataset}/profiles/**/*.parquet', hive_partitioning = true)"
    )
    assert dict(by_duckdb.fetchall()) == expected
    values = pads.dataset(dataset / "values", format="parquet", partitioning="hive").to_table()
    assert set(values.column("folder").to_pylist()) == {"nightly", "samples"}
    assert values.schema.field("recomputed_bytes").metadata[b"unit"] == b"bytes per tile"
    assert (
        pq.read_schema(next((dataset / "profiles").rglob("*.parquet"))).field("total_peak_step").metadata[b"unit"]
        == b"step index"
    )
    files = list((dataset / "values").rglob("*.parquet"))
    loaded = sum(kind == "memory_profile" for kind in local_batch.kinds.values())
    assert len(files) < loaded  # fragments of several profiles, not one file per profile
