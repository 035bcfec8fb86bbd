"""A content-addressed cache of normalised memory profiles: reopening a file skips JSON entirely.

The key is the SHA-256 of the file's bytes (read in blocks, never held whole; what ``sha256sum``
prints) and the schema version (``models.schemas.SCHEMA_VERSION``), so an edited file, or a loader
that normalises differently, gets a new entry. An entry is the five tables as Arrow IPC files
(Feather v2, uncompressed), which are memory-mapped when read back. Each file is written
atomically (``models.files``), so a reader sees a whole table or none; an entry that cannot be read
(missing, truncated, wrong schema) is ignored and rebuilt. The input file is only ever read. A
cache folder that cannot be written only costs the speed-up: the profile is still returned.
Where the folder is, its size cap and least-recently-used eviction: ``loaders.cache_store``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.feather as feather

from tilescope.models.errors import InputError
from tilescope.models.files import atomic_output, cannot_read
from tilescope.models.profile import MemoryProfile
from tilescope.models.schemas import PROFILE_TABLES, SCHEMA_VERSION

from . import cache_store, memory_profile
from .cache_store import CACHE_ENV, default_cache_dir  # noqa: F401  (the cache's public names)
from .detect import kind_of_bytes
from .json_input import open_input, read_bytes

_READ_BLOCK = 1 << 20
_HASH_SHARE = 0.1  # of the progress bar (on a cache hit, hashing is most of the time: the bar then jumps)

Progress = Callable[[str, float], None]


def file_sha256(path: str | Path, progress: Progress | None = None, share: float = 1.0) -> str:
    """Hex SHA-256 of the file's bytes; an unreadable file is an InputError (FileAccessError)."""
    digest = hashlib.sha256()
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
        raise cannot_read(path, exc) from None
    return digest.hexdigest()


def content_key(path: str | Path, progress: Progress | None = None, share: float = 1.0) -> str:
    """The cache key of the file's content and the schema version."""
    return f"{file_sha256(path, progress, share)}-v{SCHEMA_VERSION}"


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
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path, overwrite=True) as handle:
        feather.write_feather(table, handle, compression="uncompressed")


def load_profile_cached(path: str | Path, cache_dir: str | Path | None = None, progress: Progress | None = None) -> MemoryProfile:
    """``load_memory_profile(path)``, from the cache when this content was normalised before;
    the profile's ``content_sha256`` is the file's.

    ``progress(stage, fraction)`` goes from 0 to 1 over the whole call, one stage after another:
    hashing, then either reading the cache (memory-mapped: instant) or the loader's stages and
    writing the entry, then done.
    """
    note = progress or (lambda stage, fraction: None)
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    max_bytes = cache_store.max_cache_bytes()  # a bad setting is said before a long load, not after
    key = content_key(path, note, _HASH_SHARE)
    sha256 = key.split("-v")[0]
    paths = cache_store.entry_paths(folder, key, list(PROFILE_TABLES))
    if all(p.exists() for p in paths.values()):
        note("reading cache", 0.9)
        cached = _read_entry(paths, str(path))
        if cached is not None:
            cache_store.mark_used([*paths.values(), cache_store.meta_path(folder, key)])
            note("done", 1.0)
            return dataclasses.replace(cached, content_sha256=sha256)
    scale = 0.9 - _HASH_SHARE

    def loading(stage: str, fraction: float) -> None:
        if stage != "done":  # the load is not the end of this call: writing the entry follows
            note(stage, _HASH_SHARE + scale * fraction)

    profile = dataclasses.replace(memory_profile.load_memory_profile(path, loading), content_sha256=sha256)
    note("writing cache", 0.9)
    try:
        if max_bytes > 0:
            for name, table in profile.tables().items():
                _write_table(table, paths[name])
            cache_store.write_meta(folder, key, path)
            cache_store.enforce_cap(folder, max_bytes, keep=key)
    except (OSError, InputError):
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
