"""The cache folder: where it is, what it holds, and keeping it under its size cap.

- **Where**: ``$TILESCOPE_CACHE_DIR`` if set, else the platform's user cache folder for
  tilescope (``platformdirs.user_cache_dir``: ``$XDG_CACHE_HOME/tilescope`` or
  ``~/.cache/tilescope`` on Linux, ``~/Library/Caches/tilescope`` on macOS,
  ``%LOCALAPPDATA%\\tilescope\\Cache`` on Windows).
- **What**: one entry per normalised file content: ``KK/KEY.TABLE.arrow`` for each table plus
  ``KK/KEY.entry.json`` (the source file's name and size: what ``tilescope cache list`` shows),
  where ``KEY`` is ``SHA256-vN`` (the content's SHA-256, ``sha256sum`` of the file, and the schema
  version) and ``KK`` its first two characters; ``KK/KEY.NAME.arrow`` for a table a layer above
  keeps with the entry (``loaders.cache.CacheEntry.write_table``); ``files/*.json``: the key each
  file path had when last hashed (``loaders.cache_files``).
- **Cap**: ``$TILESCOPE_CACHE_MAX_BYTES`` (a number of bytes, or with a suffix: ``500M``, ``2G``,
  ``1.5GiB``; ``0`` keeps nothing), default ``DEFAULT_MAX_BYTES``. After an entry is written the
  least recently used entries are removed until the folder is under the cap; reading an entry
  marks it used (its files' modification time: access times are often not kept). An entry larger
  than the cap on its own is not kept.

Only files named like entries are ever removed, so a cache folder pointed at the wrong place by
mistake loses nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from tilescope.models.errors import TilescopeError
from tilescope.models.files import write_atomically
from tilescope.models.format import SIZE_EXAMPLES, parse_size

from .cache_files import forget_all

CACHE_ENV = "TILESCOPE_CACHE_DIR"
MAX_BYTES_ENV = "TILESCOPE_CACHE_MAX_BYTES"
# An entry is about 0.42 × its JSON (the 92.5 MB synthetic profile's: 39.2 MB): room for the
# entries of several 1 GB profiles and many small ones.
DEFAULT_MAX_BYTES = 4 * 1024**3
ENTRY_SUFFIX = ".entry.json"
# Keys of schema version 2 and before were 40 hex digits (BLAKE2b): still recognised, so they are
# evicted and cleared like the others.
_KEY = r"[0-9a-f]{40}(?:[0-9a-f]{24})?-v\d+"
_ENTRY_FILE = re.compile(rf"^(?P<key>{_KEY})\.(?P<part>[a-z_]+)\.arrow$|^(?P<meta>{_KEY})\.entry\.json$")
_TEMPORARY = re.compile(rf"^\.{_KEY}\.[a-z_.]+\.[0-9a-f]{{6,32}}\.tmp$")
_STALE_TEMPORARY_SECONDS = 24 * 3600


def default_cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("tilescope", appauthor=False))


def max_cache_bytes() -> int:
    configured = os.environ.get(MAX_BYTES_ENV)
    if not configured:
        return DEFAULT_MAX_BYTES
    try:
        return parse_size(configured)
    except ValueError:
        raise TilescopeError(
            f"{MAX_BYTES_ENV}: expected a size in bytes such as {SIZE_EXAMPLES} or 0, found {configured!r}"
        ) from None


def entry_paths(cache_dir: Path, key: str, tables: list[str]) -> dict[str, Path]:
    return {name: cache_dir / key[:2] / f"{key}.{name}.arrow" for name in tables}


def meta_path(cache_dir: Path, key: str) -> Path:
    return cache_dir / key[:2] / f"{key}{ENTRY_SUFFIX}"


def write_meta(cache_dir: Path, key: str, source: str | Path) -> None:
    source = Path(source)
    meta = {"source": os.path.abspath(source), "source_bytes": source.stat().st_size}
    write_atomically(meta_path(cache_dir, key), json.dumps(meta).encode(), overwrite=True)


def mark_used(paths: list[Path]) -> None:
    """Make an entry the most recently used (its files' modification time is now)."""
    now = time.time()
    for path in paths:
        with contextlib.suppress(OSError):
            os.utime(path, (now, now))


@dataclass(frozen=True)
class Entry:
    key: str
    files: tuple[Path, ...]
    size_bytes: int
    last_used: float  # seconds since the epoch
    source: str | None  # the file it was made from, as it was named then
    source_bytes: int | None

    @property
    def sha256(self) -> str | None:
        """The source's SHA-256 (None for an entry of an older version, keyed otherwise)."""
        digest = self.key.split("-v")[0]
        return digest if len(digest) == 64 else None

    def to_json(self) -> dict:
        return {
            "key": self.key,
            "sha256": self.sha256,
            "size_bytes": self.size_bytes,
            "last_used": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.last_used)),
            "source": self.source,
            "source_bytes": self.source_bytes,
        }


