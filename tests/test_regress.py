"""``tilescope regress`` on datasets written by ``tilescope batch`` (real worker processes) from nightly
folders whose HEAD profiles are edited copies of BASE's (``regress_support``).

Expected figures are worked out from the raw JSON by ``compare_support`` (docs/formats.md §2
written out again; attributions from the live lists), never by tilescope's planner or compare.
"""

from __future__ import annotations

import json
import shutil
from fractions import Fraction

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from browser_support import kib
from compare_support import expected_comparison, peaks_of
from fleet_support import run_cli
from regress_support import (
    BASE,
    BROKEN,
    COPY,
    EDITED_VALUE,
    EXTRA_SCRATCH,
    HEAD,
    MID,
    MID_V2,
    SCOPES,
    SEARCH,
    SMALL,
    VIT,
)

from tilescope.fleet.layout import Dataset
from tilescope.fleet.regress import Threshold, parse_threshold
from tilescope.fleet.reopen import reopen_profile
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.errors import InputError

FIGURE_KEYS = {
    "standard": "standard",
    "interleaved": "interleaved",
    "total": "total",
    "effective_peak_bytes": "effective_peak_bytes",
}


def regress_json(*args) -> tuple[int, dict, str]:
    code, out, err = run_cli("regress", *map(str, args), "--json")
    return code, (json.loads(out) if out else {}), err


def expected_delta(raw_a: dict, raw_b: dict) -> dict[str, int]:
    a, b = peaks_of(raw_a), peaks_of(raw_b)
    return {figure: b[key] - a[key] for figure, key in FIGURE_KEYS.items()}


def test_the_batch_loaded_all_but_the_truncated_file(nightly):
    assert nightly.batch_code == 1  # the truncated file fails the batch


def test_a_regression_from_an_edited_copy_is_found_with_the_value_that_caused_it(nightly):
    code, report, err = regress_json(nightly.side(BASE), nightly.side(HEAD))
    assert code == 1, err
    raw_a, raw_b = nightly.raw[f"{BASE}/{VIT}"], nightly.raw[f"{HEAD}/{VIT}"]
    delta = expected_delta(raw_a, raw_b)
    assert delta["standard"] == 124_416 and delta["interleaved"] == 0  # the edit, worked out from the raw JSON
    regressed = {r["key"]: r for r in report["regressed"]}
    assert set(regressed) == {VIT}
    vit = regressed[VIT]
    assert (vit["base_path"], vit["head_path"]) == (f"{BASE}/{VIT}", f"{HEAD}/{VIT}")
    pa_, pb_ = peaks_of(raw_a), peaks_of(raw_b)
    for figure, key in FIGURE_KEYS.items():
        v = vit["figures"][figure]
        assert (v["base"], v["head"], v["delta"]) == (pa_[key], pb_[key], delta[figure])
        assert v["regressed"] == (delta[figure] > 0)
    assert set(vit["attribution"]) == {f for f, d in delta.items() if d > 0}
    expected = expected_comparison(raw_a, raw_b)["attribution"]
    standard = vit["attribution"]["standard"]
    # the value that grew at the standard peak, named, its bytes exact
    (name, a_id, b_id), part = max(expected["standard"]["parts"].items(), key=lambda kv: kv[1])
    assert (a_id, b_id) == (EDITED_VALUE, EDITED_VALUE)
    top = standard["grew"][0]
    assert (top["name"], top["a_id"], top["b_id"], top["bytes"]) == (name, a_id, b_id, part)
    for figure, a in vit["attribution"].items():
        e = expected["total" if figure == "effective_peak_bytes" else figure]
        assert (a["base_step"], a["head_step"], a["scratch_delta"]) == (e["a_step"], e["b_step"], e["scratch_delta"])
        grew = {(p["name"], p["a_id"], p["b_id"]): p["bytes"] for p in a["grew"]}
        positive = {k: v for k, v in e["parts"].items() if v > 0}
        assert grew == dict(sorted(positive.items(), key=lambda kv: -kv[1])[: len(grew)])
        rest = (
            a["other_values"]["bytes"]
            + a["scratch_delta"]
            + a.get("exchange_rows_delta", 0)
            + a.get("support_reserve_delta", 0)
        )
        assert sum(grew.values()) + rest == a["delta"] == delta[figure]
    # mid was renamed: matched by path it is on one side only, and so not compared
    assert [o["path"] for o in report["only_base"]] == [f"{BASE}/{MID}"]
    assert [o["path"] for o in report["only_head"]] == [f"{HEAD}/{MID_V2}"]
    assert [n["reason"] for n in report["not_compared"]] == ["search_state: no peaks"]
    assert report["failed"] == [] and report["compared"] == 2  # vit and small


