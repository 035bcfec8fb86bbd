"""Per-tile arrays of memory profiles v2/v3 (docs/formats.md §7) → runs, with no Python object per entry.

Each value's ``tile_shards``/``tile_bytes`` and each step's ``tile_usage``/``tile_scratch`` hold one
entry per device tile: on a large profile values × tiles alone is 10^8 numbers. They arrive as the
raw JSON text of each list (already valid JSON: the decoder checked it), are parsed with vectorised
numpy over the bytes about a MiB of text at a time (as ``loaders.live_lists`` parses live lists),
checked for their shape (exactly ``tile_count`` entries, pairs where pairs are due, non-negative
integers of at most 2^53), and each chunk is reduced at once to **runs**: maximal spans of
consecutive tiles whose entries are all equal (``models.schemas.VALUE_TILES``/``STEP_TILES``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec
import numpy as np

from tilescope.models.errors import InputError
from tilescope.models.limits import MAX_INT

from .live_lists import _eight_digit_numbers

_ALLOWED = np.zeros(256, dtype=bool)
_ALLOWED[list(b"0123456789,[] \t\r\n")] = True
_ALLOWED.setflags(write=False)
_PAD = 8
_MAX_DIGITS = 16  # 2^53 has 16 digits; more is refused before converting
CHUNK_BYTES = 1 << 20  # text parsed at once: its temporaries stay a few dozen MiB

Where = Callable[[int], str]  # item index (in the whole list) → its JSON path


def _text(raw: bytes, offset: int) -> str:
    start = max(0, offset - 15)
    return (
        repr(bytes(memoryview(raw)[start : offset + 15]).decode("utf-8", "replace"))
        + f" (character {offset} of the list)"
    )


def parse_tile_lists(raws: Sequence[msgspec.Raw], tiles: int, pairs: bool, first: int, where: Where) -> np.ndarray:
    """The lists ``raws`` (items ``first``…) as one int64 array ``[len(raws), tiles]`` (``pairs``:
    ``[len(raws), tiles, 2]``, each list a list of ``[a, b]``); a list of another shape, or an
    entry that is not a non-negative integer of at most 2^53, raises an InputError at its path."""
    k = len(raws)
    expected = (
        f"a list of {tiles:,} "
        + ("[standard, interleaved] pairs of non-negative integers" if pairs else "non-negative integers")
        + " (one per device tile: tile_count)"
    )
    lengths = np.fromiter(map(len, raws), dtype=np.int64, count=k)
    starts = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    padded = np.frombuffer(b"\0" * _PAD + b"".join(raws), dtype=np.uint8)
    buf = padded[_PAD:]
    padded_value = padded - np.uint8(ord("0"))
    digit = padded_value[_PAD:] < 10

    def item_of(pos: int) -> int:
        return int(np.searchsorted(starts, pos, side="right") - 1)

    opening = buf == ord("[")
    n_open = int(np.count_nonzero(opening))
    n_close = int(np.count_nonzero(buf == ord("]")))
    compact = int(np.count_nonzero(digit)) + int(np.count_nonzero(buf == ord(","))) + n_open + n_close == buf.size
    if not compact:  # whitespace, or a character no list of numbers has
        bad = np.flatnonzero(~_ALLOWED[buf])
        if bad.size:
            pos = int(bad[0])
            i = item_of(pos)
            raise InputError(where(first + i), expected, _text(raws[i], pos - int(starts[i])))
    edges = np.flatnonzero(digit[1:] != digit[:-1]) + 1
    num_start, num_end = edges[0::2], edges[1::2]
    width = num_end - num_start
    if not (compact and _regular(buf, starts, num_start, num_end, n_open, tiles, pairs)):
        _check_structure(buf, raws, starts, opening, num_start, tiles, pairs, first, where, expected)
    return _numbers(padded_value, raws, starts, num_start, num_end, width, tiles, pairs, first, where, expected)


def _regular(
    buf: np.ndarray,
    starts: np.ndarray,
    num_start: np.ndarray,
    num_end: np.ndarray,
    n_open: int,
    tiles: int,
    pairs: bool,
) -> bool:
    """Whether compact lists (no whitespace) have exactly the expected shape, proved from counts
    and the bytes around each number (the usual file: no running sums needed)."""
    k = starts.size - 1
    if num_start.size != k * tiles * (2 if pairs else 1) or (k and not np.all(buf[starts[:-1]] == ord("["))):
        return False
    per_item = np.diff(np.searchsorted(num_start, starts))
    if np.any(per_item != tiles * (2 if pairs else 1)):
        return False
    if not pairs:
        return n_open == k  # one '[' per list, at its start: nothing nested
    # Each pair written "[a,b]": the first number after '[' and before ',', the second after ','
    # and before ']'; with one '[' per pair and per list, nothing else can be nested.
    return (
        n_open == k * (tiles + 1)
        and bool(np.all(buf[num_start[0::2] - 1] == ord("[")))
        and bool(np.all(buf[num_end[0::2]] == ord(",")))
        and bool(np.all(buf[num_start[1::2] - 1] == ord(",")))
        and bool(np.all(buf[num_end[1::2]] == ord("]")))
    )


def _check_structure(
    buf, raws, starts, opening, num_start, tiles: int, pairs: bool, first: int, where: Where, expected: str
) -> None:
    """The general check of the lists' shape (any spacing): raises at the first that is wrong."""
    k = starts.size - 1

    def item_of(pos: int) -> int:
        return int(np.searchsorted(starts, pos, side="right") - 1)

    # Bracket depth after each byte, and how many '[' up to it: one running sum each (cheaper than
    # locating every number among the brackets by binary search).
    opens_so_far = np.cumsum(opening, dtype=np.int32)
    depth = opens_so_far - np.cumsum(buf == ord("]"), dtype=np.int32)
    allowed_depth = 2 if pairs else 1
    if depth.size and int(depth.max()) > allowed_depth:
        pos = int(np.argmax(depth > allowed_depth))
        i = item_of(pos)
        raise InputError(where(first + i), expected, "a list nested deeper: " + _text(raws[i], pos - int(starts[i])))
    if k and not np.all(buf[starts[:-1]] == ord("[")):  # a number or text where a list is due
        i = int(np.flatnonzero(buf[starts[:-1]] != ord("["))[0])
        raise InputError(where(first + i), expected, _text(raws[i], 0))

    if num_start.size and np.any(depth[num_start] != allowed_depth):  # e.g. [1, [2, 3]]: a number outside a pair
        pos = int(num_start[np.argmax(depth[num_start] != allowed_depth)])
        i = item_of(pos)
        raise InputError(where(first + i), expected, "a number outside a pair: " + _text(raws[i], pos - int(starts[i])))
    per_item = np.diff(np.searchsorted(num_start, starts))
    if pairs:
        # Every '[' but each list's first opens a pair; each pair must hold exactly two numbers:
        # numbers 2j and 2j + 1 in the pair of the last '[' before them, and number 2j + 2 in another.
        pair_of = opens_so_far[num_start]
        whole = num_start.size // 2 * 2
        wrong = np.flatnonzero(pair_of[0:whole:2] != pair_of[1:whole:2]) * 2
        wrong = np.concatenate((wrong, np.flatnonzero(pair_of[1 : whole - 1 : 2] == pair_of[2:whole:2]) * 2 + 1))
        if num_start.size % 2:
            wrong = np.append(wrong, num_start.size - 1)
        opens_per_item = (
            opens_so_far[np.maximum(starts[1:] - 1, 0)] - np.concatenate(([0], opens_so_far[starts[1:-1] - 1]))
            if k
            else per_item
        )
        pairs_per_item = opens_per_item - 1
        if wrong.size:
            pos = int(num_start[int(wrong.min())])
            i = item_of(pos)
            opens = np.flatnonzero(opening[starts[i] : pos + 1])
            t = opens.size - 2  # the pair this number is in (0-based; the list's own '[' first)
            count = int(np.count_nonzero(pair_of == pair_of[int(wrong.min())]))
            raise InputError(
                f"{where(first + i)}[{t}]",
                "a pair [standard, interleaved] of non-negative integers",
                f"{count} numbers",
            )
        wrong_items = np.flatnonzero(pairs_per_item != tiles)
        if wrong_items.size:
            i = int(wrong_items[0])
            raise InputError(where(first + i), expected, f"a list of {int(pairs_per_item[i]):,}")
    else:
        wrong_items = np.flatnonzero(per_item != tiles)
        if wrong_items.size:
            i = int(wrong_items[0])
            raise InputError(where(first + i), expected, f"a list of {int(per_item[i]):,}")


