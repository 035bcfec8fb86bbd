"""Where everything lives in a fleet dataset, and how it is kept consistent.

::

    DATASET/
      tilescope-dataset.json          what the directory is (layout version), written when it is created
      profiles/<path key>.parquet     one row per input file (``schema.PROFILES``)
      <table>/<profile key>.parquet   for each table of ``schema.PROFILE_TABLES``: one file per loaded
                                      memory profile, every row carrying that ``profile_key``
      batches/<batch id>.json         each batch's DIR (absolute) and start time: where the input files
                                      of the rows it wrote were (``profiles.batch_id``)
      .staging/                       files being written
      .lock                           held by the batch that is writing the dataset

A profile's *path key* names the input file (its relative path); its *profile key* names one
content of that file (path, content hash, and whether it has partitions), so a changed file's new
partitions never overwrite the old ones. ``tilescope.fleet.writer`` commits a profile in this order: every partition written
under ``.staging/`` and renamed into its table; then the profile's row renamed over
``profiles/<path key>.parquet`` (the commit: one atomic rename); then the previous content's
partitions deleted. So at any moment, a crash included, every row of ``profiles`` has all its
partitions, complete. What a crash can leave is partitions whose key no row names (written before
a commit, or superseded and not yet deleted): a query that joins on ``profiles.profile_key`` (as
``tilescope fleet``'s views do) never sees them, and the next batch deletes them (``reconcile``).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from tilescope.models.files import write_atomically
from tilescope.models.errors import InputError

from .schema import PROFILE_TABLES, PROFILES

LAYOUT_VERSION = 1
MANIFEST_NAME = "tilescope-dataset.json"
_STAGING = ".staging"
_BATCHES = "batches"
_LOCK = ".lock"


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=10).hexdigest()


def path_key(path: str) -> str:
    """Key of an input file: a hash of its path relative to the batch's DIR."""
    return _digest(path)


def profile_key(path: str, content_hash: str | None, partitions: bool) -> str:
    """Key of one content of an input file (its rows in every table). A row with partitions (a
    loaded memory profile) and one without (a search state, a failure) never share a key, so
    replacing one by the other is the same commit as any other change."""
    return _digest(f"{path}\0{content_hash or ''}\0{'partitions' if partitions else 'row only'}")