def test_the_text_form_is_a_table_of_exact_bytes_naming_the_value(nightly):
    code, out, _ = run_cli("regress", nightly.side(BASE), nightly.side(HEAD) + "/")
    assert code == 1
    raw_a, raw_b = nightly.raw[f"{BASE}/{VIT}"], nightly.raw[f"{HEAD}/{VIT}"]
    a, b = peaks_of(raw_a)["standard"], peaks_of(raw_b)["standard"]
    row = next(line for line in out.splitlines() if "standard peak" in line and VIT in line)
    assert row.split()[:2] == [VIT, "standard"]
    assert kib(a) in row and kib(b) in row and f"+{b - a:,} B (+{(b - a) / 1024:,.1f} KiB)" in row
    name = next(v["name"] for v in raw_a["timeline"]["values"] if v["id"] == EDITED_VALUE)
    assert any(
        "+124,416 B (+121.5 KiB)" in line and f"{name} [{EDITED_VALUE} → {EDITED_VALUE}]" in line
        for line in out.splitlines()
    )
    assert f"only in BASE:\n  {BASE}/{MID}" in out


def test_no_regression_exits_0(nightly):
    code, report, err = regress_json(nightly.side(BASE), nightly.side(COPY))
    assert code == 0, err
    assert report["regressed"] == [] and report["compared"] == 3
    assert all(f["delta"] == 0 for p in report["profiles"] for f in p["figures"].values())
    code, out, _ = run_cli("regress", nightly.side(BASE), nightly.side(COPY))
    assert code == 0 and out.splitlines()[1].startswith("0 regressed of 3 compared")


def test_the_bytes_threshold_at_its_boundary(nightly):
    delta = expected_delta(nightly.raw[f"{BASE}/{VIT}"], nightly.raw[f"{HEAD}/{VIT}"])
    assert delta["standard"] > delta["total"] >= delta["effective_peak_bytes"]
    code, report, _ = regress_json(nightly.side(BASE), nightly.side(HEAD), "--threshold", delta["standard"])
    assert code == 0 and report["regressed"] == []  # grew by exactly the threshold: not past it
    code, report, _ = regress_json(nightly.side(BASE), nightly.side(HEAD), "--threshold", delta["standard"] - 1)
    assert code == 1
    assert [(r["key"], [f for f, v in r["figures"].items() if v["regressed"]]) for r in report["regressed"]] == [
        (VIT, ["standard"])
    ]
    assert list(report["regressed"][0]["attribution"]) == ["standard"]
    kib_threshold = delta["total"] // 1024  # whole KiB below the total's growth, above nothing else's
    code, report, _ = regress_json(nightly.side(BASE), nightly.side(HEAD), "--threshold", f"{kib_threshold}KiB")
    assert report["threshold"]["bytes"] == kib_threshold * 1024
    grown = [f for f, v in report["regressed"][0]["figures"].items() if v["regressed"]]
    assert grown == [f for f in FIGURE_KEYS if delta[f] > kib_threshold * 1024]


def test_the_percent_threshold_at_its_boundary(nightly):
    raw_a, raw_b = nightly.raw[f"{BASE}/{VIT}"], nightly.raw[f"{HEAD}/{VIT}"]
    base, delta = peaks_of(raw_a)["standard"], expected_delta(raw_a, raw_b)["standard"]
    exact = Fraction(100 * delta, base)  # the standard peak grew by this percentage
    below = Fraction(int(exact * 10_000), 10_000)  # four decimals, just under it
    above = below + Fraction(1, 10_000)
    assert below < exact < above
    code, report, _ = regress_json(nightly.side(BASE), nightly.side(HEAD), "--threshold", f"{float(below):.4f}%")
    assert code == 1 and report["regressed"][0]["figures"]["standard"]["regressed"]
    code, report, _ = regress_json(nightly.side(BASE), nightly.side(HEAD), "--threshold", f"{float(above):.4f}%")
    others = {
        f: Fraction(100 * d, peaks_of(raw_a)[FIGURE_KEYS[f]]) for f, d in expected_delta(raw_a, raw_b).items() if d > 0
    }
    assert max(others.values()) == exact  # no other figure grew by more, so nothing is left
    assert code == 0 and report["regressed"] == []


