"""Nightly folders of planner outputs, batched once into a dataset inside the same folder (a data
root the app can serve), for the regress and fleet-view tests.

HEAD profiles are edited copies of BASE ones, edited here on the raw JSON (``compare_support``:
layout text edited, every figure recomputed by docs/formats.md §2 written out again), never by
tilescope::

    nightly/2024-05-01/  BASE: vit (the sample), small and mid (synthetic), the search state
    nightly/2024-05-02/  HEAD: vit with value 84's axis 1 cut into 3 partitions instead of 9
                         (+124,416 B at the standard peak); small unchanged; mid renamed to
                         mid_v2 with 1,000 B more standard scratch at its standard peak step
    nightly/2024-05-03/  a byte-for-byte copy of 2024-05-01
    nightly/2024-05-04/  2024-05-01 with small truncated (does not load)
    fleet-data/          the dataset (``tilescope batch data-root --out data-root/fleet-data``)
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from compare_support import refigure, with_edits, write
from fleet_support import PROFILE_SAMPLE, SEARCH_SAMPLE, run_cli

from tilescope.synth import write_synthetic_profile

BASE, HEAD, COPY, BROKEN = (f"nightly/2024-05-0{d}" for d in (1, 2, 3, 4))
VIT, SMALL, MID, MID_V2, SEARCH = (
    "vit.memory_profile.json",
    "small.memory_profile.json",
    "mid.memory_profile.json",
    "mid_v2.memory_profile.json",
    "flash_attention.search_state.json",
)
EDITED_VALUE, EDITED_AXIS, EDITED_PARTITIONS = 84, 1, 3
EXTRA_SCRATCH = 1000
SCOPES = {VIT: "vit-finalist5", SMALL: "small-finalist1", MID: "mid-finalist2", MID_V2: "mid-finalist2"}


def standard_peak_step(raw: dict) -> int:
    from compare_support import peaks_of

    return peaks_of(raw)["standard_peak_step"]


@dataclass(frozen=True)
class Nightly:
    root: Path  # the data root
    dataset: Path
    raw: dict[str, dict]  # "folder/name" → the JSON written there
    batch_code: int

    def side(self, folder: str) -> str:
        return f"{self.dataset}:{folder}"


def _synthetic(path: Path, blocks: int, layers: int, scope: str) -> dict:
    write_synthetic_profile(path, blocks, layers)
    raw = json.loads(path.read_text())
    raw["scope"] = scope
    write(raw, path)
    return raw


def build_nightly(root: Path) -> dict[str, dict]:
    raws: dict[str, dict] = {}
    base = root / BASE
    base.mkdir(parents=True)
    vit = json.loads(PROFILE_SAMPLE.read_text())
    vit["scope"] = SCOPES[VIT]
    raws[f"{BASE}/{VIT}"] = json.loads(write(vit, base / VIT).read_text())
    raws[f"{BASE}/{SMALL}"] = _synthetic(base / SMALL, 1, 2, SCOPES[SMALL])
    raws[f"{BASE}/{MID}"] = _synthetic(base / MID, 2, 3, SCOPES[MID])
    shutil.copy(SEARCH_SAMPLE, base / SEARCH)

    head = root / HEAD
    head.mkdir(parents=True)
    edited = with_edits(raws[f"{BASE}/{VIT}"], [(EDITED_VALUE, EDITED_AXIS, EDITED_PARTITIONS)])
    raws[f"{HEAD}/{VIT}"] = json.loads(write(edited, head / VIT).read_text())
    shutil.copy(base / SMALL, head / SMALL)
    raws[f"{HEAD}/{SMALL}"] = raws[f"{BASE}/{SMALL}"]
    mid = json.loads((base / MID).read_text())
    mid["timeline"]["steps"][standard_peak_step(mid)]["scratch"]["standard"] += EXTRA_SCRATCH
    refigure(mid)
    raws[f"{HEAD}/{MID_V2}"] = json.loads(write(mid, head / MID_V2).read_text())
    shutil.copy(SEARCH_SAMPLE, head / SEARCH)

    shutil.copytree(base, root / COPY)
    shutil.copytree(base, root / BROKEN)
    (root / BROKEN / SMALL).write_bytes((base / SMALL).read_bytes()[:20_000])
    for name in (VIT, MID):
        raws[f"{COPY}/{name}"] = raws[f"{BROKEN}/{name}"] = raws[f"{BASE}/{name}"]
    raws[f"{COPY}/{SMALL}"] = raws[f"{BASE}/{SMALL}"]
    return raws


@pytest.fixture(scope="session")
def nightly(tmp_path_factory) -> Nightly:
    """The folders above, batched (2 local worker processes) into ``root/fleet-data``."""
    root = tmp_path_factory.mktemp("nightly_root")
    raws = build_nightly(root)
    dataset = root / "fleet-data"
    code, _, err = run_cli("batch", root, "--out", dataset, "--workers", "2", "--json")
    assert "loaded" in err
    return Nightly(root, dataset, raws, code)
