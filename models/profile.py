"""A loaded memory profile: its Arrow tables (schemas in ``models.schemas``) and where it came from."""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from .schemas import PROFILE_TABLES


@dataclass(frozen=True)
class MemoryProfile:
    source: str  # the file's name as the user gave it (for messages)
    profile: pa.Table
    values: pa.Table
    axes: pa.Table
    steps: pa.Table
    live_intervals: pa.Table
    content_sha256: str | None = None  # SHA-256 of the source file's bytes, when the loader knew it (the cache does)

    def tables(self) -> dict[str, pa.Table]:
        return {name: getattr(self, name) for name in PROFILE_TABLES}

    @property
    def header(self) -> dict:
        """The one-row ``profile`` table as a dict."""
        return {k: v[0] for k, v in self.profile.to_pydict().items()}

    @property
    def n_steps(self) -> int:
        return self.steps.num_rows

    @property
    def n_values(self) -> int:
        return self.values.num_rows