def _numbers(
    padded_value,
    raws,
    starts,
    num_start,
    num_end,
    width,
    tiles: int,
    pairs: bool,
    first: int,
    where: Where,
    expected: str,
) -> np.ndarray:
    """The numbers (their places already checked) as ``[items, tiles]`` or ``[items, tiles, 2]``."""
    k = starts.size - 1

    def item_of(pos: int) -> int:
        return int(np.searchsorted(starts, pos, side="right") - 1)

    if width.size and width.max() > _MAX_DIGITS:
        pos = int(num_start[np.argmax(width > _MAX_DIGITS)])
        i = item_of(pos)
        raise InputError(where(first + i), expected + " of at most 2^53", f"a number of {int(width.max())} digits")
    numbers = _eight_digit_numbers(padded_value, num_end, width)
    wide = np.flatnonzero(width > 8)
    if wide.size:  # the digits before the last eight, as a second window
        high = _eight_digit_numbers(padded_value, num_end[wide] - 8, width[wide] - 8)
        numbers[wide] += high * 100_000_000
        over = wide[numbers[wide] > MAX_INT]
        if over.size:
            pos = int(num_start[over[0]])
            i = item_of(pos)
            raise InputError(where(first + i), expected + " of at most 2^53", f"{int(numbers[over[0]]):,}")
    return numbers.reshape((k, tiles, 2) if pairs else (k, tiles))


