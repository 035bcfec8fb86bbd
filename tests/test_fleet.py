"""``tilescope batch`` in real local worker processes (on a real Dask cluster:
``test_fleet_cluster.py``) and ``tilescope fleet`` on a real DuckDB, over a tree of synthetic
profiles of several sizes, the samples, an edited copy and a broken file.

Expected figures come from the raw JSON with the rules of docs/formats.md §2 (per-step usage from
the live lists and recorded value bytes) and from the planner run in this process on each file;
the dataset is read back with pyarrow, polars and DuckDB directly, not through tilescope.
"""

from __future__ import annotations

import json
import shutil
from importlib import metadata
from types import SimpleNamespace

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from fleet_support import (
    BROKEN,
    EDITED,
    NOT_A_PLANNER_OUTPUT,
    SAMPLE_COPY,
    SYNTHETIC,
    TABLES,
    dataset_content,
    local_batch,
    read_table,
    run_cli,
    snapshot,
    tilescope,
)

from tilescope.fleet.layout import Dataset, locked, profile_key
from tilescope.loaders.cache import content_key
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.errors import InputError
from tilescope.models.version import __version__
from tilescope.planner.check import check_plan
from tilescope.planner.model import plan_profile
from tilescope.synth import write_synthetic_profile

__all__ = ["local_batch"]  # the session fixture, used by name


def raw_figures(raw: dict) -> dict:
    """Peaks, peak steps and effective peak from the raw JSON by docs/formats.md §2."""
    byte_of = {v["id"]: (v["class"], v["bytes"]) for v in raw["timeline"]["values"]}
    standard, interleaved = [], []
    for step in raw["timeline"]["steps"]:
        live = set(step["live"])
        standard.append(
            sum(byte_of[i][1] for i in live if byte_of[i][0] == "Ipu21Standard") + step["scratch"]["standard"]
        )
        interleaved.append(
            sum(byte_of[i][1] for i in live if byte_of[i][0] == "Ipu21Interleaved") + step["scratch"]["interleaved"]
        )
    both = [s + i for s, i in zip(standard, interleaved)]
    exchange = raw["peak"]["exchange_rows"]
    effective = max(both) + raw["support_reserve_bytes"]
    return {
        "standard_peak": max(standard) + exchange,
        "interleaved_peak": max(interleaved),
        "total_peak": max(both) + exchange,
        "effective_peak_bytes": effective,
        "standard_peak_step": standard.index(max(standard)),
        "interleaved_peak_step": interleaved.index(max(interleaved)),
        "total_peak_step": both.index(max(both)),
        "fits_budget": effective <= raw["budget_bytes"] and max(interleaved) <= raw["interleaved_budget_bytes"],
        "n_values": len(raw["timeline"]["values"]),
        "n_steps": len(raw["timeline"]["steps"]),
    }


def rows_by_path(dataset) -> dict[str, dict]:
    return {r["path"]: r for r in read_table(dataset, "profiles")}


def broken_error(root) -> str:
    """The loader's own message for the broken file, naming it by its path relative to DIR."""
    with pytest.raises(InputError) as caught:
        load_memory_profile(root / BROKEN)
    return str(caught.value).replace(str(root / BROKEN), BROKEN)


# ----------------------------------------------------------------------------- batch


def test_batch_reports_every_file_and_exits_1_for_the_broken_one(local_batch):
    b = local_batch
    assert b.code == 1
    loaded = [p for p, kind in b.kinds.items() if kind != "broken"]
    assert (b.report["files"], b.report["processed"], b.report["skipped"], b.report["failed"]) == (
        len(b.kinds),
        len(loaded),
        0,
        1,
    )
    assert b.report["failures"] == [{"path": BROKEN, "error": broken_error(b.root)}]
    assert b.report["failures"][0]["error"].startswith(f"{BROKEN}: at byte 50000")
    # notes/edits.json ("[]"): looked at, not a planner output, listed with why
    assert b.report["others"] == [{"path": NOT_A_PLANNER_OUTPUT, "why": "not a planner output (not a JSON object)"}]
    # A progress line per file on stderr as it completes.
    progress = [line for line in b.stderr.splitlines() if line.startswith("[")]
    n = len(b.kinds) + 1
    assert [line.split("]")[0] for line in progress] == [f"[{k}/{n}" for k in range(1, n + 1)]
    assert sorted(line.split()[2] for line in progress if " loaded " in line) == sorted(loaded)
    assert snapshot(b.root) == b.tree_before  # input files only ever read


