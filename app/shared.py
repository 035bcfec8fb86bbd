"""Profiles opened by one server process, shared by every session that opens the same file.

A 90 MB profile costs a session ~100 MB of arrays and a second of loading and planning; ten
engineers opening the same large profile should not cost ten times that. What is shared is
immutable: the ``tilescope.derived.opened.OpenedProfile`` (Arrow tables never modified, numpy
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
from collections.abc import Callable
from pathlib import Path

import panel as pn

from tilescope.app.loading import DEFAULT_MAX_FILE_BYTES, check_file
from tilescope.derived.opening import Opened, OpenedProfile, Source, open_file, prepare_profile

__all__ = ["SharedProfiles", "file_identity", "shared_profiles"]

Progress = Callable[[str, float], None]
Staged = Callable[[OpenedProfile], None]
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

    def open(
        self, source: Source, progress: Progress | None = None, *, staged: Staged | None = None, prepare: bool = True
    ) -> Opened:
        """``derived.opening.open_file(source, prepare=...)``, served from a session's earlier
        load of the same unchanged file. (A shared profile keeps the name it was first opened
        under; a session shows its own.) An upload's bytes are opened, never shared. A file that
        is not regular, or over its cap, is refused (InputError) before it is read. ``staged``
        (``open_file``): a cached profile is shared as soon as its overview is there; another
        session asking meanwhile gets the same one (its overview shown at once) and waits for
        the same build."""
        if source.path is None:
            return open_file(source, progress, staged=staged, prepare=prepare)
        path = source.path
        check_file(path, source.name, self.cap_for(path))
        before = file_identity(path)
        while True:
            with self._lock:
                entry = self._entries.get(before) if before is not None else None
                other = self._loading.get(before) if entry is None and before is not None else None
                if entry is None and other is None and before is not None:
                    self._loading[before] = threading.Event()  # this call loads it
            if entry is not None:
                return self._served(entry, progress, staged, prepare)
            if other is None:
                break
            while not other.wait(0.25):  # another session is loading this very file
                if progress is not None:
                    progress("waiting for another session's load of the same file", 0.0)

        def share(opened: OpenedProfile) -> None:  # the overview is there: others may have it now
            self._share(before, path, opened)
            if staged is not None:
                staged(opened)

        try:
            opened = open_file(source, progress, staged=share, prepare=prepare)
            with self._lock:
                self.loads += 1
            if isinstance(opened, OpenedProfile):
                self._share(before, path, opened)
            return opened
        finally:
            self._done_loading(before)

    def _share(self, before: tuple | None, path: Path, opened: OpenedProfile) -> None:
        """Keep ``opened`` for other sessions (if the file is unchanged since it was looked at) and
        let the sessions waiting for this load have it."""
        if before is not None and file_identity(path) == before:
            with self._lock:
                self._entries[before] = opened
        self._done_loading(before)

    def _done_loading(self, before: tuple | None) -> None:
        with self._lock:
            done = self._loading.pop(before, None) if before is not None else None
        if done is not None:
            done.set()

    @staticmethod
    def _served(entry: OpenedProfile, progress: Progress | None, staged: Staged | None, prepare: bool) -> OpenedProfile:
        """A profile another session opened: its overview first if its plan is still being built."""
        if not entry.ready and staged is not None:
            staged(entry)
        entry.wait()
        if prepare:
            prepare_profile(entry)
        if progress is not None:
            progress("done (already open in another session)", 1.0)
        return entry

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


def shared_profiles(
    data_root: str | Path | None = None, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> SharedProfiles:
    """This server process's ``SharedProfiles`` (created, with this data root and cap, by the first
    session that asks: every session of a process has the same ``--args``)."""
    shared = pn.state.cache.get(CACHE_KEY)
    if not isinstance(shared, SharedProfiles):
        shared = pn.state.cache[CACHE_KEY] = SharedProfiles(data_root, max_file_bytes)
    return shared
