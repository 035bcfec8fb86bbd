"""Steps' ``live`` lists → live intervals, with no Python object per entry and no array of all entries.

The lists are most of a large profile's entries (steps × live values), so they arrive here as the
raw JSON text of each list (already checked to be valid JSON by the decoder). They are parsed with
vectorised numpy over the bytes, a chunk of steps at a time (about 1 MiB of text, so the work stays
in the CPU cache), and each chunk is reduced at once to the starts and ends of live runs: memory
stays proportional to one chunk plus the number of intervals, however large the file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tilescope.models.errors import InputError

# Characters a flat list of non-negative integers can contain, given that it is valid JSON.
_ALLOWED = np.zeros(256, dtype=bool)
_ALLOWED[list(b"0123456789,[] \t\r\n")] = True
_ALLOWED.setflags(write=False)
_SEPARATORS = tuple(b",[] \t\r\n")
_PAD = 8
# Masks keeping the last w bytes of a little-endian 8-byte window (the number's digits), by w.
_KEEP_LAST_BYTES = np.array([0] + [(2**64 - 1) << (8 * (8 - w)) & (2**64 - 1) for w in range(1, 9)], dtype=np.uint64)
_KEEP_LAST_BYTES.setflags(write=False)
_CHUNK_BYTES = 1 << 20  # measured: larger chunks fall out of the CPU cache and parse slower
_MAX_DIGITS = 15  # ids are checked against the value table afterwards; this only bounds the parse


def _bad_entry(step: int, raw: bytes, offset: int) -> InputError:
    start = max(0, offset - 15)
    excerpt = bytes(memoryview(raw)[start : offset + 15]).decode("utf-8", "replace")
    return InputError(
        f"$.timeline.steps[{step}].live",
        "a list of value ids (non-negative integers)",
        f"{excerpt!r} (character {offset} of the list)",
    )


def _parse_chunk(raws: Sequence[bytes], first_step: int) -> tuple[np.ndarray, np.ndarray]:
    """Entries per step and the ids, in file order, of a few steps' raw lists."""
    lengths = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))
    starts = np.zeros(len(raws) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    # Eight zero bytes in front, so the 8-byte window ending at any number stays in the buffer.
    padded = np.frombuffer(b"\0" * _PAD + b"".join(raws), dtype=np.uint8)
    buf = padded[_PAD:]
    padded_value = padded - np.uint8(ord("0"))  # wraps for non-digits, so one compare finds digits
    digit = padded_value[_PAD:] < 10
    # Only allowed characters when digits and separators make up the whole text (each counted
    # by a vectorised compare; whitespace only when the compact ones do not add up).
    counted = int(np.count_nonzero(digit))
    for separator in _SEPARATORS:
        if counted == buf.size:
            break
        counted += int(np.count_nonzero(buf == separator))
    lists = int(np.count_nonzero(buf == ord("["))) == len(raws) and bool(np.all(buf[starts[:-1]] == ord("[")))
    if counted != buf.size or not lists:
        # Either a character no id list has, a nested list, or a value that is not a list.
        bad = np.flatnonzero(~_ALLOWED[buf])
        if bad.size:
            pos = int(bad[0])
        else:
            opens = np.flatnonzero(buf == ord("["))
            unexpected = np.setdiff1d(opens, starts[:-1])
            pos = int(unexpected[0]) if unexpected.size else int(np.setdiff1d(starts[:-1], opens)[0])
        step = int(np.searchsorted(starts, pos, side="right") - 1)
        raise _bad_entry(first_step + step, raws[step], pos - int(starts[step]))

    # Every list starts with '[' and ends with ']', so digit runs alternate start, end.
    edges = np.flatnonzero(digit[1:] != digit[:-1]) + 1
    num_start, num_end = edges[0::2], edges[1::2]  # num_end is one past the last digit
    width = num_end - num_start
    if width.size and width.max() > _MAX_DIGITS:
        pos = int(num_start[np.argmax(width)])
        step = int(np.searchsorted(starts, pos, side="right") - 1)
        raise _bad_entry(first_step + step, raws[step], pos - int(starts[step]))
    ids = _eight_digit_numbers(padded_value, num_end, width)
    for wide in np.flatnonzero(width > 8):  # rare: ids of nine digits or more
        ids[wide] = int(bytes(buf[num_start[wide] : num_end[wide]]))
    counts = np.diff(np.searchsorted(num_start, starts))
    return counts, ids


def _eight_digit_numbers(padded_value: np.ndarray, num_end: np.ndarray, width: np.ndarray) -> np.ndarray:
    """The numbers of up to eight digits ending at each ``num_end`` (positions after the padding),
    all at once: each number's 8-byte window is read as one little-endian uint64, the bytes before
    the number masked off, and the digits combined pairwise (SWAR: 2 → 4 → 8 digits)."""
    # An unaligned uint64 view starting at every byte: window k covers buf[k - 8 : k].
    whole_words = padded_value[: padded_value.size // 8 * 8].view("<u8")
    windows = np.lib.stride_tricks.as_strided(
        whole_words, shape=(padded_value.size - _PAD + 1,), strides=(1,), writeable=False
    )
    v = windows[num_end].astype(np.uint64)
    v &= _KEEP_LAST_BYTES[np.minimum(width, 8)]
    v = v * np.uint64(10) + (v >> np.uint64(8))
    low_pairs = v & np.uint64(0x000000FF000000FF)
    high_pairs = (v >> np.uint64(16)) & np.uint64(0x000000FF000000FF)
    v = (low_pairs * np.uint64(100 + (1000000 << 32)) + high_pairs * np.uint64(1 + (10000 << 32))) >> np.uint64(32)
    return v.astype(np.int64)


def _chunks(raws: Sequence[bytes]):
    """(first, end) step ranges of about ``_CHUNK_BYTES`` of list text each."""
    begin = 0
    while begin < len(raws):
        end, size = begin, 0
        while end < len(raws) and (size == 0 or size + len(raws[end]) <= _CHUNK_BYTES):
            size += len(raws[end])
            end += 1
        yield begin, end
        begin = end


@dataclass(frozen=True)
class Intervals:
    """Contiguous live ranges, sorted by value row then first step."""

    value_row: np.ndarray  # int64 index into the values table
    first_step: np.ndarray  # int64
    last_step: np.ndarray  # int64, inclusive


@dataclass(frozen=True)
class LiveLists:
    intervals: Intervals
    live_count: np.ndarray  # int64 per step: distinct values live at it


class _RankOf:
    """Position of each live id among the sorted value ids; an unknown id names its step and entry.

    Ids are looked up in a table indexed by id when they are dense enough (the usual case: a
    gather from a small array), else by binary search.
    """

    def __init__(self, ids_sorted: np.ndarray):
        self.ids_sorted = ids_sorted
        self.table = None
        if ids_sorted.size and ids_sorted[0] >= 0 and ids_sorted[-1] < max(4 * ids_sorted.size, 1 << 16):
            self.table = np.full(int(ids_sorted[-1]) + 1, -1, dtype=np.int64)
            self.table[ids_sorted] = np.arange(ids_sorted.size)

    def __call__(self, ids: np.ndarray, counts: np.ndarray, first_step: int) -> np.ndarray:
        if self.table is not None:
            rank = self.table[np.minimum(ids, self.table.size - 1)]
            unknown = np.flatnonzero((rank < 0) | (ids >= self.table.size))
        elif self.ids_sorted.size:
            rank = np.searchsorted(self.ids_sorted, ids).clip(0, self.ids_sorted.size - 1)
            unknown = np.flatnonzero(self.ids_sorted[rank] != ids)
        else:
            rank, unknown = ids, np.arange(ids.size)
        if unknown.size:
            entry = int(unknown[0])
            bounds = np.cumsum(counts)
            step = int(np.searchsorted(bounds, entry, side="right"))
            k = entry - (int(bounds[step - 1]) if step else 0)
            raise InputError(
                f"$.timeline.steps[{first_step + step}].live[{k}]",
                "the id of a value in timeline.values",
                str(int(ids[entry])),
            )
        return rank


class _RunCollector:
    """Starts and ends of live runs, found one chunk of steps at a time.

    Each chunk is processed with the previous chunk's last step in front of it (local step 0), so a
    run crossing the boundary is neither started nor ended there; the chunk's own last step is
    carried to the next chunk the same way.
    """

    def __init__(self, n_steps: int):
        self.live_count = np.zeros(n_steps, dtype=np.int64)
        self.starts: list[np.ndarray] = []  # (rank, step) pairs as rank * n_steps + step
        self.ends: list[np.ndarray] = []
        self.n_steps = max(n_steps, 1)
        self.carry = np.zeros(0, dtype=np.int64)  # ranks live at step ``carry_step``

    def add(self, first_step: int, counts: np.ndarray, ranks: np.ndarray) -> None:
        m = counts.size
        span = m + 1  # local steps: 0 is the carried step (first_step - 1), then 1..m
        local = np.repeat(np.arange(1, m + 1, dtype=np.int64), counts)
        key = np.concatenate((self.carry * span, ranks * span + local))
        key.sort()
        if key.size:  # a value listed twice at one step counts once (docs/formats.md §2)
            keep = np.empty(key.size, dtype=bool)
            keep[0] = True
            np.not_equal(key[1:], key[:-1], out=keep[1:])
            key = key[keep]
        rank, step = np.divmod(key, span)
        same_value = rank[1:] == rank[:-1]
        follows = same_value & (step[1:] == step[:-1] + 1)
        # A run starts where the previous entry is not the same value one step earlier, and ends
        # where the next entry is not the same value one step later.
        start = np.ones(key.size, dtype=bool)
        start[1:] = ~follows
        end = np.ones(key.size, dtype=bool)
        end[:-1] = ~follows
        start &= step > 0  # runs going on from the carried step started in an earlier chunk
        end &= step < m  # runs reaching the chunk's last step may go on in the next chunk
        base = first_step - 1
        self.starts.append(rank[start] * self.n_steps + (step[start] + base))
        self.ends.append(rank[end] * self.n_steps + (step[end] + base))
        self.live_count[first_step : first_step + m] = np.bincount(step, minlength=span)[1:]
        self.carry = rank[step == m]

    def finish(self, order: np.ndarray) -> Intervals:
        last_step = self.live_count.size - 1
        self.ends.append(self.carry * self.n_steps + last_step)
        starts = np.sort(np.concatenate(self.starts)) if self.starts else np.zeros(0, np.int64)
        ends = np.sort(np.concatenate(self.ends))
        # Runs of one value do not overlap, so its k-th start and k-th end belong together.
        rank, first = np.divmod(starts, self.n_steps)
        last = ends % self.n_steps
        rows = order[rank] if rank.size else rank
        if rows.size and np.any(rows[1:] < rows[:-1]):  # values not stored in id order
            by_row = np.lexsort((first, rows))
            rows, first, last = rows[by_row], first[by_row], last[by_row]
        return Intervals(rows.astype(np.int64, copy=False), first, last)


def live_lists(
    raws: Sequence[bytes], ids_sorted: np.ndarray, order: np.ndarray, parsed: Callable[[int, int], None] | None = None
) -> LiveLists:
    """Live intervals (by value-table row) and distinct live counts from each step's raw list.

    ``ids_sorted`` are the value ids sorted, ``order`` the value-table row of each of them.
    ``parsed(begin, end)`` is called after each chunk of steps: their lists are no longer read.
    """
    runs = _RunCollector(len(raws))
    rank_of = _RankOf(ids_sorted)
    for begin, end in _chunks(raws):
        counts, ids = _parse_chunk(raws[begin:end], begin)
        runs.add(begin, counts, rank_of(ids, counts, begin))
        if parsed is not None:
            parsed(begin, end)
    if not raws:
        return LiveLists(Intervals(*(np.zeros(0, np.int64),) * 3), runs.live_count)
    return LiveLists(runs.finish(order), runs.live_count)