def test_profiles_rows_hold_the_recomputed_peaks(local_batch):
    b = local_batch
    rows = rows_by_path(b.dataset)
    assert sorted(rows) == sorted(b.kinds)
    for path, kind in b.kinds.items():
        row, file = rows[path], b.root / path
        assert row["content_hash"] == content_key(file)
        assert row["profile_key"] == profile_key(path, row["content_hash"], partitions=kind == "memory_profile")
        assert row["file_bytes"] == file.stat().st_size
        assert row["tilescope_version"] == __version__ == metadata.version("tilescope")
        if kind == "broken":
            assert row["error"] == broken_error(b.root) and row["kind"] is None and row["standard_peak"] is None
            continue
        assert row["error"] is None and row["kind"] == kind
        if kind == "search_state":
            assert row["standard_peak"] is None and row["n_values"] is None
            continue
        raw = json.loads(file.read_text())
        assert {k: row[k] for k in raw_figures(raw)} == raw_figures(raw), path
        # ... and the planner's, run here on the same file.
        profile = load_memory_profile(file)
        arrays, plan = plan_profile(profile)
        p = plan.peaks
        assert (row["standard_peak"], row["interleaved_peak"], row["total_peak"], row["effective_peak_bytes"]) == (
            p.standard,
            p.interleaved,
            p.total,
            p.effective_peak_bytes,
        )
        assert (
            row["standard_peak_step"],
            row["interleaved_peak_step"],
            row["total_peak_step"],
            row["fits_budget"],
        ) == (p.standard_step, p.interleaved_step, p.total_step, p.fits_budget)
        assert row["check_mismatches"] == len(check_plan(profile, arrays, plan))
        assert row["scope"] == raw["scope"] and row["budget_bytes"] == raw["budget_bytes"]
    # The edited copy records a standard peak one byte too high: flagged, the peak recomputed.
    edited = json.loads((b.root / EDITED).read_text())
    assert rows[EDITED]["check_mismatches"] == 1 and rows[EDITED]["standard_peak"] == edited["peak"]["standard"] - 1
    assert [
        (m["subject"], m["field"], m["recorded"], m["recomputed"]) for m in read_table(b.dataset, "mismatches")
    ] == [("profile", "peak.standard", str(edited["peak"]["standard"]), str(edited["peak"]["standard"] - 1))]
    assert all(rows[p]["check_mismatches"] == 0 for p in (SAMPLE_COPY, *SYNTHETIC))


def test_every_table_reads_in_duckdb_polars_and_pyarrow(local_batch):
    b = local_batch
    rows = rows_by_path(b.dataset)
    loaded = {r["profile_key"]: r for r in rows.values() if r["kind"] == "memory_profile"}
    for table in TABLES:
        pattern = str(b.dataset / table / "**" / "*.parquet")
        by_duckdb = duckdb.sql(f"SELECT profile_key, count(*) FROM read_parquet('{pattern}') GROUP BY 1").fetchall()
        by_polars = pl.read_parquet(pattern).group_by("profile_key").len().rows()
        by_pyarrow = (
            pads.dataset(b.dataset / table, format="parquet")
            .to_table()
            .group_by("profile_key")
            .aggregate([("profile_key", "count")])
            .to_pylist()
        )
        counts = dict(by_duckdb)
        assert counts == dict(by_polars) == {r["profile_key"]: r["profile_key_count"] for r in by_pyarrow}, table
        expected_keys = {r["profile_key"] for r in rows.values()} if table == "profiles" else set(loaded)
        if table == "mismatches":
            expected_keys = {rows[EDITED]["profile_key"]}
        if table in ("value_tiles", "step_tiles"):  # per-tile runs of v2/v3 profiles; the tree's are v1
            expected_keys = set()
        assert set(counts) == expected_keys, table
    counts = dict(
        duckdb.sql(
            f"SELECT profile_key, count(*) FROM read_parquet('{b.dataset}/values/**/*.parquet') GROUP BY 1"
        ).fetchall()
    )
    assert counts == {k: r["n_values"] for k, r in loaded.items()}
    counts = dict(
        duckdb.sql(
            f"SELECT profile_key, count(*) FROM read_parquet('{b.dataset}/steps/**/*.parquet') GROUP BY 1"
        ).fetchall()
    )
    assert counts == {k: r["n_steps"] for k, r in loaded.items()}