class Dataset:
    """A fleet dataset directory. ``Dataset.create_or_open`` for a batch, ``Dataset.open`` to read."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    # ----------------------------------------------------------------------------- opening

    @classmethod
    def open(cls, root: str | Path) -> "Dataset":
        """An existing dataset; InputError when ``root`` is not one (or of another layout version)."""
        dataset = cls(root)
        manifest = dataset.root / MANIFEST_NAME
        if not dataset.root.is_dir():
            raise InputError("$", "a dataset directory written by `tilescope batch`", "no such directory", file=str(root))
        try:
            found = json.loads(manifest.read_text())
        except (OSError, ValueError):
            raise InputError("$", f"a dataset directory written by `tilescope batch` (with {MANIFEST_NAME})", "none", file=str(root)) from None
        if not isinstance(found, dict) or found.get("layout_version") != LAYOUT_VERSION:
            version = found.get("layout_version") if isinstance(found, dict) else None
            raise InputError("$.layout_version", f"dataset layout version {LAYOUT_VERSION}", repr(version), file=str(manifest))
        return dataset

    @classmethod
    def create_or_open(cls, root: str | Path) -> "Dataset":
        """The dataset at ``root``, created when ``root`` is missing or an empty directory. A
        non-empty directory that is not a dataset is refused: a batch deletes stale files in it."""
        path = Path(root)
        if path.exists() and not path.is_dir():
            raise InputError("$", "a directory for the dataset", "an existing file", file=str(path))
        if path.is_dir() and not (path / MANIFEST_NAME).exists():
            if any(path.iterdir()):
                raise InputError("$", f"an empty or new directory for the dataset, or a dataset (with {MANIFEST_NAME})", "a directory with other files", file=str(path))
        if not (path / MANIFEST_NAME).exists():
            path.mkdir(parents=True, exist_ok=True)
            manifest = {"format": "tilescope fleet dataset", "layout_version": LAYOUT_VERSION, "tables": ["profiles", *PROFILE_TABLES]}
            write_atomically(path / MANIFEST_NAME, json.dumps(manifest, indent=1).encode())
        dataset = cls.open(path)
        for name in ("profiles", *PROFILE_TABLES, _BATCHES, _STAGING):
            (dataset.root / name).mkdir(exist_ok=True)
        return dataset

    @contextmanager
    def locked(self):
        """Hold the dataset's lock for a batch; a second batch on the same dataset is refused."""
        handle = open(self.root / _LOCK, "a+")
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise InputError("$", "a dataset no other batch is writing", "another `tilescope batch` holds its lock", file=str(self.root)) from None
            yield self
        finally:
            handle.close()  # releases the lock

    # ----------------------------------------------------------------------------- paths

    def row_path(self, path: str) -> Path:
        return self.root / "profiles" / f"{path_key(path)}.parquet"

    def table_path(self, table: str, key: str) -> Path:
        return self.root / table / f"{key}.parquet"

    def table_files(self, table: str) -> list[Path]:
        folder = self.root / table
        return sorted(folder.glob("*.parquet")) if folder.is_dir() else []

    def staging_dir(self) -> Path:
        """A new, empty folder under ``.staging`` (same filesystem as the tables: renames are atomic)."""
        base = self.root / _STAGING
        base.mkdir(exist_ok=True)
        return Path(tempfile.mkdtemp(dir=base))

    # ----------------------------------------------------------------------------- batches

    def write_batch_record(self, batch_id: str, directory: str | Path, started_at: str) -> None:
        """Record where a batch's input files are (before it writes any row)."""
        (self.root / _BATCHES).mkdir(exist_ok=True)
        record = {"batch_id": batch_id, "directory": str(directory), "started_at": started_at}
        write_atomically(self.root / _BATCHES / f"{batch_id}.json", json.dumps(record, indent=1).encode())

    def batch_directory(self, batch_id: str) -> Path | None:
        """The DIR of the batch that wrote a row; None when not recorded (datasets written before
        batches were recorded) or unreadable."""
        if not batch_id or not all(c in "0123456789abcdef" for c in batch_id):
            return None  # a batch id is a uuid4 hex; anything else names no record
        try:
            record = json.loads((self.root / _BATCHES / f"{batch_id}.json").read_text())
            return Path(record["directory"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    # ----------------------------------------------------------------------------- rows

    def read_row(self, path: str) -> dict | None:
        """The committed row of input file ``path``, or None."""
        try:
            rows = pq.read_table(self.row_path(path), schema=PROFILES).to_pylist()
        except FileNotFoundError:
            return None
        return rows[0] if rows and rows[0]["path"] == path else None

    def rows(self) -> pa.Table:
        """Every committed ``profiles`` row."""
        files = [str(p) for p in self.table_files("profiles")]
        if not files:
            return PROFILES.empty_table()
        return pads.dataset(files, schema=PROFILES, format="parquet").to_table()

    # ----------------------------------------------------------------------------- consistency

    def reconcile(self) -> dict[str, int]:
        """Undo what an interrupted batch left: staging folders, partitions no row names, and
        (only if a file was deleted by hand) rows whose partitions are missing, so that their
        input files are normalised again. Call it holding the lock."""
        staged = 0
        for leftover in (self.root / _STAGING).iterdir():
            shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)
            staged += 1
        rows = self.rows()
        loaded = [
            (key, path)
            for key, path, kind, error in zip(
                *(rows.column(c).to_pylist() for c in ("profile_key", "path", "kind", "error"))
            )
            if error is None and kind == "memory_profile"
        ]
        present = {table: {p.stem for p in self.table_files(table)} for table in PROFILE_TABLES}
        incomplete = [(key, path) for key, path in loaded if any(key not in present[t] for t in PROFILE_TABLES)]
        for _, path in incomplete:
            self.row_path(path).unlink(missing_ok=True)
        committed = {key for key, _ in loaded} - {key for key, _ in incomplete}
        orphans = 0
        for table, keys in present.items():
            for key in keys - committed:
                self.table_path(table, key).unlink(missing_ok=True)
                orphans += 1
        return {"staging": staged, "orphan_partitions": orphans, "incomplete_rows": len(incomplete)}

