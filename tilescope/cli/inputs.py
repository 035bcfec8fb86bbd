"""How every command opens its input: ``tilescope.derived.opening.open_file``, the app's open path
too (the normalised-profile cache, so reopening skips the JSON entirely; a memory profile planned,
a search state parsed), with a progress line on long loads. ``TILESCOPE_NO_CACHE=1`` bypasses the
cache. ``normalise`` only needs the loaded tables: ``load_output``.

Only regular files are read (``loaders.json_input.open_input``): a FIFO, ``/dev/zero``, a directory
or a socket is refused with one line before anything is read. When a load fails, its unfinished
progress line is ended first, so the error is a line of its own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tilescope.cli.progress import loading_progress
from tilescope.loaders.cache import load_profile_cached, open_planner_output
from tilescope.loaders.json_input import check_input
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.profile import MemoryProfile

if TYPE_CHECKING:  # (imported when used: ``normalise`` needs only the loaders, not pandas)
    from tilescope.derived.opening import Opened, OpenedProfile


def _use_cache() -> bool:
    return not os.environ.get("TILESCOPE_NO_CACHE")


def open_any(path: str | Path, *, quiet: bool = False) -> Opened:
    """A memory profile (planned) or a search state (parsed)."""
    from tilescope.derived.opening import open_file

    with loading_progress(path, quiet) as progress:
        return open_file(path, progress, use_cache=_use_cache())


def open_profile(path: str | Path, *, quiet: bool = False) -> OpenedProfile:
    """A memory profile, planned (``derived.opening.opened_profile``). Read as a memory profile
    only, so a bad one gets the profile loader's own located error (a search state included)."""
    from tilescope.derived.opening import opened_profile

    with loading_progress(path, quiet) as progress:
        profile = load_profile_cached(path, progress=progress) if _use_cache() else load_memory_profile(path, progress)
    return opened_profile(str(path), profile)


def load_output(path: str | Path, *, quiet: bool = False) -> tuple[str, MemoryProfile | bytes]:
    """The loaded tables only (``normalise``): ``("memory_profile", MemoryProfile)`` or
    ``("search_state", the file's bytes)``; a cached profile's JSON is not read at all."""
    with loading_progress(path, quiet) as progress:
        return open_planner_output(path, progress=progress, use_cache=_use_cache())


def size_option(text: str) -> int:
    """An argparse ``type`` for a size option: ``models.format.parse_size``, the one size parser
    (``4096``, ``64KiB``, ``5MB``; ASCII digits), its refusal a usage error."""
    import argparse

    from tilescope.models.format import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected {exc}, found {text!r}") from None


def check_regular(path: str | Path | None) -> None:
    """Refuse an input that is not a readable regular file (InputError) before a command starts."""
    if path is not None:
        check_input(path)
