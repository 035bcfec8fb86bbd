"""A content-addressed cache of normalised memory profiles: reopening a file skips JSON entirely.

The key is a BLAKE2b hash of the file's bytes (read in blocks, never held whole) and the loader's
schema version, so an edited file, or a loader that normalises differently, gets a new entry.
An entry is the five tables as Arrow IPC files (Feather v2, uncompressed), which are memory-mapped
when read back. Each file is written to a temporary name and renamed into place, so a reader sees
a whole table or none; an entry that cannot be read (missing, truncated, wrong schema) is ignored
and rebuilt. The input file is only ever read. A cache folder that cannot be written only costs
the speed-up: the profile is still returned.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.feather as feather

from tilescope.models.errors import InputError
from tilescope.models.profile import MemoryProfile
from tilescope.models.schemas import PROFILE_TABLES

from . import memory_profile
from .detect import kind_of_bytes
from .json_input import open_input, read_bytes

# Bump when the loader's tables change (schemas, meaning or normalisation): old entries are then
# never read again.
LOADER_SCHEMA_VERSION = 3  # 2: repeated text columns dictionary-encoded (models.schemas.REPEATED_TEXT); 3: the loader refuses more (docs/formats.md §6)
CACHE_ENV = "TILESCOPE_CACHE_DIR"
_READ_BLOCK = 1 << 20
_HASH_SHARE = 0.1  # of the progress bar (on a cache hit, hashing is most of the time: the bar then jumps)

Progress = Callable[[str, float], None]


def default_cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "tilescope"


def content_key(path: str | Path, progress: Progress | None = None, share: float = 1.0) -> str:
    """Hex key of the file's content and the loader schema; an unreadable file is an InputError."""
    digest = hashlib.blake2b(digest_size=20, person=f"tilescope{LOADER_SCHEMA_VERSION}".encode()[:16])
    try:
        size = os.path.getsize(path)
        done = 0
        with open_input(path) as handle:  # a FIFO or /dev/zero is refused, not hashed forever
            buffer = bytearray(_READ_BLOCK)
            view = memoryview(buffer)
            while True:
                n = handle.readinto(buffer)
                if not n:
                    break
                digest.update(view[:n])
                done += n
                if progress is not None:
                    progress("hashing", share * done / max(size, 1))
    except OSError as exc:
        raise InputError("$", "a readable file", exc.strerror or str(exc), file=str(path)) from None
    return f"{digest.hexdigest()}-v{LOADER_SCHEMA_VERSION}"


def _entry_paths(cache_dir: Path, key: str) -> dict[str, Path]:
    return {name: cache_dir / key[:2] / f"{key}.{name}.arrow" for name in PROFILE_TABLES}


def _read_entry(paths: dict[str, Path], source: str) -> MemoryProfile | None:
    """The cached tables, memory-mapped; None when any is missing or unreadable."""
    tables = {}
    for name, path in paths.items():
        try:
            with pa.memory_map(str(path), "r") as source_file:
                table = pa.ipc.open_file(source_file).read_all()
        except (OSError, pa.ArrowException):
            return None
        if not table.schema.equals(PROFILE_TABLES[name], check_metadata=True):
            return None
        try:
            table.validate(full=True)  # a damaged entry must fail here, not crash a reader later
        except pa.ArrowInvalid:
            return None
        tables[name] = table
    if tables["profile"].num_rows != 1:
        return None
    return MemoryProfile(source=source, **tables)


def _write_table(table: pa.Table, path: Path) -> None:
    """Write ``table`` next to ``path`` under a temporary name, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            feather.write_feather(table, handle, compression="uncompressed")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_profile_cached(path: str | Path, cache_dir: str | Path | None = None, progress: Progress | None = None) -> MemoryProfile:
    """``load_memory_profile(path)``, from the cache when this content was normalised before.

    ``progress(stage, fraction)`` goes from 0 to 1 over the whole call: hashing, then either
    reading the cache (memory-mapped: instant) or loading the file and writing the entry.
    """
    note = progress or (lambda stage, fraction: None)
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = content_key(path, note, _HASH_SHARE)
    paths = _entry_paths(folder, key)
    if all(p.exists() for p in paths.values()):
        note("reading cache", 0.9)
        cached = _read_entry(paths, str(path))
        if cached is not None:
            note("done", 1.0)
            return cached
    scale = 0.9 - _HASH_SHARE
    profile = memory_profile.load_memory_profile(path, lambda stage, f: note(stage, _HASH_SHARE + scale * f))
    note("writing cache", 0.9)
    try:
        for name, table in profile.tables().items():
            _write_table(table, paths[name])
    except OSError:
        pass  # a read-only or full cache folder: the profile is still good
    note("done", 1.0)
    return profile


def open_planner_output(
    path: str | Path, cache_dir: str | Path | None = None, progress: Progress | None = None, *, use_cache: bool = True
) -> tuple[str, MemoryProfile | bytes]:
    """``("memory_profile", MemoryProfile)`` or ``("search_state", the file's bytes)`` for a path.

    The file is opened as a memory profile (through the cache unless ``use_cache`` is false: a
    profile normalised before comes back without its JSON being read at all, and only profiles are
    cached). Only when that fails is the file read again to tell whether it is a search state (a
    small file), so a large profile's JSON is never parsed twice. Bad input is the loader's
    InputError, naming the file.
    """
    try:
        if use_cache:
            return "memory_profile", load_profile_cached(path, cache_dir, progress)
        return "memory_profile", memory_profile.load_memory_profile(path, progress)
    except InputError as not_a_profile:
        data = read_bytes(path)
        try:
            kind = kind_of_bytes(data)
        except InputError as exc:
            raise exc.in_file(str(path)) from None
        if kind == "search_state":
            if progress is not None:
                progress("done", 1.0)
            return kind, data
        raise not_a_profile from None
