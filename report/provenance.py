"""What a report PNG was made from, by what and when: written into the PNG's text chunks (read
them with ``PIL.Image.open(path).text`` or ``exiftool``) and drawn in the picture's header, so a
PNG passed around on its own still says which file, which tilescope and which day it shows.

The source is named by the SHA-256 of the bytes that were loaded (``MemoryProfile.content_sha256``,
recorded by the loader's cache); when the loader did not record it, the PNG says ``unknown``
rather than hashing a file that may have changed since."""

from __future__ import annotations

import contextlib
import datetime
import os
from dataclasses import dataclass
from pathlib import Path

from tilescope.models.version import __version__

UNKNOWN = "unknown"


@dataclass(frozen=True)
class Provenance:
    created: str  # ISO 8601, UTC, to the second
    version: str
    sources: tuple[tuple[str, str], ...]  # (file name, SHA-256 of its bytes or UNKNOWN)

    def png_metadata(self) -> dict[str, str]:
        """PNG text chunks: the registered keywords (``Software``, ``Creation Time``, ``Source``)
        and one ``tilescope.*`` key per fact, for a program to read."""
        listed = "; ".join(f"{name} sha256:{sha}" for name, sha in self.sources)
        return {
            "Software": f"tilescope {self.version}",
            "Creation Time": self.created,
            "Source": listed,
            "tilescope.version": self.version,
            "tilescope.created": self.created,
            "tilescope.source_sha256": " ".join(sha for _, sha in self.sources),
        }

    def line(self) -> str:
        """One line for the picture: ``tilescope 0.9.0 · 2026-12-02T00:15:07Z · sha256 1a2b3c4d5e6f…``."""
        shas = ", ".join(sha if sha == UNKNOWN else f"{sha[:16]}…" for _, sha in self.sources)
        return f"tilescope {self.version} · {self.created} · source sha256 {shas}"


def _created() -> datetime.datetime:
    """Now, unless ``SOURCE_DATE_EPOCH`` (the reproducible-builds convention: whole seconds since
    the epoch) names the time: then the same input gives the same PNG bytes, e.g. the app's export
    and ``tilescope report`` made seconds apart. A malformed value is ignored (now)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        with contextlib.suppress(OverflowError, OSError, ValueError):
            return datetime.datetime.fromtimestamp(int(epoch), datetime.UTC)
    return datetime.datetime.now(datetime.UTC)


def provenance_of(*sources: tuple[str | Path, str | None]) -> Provenance:
    """``sources``: (the file as loaded, its SHA-256 or None), in the order the picture names them."""
    created = _created().strftime("%Y-%m-%dT%H:%M:%SZ")
    return Provenance(created, __version__, tuple((Path(str(name)).name, sha or UNKNOWN) for name, sha in sources))
