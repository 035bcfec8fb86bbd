"""Steps' ``live`` lists → one numpy array → live intervals, with no Python object per entry.

The lists are most of a profile's bytes (steps × live values), so they arrive here as the raw JSON
text of each list (already checked to be valid JSON by the decoder) and are parsed with vectorised
numpy over the bytes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from models.errors import InputError

# Characters a flat list of non-negative integers can contain, given that it is valid JSON.
_ALLOWED = np.zeros(256, dtype=bool)
_ALLOWED[[ord(c) for c in "0123456789,[] \t\r\n"]] = True
_ALLOWED.setflags(write=False)
_CHUNK_BYTES = 8 << 20
_MAX_DIGITS = 15  # ids are checked against the value table afterwards; this only bounds the parse


@dataclass(frozen=True)
class LiveEntries:
    """Every (step, value id) pair of the file, in file order."""

    counts: np.ndarray  # int64 per step: entries in its list (duplicates included)
    ids: np.ndarray  # int64 value ids, concatenated step by step


def _bad_entry(step: int, raw: bytes, offset: int) -> InputError:
    start = max(0, offset - 15)
    excerpt = bytes(raw[start : offset + 15]).decode("utf-8", "replace")
    return InputError(
        f"$.timeline.steps[{step}].live",
        "a list of value ids (non-negative integers)",
        f"{excerpt!r} (character {offset} of the list)",
    )


def _parse_chunk(raws: Sequence[bytes], first_step: int) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((len(r) for r in raws), dtype=np.int64, count=len(raws))
    starts = np.concatenate(([0], np.cumsum(lengths)))
    buf = np.frombuffer(b"".join(raws), dtype=np.uint8)

    bad = np.flatnonzero(~_ALLOWED[buf])
    opens = np.flatnonzero(buf == ord("["))
    if bad.size or opens.size != len(raws) or (len(raws) and not np.array_equal(opens, starts[:-1])):
        # Either a character no id list has, a nested list, or a value that is not a list.
        if bad.size:
            pos = int(bad[0])
        else:
            unexpected = np.setdiff1d(opens, starts[:-1])
            pos = int(unexpected[0]) if unexpected.size else int(np.setdiff1d(starts[:-1], opens)[0])
        step = int(np.searchsorted(starts, pos, side="right") - 1)
        raise _bad_entry(first_step + step, raws[step], pos - int(starts[step]))

    digit = (buf >= ord("0")) & (buf <= ord("9"))
    edge = np.diff(digit.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    num_start = np.flatnonzero(edge == 1)
    num_end = np.flatnonzero(edge == -1)  # one past the last digit
    width = num_end - num_start
    if width.size and width.max() > _MAX_DIGITS:
        pos = int(num_start[np.argmax(width)])
        step = int(np.searchsorted(starts, pos, side="right") - 1)
        raise _bad_entry(first_step + step, raws[step], pos - int(starts[step]))

    ids = np.zeros(num_start.size, dtype=np.int64)
    last = num_end - 1
    for k in range(int(width.max()) if width.size else 0):
        take = width > k
        digits = buf[np.minimum(num_start + k, last)].astype(np.int64) - ord("0")
        ids = np.where(take, ids * 10 + digits, ids)
    counts = np.diff(np.searchsorted(num_start, starts))
    return counts, ids


def parse_live_lists(raws: Sequence[bytes]) -> LiveEntries:
    """Parse each step's raw ``live`` JSON text (a flat list of ids) into one array."""
    counts_parts: list[np.ndarray] = []
    id_parts: list[np.ndarray] = []
    begin = 0
    while begin < len(raws):
        end, size = begin, 0
        while end < len(raws) and (size == 0 or size + len(raws[end]) <= _CHUNK_BYTES):
            size += len(raws[end])
            end += 1
        counts, ids = _parse_chunk(raws[begin:end], begin)
        counts_parts.append(counts)
        id_parts.append(ids)
        begin = end
    if not counts_parts:
        return LiveEntries(np.zeros(0, np.int64), np.zeros(0, np.int64))
    return LiveEntries(np.concatenate(counts_parts), np.concatenate(id_parts))


@dataclass(frozen=True)
class Intervals:
    """Contiguous live ranges, sorted by value row then first step."""

    value_row: np.ndarray  # int64 index into the values table
    first_step: np.ndarray  # int64
    last_step: np.ndarray  # int64, inclusive


def live_intervals(value_rows: np.ndarray, counts: np.ndarray, n_values: int) -> Intervals:
    """Turn per-step live entries (as value-table rows) into contiguous intervals.

    A value listed twice at one step counts once (formats.md §2: each live id counts once).
    """
    n_steps = counts.size
    steps = np.repeat(np.arange(n_steps, dtype=np.int64), counts)
    key = value_rows.astype(np.int64) * max(n_steps, 1) + steps
    del steps
    key.sort()
    if key.size:
        keep = np.empty(key.size, dtype=bool)
        keep[0] = True
        np.not_equal(key[1:], key[:-1], out=keep[1:])
        key = key[keep]
    row, step = np.divmod(key, max(n_steps, 1))
    del key
    # A new interval starts where the value changes or its steps are not consecutive.
    new = np.empty(row.size, dtype=bool)
    if row.size:
        new[0] = True
        new[1:] = (row[1:] != row[:-1]) | (step[1:] != step[:-1] + 1)
    first_at = np.flatnonzero(new)
    last_at = np.concatenate((first_at[1:] - 1, [row.size - 1])) if first_at.size else first_at
    return Intervals(row[first_at], step[first_at], step[last_at])
