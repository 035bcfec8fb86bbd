"""The advisor (planner.advisor) and ``tilescope advise``.

Each suggestion's verified peak is re-derived here without the planner: the edited value's new
shard bytes from docs/formats.md §2 applied to its layout text (parsed with a regex in this file), its
alias class and live steps and the recorded usage read from the sample with ``json.load``.
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import pytest

from tilescope.cli import main as cli_main
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.edits import TilingEdit
from tilescope.planner.advisor import advise
from tilescope.planner.edits import apply_edits
from tilescope.planner.model import plan_profile

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "vit_finalist5.memory_profile.json"
AXIS = re.compile(
    r"axis: (?P<kind>FromStart|FromEnd|Linear)(?:\((?P<k>\d+)\))?, partitions: (?P<p>\d+), "
    r"padding_groups: \d+, block_size: (?P<block>\d+), padding_multiple: (?P<pad>\d+), shard_padding_multiple: (?P<spm>\d+)"
)
REPLICAS = re.compile(r"replicas: (\d+)")


@pytest.fixture(scope="module")
def loaded():
    return plan_profile(load_memory_profile(SAMPLE))


def by_id(raw: dict) -> dict[int, dict]:
    return {v["id"]: v for v in raw["timeline"]["values"]}


def shard_by_hand(v: dict, partitions: dict[int, int]) -> int:
    """docs/formats.md §2 on the value's layout text, with some axes' partitions replaced."""
    dims = list(v["shape"])
    for position, m in enumerate(AXIS.finditer(v["layout"])):
        if m["kind"] == "Linear":
            dims, dim = [math.prod(dims)], 0
        else:
            k = int(m["k"])
            dim = k if m["kind"] == "FromStart" else len(dims) - k
        pad, block, spm = int(m["pad"]), int(m["block"]), int(m["spm"])
        blocks = -(-(-(-dims[dim] // pad) * pad) // block)
        per = -(-blocks // partitions.get(position, int(m["p"]))) * block
        dims[dim] = -(-per // spm) * spm
    element = {"F16": 2, "F32": 4}.get(v["precision"], 1)
    return math.prod(dims) * element


def expected_peak(raw: dict, edits: tuple[TilingEdit, ...], peak: str) -> tuple[int, int]:
    values = by_id(raw)
    root = values[edits[0].value]["root"]
    partitions = {e.axis: e.partitions for e in edits if e.partitions is not None}
    std = [s["usage"]["standard"] for s in raw["timeline"]["steps"]]
    intl = [s["usage"]["interleaved"] for s in raw["timeline"]["steps"]]
    for v in values.values():
        if v["root"] != root:
            continue
        # granule as the file shows it: 1 when aligned == shard, else the region's (16384 / 32768)
        shard = shard_by_hand(v, partitions)
        granule = 1 if v["aligned_bytes"] == v["shard_bytes"] else (16384 if v["class"] == "Ipu21Standard" else 32768)
        delta = -(-shard // granule) * granule * v["copies"] - v["bytes"]
        usage = std if v["class"] == "Ipu21Standard" else intl
        for s in raw["timeline"]["steps"]:
            if v["id"] in s["live"]:
                usage[s["index"]] += delta
    exchange = raw["peak"]["exchange_rows"]
    series = {"standard": std, "interleaved": intl, "total": [a + b for a, b in zip(std, intl)]}[peak]
    top = max(series)
    return top + (0 if peak == "interleaved" else exchange), series.index(top)


def live_classes_at(raw: dict, step: int, classes: set[str]) -> set[int]:
    values = by_id(raw)
    live = raw["timeline"]["steps"][step]["live"]
    return {values[i]["root"] for i in live if values[i]["class"] in classes}


@pytest.mark.parametrize("peak", ["standard", "interleaved", "total"])
def test_suggestions_are_verified(raw, loaded, peak):
    arrays, plan = loaded
    found = advise(arrays, plan, peak)
    assert found, "the sample has edits that lower every peak"
    recorded = {
        "standard": raw["peak"]["standard"],
        "interleaved": raw["peak"]["interleaved"],
        "total": raw["peak"]["total"],
    }[peak]
    step = raw[f"{peak}_peak_step"]
    regions = {
        "standard": {"Ipu21Standard"},
        "interleaved": {"Ipu21Interleaved"},
        "total": {"Ipu21Standard", "Ipu21Interleaved"},
    }[peak]
    candidates = live_classes_at(raw, step, regions)
    savings = [s.saving for s in found]
    assert savings == sorted(savings, reverse=True)
    for s in found:
        assert s.peak_before == recorded
        want_peak, want_step = expected_peak(raw, s.edits, peak)
        assert (s.peak_after, s.peak_step) == (want_peak, want_step), s.description
        assert s.saving == recorded - want_peak > 0
        assert by_id(raw)[s.edits[0].value]["root"] in candidates  # only classes live at the peak step


def test_standard_peak_top_candidate_is_84_split(raw, loaded):
    arrays, plan = loaded
    found = advise(arrays, plan, "standard", limit=5)
    top = found[0]
    # 84: FromEnd(2) 9 → 18 partitions needs replicas 54 → 27 to stay within 1472 tiles (3 × 18 × 27 = 1458).
    assert top.edits == (TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27))
    assert top.peak_after == expected_peak(raw, top.edits, "standard")[0]
    assert "84" in top.description and "18" in top.description and "27" in top.description


def test_advise_on_top_of_edits(raw, loaded):
    arrays, plan = loaded
    whatif = apply_edits(arrays, plan, [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)])
    found = advise(arrays, whatif.plan, "standard", whatif=whatif)
    assert found and all(s.peak_before == whatif.plan.peaks.standard for s in found)
    for s in found[:5]:  # re-planned with both the prior edits and the candidate
        again = apply_edits(arrays, plan, whatif.edits + s.edits)
        assert again.plan.peaks.standard == s.peak_after < whatif.plan.peaks.standard


def test_limit_and_bad_peak(loaded):
    arrays, plan = loaded
    assert len(advise(arrays, plan, "total", limit=3)) == 3
    with pytest.raises(ValueError):
        advise(arrays, plan, "biggest")


def test_smoke_speed_on_sample(loaded):
    arrays, plan = loaded
    started = time.perf_counter()
    for peak in ("standard", "interleaved", "total"):
        advise(arrays, plan, peak)
    assert time.perf_counter() - started < 5  # generous smoke bound; the real figure is in benchmarks/bench_replan.py


def test_cli_advise_json(loaded, capsys):
    arrays, plan = loaded
    code = cli_main(["advise", str(SAMPLE), "--peak", "standard", "--json", "--limit", "4"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["peak"] == "standard" and doc["peak_step"] == 45 and doc["peak_bytes"] == 206032
    assert len(doc["candidates"]) == 4
    assert doc["candidates"][0]["edits"] == [{"value": 84, "axis": 1, "partitions": 18}, {"value": 84, "replicas": 27}]
    assert [c["saving"] for c in doc["candidates"]] == [s.saving for s in advise(arrays, plan, "standard", limit=4)]


def test_cli_advise_text_and_bad_peak(capsys):
    assert cli_main(["advise", str(SAMPLE)]) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("total peak 429,904 B (419.8 KiB) at step 47")
    with pytest.raises(SystemExit) as caught:
        cli_main(["advise", str(SAMPLE), "--peak", "biggest"])
    assert caught.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1
