"""How every command opens its input: through the normalised-profile cache (reopening skips the
JSON entirely) with a progress line on long loads. ``TILESCOPE_NO_CACHE=1`` bypasses the cache.

Only regular files are read (``loaders.json_input.open_input``): a FIFO, ``/dev/zero``, a directory
or a socket is refused with one line before anything is read. When a load fails, its unfinished
progress line is ended first, so the error is a line of its own.
"""
from __future__ import annotations

import os
from pathlib import Path

from tilescope.loaders.cache import load_profile_cached, open_planner_output
from tilescope.loaders.json_input import check_input
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.profile import MemoryProfile
from tilescope.cli.progress import loading_progress


def open_profile(path: str | Path, *, quiet: bool = False) -> MemoryProfile:
    with loading_progress(path, quiet) as progress:
        if os.environ.get("TILESCOPE_NO_CACHE"):
            return load_memory_profile(path, progress)
        return load_profile_cached(path, progress=progress)


def open_output(path: str | Path, *, quiet: bool = False) -> tuple[str, MemoryProfile | bytes]:
    """``("memory_profile", MemoryProfile)`` or ``("search_state", the file's bytes)``; a cached
    profile's JSON is not read at all, not even to tell its kind."""
    use_cache = not os.environ.get("TILESCOPE_NO_CACHE")
    with loading_progress(path, quiet) as progress:
        return open_planner_output(path, progress=progress, use_cache=use_cache)


def check_regular(path: str | Path | None) -> None:
    """Refuse an input that is not a readable regular file (InputError) before a command starts."""
    if path is not None:
        check_input(path)