def test_the_threshold_rule_is_exact_at_equality():
    two = parse_threshold("2%")
    assert two.percent == 2
    assert not two.exceeded(1000, 20) and two.exceeded(1000, 21)
    assert not parse_threshold("0.5%").exceeded(206_032, 1_030) and parse_threshold("0.5%").exceeded(
        206_032, 1_031
    )  # 0.5 % = 1,030.16 B
    assert parse_threshold("0%").exceeded(0, 1) and not parse_threshold("0%").exceeded(5, 0)
    assert parse_threshold("4KiB") == Threshold("4KiB", bytes=4096)
    assert not parse_threshold("4096").exceeded(10, 4096) and parse_threshold("4096").exceeded(10, 4097)


@pytest.mark.parametrize("text", ["-1", "5x", "1.5", "%", "2.%", "0.3B"])
def test_a_bad_threshold_is_a_usage_error(nightly, text):
    code, out, err = run_cli("regress", nightly.side(BASE), nightly.side(HEAD), "--threshold", text)
    assert code == 2 and out == "" and err.startswith("tilescope: --threshold") and len(err.splitlines()) == 1


def test_matched_by_scope_the_renamed_profile_is_compared(nightly):
    code, report, _ = regress_json(nightly.side(BASE), nightly.side(HEAD), "--by", "scope")
    assert code == 1
    regressed = {r["key"]: r for r in report["regressed"]}
    assert set(regressed) == {SCOPES[VIT], SCOPES[MID]}
    mid = regressed[SCOPES[MID]]
    assert (mid["base_path"], mid["head_path"]) == (f"{BASE}/{MID}", f"{HEAD}/{MID_V2}")
    raw_a, raw_b = nightly.raw[f"{BASE}/{MID}"], nightly.raw[f"{HEAD}/{MID_V2}"]
    assert mid["figures"]["standard"]["delta"] == expected_delta(raw_a, raw_b)["standard"] == EXTRA_SCRATCH
    standard = mid["attribution"]["standard"]  # the growth is scratch, no value
    assert (standard["grew"], standard["other_values"]["bytes"], standard["scratch_delta"]) == ([], 0, EXTRA_SCRATCH)
    assert report["only_base"] == report["only_head"] == []
    assert [n["path"] for n in report["not_compared"]] == [f"{BASE}/{SEARCH}", f"{HEAD}/{SEARCH}"]  # no scope


def test_a_scope_held_twice_is_ambiguous_not_compared(nightly):
    code, report, _ = regress_json(nightly.dataset, nightly.side(HEAD), "--by", "scope")
    ambiguous = {a["key"]: a for a in report["ambiguous"]}
    assert set(ambiguous) == set(SCOPES.values())
    assert ambiguous[SCOPES[VIT]]["head"] == [f"{HEAD}/{VIT}"] and len(ambiguous[SCOPES[VIT]]["base"]) == 4
    assert report["compared"] == 0 and report["regressed"] == []
    assert (
        code == 3 and report["exit_code"] == 3 and report["inconclusive"]
    )  # a gate that compared nothing does not pass


def test_a_head_that_does_not_load_fails_the_run_and_is_never_compared(nightly):
    code, report, _ = regress_json(nightly.side(BASE), nightly.side(BROKEN))
    assert code == 1 and report["regressed"] == []
    [failure] = report["failed"]
    assert (failure["key"], failure["side"], failure["path"]) == (SMALL, "head", f"{BROKEN}/{SMALL}")
    row = Dataset.open(nightly.dataset).read_row(f"{BROKEN}/{SMALL}")
    assert failure["error"] == row["error"] and failure["error"].startswith(f"{BROKEN}/{SMALL}: at byte 20000")
    assert report["compared"] == 2  # vit and mid
    # the same failure on BASE's side is listed and does not fail the run
    code, report, _ = regress_json(nightly.side(BROKEN), nightly.side(BASE))
    assert code == 0 and [(f["side"], f["path"]) for f in report["failed"]] == [("base", f"{BROKEN}/{SMALL}")]
    code, out, _ = run_cli("regress", nightly.side(BASE), nightly.side(BROKEN))
    assert f"failed (not compared):\n  HEAD {row['error']}" in out


