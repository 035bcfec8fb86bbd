"""The per-file task a Dask worker runs: hash the file, skip it when the dataset already has this
content, else load it (as the loader tells memory profiles from search states:
``loaders.cache.open_planner_output``), re-plan a memory profile and commit its rows
(``fleet.writer``). Returns a small summary (the ``profiles`` row and a status), never tables.

A file that does not load becomes a row whose ``error`` is the loader's one-line message naming
the file by its path relative to DIR and the place in it; any other exception raised while
normalising is recorded the same way (with its type), so one bad file never stops a batch. A file
that cannot be read at all fails the batch but does not replace a row written before.
"""
from __future__ import annotations

import os
import time
from datetime import datetime, timezone

from tilescope.loaders.cache import content_key, open_planner_output
from tilescope.loaders.search_state import parse_search_state
from tilescope.models.errors import InputError
from tilescope.models.files import cannot_read
from tilescope.models.version import __version__

from .layout import Dataset, profile_key
from .tables import memory_profile_rows
from .writer import commit_profile

LOADED, SKIPPED, FAILED = "loaded", "skipped", "failed"


def located_error(exc: BaseException, path: str) -> str:
    """One line naming the file by ``path``: the loader's message, or the exception and its type."""
    if isinstance(exc, InputError):
        return exc.naming(path).message
    text = " ".join(str(exc).split()) or "no message"
    return f"{path}: {type(exc).__name__} while normalising: {text}"


def empty_row(
    batch_id: str, path: str, content_hash: str | None, file_bytes: int | None, error: str | None, seconds: float
) -> dict:
    """A ``profiles`` row with only what is known without loading the file (and no partitions)."""
    return {
        "batch_id": batch_id,
        "profile_key": profile_key(path, content_hash, partitions=False),
        "path": path,
        "content_hash": content_hash,
        "file_bytes": file_bytes,
        "error": error,
        "tilescope_version": __version__,
        "normalised_at": datetime.now(timezone.utc),
        "seconds": seconds,
    }


def normalise_into_dataset(root: str, path: str, dataset_root: str, batch_id: str, retry_failed: bool = False) -> dict:
    """Normalise ``root/path`` into the dataset at ``dataset_root``; ``path`` is relative to
    ``root`` with '/' separators. Returns ``{"status": loaded|skipped|failed, **row}`` where
    ``row`` is the file's ``profiles`` row (the committed one when skipped).

    Dask runs a task again when its worker dies; if the first attempt had already committed
    the row (same content, same ``batch_id``), the file counts as loaded by this batch."""
    started = time.perf_counter()
    dataset = Dataset(dataset_root)
    source = os.path.join(root, *path.split("/"))
    previous = dataset.read_row(path)
    try:
        file_bytes = os.path.getsize(source)
        content_hash = content_key(source)
    except (OSError, InputError) as exc:
        if isinstance(exc, OSError):
            exc = cannot_read(path, exc)
        row = empty_row(batch_id, path, None, None, located_error(exc, path), time.perf_counter() - started)
        # Not readable now (gone since the listing, or not mounted on this worker) says nothing
        # about its content: rows written before stay; a file never seen gets a failed row.
        if previous is None:
            commit_profile(dataset, row, None)
        return {"status": FAILED, **row}
    if previous is not None and previous["content_hash"] == content_hash:
        if previous["batch_id"] == batch_id:  # committed by an earlier attempt of this task
            return {"status": FAILED if previous["error"] else LOADED, **previous}
        if previous["error"] is None or not retry_failed:
            return {"status": SKIPPED, **previous}
    key = profile_key(path, content_hash, partitions=True)
    fields, tables, error = {}, None, None
    try:
        kind, opened = open_planner_output(source, use_cache=False)
        if kind == "memory_profile":
            fields, tables = memory_profile_rows(opened, key)
        else:
            parse_search_state(opened, path)  # the whole file validated, as `tilescope summary` does
            fields = {"kind": kind}
    except Exception as exc:  # noqa: BLE001 - recorded in the row; the batch goes on
        error, fields, tables = located_error(exc, path), {}, None
    row = {**empty_row(batch_id, path, content_hash, file_bytes, error, 0.0), **fields}
    if tables is not None:
        row["profile_key"] = key
    row["seconds"] = time.perf_counter() - started
    commit_profile(dataset, row, tables)
    return {"status": FAILED if error else LOADED, **row}