@pytest.mark.parametrize("path", [SAMPLE_COPY, "nightly/2024-05-02/model_a/finalist1.memory_profile.json"])
def test_values_steps_and_live_intervals_reproduce_the_file(local_batch, path):
    """Recomputed bytes and usage equal the (self-consistent) file's; live intervals give back
    exactly its live lists (the second file's live steps have gaps)."""
    b = local_batch
    raw = json.loads((b.root / path).read_text())
    key = rows_by_path(b.dataset)[path]["profile_key"]
    values = {v["id"]: v for v in read_table(b.dataset, "values") if v["profile_key"] == key}
    assert {
        i: (v["recomputed_shard_bytes"], v["recomputed_aligned_bytes"], v["recomputed_bytes"], v["name"])
        for i, v in values.items()
    } == {v["id"]: (v["shard_bytes"], v["aligned_bytes"], v["bytes"], v["name"]) for v in raw["timeline"]["values"]}
    steps = sorted((s for s in read_table(b.dataset, "steps") if s["profile_key"] == key), key=lambda s: s["index"])
    assert [(s["recomputed_usage_standard"], s["recomputed_usage_interleaved"]) for s in steps] == [
        (s["usage"]["standard"], s["usage"]["interleaved"]) for s in raw["timeline"]["steps"]
    ]
    live = {
        (r["value_id"], step)
        for r in read_table(b.dataset, "live_intervals")
        if r["profile_key"] == key
        for step in range(r["first_step"], r["last_step"] + 1)
    }
    assert live == {(i, s["index"]) for s in raw["timeline"]["steps"] for i in s["live"]}


# ----------------------------------------------------------------------------- fleet --sql

PEAK_LIVE_SQL = """
SELECT p.path, v.id, v.recomputed_bytes
FROM profiles p
JOIN live_intervals l ON l.profile_key = p.profile_key AND p.standard_peak_step BETWEEN l.first_step AND l.last_step
JOIN values v ON v.profile_key = l.profile_key AND v.id = l.value_id
WHERE v.region = 'standard'
ORDER BY p.path, v.id
"""


def test_sql_finds_the_values_live_at_each_peak(local_batch):
    """What `regress` will ask: the values live at each profile's standard peak with their bytes,
    checked against the raw live lists and against the same Parquet read with pyarrow."""
    b = local_batch
    code, out, err = run_cli("fleet", b.dataset, "--json", "--sql", PEAK_LIVE_SQL)
    assert code == 0, err
    got = [(r["path"], r["id"], r["recomputed_bytes"]) for r in json.loads(out)]
    expected = []
    for path, kind in sorted(b.kinds.items()):
        if kind != "memory_profile":
            continue
        raw = json.loads((b.root / path).read_text())
        step = raw_figures(raw)["standard_peak_step"]
        standard = {v["id"]: v["bytes"] for v in raw["timeline"]["values"] if v["class"] == "Ipu21Standard"}
        expected += [
            (path, i, standard[i]) for i in sorted(set(raw["timeline"]["steps"][step]["live"])) if i in standard
        ]
    assert got == expected
    # The same rows from pyarrow alone.
    rows = {r["profile_key"]: r for r in read_table(b.dataset, "profiles")}
    values = {(v["profile_key"], v["id"]): v for v in read_table(b.dataset, "values")}
    by_pyarrow = sorted(
        (rows[l["profile_key"]]["path"], l["value_id"], values[(l["profile_key"], l["value_id"])]["recomputed_bytes"])
        for l in read_table(b.dataset, "live_intervals")
        if l["first_step"] <= rows[l["profile_key"]]["standard_peak_step"] <= l["last_step"]
        and values[(l["profile_key"], l["value_id"])]["region"] == "standard"
    )
    assert got == by_pyarrow
    # Those bytes, the step's scratch and the exchange rows make the standard peak.
    code, out, _ = run_cli(
        "fleet",
        b.dataset,
        "--json",
        "--sql",
        f"""
        SELECT p.path, p.standard_peak, sum(x.recomputed_bytes) + s.scratch_standard + h.exchange_rows AS rebuilt
        FROM ({PEAK_LIVE_SQL}) x JOIN profiles p USING (path)
        JOIN steps s ON s.profile_key = p.profile_key AND s.index = p.standard_peak_step
        JOIN profile_headers h ON h.profile_key = p.profile_key
        GROUP BY p.path, p.standard_peak, s.scratch_standard, h.exchange_rows ORDER BY p.path""",
    )
    rebuilt = json.loads(out)
    assert code == 0 and len(rebuilt) == 6 and all(r["standard_peak"] == r["rebuilt"] for r in rebuilt)


