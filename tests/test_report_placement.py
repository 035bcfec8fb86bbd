"""The report's placement outputs: ``allocations.csv`` (every allocation once, names neutralised) and
the address views added to the PNG."""

from __future__ import annotations

import copy
import csv
import io
import json
from collections import Counter

import numpy as np
from PIL import Image
from placement_support import expected_allocations, sweep_overlaps

from tilescope.derived.opening import opened_profile
from tilescope.derived.plan_data import PlanData
from tilescope.loaders.memory_profile import load_memory_profile, parse_memory_profile
from tilescope.models.edits import TilingEdit
from tilescope.planner.edits import apply_edits
from tilescope.report.files import build_report
from tilescope.report.tables import ALLOCATIONS_CSV, report_tables
from tilescope.synth import SAMPLE_PATH


def rows_of(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def test_allocations_csv_has_every_allocation_once(raw):
    profile = load_memory_profile(SAMPLE_PATH)
    opened = opened_profile("sample", profile)
    rows = rows_of(report_tables(opened.base)[ALLOCATIONS_CSV])
    got = Counter(
        (
            r["kind"],
            int(r["id"]) if r["id"] else None,
            r["region"],
            int(r["bytes"]),
            int(r["first_step"]),
            int(r["last_step"]),
        )
        for r in rows
    )
    assert got == expected_allocations(raw)
    names = {v["id"]: v["name"] for v in raw["timeline"]["values"]}
    assert all(r["name"] == names[int(r["id"])] for r in rows if r["id"])
    assert all(r["name"] == "" for r in rows if not r["id"])
    assert all(int(r["end"]) == int(r["offset"]) + int(r["bytes"]) for r in rows)
    column = {k: np.array([int(r[k]) for r in rows]) for k in ("offset", "bytes", "first_step", "last_step")}
    region = np.array([r["region"] == "interleaved" for r in rows], dtype=np.int8)
    assert sweep_overlaps(region, column["offset"], column["bytes"], column["first_step"], column["last_step"]) == 0


def test_allocations_csv_after_edits(raw):
    profile = load_memory_profile(SAMPLE_PATH)
    opened = opened_profile("sample", profile)
    arrays, plan = opened.arrays, opened.plan
    whatif = apply_edits(arrays, plan, [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)])
    rows = rows_of(report_tables(PlanData(opened, whatif))[ALLOCATIONS_CSV])
    assert {int(r["bytes"]) for r in rows if r["id"] == "84"} == {32256}
    assert max(int(r["end"]) for r in rows if r["region"] == "standard") == whatif.plan.peaks.standard


def test_allocation_names_cannot_run_in_a_spreadsheet(raw):
    hostile = copy.deepcopy(raw)
    value = next(v for v in hostile["timeline"]["values"] if v["id"] == 85)
    value["name"] = '=HYPERLINK("http://example.invalid","x")'
    profile = parse_memory_profile(json.dumps(hostile).encode(), "hostile.memory_profile.json")
    opened = opened_profile("sample", profile)
    rows = rows_of(report_tables(opened.base)[ALLOCATIONS_CSV])
    assert {r["name"] for r in rows if r["id"] == "85"} == {"'" + value["name"]}


def test_png_gains_the_address_views():
    profile = load_memory_profile(SAMPLE_PATH)
    opened = opened_profile("sample", profile)
    image = Image.open(io.BytesIO(build_report(opened.base).png))
    width, height = image.size
    assert (width, height) == (1600, 1860)  # 16 × 14 inches at 100 dpi (72fbb60), plus the 4.6-inch strip
    strip = np.asarray(image.convert("RGB"))[1400:1800, 60:1540].astype(int)
    # The standard region's value colour (#1f77b4) and the interleaved one (#ff7f0e) are drawn there.
    blue = np.all(np.abs(strip - [31, 119, 180]) < 40, axis=2).sum()
    orange = np.all(np.abs(strip - [255, 127, 14]) < 40, axis=2).sum()
    assert blue > 5_000 and orange > 5_000
