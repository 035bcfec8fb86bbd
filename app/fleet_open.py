"""Which dataset a session's fleet view shows, and how a row of it opens. No Panel here:
``app.views.fleet`` wires these to the page and runs them in a worker thread.

- The dataset: ``?dataset=NAME`` (a directory under the data root, checked like ``?file=`` by
  ``app.loading.resolve_in_root``), else ``--args --dataset DIR`` (what ``tilescope serve
  --dataset DIR`` passes; the server's own choice, not checked against the data root).
- A row opens from its input file when that file is under the data root and unchanged since the
  batch (its content hash equal to the row's), through ``app.shared.SharedProfiles.open``
  like any ``?file=`` (``SharedProfiles.open``), named by its data-root name (so ``?file=`` and ``?compare=`` links name
  it). Otherwise (file gone, changed, or outside the data root) a memory profile opens from the
  dataset's partitions (``fleet.reopen``), named ``DATASET:PATH``: what the row describes, exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pandas as pd

from tilescope.app.loading import AppOptions, PathRefused, display_name, resolve_in_root
from tilescope.derived.fleet_rows import error_after_path
from tilescope.derived.opening import Opened, OpenedProfile, Source, prepare_profile
from tilescope.fleet.layout import Dataset
from tilescope.fleet.overview import profiles_frame
from tilescope.fleet.reopen import is_loaded_profile, reopen_profile
from tilescope.loaders.cache import content_key
from tilescope.models.errors import InputError, TilescopeError


@dataclass(frozen=True)
class DatasetRequest:
    path: Path | None  # None: refused (``problem`` says why)
    name: str  # how the page names it
    problem: str | None = None
    in_url: bool = False  # asked for by the URL's ``?dataset=`` (the page's URL then names it), not by the server


def requested_dataset(session_args: dict | None, options: AppOptions) -> DatasetRequest | None:
    """The dataset this session asks for (module doc); None when it asks for none."""
    args = session_args or {}
    requested = args.get("dataset")
    if requested:
        name = requested[0].decode("utf-8", "replace") if isinstance(requested[0], bytes) else str(requested[0])
        try:
            return DatasetRequest(resolve_in_root(options.data_root, name), name, in_url=True)
        except PathRefused as exc:
            return DatasetRequest(None, name, str(exc).replace("file name", "dataset name", 1), in_url=True)
    if options.dataset is not None:  # the server's; an empty ``?dataset=`` still counts as the URL's (the URL names it)
        return DatasetRequest(options.dataset, display_name(options.dataset), in_url="dataset" in args)
    return None


@dataclass(frozen=True)
class Fleet:
    """A dataset as the fleet view holds it: its ``profiles`` rows (``fleet.overview``)."""

    dataset: Dataset
    name: str
    profiles: pd.DataFrame


def load_fleet(path: Path, name: str) -> Fleet:
    """Read the dataset's rows (DuckDB; call it in a worker thread). Errors name it by ``name``."""
    try:
        dataset = Dataset.open(path)
        return Fleet(dataset, name, profiles_frame(path, name))
    except InputError as exc:
        where = name if exc.file in (None, str(path)) else exc.file.replace(str(path), name, 1)
        raise InputError(exc.path, exc.expected, exc.found, file=where) from None


@dataclass(frozen=True)
class RowSource:
    name: str  # how the page names the profile
    path: Path | None  # its input file under the data root, unchanged since the batch; None: the partitions


def _row(fleet: Fleet, position: int) -> dict:
    """The committed ``profiles`` row shown at ``position`` (read again: every column, as written)."""
    path = str(fleet.profiles["path"].iloc[position])
    row = fleet.dataset.read_row(path)
    if row is None or row["profile_key"] != fleet.profiles["profile_key"].iloc[position]:
        raise TilescopeError(f"{fleet.name}:{path}: the dataset changed since the page read it; open it again")
    return row


def row_source(fleet: Fleet, position: int, data_root: Path) -> RowSource:
    """Where row ``position`` of ``fleet.profiles`` opens from (module doc). Reads and hashes the
    input file: call it in a worker thread."""
    row = _row(fleet, position)
    directory = fleet.dataset.batch_directory(row["batch_id"])
    if directory is not None and row["content_hash"]:
        try:
            relative = (directory / row["path"]).resolve().relative_to(Path(data_root).resolve()).as_posix()
            path = resolve_in_root(data_root, relative)
            if path.is_file() and content_key(path) == row["content_hash"]:
                return RowSource(relative, path)
        except (ValueError, PathRefused, InputError):
            pass  # outside the data root, or unreadable: the partitions
    return RowSource(f"{fleet.name}:{row['path']}", None)


def open_row(
    fleet: Fleet, position: int, data_root: Path, shared, staged=None, progress=None, found: list | None = None
) -> Opened:
    """Row ``position``'s profile, opened as its ``row_source`` says (in a load worker; ``staged``:
    ``derived.opening.open_file``'s); its ``RowSource`` is appended to ``found`` (the page names a
    file-backed row by its data-root name in the URL's ``file=``)."""
    row = _row(fleet, position)
    if row["error"] is not None:
        raise TilescopeError(f"{row['path']} did not load when batched: {error_after_path(row['path'], row['error'])}")
    source = row_source(fleet, position, data_root)
    if found is not None:
        found.append(source)
    if source.path is not None:
        return shared.open(Source.of_path(source.path, source.name), progress, staged=staged)
    if not is_loaded_profile(row):
        raise TilescopeError(
            f"{source.name}: a search state opens from its file, which is not under the data root unchanged "
            "(the dataset holds only memory profiles' tables)"
        )
    if progress is not None:
        progress("reading the dataset's partitions", 0.2)
    profile, arrays, plan = reopen_profile(fleet.dataset, row, source.name)
    opened = OpenedProfile(source.name, profile, arrays, plan)
    prepare_profile(opened)
    return opened


def compare_link(a: RowSource, b: RowSource) -> str | None:
    """``?file=A&compare=B`` (the compare view's URL) when both open from files under the data root."""
    if a.path is None or b.path is None:
        return None
    return "?" + urlencode({"file": a.name, "compare": b.name})