def runs_of(dense: np.ndarray, first_row: int) -> tuple[np.ndarray, ...]:
    """``(row, tile_start, tile_stop, column 0, column 1, …)`` of each maximal run of equal entries
    along the tiles (axis 1) of ``dense`` ``[rows, tiles, columns]``, rows numbered from
    ``first_row``; runs whose entries are all 0 are left out."""
    rows, tiles, columns = dense.shape
    change = np.ones((rows, tiles), dtype=bool)
    if tiles > 1:
        np.any(dense[:, 1:] != dense[:, :-1], axis=2, out=change[:, 1:])
    row, start = np.nonzero(change)
    flat = row * tiles + start
    stop = np.empty_like(start)
    if flat.size:
        stop[:-1] = np.where(row[1:] == row[:-1], start[1:], tiles)
        stop[-1] = tiles
    entries = dense.reshape(rows * tiles, columns)[flat]
    keep = np.any(entries != 0, axis=1)
    return (
        (row[keep] + first_row).astype(np.int32),
        start[keep].astype(np.int32),
        stop[keep].astype(np.int32),
        *(entries[keep, c] for c in range(columns)),
    )


def chunks_by_size(raws_per_item: Sequence[int], limit: int = CHUNK_BYTES):
    """``(begin, end)`` ranges of items of about ``limit`` bytes of text each (at least one item)."""
    begin, n = 0, len(raws_per_item)
    while begin < n:
        end, size = begin, 0
        while end < n and (size == 0 or size + raws_per_item[end] <= limit):
            size += raws_per_item[end]
            end += 1
        yield begin, end
        begin = end
