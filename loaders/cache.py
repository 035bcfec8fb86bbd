"""A content-addressed cache of normalised memory profiles: reopening a file skips JSON entirely.

The key is the SHA-256 of the file's bytes (read in blocks, never held whole; what ``sha256sum``
prints) and the schema version (``models.schemas.SCHEMA_VERSION``), so an edited file, or a loader
that normalises differently, gets a new entry. An entry is the five tables as Arrow IPC files
(Feather v2, uncompressed), which are memory-mapped when read back. Each file is written
atomically (``models.files``), so a reader sees a whole table or none; an entry that cannot be read
(missing, truncated, wrong schema) is ignored and rebuilt. The input file is only ever read. A
cache folder that cannot be written only costs the speed-up: the profile is still returned.
Where the folder is, its size cap and least-recently-used eviction: ``loaders.cache_store``.

Reopening a file does not read it when its ``stat`` shows it unchanged since it was last hashed
(``loaders.cache_files``: the key is remembered per path), so a cached 1 GB profile opens in the
time its tables take to map. An entry may also hold tables that layers above keep beside the
profile (``CacheEntry.read_table``/``write_table``: the timeline's ``derived.overview``); they go
with the entry when it is evicted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather

from tilescope.models.errors import InputError
from tilescope.models.files import atomic_output, cannot_read
from tilescope.models.profile import MemoryProfile
from tilescope.models.schemas import PROFILE_TABLES, SCHEMA_VERSION

from . import cache_files, cache_store, memory_profile
from .cache_store import CACHE_ENV, default_cache_dir  # noqa: F401  (the cache's public names)
from .detect import kind_of_bytes
from .json_input import InputBuffer, check_input, open_input, read_bytes

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


def _read_table(path: Path, schema: pa.Schema | None) -> pa.Table | None:
    """A cached table, memory-mapped and fully validated; None when it is missing, unreadable,
    damaged or (``schema`` given) not of that schema."""
    try:
        with pa.memory_map(str(path), "r") as source_file:
            table = pa.ipc.open_file(source_file).read_all()
    except (OSError, pa.ArrowException):
        return None
    if schema is not None and not table.schema.equals(schema, check_metadata=True):
        return None
    try:
        table.validate(full=True)  # a damaged entry must fail here, not crash a reader later
    except pa.ArrowInvalid:
        return None
    return table


def _read_entry(paths: dict[str, Path], source: str) -> MemoryProfile | None:
    """The cached tables, memory-mapped; None when any is missing or unreadable."""
    tables = {}
    for name, path in paths.items():
        table = _read_table(path, PROFILE_TABLES[name])
        if table is None:
            return None
        tables[name] = table
    if tables["profile"].num_rows != 1:
        return None
    return MemoryProfile(source=source, **tables)


def _write_table(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path, overwrite=True) as handle:
        feather.write_feather(table, handle, compression="uncompressed")


@dataclass(frozen=True)
class CacheEntry:
    """Where one file content's tables are cached (whether or not they are there yet)."""

    folder: Path
    key: str  # SHA256-vN (module doc)

    @property
    def sha256(self) -> str:
        return self.key.split("-v")[0]

    def profile_paths(self) -> dict[str, Path]:
        return cache_store.entry_paths(self.folder, self.key, list(PROFILE_TABLES))

    def complete(self) -> bool:
        """Whether every table of the profile is there (not whether they are readable)."""
        return all(p.exists() for p in self.profile_paths().values())

    def read_profile(self, source: str) -> MemoryProfile | None:
        """The cached profile, memory-mapped (marks the entry used); None when unreadable."""
        paths = self.profile_paths()
        cached = _read_entry(paths, source)
        if cached is None:
            return None
        cache_store.mark_used([*paths.values(), cache_store.meta_path(self.folder, self.key)])
        return dataclasses.replace(cached, content_sha256=self.sha256)

    def write_profile(self, profile: MemoryProfile, source: str | Path, max_bytes: int) -> None:
        """Store the profile's tables (nothing when the cap is 0); a folder that cannot be written
        is left as it is."""
        try:
            if max_bytes > 0:
                paths = self.profile_paths()
                for name, table in profile.tables().items():
                    _write_table(table, paths[name])
                cache_store.write_meta(self.folder, self.key, source)
                cache_store.enforce_cap(self.folder, max_bytes, keep=self.key)
        except (OSError, InputError):
            pass  # a read-only or full cache folder: the profile is still good

    def _extra_path(self, name: str) -> Path:
        if name in PROFILE_TABLES or not name.replace("_", "").isalpha() or not name.islower():
            raise ValueError(f"not a name for an extra table: {name!r}")
        return cache_store.entry_paths(self.folder, self.key, [name])[name]

    def read_table(self, name: str) -> pa.Table | None:
        """An extra table kept with the entry (``write_table``), memory-mapped; None when absent or unreadable."""
        return _read_table(self._extra_path(name), None)

    def write_table(self, name: str, table: pa.Table) -> bool:
        """Keep ``table`` with the entry, named ``name`` (lower-case letters and ``_``), when the
        profile's own tables are there; whether it was written."""
        if not self.complete():
            return False  # no entry (a cap of 0, an unwritable folder): nothing to keep it with
        try:
            _write_table(table, self._extra_path(name))
        except (OSError, InputError):
            return False
        return True