def _read_meta(path: Path) -> tuple[str | None, int | None]:
    try:
        meta = json.loads(path.read_bytes())
        return str(meta["source"]), int(meta["source_bytes"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


def entries(cache_dir: Path | None = None) -> list[Entry]:
    """Every entry in the folder, most recently used first."""
    folder = cache_dir if cache_dir is not None else default_cache_dir()
    groups: dict[str, list[tuple[Path, os.stat_result]]] = {}
    try:
        subfolders = [p for p in folder.iterdir() if p.is_dir() and len(p.name) == 2]
    except OSError:
        return []
    for sub in subfolders:
        try:
            names = list(sub.iterdir())
        except OSError:
            continue
        for path in names:
            match = _ENTRY_FILE.match(path.name)
            if match is None:
                continue
            try:
                groups.setdefault(match["key"] or match["meta"], []).append((path, path.stat()))
            except OSError:
                continue  # removed meanwhile
    found = []
    for key, files in groups.items():
        meta = next((p for p, _ in files if p.name.endswith(ENTRY_SUFFIX)), None)
        source, source_bytes = _read_meta(meta) if meta is not None else (None, None)
        found.append(
            Entry(
                key,
                tuple(sorted(p for p, _ in files)),
                sum(s.st_size for _, s in files),
                max(s.st_mtime for _, s in files),
                source,
                source_bytes,
            )
        )
    found.sort(key=lambda e: (-e.last_used, e.key))
    return found


def remove_entry(entry: Entry) -> int:
    """Remove an entry's files; the bytes freed."""
    freed = 0
    for path in entry.files:
        try:
            size = path.stat().st_size
            path.unlink()
            freed += size
        except OSError:
            continue
    with contextlib.suppress(OSError):
        entry.files[0].parent.rmdir()  # only when empty
    return freed


def _remove_stale_temporaries(cache_dir: Path, older_than: float) -> None:
    """Temporary files of writers that died (a crash between writing and renaming)."""
    with contextlib.suppress(OSError):
        for sub in cache_dir.iterdir():
            if sub.is_dir() and len(sub.name) == 2:
                for path in sub.iterdir():
                    with contextlib.suppress(OSError):
                        if _TEMPORARY.match(path.name) and path.stat().st_mtime < older_than:
                            path.unlink()


def enforce_cap(cache_dir: Path, max_bytes: int, keep: str | None = None) -> list[Entry]:
    """Remove least recently used entries until the folder holds at most ``max_bytes``; ``keep``
    (the entry just written) goes last, and only if it alone is over the cap. The removed entries."""
    _remove_stale_temporaries(cache_dir, time.time() - _STALE_TEMPORARY_SECONDS)
    present = entries(cache_dir)
    total = sum(e.size_bytes for e in present)
    order = [e for e in reversed(present) if e.key != keep] + [e for e in present if e.key == keep]
    removed = []
    for entry in order:
        if total <= max_bytes:
            break
        total -= entry.size_bytes
        remove_entry(entry)
        removed.append(entry)
    return removed


def clear(cache_dir: Path | None = None) -> tuple[int, int]:
    """Remove every entry (and stale temporary files, and the remembered keys of files:
    ``loaders.cache_files``); ``(entries removed, bytes freed)``."""
    folder = cache_dir if cache_dir is not None else default_cache_dir()
    present = entries(folder)
    freed = sum(remove_entry(e) for e in present)
    _remove_stale_temporaries(folder, time.time())
    forget_all(folder)
    return len(present), freed
