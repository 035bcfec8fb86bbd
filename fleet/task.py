"""The task a batch worker runs (a local worker process or a Dask worker): some input files of one folder, each told apart by its first bytes
(``discover.recognise``), read once, hashed (the bytes read are the bytes hashed and parsed: a file
replaced while its task runs is either the old content or the new one, never a mix), skipped when
the dataset holds that content already, else loaded (a memory profile re-planned); the loaded
profiles' tables written as one fragment per table under ``.staging/<fragment>/``
(``commit.write_fragment``). Returns one small summary per file, never tables.

A summary's ``status``:

- ``loaded``: its new ``profiles`` row is in the summary (``fragment`` names the fragment holding
  its tables when it is a memory profile);
- ``failed``: a planner output that did not load; its row holds the loader's one-line error,
  naming the file by its path relative to DIR and the place in it; any other exception raised
  while normalising is recorded the same way, with its type, so one bad file never stops a batch;
- ``skipped``: unchanged since the dataset's row (``previous``), or a planner output of a kind
  ``batch`` does not load (``why`` says which), or not a planner output (``why``; no row).
"""

from __future__ import annotations

import hashlib
import mmap
import os
import time
from datetime import UTC, datetime

import pyarrow as pa

from tilescope.loaders.json_input import InputBuffer
from tilescope.loaders.memory_profile import parse_memory_profile
from tilescope.loaders.placement_dump import load_placement_dump
from tilescope.loaders.placement_profile import parse_placement_profile
from tilescope.loaders.search_state import parse_search_state
from tilescope.models.errors import InputError
from tilescope.models.files import cannot_read
from tilescope.models.schemas import SCHEMA_VERSION
from tilescope.models.version import __version__

from .commit import write_fragment
from .discover import read_head, recognise
from .layout import Dataset, profile_key
from .schema import PROFILE_TABLES
from .tables import memory_profile_rows

LOADED, SKIPPED, FAILED = "loaded", "skipped", "failed"
# Planner outputs whose loader batch uses; other kinds are recorded as skipped, not failed.
LOADED_KINDS = ("memory_profile", "search_state", "placement_dump", "placement_profile")
VALIDATE = {
    "search_state": parse_search_state,
    "placement_dump": load_placement_dump,
    "placement_profile": parse_placement_profile,
}


def located_error(exc: BaseException, path: str) -> str:
    """One line naming the file by ``path``: the loader's message, or the exception and its type."""
    if isinstance(exc, InputError):
        return exc.naming(path).message
    text = " ".join(str(exc).split()) or "no message"
    return f"{path}: {type(exc).__name__} while normalising: {text}"


def content_hash_of(data: bytes | memoryview | mmap.mmap) -> str:
    """The content key of bytes already read: as ``loaders.cache.content_key`` of the file."""
    return f"{hashlib.sha256(data).hexdigest()}-v{SCHEMA_VERSION}"


def empty_row(
    batch_id: str, path: str, content_hash: str | None, file_bytes: int | None, error: str | None, seconds: float
) -> dict:
    """A ``profiles`` row with only what is known without loading the file (no partitions)."""
    return {
        "batch_id": batch_id,
        "profile_key": profile_key(path, content_hash, partitions=False),
        "path": path,
        "content_hash": content_hash,
        "file_bytes": file_bytes,
        "error": error,
        "tilescope_version": __version__,
        "normalised_at": datetime.now(UTC),
        "seconds": seconds,
        "fragment": None,
    }


def normalise_file(root: str, item: dict, batch_id: str, fragment: str, retry_failed: bool, tables_out: list) -> dict:
    """One file of a task (module doc). ``item``: ``path``, ``fs_path`` and the dataset's
    ``previous`` row (or None). A loaded memory profile's tables are appended to ``tables_out``."""
    started = time.perf_counter()
    path, previous = item["path"], item["previous"]
    source = os.path.join(root, *item["fs_path"].split("/"))
    try:
        # (a FIFO put there since the listing is refused, not waited on)
        kind, what = recognise(read_head(source), path)
        if kind is None:
            return {"status": SKIPPED, "path": path, "why": f"not a planner output ({what})", "planner_output": False}
        if kind not in LOADED_KINDS:
            return {
                "status": SKIPPED,
                "path": path,
                "why": f"{what}: not loaded by batch",
                "planner_output": True,
                "kind": kind,
            }
        buffer = InputBuffer.read(source)
    except (OSError, InputError) as exc:
        if isinstance(exc, OSError):
            exc = cannot_read(path, exc)
        row = empty_row(batch_id, path, None, None, located_error(exc, path), time.perf_counter() - started)
        # Not readable now (gone since the listing) says nothing about its content: a row written
        # before stays; a file never seen gets a failed row.
        return {"status": FAILED, "keep_previous": previous is not None, **row}
    data = buffer.data
    content_hash = content_hash_of(data)
    if (
        previous is not None
        and previous["content_hash"] == content_hash
        and (previous["error"] is None or not retry_failed)
    ):
        return {"status": SKIPPED, "unchanged": True, **previous}
    key = profile_key(path, content_hash, partitions=True)
    fields: dict = {}
    tables = None
    error = None
    try:
        if kind == "memory_profile":
            profile = parse_memory_profile(data, path)  # type: ignore[arg-type]  # (an mmap is bytes-like)
            fields, tables = memory_profile_rows(profile, key)
        else:  # the whole file validated, as `tilescope summary` does; a row without tables
            VALIDATE[kind](bytes(data), path)
            fields = {"kind": kind}
    except Exception as exc:
        error, fields, tables = located_error(exc, path), {}, None
    if error is not None and kind == "memory_profile" and "$.version" in error:
        version = what.rsplit("v", 1)[-1]
        if version not in ("1", "?"):  # a version this tilescope's loader does not read yet
            return {
                "status": SKIPPED,
                "path": path,
                "why": f"{what}: not loaded by batch",
                "planner_output": True,
                "kind": kind,
            }
    row = {**empty_row(batch_id, path, content_hash, len(data), error, 0.0), **fields}
    if tables is not None:
        row["profile_key"] = key
        row["fragment"] = fragment
        tables_out.append(tables)
    row["seconds"] = time.perf_counter() - started
    return {"status": FAILED if error else LOADED, **row}


def normalise_task(
    root: str, items: list[dict], dataset_root: str, batch_id: str, fragment: str, retry_failed: bool = False
) -> dict:
    """Normalise ``items`` (files of one folder, see ``normalise_file``); the loaded profiles'
    tables written to ``.staging/<fragment>/<table>.parquet``. Returns ``{"summaries": [...],
    "staged": the staging folder or None, "keys": the profile keys in the fragment}``."""
    loaded: list[dict[str, pa.Table]] = []
    summaries = [normalise_file(root, item, batch_id, fragment, retry_failed, loaded) for item in items]
    if not loaded:
        return {"summaries": summaries, "staged": None, "keys": []}
    stage = Dataset(dataset_root).staging_dir(fragment)
    for table in PROFILE_TABLES:
        write_fragment(stage / f"{table}.parquet", table, (t[table] for t in loaded))
    keys = [s["profile_key"] for s in summaries if s.get("fragment") == fragment]
    return {"summaries": summaries, "staged": str(stage), "keys": keys}
