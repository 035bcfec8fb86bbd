"""Progress of long loads on stderr (the loaders' ``progress(stage, fraction)``).

Shown when stderr is a terminal, or when the file is large enough for a load to take a while
(> 20 MB), never when quiet.

- On a terminal, one line rewritten in place with ``\\r`` (only when what it says changes) and
  cleared at the end.
- Anywhere else (a log file, a pipe), one line per stage, when the stage starts, with the
  seconds since the load began: ``loading big.json: live lists 50% (3.1 s)``. No ``\\r``.

If the load fails, ``loading_progress`` clears an unfinished terminal line first, so the error
line that follows starts a line of its own.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

LARGE_FILE_BYTES = 20 * 1000 * 1000

Progress = Callable[[str, float], None]


class StderrProgress:
    """Callable as ``progress(stage, fraction)``; ``fraction`` is of the whole load, 0..1."""

    def __init__(self, label: str, stream: TextIO | None = None):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = _is_terminal(self.stream)
        self.started = time.monotonic()
        self.shown = ""
        self.stage: str | None = None
        self.width = 0
        self.finished = False

    def __call__(self, stage: str, fraction: float) -> None:
        if self.finished:
            return
        percent = max(0, min(100, int(fraction * 100)))
        if self.terminal:
            self._rewrite(f"{self.label}: {stage} {percent:3d}%")
        elif stage != self.stage:
            self.stream.write(f"{self.label}: {stage} {percent}% ({time.monotonic() - self.started:.1f} s)\n")
        self.stage = stage
        if fraction >= 1.0:
            self.finished = True
            self._clear()
        self.stream.flush()

    def _rewrite(self, text: str) -> None:
        if text != self.shown:
            self.shown = text
            self.width = max(self.width, len(text))
            self.stream.write("\r" + text.ljust(self.width))

    def _clear(self) -> None:
        if self.terminal and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.width = 0

    def interrupt(self) -> None:
        """The load stopped before the end: leave the line free for what is printed next."""
        if not self.finished:
            self.finished = True
            self._clear()
            self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def progress_for(path: str | Path, quiet: bool = False, stream: TextIO | None = None) -> StderrProgress | None:
    """A progress display for loading ``path``, or None when nothing should be shown."""
    stream = stream if stream is not None else sys.stderr
    if quiet:
        return None
    try:
        large = os.path.getsize(path) > LARGE_FILE_BYTES
    except OSError:
        large = False  # the loader reports the unreadable file
    if not (large or _is_terminal(stream)):
        return None
    return StderrProgress(f"loading {Path(path).name}", stream)


@contextlib.contextmanager
def loading_progress(
    path: str | Path, quiet: bool = False, stream: TextIO | None = None
) -> Iterator[StderrProgress | None]:
    """``with loading_progress(path) as progress: load(path, progress)``: the display of
    ``progress_for``, its line cleared if the load raises."""
    progress = progress_for(path, quiet, stream)
    try:
        yield progress
    except BaseException:
        if progress is not None:
            progress.interrupt()
        raise
