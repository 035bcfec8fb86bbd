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


def _names(profile: MemoryProfile) -> pa.ChunkedArray:
    return profile.values.column("name")


def _occurrences(codes: np.ndarray) -> np.ndarray:
    """For each position, how many earlier positions have the same code (0 for the first)."""
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = (
        np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if codes.size else np.zeros(0, np.int64)
    )
    run_start = np.repeat(starts, np.diff(np.concatenate((starts, [codes.size]))))
    out = np.empty(codes.size, dtype=np.int64)
    out[order] = np.arange(codes.size) - run_start
    return out


def _unpaired(n: int, paired: np.ndarray) -> np.ndarray:
    free = np.ones(n, dtype=bool)
    free[paired] = False
    return np.flatnonzero(free)


def _entries(a_row: np.ndarray, b_row: np.ndarray, names: np.ndarray, n_a: int, n_b: int) -> ValueMatch:
    entry_of_a = np.full(n_a, -1, dtype=np.int64)
    entry_of_b = np.full(n_b, -1, dtype=np.int64)
    entries = np.arange(a_row.size)
    entry_of_a[a_row[a_row >= 0]] = entries[a_row >= 0]
    entry_of_b[b_row[b_row >= 0]] = entries[b_row >= 0]
    return ValueMatch(names, a_row, b_row, entry_of_a, entry_of_b)


def match_values(a: MemoryProfile, b: MemoryProfile) -> ValueMatch:
    """Match by (name, occurrence of that name in file order)."""
    names_a, names_b = _names(a), _names(b)
    n_a, n_b = len(names_a), len(names_b)
    text_a = names_a.to_numpy(zero_copy_only=False)
    if names_a.equals(names_b):  # the same program's values in the same order (a what-if, a re-plan): pairs by row
        rows = np.arange(n_a, dtype=np.int64)
        return _entries(rows, rows.copy(), text_a, n_a, n_b)
    text_b = names_b.to_numpy(zero_copy_only=False)
    codes, _ = pd.factorize(np.concatenate((text_a, text_b)))
    code_a, code_b = codes[:n_a].astype(np.int64), codes[n_a:].astype(np.int64)
    width = max(n_a, n_b) + 1
    key_a = code_a * width + _occurrences(code_a)  # unique per side: (name, occurrence)
    key_b = code_b * width + _occurrences(code_b)
    _, pair_a, pair_b = np.intersect1d(key_a, key_b, assume_unique=True, return_indices=True)
    order = np.argsort(pair_a, kind="stable")  # pairs by A's row
    pair_a, pair_b = pair_a[order].astype(np.int64), pair_b[order].astype(np.int64)
    only_a = _unpaired(n_a, pair_a)
    only_b = _unpaired(n_b, pair_b)
    a_row = np.concatenate((pair_a, only_a, np.full(only_b.size, -1))).astype(np.int64)
    b_row = np.concatenate((pair_b, np.full(only_a.size, -1), only_b)).astype(np.int64)
    names = np.concatenate((text_a[pair_a], text_a[only_a], text_b[only_b]))
    return _entries(a_row, b_row, names, n_a, n_b)


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


def _same_steps(a: MemoryProfile, b: MemoryProfile) -> bool:
    return all(a.steps.column(name).equals(b.steps.column(name)) for name in ("source", "operation"))


def align_steps(a: MemoryProfile, b: MemoryProfile) -> StepAlignment:
    if _same_steps(a, b):
        index = np.arange(a.n_steps, dtype=np.int64)
        return StepAlignment(SAME, index, index.copy(), a.n_steps, b.n_steps)
    keys_a, keys_b = step_keys(a), step_keys(b)
    n_a, n_b = len(keys_a), len(keys_b)
    if keys_a == keys_b:  # equal texts in columns Arrow does not call equal (another encoding)
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
