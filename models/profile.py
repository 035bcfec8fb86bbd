"""A loaded memory profile: its Arrow tables (schemas in ``models.schemas``) and where it came from."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from .schemas import PER_TILE_TABLES, PROFILE_TABLES, STEP_TILES, VALUE_TILES


@dataclass(frozen=True)
class MemoryProfile:
    source: str  # the file's name as the user gave it (for messages)
    profile: pa.Table
    values: pa.Table
    axes: pa.Table
    steps: pa.Table
    live_intervals: pa.Table
    content_sha256: str | None = None  # SHA-256 of the source file's bytes, when the loader knew it (the cache does)
    # Versions 2 and 3 only (docs/formats.md §7): the per-tile arrays as runs; empty for version 1.
    value_tiles: pa.Table = field(default_factory=VALUE_TILES.empty_table)
    step_tiles: pa.Table = field(default_factory=STEP_TILES.empty_table)

    def tables(self) -> dict[str, pa.Table]:
        """Every table (the cache stores them all)."""
        return {name: getattr(self, name) for name in PROFILE_TABLES}

    def file_tables(self) -> dict[str, pa.Table]:
        """The tables the file has data for: a version 1 profile has no per-tile tables."""
        return {name: table for name, table in self.tables().items() if self.per_tile or name not in PER_TILE_TABLES}

    @property
    def header(self) -> dict:
        """The one-row ``profile`` table as a dict."""
        return {k: v[0] for k, v in self.profile.to_pydict().items()}

    @property
    def version(self) -> int:
        return int(self.profile.column("version")[0].as_py())

    @property
    def per_tile(self) -> bool:
        """Whether the file records per-tile figures (versions 2 and 3)."""
        return self.version >= 2

    @property
    def n_steps(self) -> int:
        return self.steps.num_rows

    @property
    def n_values(self) -> int:
        return self.values.num_rows
