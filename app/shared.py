"""Profiles opened by one server process, shared by every session that opens the same file.

A 90 MB profile costs a session ~100 MB of arrays and a second of loading and planning; ten
engineers opening the same large profile should not cost ten times that. What is shared is
immutable: the ``tilescope.derived.opening.OpenedProfile`` (Arrow tables never modified, numpy
arrays made read-only by ``planner.model.plan_profile``) and what is derived from it alone (its
values table columns, storage groups, the file plan's ``PlanData``...), computed once per process
by whichever session asks first. Each session keeps its own edits, what-if plans, selection and
views (``SessionState``).

This is the app's one piece of process-wide state. It lives in Panel's process-wide
``pn.state.cache`` (not in a module global), and holds each profile only while some session has it
open (weak references): when the last session showing a profile closes, its memory goes.
A file is the same file while its path, device, inode, size and modification time are; uploads and
search states are never shared. Two sessions opening a file at the same moment may each load it
(the second entry replaces the first); loads run in worker threads, so the look-ups take a lock.
"""
from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path
from typing import Callable

import panel as pn

from tilescope.derived.opening import Opened, OpenedProfile, open_path

Progress = Callable[[str, float], None]
CACHE_KEY = "tilescope.shared_profiles"


def file_identity(path: str | Path) -> tuple | None:
    """What says a file is unchanged since it was loaded; None when it cannot be read."""
    try:
        resolved = Path(path).resolve()
        info = os.stat(resolved)
    except OSError:
        return None
    return (str(resolved), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


class SharedProfiles:
    def __init__(self):
        self._entries: weakref.WeakValueDictionary[tuple, OpenedProfile] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self.loads = 0  # files opened (not served from the entries)

    def open_path(self, path: str | Path, progress: Progress | None = None, name: str | None = None, *, staged: bool = False) -> Opened:
        """``derived.opening.open_path``, served from a session's earlier load of the same unchanged
        file. (A shared profile keeps the name it was first opened under; a session shows its own.)
        ``staged``: a cached profile may come back before its plan exists (its overview is there,
        the rest is being built: ``OpenedProfile.ready``); another session asking meanwhile gets the
        same one, and waits for the same build."""
        before = file_identity(path)
        with self._lock:
            entry = self._entries.get(before) if before is not None else None
        if entry is not None:
            if progress is not None:
                progress("done (already open in another session)", 1.0)
            return entry
        opened = open_path(path, progress, name, staged=staged)
        with self._lock:
            self.loads += 1
        if isinstance(opened, OpenedProfile) and before is not None and file_identity(path) == before:
            with self._lock:
                self._entries[before] = opened
        return opened

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


def shared_profiles() -> SharedProfiles:
    """This server process's ``SharedProfiles`` (created by the first session that asks)."""
    shared = pn.state.cache.get(CACHE_KEY)
    if not isinstance(shared, SharedProfiles):
        shared = pn.state.cache[CACHE_KEY] = SharedProfiles()
    return shared
