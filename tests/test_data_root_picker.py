"""``serve --data-root``'s picker (``app.compare_open.data_root_files``, the file list the compare
view offers) lists the planner outputs under the data root by their content, whatever their names,
as ``tilescope batch`` recognises them; other files are left out, and no file is read whole.

The expected lists come from how each file was made (a copy of a sample, a generated profile, a
hand-written placement dump), not from the recogniser."""

from __future__ import annotations

import os
import shutil
import tracemalloc
from pathlib import Path

from fleet_support import PROFILE_SAMPLE, SAMPLE_DIR, SEARCH_SAMPLE, write_compiler_outputs

from tilescope.app.compare_open import data_root_files

EDITS_SAMPLE = SAMPLE_DIR / "edits_84.json"
HUGE_BYTES = 24 << 20


def build_root(root: Path) -> list[str]:
    """A data root of compiler-named planner outputs and other files; returns the planner outputs."""
    for folder in ("states", "notes", ".hidden"):
        (root / folder).mkdir(parents=True)
    # v1 and v3 memory profiles, a placement profile and a placement dump, named as the compiler names
    # them (and beside them the compiler's HTML copy of the first profile: not a planner output)
    compiler = write_compiler_outputs(
        root,
        {
            "finalist-6-12345-0002.json": "nightly",
            "placement-12345.json": "nightly",
            "tile-3-0123456789abcdef.json": "tiles",
        },
    )
    state = "states/run-7.json"  # a search state
    huge = "huge-9-12345-0003.json"  # a memory profile's head, then 24 MB the recogniser never reads
    damaged = "old.memory_profile.json"  # named as a profile, damaged: listed so opening it says why
    shutil.copy(SEARCH_SAMPLE, root / state)
    with open(root / huge, "wb") as out:  # (not valid JSON as a whole: a full parse would refuse it)
        out.write(b'{"version": 1, "scope": "huge", "budget_bytes": 1048576, "timeline": {"values": [')
        out.write(b"0," * (HUGE_BYTES // 2))
    (root / damaged).write_bytes(PROFILE_SAMPLE.read_bytes()[:5000])

    shutil.copy(EDITS_SAMPLE, root / "notes" / "edits_84.json")  # JSON, not a planner output (a list)
    (root / "notes" / "settings.json").write_text('{"theme": "dark", "columns": ["name", "bytes"]}')
    (root / "notes" / "empty.json").write_text("")
    (root / "notes" / "readme.txt").write_text("not JSON at all")
    (root / "notes" / "blob.bin").write_bytes(bytes(range(256)) * 64)
    shutil.copy(PROFILE_SAMPLE, root / ".hidden" / "placement-1.json")  # hidden folder: skipped
    shutil.copy(PROFILE_SAMPLE, root / ".finalist-0-1-0001.json")  # hidden file: skipped
    os.mkfifo(root / "notes" / "pipe-1-2-0004.json")  # never opened for reading: it would block
    return sorted([*compiler, state, huge, damaged])


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
