"""``serve --data-root``'s picker (``app.compare_open.data_root_files``, the file list the compare
view offers) lists the planner outputs under the data root by their content, whatever their names,
as ``tilescope batch`` recognises them; other files are left out, and no file is read whole.

The expected lists come from how each file was made (a copy of a sample, a generated profile, a
hand-written placement dump), not from the recogniser."""

from __future__ import annotations

import json
import os
import shutil
import tracemalloc
from pathlib import Path

import profile_generator as gen
from placement_profile_gen import placement_profile

from tilescope.app.compare_open import data_root_files

REPO = Path(__file__).resolve().parent.parent
PROFILE_SAMPLE = REPO / "sample_data" / "vit_finalist5.memory_profile.json"
SEARCH_SAMPLE = REPO / "sample_data" / "flash_attention.search_state.json"
EDITS_SAMPLE = REPO / "sample_data" / "edits_84.json"

DUMP = {  # a placement dump as the compiler writes it (spec: compiler-formats.md §4), keys sorted
    "assigned_root_spans": {},
    "host_scratch_range": [327680, 360448],
    "interleaved_offset": 0,
    "placed": False,
    "ranges": [[327680, 360448]],
    "region0_element_bytes": 16384,
    "region1_element_bytes": 32768,
    "region_boundary": 524288,
    "requests": [
        {
            "class": "Ipu21Standard",
            "region1_stride": None,
            "lifetime": {"first": 1, "last": 3, "seen": 1},
            "bytes": 64,
            "alignment": 8,
            "assignments": [[1, 0]],
            "conflicts": [],
        }
    ],
    "tile": 3,
    "version": 1,
}
HUGE_BYTES = 24 << 20


def build_root(root: Path) -> list[str]:
    """A data root of compiler-named planner outputs and other files; returns the planner outputs."""
    planner = [
        "finalist-5-12345-0001.json",  # a v1 memory profile, named as the compiler names profiles
        "nightly/finalist-6-12345-0002.json",  # a v3 memory profile
        "nightly/placement-12345.json",  # a placement profile
        "tiles/tile-3-0123456789abcdef.json",  # a placement dump
        "states/run-7.json",  # a search state
        "huge-9-12345-0003.json",  # a memory profile's head, then 24 MB the recogniser never reads
        "old.memory_profile.json",  # named as a profile, damaged: listed so opening it says why
    ]
    for folder in ("nightly", "tiles", "states", "notes", ".hidden"):
        (root / folder).mkdir(parents=True)
    shutil.copy(PROFILE_SAMPLE, root / planner[0])
    gen.write(gen.program_scaled(2), 3, root / planner[1])
    (root / planner[2]).write_text(json.dumps(placement_profile(tiles=2, seed=3)))
    (root / planner[3]).write_text(json.dumps(DUMP, indent=2, sort_keys=True))
    shutil.copy(SEARCH_SAMPLE, root / planner[4])
    with open(root / planner[5], "wb") as out:  # (not valid JSON as a whole: a full parse would refuse it)
        out.write(b'{"version": 1, "scope": "huge", "budget_bytes": 1048576, "timeline": {"values": [')
        out.write(b"0," * (HUGE_BYTES // 2))
    (root / planner[6]).write_bytes(PROFILE_SAMPLE.read_bytes()[:5000])

    shutil.copy(EDITS_SAMPLE, root / "notes" / "edits_84.json")  # JSON, not a planner output (a list)
    (root / "notes" / "settings.json").write_text('{"theme": "dark", "columns": ["name", "bytes"]}')
    (root / "notes" / "empty.json").write_text("")
    (root / "finalist-5-12345-0001.html").write_text("<!DOCTYPE html><html><script>{}</script></html>")
    (root / "notes" / "readme.txt").write_text("not JSON at all")
    (root / "notes" / "blob.bin").write_bytes(bytes(range(256)) * 64)
    shutil.copy(PROFILE_SAMPLE, root / ".hidden" / "placement-1.json")  # hidden folder: skipped
    shutil.copy(PROFILE_SAMPLE, root / ".finalist-0-1-0001.json")  # hidden file: skipped
    os.mkfifo(root / "notes" / "pipe-1-2-0004.json")  # never opened for reading: it would block
    return sorted(planner)


def test_the_picker_lists_exactly_the_planner_outputs_by_content(tmp_path):
    root = tmp_path / "root"
    expected = build_root(root)
    tracemalloc.start()
    try:
        names = data_root_files(root)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert names == expected
    # cheap: each file's first bytes only (64 KiB), not the 24 MB file or the 2.5 MB sample whole
    assert peak < 1 << 20, f"{peak:,} bytes allocated while listing"


def test_the_picker_limit_and_symlinks(tmp_path):
    """At most ``limit`` names; a symlink to a planner output outside the root is not listed, one
    inside it is (it resolves under the root)."""
    root = tmp_path / "root"
    root.mkdir()
    for k in range(5):
        shutil.copy(SEARCH_SAMPLE, root / f"state-{k}.json")
    outside = tmp_path / "outside-1-2-0001.json"
    shutil.copy(PROFILE_SAMPLE, outside)
    os.symlink(outside, root / "linked-out.json")
    os.symlink(root / "state-0.json", root / "linked-in.json")
    assert data_root_files(root) == sorted([f"state-{k}.json" for k in range(5)] + ["linked-in.json"])
    assert len(data_root_files(root, limit=3)) == 3
