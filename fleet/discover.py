"""Which files under a directory a batch normalises.

A planner output is named ``*.memory_profile.json`` or ``*.search_state.json`` (docs/formats.md
§1, §3); which of the two a file is, is told from its content by the loader, whatever its name.
Other ``.json`` files (edit sets, configs) are not planner outputs: they are counted, not loaded,
so they never fail a batch. Folders and files whose name starts with '.' are skipped, and so is
the dataset itself when it lies under the directory; symlinked folders are not followed (no
cycles), symlinked files are read.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tilescope.models.errors import InputError

PLANNER_OUTPUT_SUFFIXES = (".memory_profile.json", ".search_state.json")


@dataclass(frozen=True)
class Found:
    paths: list[str]  # relative to the directory, '/'-separated, sorted
    other_json: list[str]  # .json files not named as planner outputs


def find_planner_outputs(root: str | Path, exclude: str | Path | None = None) -> Found:
    base = Path(root)
    if not base.is_dir():
        raise InputError("$", "a directory of planner outputs", "no such directory" if not base.exists() else "a file", file=str(root))
    skip = Path(exclude).resolve() if exclude is not None else None
    paths, others = [], []
    for folder, subfolders, files in os.walk(base, followlinks=False):
        here = Path(folder)
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and (here / d).resolve() != skip)
        for name in files:
            if name.startswith(".") or not name.endswith(".json"):
                continue
            rel = (here / name).relative_to(base).as_posix()
            if not name.endswith(PLANNER_OUTPUT_SUFFIXES):
                others.append(rel)
            elif (here / name).is_file():
                paths.append(rel)
    return Found(sorted(paths), sorted(others))
