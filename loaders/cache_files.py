"""Which cache key a file had when it was last hashed, so that reopening an unchanged file does
not read it at all (hashing a 1 GB profile takes longer than opening its cached tables).

The cache folder keeps one small record per file path, ``files/NAME.json`` (``NAME``: a hash of
the resolved path): the file's device, inode, size, modification and status-change times
(nanoseconds) when its content was hashed, and the key. A file whose ``stat`` still shows all six
is taken to have the same content, as ``git status`` and ``make`` do. The status-change time
(ctime) is what makes this safe: every write, ``truncate``, ``rename`` onto it or ``touch -r``
that puts an old modification time back moves the ctime to now, and no program can set it.

Two guards against a change the times cannot show:

- a record is written only when the file's ``stat`` is the same before its bytes were hashed and
  after, so a file written meanwhile is not recorded;
- a file whose modification or change time is within ``RACY_SECONDS`` of the moment its hashing
  began is not recorded: a write in the same clock tick as the hash would leave the same times
  (git's "racy clean" problem). Such a file is hashed again on its next open, until it is older.

A missing, unreadable or foreign record only costs the hash. ``cache_store.clear`` removes the
records with the entries.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from tilescope.models.files import write_atomically

RECORDS = "files"  # the folder of records inside the cache folder
RACY_SECONDS = 2.0

_FIELDS = ("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")


def file_state(path: str | Path) -> dict | None:
    """What says a file's content is unchanged: its resolved path and stat fields; None when it
    cannot be stat'ed."""
    try:
        resolved = os.path.realpath(path)
        info = os.stat(resolved)
    except OSError:
        return None
    return {"path": resolved, **{name: getattr(info, name) for name in _FIELDS}}


def record_path(cache_dir: Path, resolved: str) -> Path:
    name = hashlib.blake2b(os.fsencode(resolved), digest_size=16).hexdigest()
    return cache_dir / RECORDS / f"{name}.json"


def remembered_key(cache_dir: Path, path: str | Path, key_suffix: str) -> str | None:
    """The key recorded for this file if its ``stat`` is unchanged since (and the key ends in
    ``key_suffix``, the schema version); None otherwise."""
    state = file_state(path)
    if state is None:
        return None
    try:
        record = json.loads(record_path(cache_dir, state["path"]).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("state") != state:
        return None
    key = record.get("key")
    return key if isinstance(key, str) and key.endswith(key_suffix) else None


def remember_key(cache_dir: Path, before: dict | None, hashing_began: float, key: str) -> None:
    """Record ``key`` for the file whose state was ``before`` when its hashing began (seconds
    since the epoch), unless it changed since or is too recent to tell (module doc)."""
    if before is None or file_state(before["path"]) != before:
        return
    newest = max(before["st_mtime_ns"], before["st_ctime_ns"]) / 1e9
    if newest > hashing_began - RACY_SECONDS:
        return
    with contextlib.suppress(OSError):
        target = record_path(cache_dir, before["path"])
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, json.dumps({"state": before, "key": key}).encode(), overwrite=True)


def forget_all(cache_dir: Path) -> int:
    """Remove every record (``tilescope cache clear``); how many."""
    removed = 0
    with contextlib.suppress(OSError):
        for path in (cache_dir / RECORDS).iterdir():
            if path.suffix == ".json" or path.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed += 1
        (cache_dir / RECORDS).rmdir()
    return removed