def test_two_datasets(nightly, tmp_path):
    head_tree = tmp_path / "head"
    shutil.copytree(nightly.root / HEAD, head_tree)
    code, _, _ = run_cli("batch", head_tree, "--out", tmp_path / "head-data", "--workers", "1")
    assert code == 0
    code, report, _ = regress_json(nightly.side(BASE), tmp_path / "head-data")
    assert code == 1
    assert [r["key"] for r in report["regressed"]] == [VIT]
    assert report["head"] == {"dataset": str(tmp_path / "head-data"), "folder": "", "rows": 4}
    same, _, _ = regress_json(nightly.side(HEAD), tmp_path / "head-data")
    assert same == 0


def test_sides_that_compare_nothing_are_usage_errors(nightly, tmp_path):
    for base, head, message in (
        (nightly.side("nightly/2024-06-01"), nightly.side(HEAD), "BASE: "),  # no such folder in the dataset
        (nightly.side(BASE), tmp_path / "nowhere", "HEAD: "),
        (nightly.side(BASE), nightly.root / BASE, "HEAD: "),  # a folder of profiles, not a dataset
        (nightly.side("../x"), nightly.side(HEAD), "BASE: "),
    ):
        code, out, err = run_cli("regress", base, head)
        assert code == 2 and out == "" and err.startswith(f"tilescope: {message}") and len(err.splitlines()) == 1, err


def test_the_partitions_rebuild_the_loaders_tables(nightly):
    dataset = Dataset.open(nightly.dataset)
    for path in (f"{BASE}/{VIT}", f"{HEAD}/{VIT}", f"{HEAD}/{MID_V2}"):
        row = dataset.read_row(path)
        profile, arrays, plan = reopen_profile(dataset, row, path)
        loaded = load_memory_profile(nightly.root / path)
        for name, table in loaded.tables().items():
            assert getattr(profile, name).equals(table), (path, name)
        assert plan.peaks.standard == peaks_of(nightly.raw[path])["standard"]


def test_partitions_that_cannot_be_read_back_are_reported_not_compared(nightly, tmp_path):
    copy = tmp_path / "data"
    shutil.copytree(nightly.dataset, copy)
    dataset = Dataset.open(copy)
    head_row = dataset.read_row(f"{HEAD}/{VIT}")
    fragment = head_row["fragment"]
    dataset.fragment_path("values", "nightly", fragment).unlink()
    sharing = {
        r["path"]
        for r in dataset.rows().to_pylist()
        if r["fragment"] == fragment and r["path"].startswith((BASE, HEAD))
    }
    code, report, _ = regress_json(f"{copy}:{BASE}", f"{copy}:{HEAD}")
    assert code == 1
    assert report["regressed"] == []  # the rows say vit grew, but it cannot be verified: not compared
    # every compared profile whose rows were in that fragment; one only on one side is not read
    unpaired = {o["path"] for o in report["only_base"] + report["only_head"]}
    assert {f["path"] for f in report["failed"]} == sharing - unpaired and f"{HEAD}/{VIT}" in sharing
    failure = next(f for f in report["failed"] if f["path"] == f"{HEAD}/{VIT}")
    assert failure["side"] == "head" and failure["error"].startswith("regress: ") and "no such file" in failure["error"]
    # a recomputed column that disagrees with the stored tilings is refused, not attributed (in an
    # intact copy: BASE's vit may share the fragment whose values file was deleted above)
    intact = tmp_path / "intact"
    shutil.copytree(nightly.dataset, intact)
    dataset = Dataset.open(intact)
    base_row = dataset.read_row(f"{BASE}/{VIT}")
    steps_path = dataset.fragment_path("steps", "nightly", base_row["fragment"])
    steps = pq.read_table(steps_path)
    mine = pc.equal(steps.column("profile_key"), base_row["profile_key"]).to_pylist()
    first = mine.index(True)
    usage = steps.column("recomputed_usage_standard").to_pylist()
    usage[first + 3] += 16
    pq.write_table(
        steps.set_column(
            steps.schema.get_field_index("recomputed_usage_standard"), "recomputed_usage_standard", pa.array(usage)
        ),
        steps_path,
    )
    with pytest.raises(InputError) as caught:
        reopen_profile(dataset, base_row, "x")
    assert "recomputed_usage_standard at step 3" in str(caught.value)
