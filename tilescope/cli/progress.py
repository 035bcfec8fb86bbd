"""A one-line progress display on stderr for long loads (the loaders' ``progress(stage, fraction)``).

Shown when stderr is a terminal, or when the file is large enough for a load to take a while
(> 20 MB), never when quiet. The line is rewritten in place with ``\\r`` and only when what it
says changes; at the end it is cleared on a terminal, or ended with a newline in a log.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, TextIO

LARGE_FILE_BYTES = 20 * 1000 * 1000

Progress = Callable[[str, float], None]


class StderrProgress:
    """Callable as ``progress(stage, fraction)``; ``fraction`` is of the whole load, 0..1."""

    def __init__(self, label: str, stream: TextIO | None = None):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.shown = ""
        self.width = 0
        self.finished = False

    def __call__(self, stage: str, fraction: float) -> None:
        if self.finished:
            return
        percent = max(0, min(100, int(fraction * 100)))
        text = f"{self.label}: {stage} {percent:3d}%"
        if text == self.shown:
            return
        self.shown = text
        self.width = max(self.width, len(text))
        self.stream.write("\r" + text.ljust(self.width))
        if fraction >= 1.0:
            self.finished = True
            self.stream.write("\r" + " " * self.width + "\r" if _is_terminal(self.stream) else "\n")
        self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def progress_for(path: str | Path, quiet: bool = False, stream: TextIO | None = None) -> Progress | None:
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