def test_sql_over_profiles_matches_pyarrow(local_batch):
    b = local_batch
    code, out, _ = run_cli(
        "fleet",
        b.dataset,
        "--json",
        "--sql",
        "SELECT path, kind, total_peak, fits_budget, error, normalised_at FROM profiles ORDER BY path",
    )
    assert code == 0
    expected = [
        {
            "path": r["path"],
            "kind": r["kind"],
            "total_peak": r["total_peak"],
            "fits_budget": r["fits_budget"],
            "error": r["error"],
            "normalised_at": r["normalised_at"].isoformat(),
        }
        for r in sorted(read_table(b.dataset, "profiles"), key=lambda r: r["path"])
    ]
    assert json.loads(out) == expected


def test_fleet_text_is_an_aligned_table(local_batch):
    b = local_batch
    code, out, _ = run_cli(
        "fleet",
        b.dataset,
        "--sql",
        "SELECT path, n_values, total_peak FROM profiles WHERE kind = 'memory_profile' ORDER BY total_peak DESC, path",
    )
    assert code == 0
    lines = out.splitlines()
    rows = sorted(
        (r for r in read_table(b.dataset, "profiles") if r["kind"] == "memory_profile"),
        key=lambda r: (-r["total_peak"], r["path"]),
    )
    assert lines[0].split() == ["path", "n_values", "total_peak"] and set(lines[1]) <= {"-", " "}
    assert [line.split() for line in lines[2:-1]] == [
        [r["path"], f"{r['n_values']:,}", f"{r['total_peak']:,}"] for r in rows
    ]
    assert len({len(line) for line in lines[1:-1]}) == 1  # numbers right-aligned to the rule
    assert lines[-1] == f"({len(rows)} rows)"
    code, out, _ = run_cli("fleet", b.dataset, "--sql", "SELECT 'a' || chr(27) || '[31mb' AS t")
    assert out.splitlines()[2] == "a\\x1b[31mb"  # terminal control text shown, not obeyed


def test_fleet_errors_are_one_line_and_exit_2(local_batch, tmp_path):
    b = local_batch
    for args, start in [
        (["--sql", "SELECT * FORM profiles"], "tilescope: SQL error: Parser Error"),
        (["--sql", "SELECT nope FROM profiles"], "tilescope: SQL error: Binder Error"),
        (["--json", "--sql", "SELECT 1 AS x, 2 AS x"], "tilescope: the result has more than one column named x"),
    ]:
        code, out, err = run_cli("fleet", b.dataset, *args)
        assert (code, out) == (2, "") and err.startswith(start) and err.count("\n") == 1, err
    code, _, err = run_cli("fleet", tmp_path, "--sql", "SELECT 1")
    assert code == 2 and "expected a dataset directory written by `tilescope batch`" in err
    # The installed command, as a shell runs it: one line on stderr, no traceback.
    result = tilescope("fleet", str(b.dataset), "--sql", "SELECT * FORM profiles")
    assert (result.returncode, result.stdout) == (2, "") and result.stderr.count("\n") == 1, result.stderr


# ----------------------------------------------------------------------------- incremental


