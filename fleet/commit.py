"""Writing a fleet dataset (the layout is in ``fleet.layout``): the repair a batch runs first, the
fragments the workers write, and the commit the batch's client makes.

- **Workers** write one fragment per per-profile table for the files of one task (``write_fragment``:
  one row group per profile) under ``.staging/<fragment>/``, and send back only the rows.
- **The client** (``Committer``) renames each finished task's fragments into their partitions,
  then, every ``COMMIT_SECONDS`` and at the end, replaces each changed folder's ``profiles`` file
  (one atomic rename per folder: the commit), then deletes the fragments no row names any more
  and rewrites those that hold rows of superseded contents. Its work per commit is per folder and
  per fragment, never per input file.
- **Repair** (``repair``, under the lock, before a batch): damaged entries of the structure are
  removed (a FIFO, a directory where a file belongs, a file where a directory belongs); every
  ``profiles`` file and every fragment is read and checked (regular file, Parquet, the table's
  columns), and a damaged one is deleted; a row whose fragment is missing, damaged or lacks its
  rows is dropped, so its input file is normalised again by this batch; staging leftovers and
  fragments no row names are deleted. Each action is counted in the batch's report.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from tilescope.models.errors import InputError
from tilescope.models.files import atomic_output

from .layout import BATCHES, STAGING, TABLES, Dataset, folder_of, read_parquet
from .schema import PROFILE_TABLES, PROFILES

COMMIT_SECONDS = 30.0


def write_fragment(path: Path, table: str, parts: Iterable[pa.Table]) -> None:
    """One file of ``table``: each part (one profile's rows) its own row group."""
    schema = PROFILE_TABLES[table]
    with pq.ParquetWriter(path, schema) as writer:
        for part in parts:
            if part.num_rows:
                writer.write_table(part.cast(schema))


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _is_loaded(row: dict) -> bool:
    return row["error"] is None and row["kind"] == "memory_profile"


@dataclass
class Committer:
    """What the client knows of the dataset while a batch runs, and the commit (module doc)."""

    dataset: Dataset
    rows: dict[str, dict] = field(default_factory=dict)  # path → committed or pending row
    members: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (folder, fragment) → profile keys in it
    dirty: set[str] = field(default_factory=set)  # folders whose profiles file must be rewritten
    last_commit: float = field(default_factory=time.monotonic)

    def place(self, folder: str, fragment: str, stage: Path, keys: set[str]) -> None:
        """Rename a finished task's staged fragment into its partitions (not yet named by a row)."""
        for table in PROFILE_TABLES:
            target = self.dataset.fragment_path(table, folder, fragment)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / f"{table}.parquet", target)
        self.members[(folder, fragment)] = set(keys)
        shutil.rmtree(stage, ignore_errors=True)

    def record(self, row: dict) -> None:
        self.rows[row["path"]] = {name: row.get(name) for name in PROFILES.names}
        self.dirty.add(folder_of(row["path"]))

    def maybe_commit(self) -> None:
        if self.dirty and time.monotonic() - self.last_commit >= COMMIT_SECONDS:
            self.commit()

    def commit(self) -> None:
        """Each changed folder's ``profiles`` file replaced, then unnamed rows collected."""
        by_folder: dict[str, list[dict]] = {}
        for path, row in self.rows.items():
            by_folder.setdefault(folder_of(path), []).append(row)
        for folder in sorted(self.dirty):
            rows = sorted(by_folder.get(folder, []), key=lambda r: r["path"])
            target = self.dataset.profiles_path(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            with atomic_output(target, overwrite=True) as handle:
                pq.write_table(pa.Table.from_pylist(rows, schema=PROFILES), handle)
        self.dirty.clear()
        self.collect()
        self.last_commit = time.monotonic()

    def collect(self) -> int:
        """Delete fragments no row names; rewrite those holding rows of superseded contents.
        Returns how many fragments changed."""
        live: dict[tuple[str, str], set[str]] = {}
        for path, row in self.rows.items():
            if _is_loaded(row) and row["fragment"]:
                live.setdefault((folder_of(path), row["fragment"]), set()).add(row["profile_key"])
        changed = 0
        for (folder, fragment), keys in list(self.members.items()):
            keep = live.get((folder, fragment), set())
            if keep == keys:
                continue
            changed += 1
            if not keep:
                for table in PROFILE_TABLES:
                    self.dataset.fragment_path(table, folder, fragment).unlink(missing_ok=True)
                del self.members[(folder, fragment)]
                continue
            for table in PROFILE_TABLES:
                file = self.dataset.fragment_path(table, folder, fragment)
                found = read_parquet(file, table)
                kept = found.filter(pc.is_in(found.column("profile_key"), pa.array(sorted(keep), pa.string())))
                with atomic_output(file, overwrite=True) as handle:
                    pq.write_table(kept, handle)
            self.members[(folder, fragment)] = keep
        return changed


def repair(dataset: Dataset) -> tuple[Committer, dict]:
    """Check and repair the dataset before a batch writes it (module doc). Returns the client's
    state and what was done: counts, and ``damaged`` as ``[{path, why}]``."""
    damaged: list[dict] = []

    def drop(path: Path, why: str) -> None:
        damaged.append({"path": str(path), "why": why})
        _remove(path)

    for path, why in dataset.problems():
        drop(path, why)
    for name in (*TABLES, BATCHES, STAGING):
        (dataset.root / name).mkdir(exist_ok=True)
    staged = 0
    for leftover in (dataset.root / STAGING).iterdir():
        _remove(leftover)
        staged += 1

    committer = Committer(dataset)
    for folder, path in dataset.table_files("profiles"):
        try:
            table = read_parquet(path, "profiles")
        except InputError as exc:
            drop(path, exc.found or str(exc))
            continue
        for row in table.to_pylist():
            if folder_of(row["path"]) != folder or row["path"] in committer.rows:
                committer.dirty.add(folder)  # a row in the wrong partition, or twice: dropped
                continue
            committer.rows[row["path"]] = row

    # Fragments: which profile keys each holds (profile_headers has one row per profile).
    files: dict[tuple[str, str], dict[str, Path]] = {}
    for table in PROFILE_TABLES:
        for folder, path in dataset.table_files(table):
            files.setdefault((folder, path.stem), {})[table] = path
    for fragment, tables in files.items():
        try:
            for table, path in tables.items():
                read_parquet(path, table, columns=["profile_key"])
            if set(tables) != set(PROFILE_TABLES):
                raise InputError(
                    "$", "a file in every table", f"missing in {', '.join(sorted(set(PROFILE_TABLES) - set(tables)))}"
                )
            keys = (
                read_parquet(tables["profile_headers"], "profile_headers", columns=["profile_key"])
                .column(0)
                .to_pylist()
            )
            committer.members[fragment] = set(keys)
        except InputError as exc:
            for path in tables.values():
                drop(path, f"fragment {fragment[1]}: {exc.found or exc}")

    incomplete = 0
    for input_path, row in list(committer.rows.items()):
        if _is_loaded(row) and row["profile_key"] not in committer.members.get(
            (folder_of(input_path), row["fragment"] or ""), set()
        ):
            del committer.rows[input_path]  # its rows are gone: normalised again by this batch
            committer.dirty.add(folder_of(input_path))
            incomplete += 1
    if committer.dirty:
        committer.commit()
    collected = committer.collect()
    return committer, {
        "staging": staged,
        "damaged": damaged,
        "incomplete_rows": incomplete,
        "fragments_collected": collected,
    }
