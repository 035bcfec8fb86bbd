"""Where everything lives in a fleet dataset, and how it is read safely.

::

    DATASET/
      tilescope-dataset.json                   what the directory is (layout version 2), written when created
      profiles/folder=F/profiles.parquet       one row per input file under folder F (``schema.PROFILES``)
      <table>/folder=F/<fragment>.parquet      for each table of ``schema.PROFILE_TABLES``: the rows of the
                                               memory profiles one batch task loaded, one row group each
      batches/<batch id>.json                  each batch's DIR (absolute) and start time
      .staging/                                fragments being written by the workers
      .lock                                    held by the batch that is writing the dataset

``F`` is the first folder of a file's path below DIR ('.' for files directly in DIR), written as a
Hive partition (``folder=`` and the name percent-encoded), so DuckDB (``hive_partitioning``),
polars and pyarrow read each table as one dataset with ``folder`` as a column, and a filter on it
reads only that folder's files. A batch task handles many files of one folder and writes one
*fragment* per table for all of them, so a dataset has a few files per folder and table, not one
per profile.

A profile's *profile key* names one content of one input file (path, content hash, and whether it
has rows in the per-profile tables), so a changed file's new rows never mix with the old ones;
its ``profiles`` row names the fragment holding them. The commit protocol is in
``fleet.commit``: fragments are renamed into place first, then the folder's ``profiles`` file is
replaced (atomically), then fragments no row names are deleted. A reader that joins on
``profiles.profile_key`` (as ``tilescope fleet``'s views do) never sees rows of a superseded or
uncommitted content.

Everything read here is checked first: only regular files (a FIFO, socket or device inside the
dataset is refused before a byte is read, never handed to DuckDB), each Parquet file readable and
of its table's columns. A damaged dataset is one ``InputError`` line naming the damaged file and
saying that ``tilescope batch … --out DATASET`` repairs it (``fleet.commit.repair``).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, unquote

import pyarrow as pa
import pyarrow.parquet as pq

from tilescope.loaders.json_input import file_kind
from tilescope.models.errors import InputError
from tilescope.models.files import write_atomically

from .schema import FOLDER, PROFILE_TABLES, PROFILES

LAYOUT_VERSION = 2
MANIFEST_NAME = "tilescope-dataset.json"
PROFILES_FILE = "profiles.parquet"
STAGING = ".staging"
BATCHES = "batches"
LOCK = ".lock"
TABLES = ("profiles", *PROFILE_TABLES)
REPAIR_HINT = "`tilescope batch DIR --out DATASET` repairs the dataset"


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=10).hexdigest()


def profile_key(path: str, content_hash: str | None, partitions: bool) -> str:
    """Key of one content of an input file (its rows in every table). A row with partitions (a
    loaded memory profile) and one without (a search state, a failure) never share a key, so
    replacing one by the other is the same commit as any other change."""
    return _digest(f"{path}\0{content_hash or ''}\0{'partitions' if partitions else 'row only'}")


def folder_of(path: str) -> str:
    """The partition of an input file's row: its path's first folder ('.' at the top of DIR)."""
    head, sep, _ = path.partition("/")
    return head if sep else "."


def partition_name(folder: str) -> str:
    return f"{FOLDER}={quote(folder, safe='')}"


def _unreadable(path: Path, table: str, found: str) -> InputError:
    return InputError("$", f"a Parquet file of the dataset's {table} table ({REPAIR_HINT})", found, file=str(path))


def read_parquet(path: Path, table: str, columns: list[str] | None = None) -> pa.Table:
    """A dataset file, read only if it is a regular file (opened without blocking, so a FIFO is
    refused, not waited on) and of ``table``'s columns; else one InputError naming it."""
    pf = open_parquet(path, table)
    try:
        found = pf.read(columns=columns)
    except (OSError, pa.ArrowException) as exc:
        raise _unreadable(path, table, " ".join(str(exc).split()) or type(exc).__name__) from None
    finally:
        pf.close(force=True)
    return found


