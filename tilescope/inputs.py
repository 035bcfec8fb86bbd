"""How every command opens a memory profile: through the normalised-profile cache (reopening skips
the JSON entirely) with a progress line on long loads. ``TILESCOPE_NO_CACHE=1`` bypasses the cache."""
from __future__ import annotations

import os
from pathlib import Path

from loaders.cache import load_profile_cached
from loaders.memory_profile import load_memory_profile
from models.profile import MemoryProfile
from tilescope.progress import progress_for


def open_profile(path: str | Path, *, quiet: bool = False) -> MemoryProfile:
    progress = progress_for(path, quiet=quiet)
    if os.environ.get("TILESCOPE_NO_CACHE"):
        return load_memory_profile(path, progress)
    return load_profile_cached(path, progress=progress)