@pytest.mark.slow  # four batches, each on a cluster of its own
def test_reruns_process_only_new_and_changed_files(local_batch, tmp_path):
    root, dataset = tmp_path / "tree", tmp_path / "dataset"
    shutil.copytree(local_batch.root, root)
    shutil.copytree(local_batch.dataset, dataset)
    n = len(local_batch.kinds)

    added = "nightly/2024-05-03/model_d.memory_profile.json"
    (root / added).parent.mkdir(parents=True)
    write_synthetic_profile(root / added, 2, 2)
    code, out, _ = run_cli("batch", root, "--out", dataset, "--workers", "1", "--json")
    report = json.loads(out)
    assert (code, report["processed"], report["skipped"], report["failed"]) == (0, 1, n, 0)
    assert report["skipped_failures"] == [{"path": BROKEN, "error": broken_error(root)}]
    assert rows_by_path(dataset)[added]["n_values"] == len(json.loads((root / added).read_text())["timeline"]["values"])

    changed = "nightly/2024-05-01/model_b.memory_profile.json"
    old_key = rows_by_path(dataset)[changed]["profile_key"]
    write_synthetic_profile(root / changed, 3, 3, overwrite=True)
    code, out, _ = run_cli("batch", root, "--out", dataset, "--workers", "1", "--json")
    report = json.loads(out)
    assert (code, report["processed"], report["skipped"], report["failed"]) == (0, 1, n, 0)
    row = rows_by_path(dataset)[changed]
    assert (
        row["profile_key"] != old_key
        and row["standard_peak"] == raw_figures(json.loads((root / changed).read_text()))["standard_peak"]
    )
    for table in TABLES[1:]:  # the old content's rows are gone from every table
        assert old_key not in {r["profile_key"] for r in read_table(dataset, table)}
    assert sum(r["profile_key"] == row["profile_key"] for r in read_table(dataset, "values")) == row["n_values"]

    code, out, _ = run_cli("batch", root, "--out", dataset, "--workers", "1", "--json", "--retry-failed")
    report = json.loads(out)
    assert (code, report["processed"], report["skipped"], report["failed"]) == (1, 0, n, 1)
    assert report["failures"][0]["path"] == BROKEN

    (root / SAMPLE_COPY).unlink()
    code, out, _ = run_cli("batch", root, "--out", dataset, "--workers", "1", "--json")
    report = json.loads(out)
    assert (code, report["processed"], report["gone"]) == (0, 0, [SAMPLE_COPY])
    assert SAMPLE_COPY in rows_by_path(dataset)  # rows of files gone are kept


def test_a_crash_leaves_nothing_a_query_sees_and_the_next_batch_repairs(local_batch, tmp_path):
    """The states an interrupted writer can leave (fleet.layout, fleet.commit), made by hand: a
    staging folder, a fragment no row names, and a fragment that lost one of its tables."""
    dataset = tmp_path / "dataset"
    shutil.copytree(local_batch.dataset, dataset)
    rows = rows_by_path(dataset)
    sample = rows[SAMPLE_COPY]
    (dataset / ".staging" / "tmp123").mkdir()
    (dataset / ".staging" / "tmp123" / "values.parquet").write_bytes(b"half a file")
    orphan_key = profile_key(SAMPLE_COPY, "a content never committed", partitions=True)
    for table in TABLES[1:]:  # a complete fragment under a name and key no row names
        [source] = (dataset / table).glob(f"folder=samples/{sample['fragment']}.parquet")
        rows_of_table = pq.read_table(source)
        rows_of_table = rows_of_table.set_column(
            0, "profile_key", pa.repeat(pa.scalar(orphan_key), rows_of_table.num_rows)
        )
        pq.write_table(rows_of_table, source.parent / "orphan-00000.parquet")
    n_values = sum(r["n_values"] or 0 for r in rows.values())
    code, out, _ = run_cli("fleet", dataset, "--json", "--sql", "SELECT count(*) AS n FROM values")
    assert json.loads(out) == [{"n": n_values}]  # the views join on profiles: orphans unseen
    assert len(read_table(dataset, "values")) > n_values
    model_a = rows["nightly/2024-05-01/model_a/finalist1.memory_profile.json"]
    [steps] = (dataset / "steps").glob(f"folder=nightly/{model_a['fragment']}.parquet")
    steps.unlink()
    sharing = sorted(p for p, r in rows.items() if r["fragment"] == model_a["fragment"])

    code, out, _ = run_cli("batch", local_batch.root, "--out", dataset, "--workers", "1", "--json")
    report = json.loads(out)
    repaired = report["repaired"]
    assert (repaired["staging"], repaired["incomplete_rows"]) == (1, len(sharing))
    assert sorted(d["path"] for d in repaired["damaged"]) == sorted(
        str(dataset / t / "folder=nightly" / f"{model_a['fragment']}.parquet") for t in TABLES[1:] if t != "steps"
    )
    assert report["processed"] == len(sharing) and code == 0
    assert dataset_content(dataset) == dataset_content(local_batch.dataset)
    assert list((dataset / ".staging").iterdir()) == []
    assert not list(dataset.rglob("orphan-*"))