def open_parquet(path: Path, table: str) -> pq.ParquetFile:
    """``pq.ParquetFile`` of a regular file whose columns are ``table``'s (see ``read_parquet``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _unreadable(path, table, exc.strerror or str(exc)) from None
    handle = None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _unreadable(path, table, f"{file_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
        pf = pq.ParquetFile(handle)
    except InputError:
        (handle.close() if handle else os.close(fd))
        raise
    except (OSError, pa.ArrowException) as exc:
        (handle.close() if handle else os.close(fd))
        raise _unreadable(path, table, " ".join(str(exc).split()) or type(exc).__name__) from None
    expected = PROFILES if table == "profiles" else PROFILE_TABLES[table]
    found = pf.schema_arrow
    if [(f.name, f.type) for f in found] != [(f.name, f.type) for f in expected]:
        pf.close(force=True)
        names = ", ".join(found.names[:6]) + (", …" if len(found.names) > 6 else "")
        raise _unreadable(path, table, f"a Parquet file of other columns ({names})")
    return pf


class Dataset:
    """A fleet dataset directory. ``Dataset.open`` to read (checked), ``fleet.commit`` to write."""

    def __init__(self, root: str | Path):
        self.root = Path(os.path.abspath(root))  # absolute: a relative 'ds:x' is never read as a URI

    # ----------------------------------------------------------------------------- opening

    @classmethod
    def open(cls, root: str | Path, *, check: bool = True, tables: Iterable[str] = TABLES) -> Dataset:
        """An existing dataset, its structure checked (``problems``: every entry a regular file
        or directory where one belongs) and every file of ``tables`` read to its footer (a Parquet
        file of the table's columns); InputError when ``root`` is not one, is of another layout
        version, or is damaged. A reader names the tables it reads: the others' files are read
        (and checked) only when a row of them is (``profile_rows``)."""
        dataset = cls(root)
        dataset.read_manifest(str(root))
        if check:
            problems = dataset.problems()
            if problems:
                path, why = problems[0]
                more = f" (and {len(problems) - 1} more damaged)" if len(problems) > 1 else ""
                raise InputError("$", f"a file of the dataset ({REPAIR_HINT}){more}", why, file=str(path))
            for table in tables:  # every file's footer: a Parquet file of its table's columns
                for _, path in dataset.table_files(table):
                    open_parquet(path, table).close(force=True)
        return dataset

    def read_manifest(self, name: str) -> None:
        if not self.root.is_dir():
            raise InputError("$", "a dataset directory written by `tilescope batch`", "no such directory", file=name)
        manifest = self.root / MANIFEST_NAME
        try:
            mode = manifest.lstat().st_mode
            if not stat.S_ISREG(mode):
                raise InputError("$", f"{MANIFEST_NAME} a regular file", file_kind(mode), file=str(manifest))
            found = json.loads(manifest.read_bytes())
        except (OSError, ValueError):
            raise InputError(
                "$", f"a dataset directory written by `tilescope batch` (with {MANIFEST_NAME})", "none", file=name
            ) from None
        if not isinstance(found, dict) or found.get("layout_version") != LAYOUT_VERSION:
            version = found.get("layout_version") if isinstance(found, dict) else None
            earlier = "; batch the files again into a new DATASET" if version == 1 else ""
            raise InputError(
                "$.layout_version",
                f"dataset layout version {LAYOUT_VERSION}{earlier}",
                repr(version),
                file=str(manifest),
            )

    @staticmethod
    def new_manifest() -> bytes:
        manifest = {
            "format": "tilescope fleet dataset",
            "layout_version": LAYOUT_VERSION,
            "tables": list(TABLES),
            "partitioning": {"flavor": "hive", "column": FOLDER, "encoding": "uri"},
        }
        return json.dumps(manifest, indent=1).encode()

    @classmethod
    def create(cls, root: str | Path) -> Dataset:
        """A new dataset at ``root`` (missing or an empty directory); a non-empty directory that
        is not a dataset is refused: a batch deletes stale files in it."""
        path = Path(root)
        if path.exists() and not path.is_dir():
            raise InputError("$", "a directory for the dataset", "an existing file", file=str(path))
        if path.is_dir() and not os.path.lexists(path / MANIFEST_NAME) and any(path.iterdir()):
            raise InputError(
                "$",
                f"an empty or new directory for the dataset, or a dataset (with {MANIFEST_NAME})",
                "a directory with other files",
                file=str(path),
            )
        if not os.path.lexists(path / MANIFEST_NAME):
            path.mkdir(parents=True, exist_ok=True)
            write_atomically(path / MANIFEST_NAME, cls.new_manifest())
        dataset = cls(path)
        dataset.read_manifest(str(root))
        return dataset

    # ----------------------------------------------------------------------------- checking

    def problems(self) -> list[tuple[Path, str]]:
        """Every damaged entry of the dataset's structure, without reading a table file: a table
        folder that is not a directory, an entry of one that is not a ``folder=`` directory, a
        file of a partition that is not a regular ``.parquet`` file, a ``.lock`` that is not a
        regular file, a ``.staging`` or ``batches`` that is not a directory. Names starting with
        '.' inside partitions (files being written) are not read and not listed."""
        out: list[tuple[Path, str]] = []
        for name, want_dir in ((LOCK, False), (STAGING, True), (BATCHES, True), *((t, True) for t in TABLES)):
            path = self.root / name
            try:
                mode = path.lstat().st_mode
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(mode) != want_dir or (not want_dir and not stat.S_ISREG(mode)):
                out.append((path, f"{file_kind(mode)}, expected {'a directory' if want_dir else 'a regular file'}"))
                continue
            if name in TABLES:
                out += self._table_problems(path)
        return out

    def _table_problems(self, folder: Path) -> list[tuple[Path, str]]:
        out = []
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if not entry.name.startswith(f"{FOLDER}=") or not entry.is_dir(follow_symlinks=False):
                    kind = (
                        "a directory"
                        if entry.is_dir(follow_symlinks=False)
                        else file_kind(entry.stat(follow_symlinks=False).st_mode)
                    )
                    out.append((Path(entry.path), f"{kind}, expected a partition directory {FOLDER}=…"))
                    continue
                with os.scandir(entry.path) as files:
                    for f in files:
                        if f.name.startswith("."):
                            continue
                        mode = f.stat(follow_symlinks=False).st_mode
                        if not stat.S_ISREG(mode) or not f.name.endswith(".parquet"):
                            out.append(
                                (
                                    Path(f.path),
                                    f"{file_kind(mode) if not stat.S_ISREG(mode) else 'a file not named *.parquet'}, expected a Parquet file",
                                )
                            )
        return out

    # ----------------------------------------------------------------------------- paths

    def partition_dir(self, table: str, folder: str) -> Path:
        return self.root / table / partition_name(folder)

    def profiles_path(self, folder: str) -> Path:
        return self.partition_dir("profiles", folder) / PROFILES_FILE

    def fragment_path(self, table: str, folder: str, fragment: str) -> Path:
        return self.partition_dir(table, folder) / f"{fragment}.parquet"

    def table_files(self, table: str) -> list[tuple[str, Path]]:
        """(folder, file) of every file of ``table`` (dotfiles, being written, left out)."""
        base = self.root / table
        out: list[tuple[str, Path]] = []
        if not base.is_dir():
            return out
        for part in sorted(base.iterdir()):
            if part.name.startswith(f"{FOLDER}=") and part.is_dir():
                folder = unquote(part.name[len(FOLDER) + 1 :])
                out += [(folder, f) for f in sorted(part.glob("*.parquet")) if not f.name.startswith(".")]
        return out

    def staging_dir(self, name: str | None = None) -> Path:
        """A folder under ``.staging`` (same filesystem as the tables: renames are atomic)."""
        base = self.root / STAGING
        base.mkdir(exist_ok=True)
        if name is None:
            return Path(tempfile.mkdtemp(dir=base))
        path = base / name
        path.mkdir(exist_ok=True)
        return path

    # ----------------------------------------------------------------------------- batches

    def write_batch_record(self, batch_id: str, directory: str | Path, started_at: str) -> None:
        """Record where a batch's input files are (before it writes any row)."""
        (self.root / BATCHES).mkdir(exist_ok=True)
        record = {"batch_id": batch_id, "directory": os.fsdecode(directory), "started_at": started_at}
        text = json.dumps(record, indent=1, ensure_ascii=True)  # a non-UTF-8 DIR stays writable
        write_atomically(self.root / BATCHES / f"{batch_id}.json", text.encode())

    def batch_directory(self, batch_id: str) -> Path | None:
        """The DIR of the batch that wrote a row; None when not recorded or unreadable."""
        if not batch_id or not all(c in "0123456789abcdef" for c in batch_id):
            return None  # a batch id is a uuid4 hex; anything else names no record
        path = self.root / BATCHES / f"{batch_id}.json"
        try:
            if not stat.S_ISREG(path.lstat().st_mode):
                return None
            return Path(json.loads(path.read_bytes())["directory"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    # ----------------------------------------------------------------------------- rows

    def rows(self) -> pa.Table:
        """Every committed ``profiles`` row (each file checked, ``read_parquet``)."""
        tables = [read_parquet(f, "profiles") for _, f in self.table_files("profiles")]
        tables = [t for t in tables if t.num_rows]
        return pa.concat_tables(tables) if tables else PROFILES.empty_table()

    def folder_rows(self, folder: str) -> pa.Table:
        path = self.profiles_path(folder)
        if not os.path.lexists(path):
            return PROFILES.empty_table()
        return read_parquet(path, "profiles")

    def read_row(self, path: str) -> dict | None:
        """The committed row of input file ``path``, or None."""
        import pyarrow.compute as pc  # (here: importing it costs `tilescope fleet` ~40 ms it never uses)

        rows = self.folder_rows(folder_of(path))
        found = rows.filter(pc.equal(rows.column("path"), path))
        return found.to_pylist()[0] if found.num_rows else None

    def profile_rows(self, table: str, row: dict) -> pa.Table:
        """``row``'s rows of a per-profile table: the row group of its fragment holding its key."""
        key, fragment = row["profile_key"], row.get("fragment")
        path = self.fragment_path(table, folder_of(row["path"]), fragment or "(none)")
        if not fragment or not os.path.lexists(path):
            raise InputError("$", f"the profile's {table} fragment ({REPAIR_HINT})", "no such file", file=str(path))
        pf = open_parquet(path, table)
        try:
            groups = []
            for i in range(pf.num_row_groups):
                stats = pf.metadata.row_group(i).column(0).statistics
                if stats is None or not stats.has_min_max or stats.min <= key <= stats.max:
                    groups.append(i)
            found = pf.read_row_groups(groups) if groups else PROFILE_TABLES[table].empty_table()
        except (OSError, pa.ArrowException) as exc:
            raise _unreadable(path, table, " ".join(str(exc).split())) from None
        finally:
            pf.close(force=True)
        import pyarrow.compute as pc

        return found.filter(pc.equal(found.column("profile_key"), key))


@contextmanager
def locked(dataset: Dataset):
    """Hold the dataset's lock for a batch; a second batch on the same dataset is refused. The
    lock file is opened without following a link and without blocking (a FIFO never hangs it)."""
    import fcntl

    try:
        fd = os.open(dataset.root / LOCK, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise InputError(
                "$", f"{LOCK} a regular file ({REPAIR_HINT})", exc.strerror, file=str(dataset.root / LOCK)
            ) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(
                "$",
                f"{LOCK} a regular file ({REPAIR_HINT})",
                file_kind(os.fstat(fd).st_mode),
                file=str(dataset.root / LOCK),
            )
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(
                "$",
                "a dataset no other batch is writing",
                "another `tilescope batch` holds its lock",
                file=str(dataset.root),
            ) from None
        yield dataset
    finally:
        os.close(fd)  # releases the lock
