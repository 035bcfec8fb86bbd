"""Edit-set files (``models.edits``) read from disk: a regular file only (``json_input.open_input``),
then ``models.edits.parse_edit_set``."""
from __future__ import annotations

from pathlib import Path

from tilescope.models.edits import TilingEdit, parse_edit_set

from .json_input import read_bytes


def load_edit_set(path: str | Path) -> list[TilingEdit]:
    return parse_edit_set(read_bytes(path), str(path))
