"""Which value of profile A is which value of profile B, and which step is which step.

- **Values** are matched by name; among values of one name (``operation 18 result 0`` appears
  several times in a profile) the k-th in A's file order is matched with the k-th in B's. Every
  value is in exactly one *entry*: a matched pair, or a value found only in A or only in B.
- **Steps** are matched by index when both profiles have the same sequence of
  ``(source, operation)`` (mode ``"same"``); otherwise by a longest common subsequence of that
  sequence (mode ``"aligned"``, computed by rapidfuzz's bit-parallel ``LCSseq.editops`` on the
  sequences mapped to integers). The *aligned step axis* lists matched pairs in order, with each
  run of unmatched steps placed where it falls: A's first, then B's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from tilescope.models.profile import MemoryProfile

SAME = "same"
ALIGNED = "aligned"


@dataclass(frozen=True)
class ValueMatch:
    """Entries in order: matched pairs (by A's row), then A-only values, then B-only values.

    ``a_row``/``b_row`` are -1 on the absent side. ``entry_of_a_row[r]`` is the entry of A's value
    row r (every row has one), likewise for B.
    """

    name: np.ndarray  # object array of names, per entry
    a_row: np.ndarray
    b_row: np.ndarray
    entry_of_a_row: np.ndarray
    entry_of_b_row: np.ndarray

    @property
    def n_entries(self) -> int:
        return self.name.size

    @property
    def matched(self) -> np.ndarray:
        return (self.a_row >= 0) & (self.b_row >= 0)

    @property
    def only_a(self) -> np.ndarray:
        """Entries of values found only in A."""
        return np.flatnonzero(self.b_row < 0)

    @property
    def only_b(self) -> np.ndarray:
        return np.flatnonzero(self.a_row < 0)


def _names(profile: MemoryProfile) -> pd.Series:
    column = profile.values.column("name")
    return column.to_pandas() if isinstance(column, (pa.ChunkedArray, pa.Array)) else pd.Series(column)


def match_values(a: MemoryProfile, b: MemoryProfile) -> ValueMatch:
    """Match by (name, occurrence of that name in file order)."""
    names_a, names_b = _names(a), _names(b)
    frame_a = pd.DataFrame({"name": names_a, "k": names_a.groupby(names_a, sort=False).cumcount(), "a_row": np.arange(len(names_a))})
    frame_b = pd.DataFrame({"name": names_b, "k": names_b.groupby(names_b, sort=False).cumcount(), "b_row": np.arange(len(names_b))})
    both = frame_a.merge(frame_b, on=["name", "k"], how="outer", sort=False)
    a_row = both["a_row"].fillna(-1).to_numpy(dtype=np.int64)
    b_row = both["b_row"].fillna(-1).to_numpy(dtype=np.int64)
    # Stable order: pairs by A's row, then A-only by A's row, then B-only by B's row.
    group = np.where(b_row < 0, 1, np.where(a_row < 0, 2, 0))
    order = np.lexsort((np.where(a_row < 0, b_row, a_row), group))
    a_row, b_row = a_row[order], b_row[order]
    name = both["name"].to_numpy(dtype=object)[order]
    entry_of_a = np.full(len(names_a), -1, dtype=np.int64)
    entry_of_b = np.full(len(names_b), -1, dtype=np.int64)
    entries = np.arange(a_row.size)
    entry_of_a[a_row[a_row >= 0]] = entries[a_row >= 0]
    entry_of_b[b_row[b_row >= 0]] = entries[b_row >= 0]
    return ValueMatch(name, a_row, b_row, entry_of_a, entry_of_b)


@dataclass(frozen=True)
class StepAlignment:
    """``mode`` is ``"same"`` or ``"aligned"``. ``a_step``/``b_step`` give, for each position of
    the aligned step axis, the step of A and of B there (-1 where that side has none)."""

    mode: str
    a_step: np.ndarray
    b_step: np.ndarray
    n_a: int
    n_b: int

    @property
    def matched(self) -> np.ndarray:
        """Positions of the axis where both sides have a step."""
        return np.flatnonzero((self.a_step >= 0) & (self.b_step >= 0))

    @property
    def unmatched_a(self) -> np.ndarray:
        """A's steps with no partner in B, ascending."""
        return self.a_step[self.b_step < 0]

    @property
    def unmatched_b(self) -> np.ndarray:
        return self.b_step[self.a_step < 0]

    def b_of_a(self) -> np.ndarray:
        """B's step matched to each of A's steps (-1 when none)."""
        out = np.full(self.n_a, -1, dtype=np.int64)
        both = self.matched
        out[self.a_step[both]] = self.b_step[both]
        return out


def step_keys(profile: MemoryProfile) -> list[tuple[int, str]]:
    steps = profile.steps
    return list(zip(steps.column("source").to_pylist(), steps.column("operation").to_pylist()))


def align_steps(a: MemoryProfile, b: MemoryProfile) -> StepAlignment:
    keys_a, keys_b = step_keys(a), step_keys(b)
    n_a, n_b = len(keys_a), len(keys_b)
    if keys_a == keys_b:
        index = np.arange(n_a, dtype=np.int64)
        return StepAlignment(SAME, index, index.copy(), n_a, n_b)
    codes: dict[tuple[int, str], int] = {}
    seq_a = [codes.setdefault(k, len(codes)) for k in keys_a]
    seq_b = [codes.setdefault(k, len(codes)) for k in keys_b]
    from rapidfuzz.distance import LCSseq  # imported here: only profiles of different programs need it

    blocks = LCSseq.editops(seq_a, seq_b).as_matching_blocks()
    a_parts: list[np.ndarray] = []
    b_parts: list[np.ndarray] = []
    next_a = next_b = 0
    for block in blocks:  # the last block is (n_a, n_b, 0)
        gap_a, gap_b = block.a - next_a, block.b - next_b
        # A's unmatched run first, then B's, then the matched block.
        a_parts += [np.arange(next_a, block.a), np.full(gap_b, -1), np.arange(block.a, block.a + block.size)]
        b_parts += [np.full(gap_a, -1), np.arange(next_b, block.b), np.arange(block.b, block.b + block.size)]
        next_a, next_b = block.a + block.size, block.b + block.size
    if next_a < n_a or next_b < n_b:  # (rapidfuzz ends the blocks with (n_a, n_b, 0); never rely on it)
        a_parts += [np.arange(next_a, n_a), np.full(n_b - next_b, -1)]
        b_parts += [np.full(n_a - next_a, -1), np.arange(next_b, n_b)]
    a_step = np.concatenate(a_parts).astype(np.int64) if a_parts else np.zeros(0, np.int64)
    b_step = np.concatenate(b_parts).astype(np.int64) if b_parts else np.zeros(0, np.int64)
    return StepAlignment(ALIGNED, a_step, b_step, n_a, n_b)