@dataclass(frozen=True)
class CachedProfile:
    """A memory profile opened through the cache: ``profile`` when this open loaded it from the
    file (and wrote the entry), else None until ``read`` memory-maps the cached tables."""

    entry: CacheEntry
    path: str
    profile: MemoryProfile | None = None

    def read(self, progress: Progress | None = None) -> MemoryProfile:
        """The profile; an entry found damaged is rebuilt from the file."""
        if self.profile is not None:
            return self.profile
        cached = self.entry.read_profile(self.path)
        if cached is not None:
            return cached
        return _load_and_store(self.path, self.entry, None, progress or (lambda stage, fraction: None), 0.0)


Located = tuple[CacheEntry, dict | None]  # ``locate``'s answer


def locate(path: str | Path, cache_dir: str | Path | None = None, progress: Progress | None = None) -> Located:
    """The cache entry of the file's content, and the file's state when the key was found (None
    when the key was remembered: the file was not read). Hashes the file unless its key is
    remembered (``loaders.cache_files``)."""
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = cache_files.remembered_key(folder, path, f"-v{SCHEMA_VERSION}")
    if key is not None:
        check_input(path)  # still a regular, readable file
        return CacheEntry(folder, key), None
    before, began = cache_files.file_state(path), time.time()
    key = content_key(path, progress, _HASH_SHARE)
    cache_files.remember_key(folder, before, began, key)
    return CacheEntry(folder, key), before


def _load_and_store(
    path: str | Path,
    entry: CacheEntry,
    before: dict | None,
    note: Progress,
    start: float,
    buffer: InputBuffer | None = None,
) -> MemoryProfile:
    """Load the file (progress from ``start`` to 0.9) and write its entry, unless the file
    changed since its key was found (the entry would hold another content than its key's)."""
    max_bytes = cache_store.max_cache_bytes()
    scale = 0.9 - start

    def loading(stage: str, fraction: float) -> None:
        if stage != "done":  # the load is not the end of this call: writing the entry follows
            note(stage, start + scale * fraction)

    profile = dataclasses.replace(
        memory_profile.load_memory_profile(path, loading, buffer), content_sha256=entry.sha256
    )
    note("writing cache", 0.9)
    if before is None or cache_files.file_state(path) == before:
        entry.write_profile(profile, path, max_bytes)
    return profile


def open_cached(
    path: str | Path,
    cache_dir: str | Path | None = None,
    progress: Progress | None = None,
    buffer: InputBuffer | None = None,
    located: Located | None = None,
) -> CachedProfile:
    """The file as a memory profile through the cache: a content normalised before comes back
    without its tables read yet (``CachedProfile.read``), else loaded (from ``buffer``, the file's
    bytes, when they were read already) and written to the cache. ``located``: ``locate``'s answer
    when the caller has it already (``find_cached``), so the file is not hashed again (its key is not
    remembered while the file is too recent). Bad input is the loader's InputError, naming the file."""
    note = progress or (lambda stage, fraction: None)
    cache_store.max_cache_bytes()  # a bad setting is said before a long load, not after
    entry, before = located if located is not None else locate(path, cache_dir, note)
    if entry.complete():
        note("reading cache", 0.9)
        return CachedProfile(entry, str(path))
    return CachedProfile(entry, str(path), _load_and_store(path, entry, before, note, _HASH_SHARE, buffer))


def find_cached(
    path: str | Path, cache_dir: str | Path | None = None, progress: Progress | None = None
) -> tuple[CachedProfile | None, Located]:
    """``cached_profile``'s answer, and ``locate``'s (for ``open_cached`` when it is None)."""
    note = progress or (lambda stage, fraction: None)
    cache_store.max_cache_bytes()  # a bad setting is said before a long load, not after
    located = locate(path, cache_dir, note)
    if not located[0].complete():
        return None, located
    note("reading cache", 0.9)
    return CachedProfile(located[0], str(path)), located


def cached_profile(
    path: str | Path, cache_dir: str | Path | None = None, progress: Progress | None = None
) -> CachedProfile | None:
    """The file's entry when its content was normalised before (only memory profiles are: the
    file is one), its tables not read yet; else None. Hashes the file unless its key is
    remembered; never parses it."""
    return find_cached(path, cache_dir, progress)[0]


def load_profile_cached(
    path: str | Path, cache_dir: str | Path | None = None, progress: Progress | None = None
) -> MemoryProfile:
    """``load_memory_profile(path)``, from the cache when this content was normalised before;
    the profile's ``content_sha256`` is the file's.

    ``progress(stage, fraction)`` goes from 0 to 1 over the whole call, one stage after another:
    hashing (skipped when the file is unchanged since it was last hashed), then either reading the
    cache (memory-mapped: instant) or the loader's stages and writing the entry, then done.
    """
    note = progress or (lambda stage, fraction: None)
    profile = open_cached(path, cache_dir, note).read(note)
    note("done", 1.0)
    return profile


def _search_state_or(path: str | Path, not_a_profile: InputError, progress: Progress | None) -> bytes:
    """The file's bytes when it is a search state; else ``not_a_profile`` is raised."""
    data = read_bytes(path)
    try:
        kind = kind_of_bytes(data)
    except InputError as exc:
        raise exc.in_file(str(path)) from None
    if kind == "search_state":
        if progress is not None:
            progress("done", 1.0)
        return data
    raise not_a_profile from None


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
        return "search_state", _search_state_or(path, not_a_profile, progress)


def open_cached_output(
    path: str | Path, cache_dir: str | Path | None = None, progress: Progress | None = None
) -> tuple[str, CachedProfile | bytes]:
    """``open_planner_output`` through the cache, a cached profile's tables not read yet:
    ``("memory_profile", CachedProfile)`` or ``("search_state", the file's bytes)``."""
    try:
        return "memory_profile", open_cached(path, cache_dir, progress)
    except InputError as not_a_profile:
        return "search_state", _search_state_or(path, not_a_profile, progress)
