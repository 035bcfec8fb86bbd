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
search states are never shared. Sessions opening the same file at the same moment load it once:
the first loads, the others wait for it (repeating one progress report while they wait, so a
time limit still stops them, and a wait on a load blocked on I/O gives up its worker like the
load itself, ``app.load_pool``) and take its result — twenty sessions arriving together cost one
load, not twenty. If that load fails, or gives what is not shared (a search state), each waiting
session then loads the file itself. Loads run in worker threads, so the look-ups take a lock.

Every file is checked before it is read (``app.loading.check_file``): only a regular file is
opened, and one under the data root larger than the cap (``--args --max-file-bytes``) is refused.
"""
from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path
from typing import Callable

import panel as pn

from tilescope.app.loading import DEFAULT_MAX_FILE_BYTES, check_file
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
    def __init__(self, data_root: str | Path | None = None, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES):
        self._entries: weakref.WeakValueDictionary[tuple, OpenedProfile] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self._loading: dict[tuple, threading.Event] = {}  # file identity → set when its load is over
        self.loads = 0  # files opened (not served from the entries)
        self.data_root = Path(data_root).resolve() if data_root is not None else None
        self.max_file_bytes = max_file_bytes  # for files under data_root (every file when no root is given)

    def cap_for(self, path: str | Path) -> int | None:
        """The size cap of ``path``: the data root's for a file under it, none for one outside it
        (``--args PATH``: the operator's choice)."""
        if self.data_root is None or Path(path).resolve().is_relative_to(self.data_root):
            return self.max_file_bytes
        return None

    def open_path(self, path: str | Path, progress: Progress | None = None, name: str | None = None, *, staged: bool = False,
                  build_behind: bool = True) -> Opened:
        """``derived.opening.open_path``, served from a session's earlier load of the same unchanged
        file. (A shared profile keeps the name it was first opened under; a session shows its own.)
        A file that is not regular, or over its cap, is refused (InputError) before it is read.
        ``staged``: a cached profile may come back before its plan exists (its overview is there,
        the rest is being built: ``OpenedProfile.ready``); another session asking meanwhile gets the
        same one, and waits for the same build. ``build_behind=False``: that build starts when
        someone first waits for it (``OpenedProfile.wait``), in the waiter's thread."""
        check_file(path, name or str(path), self.cap_for(path))
        before = file_identity(path)
        while True:
            with self._lock:
                entry = self._entries.get(before) if before is not None else None
                other = self._loading.get(before) if entry is None and before is not None else None
                if entry is None and other is None and before is not None:
                    self._loading[before] = threading.Event()  # this call loads it
            if entry is not None:
                if progress is not None:
                    progress("done (already open in another session)", 1.0)
                return entry
            if other is None:
                break
            while not other.wait(0.25):  # another session is loading this very file
                if progress is not None:
                    progress("waiting for another session's load of the same file", 0.0)
        try:
            opened = open_path(path, progress, name, staged=staged, build_behind=build_behind)
            with self._lock:
                self.loads += 1
            if isinstance(opened, OpenedProfile) and before is not None and file_identity(path) == before:
                with self._lock:
                    self._entries[before] = opened
            return opened
        finally:
            with self._lock:
                done = self._loading.pop(before, None) if before is not None else None
            if done is not None:
                done.set()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


def shared_profiles(data_root: str | Path | None = None, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> SharedProfiles:
    """This server process's ``SharedProfiles`` (created, with this data root and cap, by the first
    session that asks: every session of a process has the same ``--args``)."""
    shared = pn.state.cache.get(CACHE_KEY)
    if not isinstance(shared, SharedProfiles):
        shared = pn.state.cache[CACHE_KEY] = SharedProfiles(data_root, max_file_bytes)
    return shared