def test_usage_errors_exit_2(local_batch, tmp_path):
    (tmp_path / "stuff").mkdir()
    (tmp_path / "stuff" / "keep.txt").write_text("mine")
    for args, message in [
        (
            [tmp_path / "missing", "--out", tmp_path / "d"],
            "expected a directory of planner outputs, found no such directory",
        ),
        ([local_batch.root, "--out", tmp_path / "stuff"], "expected an empty or new directory for the dataset"),
        ([local_batch.root, "--out", tmp_path / "d", "--workers", "0"], "expected at least 1 worker"),
        (
            [local_batch.root, "--out", tmp_path / "d", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
            "--workers sizes the local cluster",
        ),
    ]:
        code, out, err = run_cli("batch", *args)
        assert (code, out) == (2, "") and message in err and err.count("\n") == 1, err
    assert (tmp_path / "stuff" / "keep.txt").read_text() == "mine"
    with locked(Dataset.open(local_batch.dataset)):
        code, _, err = run_cli("batch", local_batch.root, "--out", local_batch.dataset)
    assert code == 2 and "another `tilescope batch` holds its lock" in err


def test_a_task_that_kills_its_workers_is_recorded_other_task_failures_are_not(local_batch):
    """What the driver does with a task that raised instead of returning (fleet.driver._task_failure)."""
    from distributed import KilledWorker

    from tilescope.fleet.driver import _task_failure

    item = {"path": SAMPLE_COPY, "fs_path": SAMPLE_COPY}
    worker = SimpleNamespace(address="tcp://127.0.0.1:40000")  # what the scheduler names in the message
    summary = _task_failure(str(local_batch.root), item, "batch-2", ModuleNotFoundError("No module named 'tilescope'"))
    assert summary["status"] == "failed" and "ModuleNotFoundError" in summary["error"]
    assert summary["keep_previous"]  # the environment's fault: the row stays, the file is tried again
    summary = _task_failure(str(local_batch.root), item, "batch-2", KilledWorker("task", worker, 3))
    assert summary["error"].startswith(f"{SAMPLE_COPY}: the task failed on its worker (KilledWorker")
    assert not summary["keep_previous"] and summary["content_hash"] == content_key(local_batch.root / SAMPLE_COPY)


def test_a_file_that_cannot_be_read_fails_without_replacing_its_row(local_batch, tmp_path):
    """The worker's task (fleet.task) on a file gone since the listing, or not mounted on its worker."""
    from tilescope.fleet.task import normalise_task

    dataset = tmp_path / "dataset"
    shutil.copytree(local_batch.dataset, dataset)
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    before = Dataset.open(dataset).read_row(SAMPLE_COPY)
    item = {"path": SAMPLE_COPY, "fs_path": SAMPLE_COPY, "previous": before}
    [summary] = normalise_task(str(empty), [item], str(dataset), "batch-3", "f-1")["summaries"]
    assert summary["status"] == "failed" and summary["keep_previous"]
    assert summary["error"] == f"{SAMPLE_COPY}: cannot read it: No such file or directory"
    new = "never/seen.memory_profile.json"
    [summary] = normalise_task(
        str(empty), [{"path": new, "fs_path": new, "previous": None}], str(dataset), "batch-3", "f-2"
    )["summaries"]
    assert summary["status"] == "failed" and not summary["keep_previous"] and summary["content_hash"] is None
    assert dataset_content(dataset) == dataset_content(local_batch.dataset)  # a task writes nothing but its staging
