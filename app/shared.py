"""Profiles loaded by one server process, shared by every session that opens the same file.

A 90 MB profile costs a session ~100 MB of arrays and a second of loading and planning; ten
engineers opening the same large profile should not cost ten times that. What is shared is
immutable: the Arrow tables (never modified), the ``ProfileArrays`` and the file's plan (numpy
arrays made read-only by ``planner.model.plan_profile``). Each session keeps its own edits,
what-if plans, selection and views (``SessionState``).

This is the app's one piece of process-wide state. It lives in Panel's process-wide
``pn.state.cache`` (not in a module global), and holds each entry only while some session has it
open (weak references): when the last session showing a profile closes, its memory goes.
A file is the same file while its path, device, inode, size and modification time are; uploads
are never shared. Two sessions opening a file at the same moment may each load it (the second
entry replaces the first); the loads run in worker threads, so the look-ups take a lock.
"""
from __future__ import annotations

import dataclasses
import os
import threading
import weakref
from pathlib import Path
from typing import Callable

import panel as pn

from .state import Loaded, load_file

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


class _Entry:
    """One loaded memory profile, held by the sessions showing it (``Loaded.shared``)."""

    def __init__(self, loaded: Loaded):
        self.profile, self.arrays, self.plan = loaded.profile, loaded.arrays, loaded.plan


class SharedProfiles:
    def __init__(self):
        self._entries: weakref.WeakValueDictionary[tuple, _Entry] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self.loads = 0  # files loaded and planned (not served from the entries)

    def load_file(self, path: str | Path, progress: Progress | None = None, name: str | None = None) -> Loaded:
        """``app.state.load_file``, served from a session's earlier load of the same unchanged file."""
        label = name or str(path)
        before = file_identity(path)
        with self._lock:
            entry = self._entries.get(before) if before is not None else None
        if entry is not None:
            if progress is not None:
                progress("done (already open in another session)", 1.0)
            return Loaded(label, "memory_profile", profile=entry.profile, arrays=entry.arrays, plan=entry.plan, shared=entry)
        loaded = load_file(path, progress, name)
        with self._lock:
            self.loads += 1
        if loaded.kind != "memory_profile" or before is None or file_identity(path) != before:
            return loaded  # a search state, or a file that changed while it was read: not shared
        entry = _Entry(loaded)
        with self._lock:
            self._entries[before] = entry
        return dataclasses.replace(loaded, shared=entry)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


def shared_profiles() -> SharedProfiles:
    """This server process's ``SharedProfiles`` (created by the first session that asks)."""
    shared = pn.state.cache.get(CACHE_KEY)
    if not isinstance(shared, SharedProfiles):
        shared = pn.state.cache[CACHE_KEY] = SharedProfiles()
    return shared
