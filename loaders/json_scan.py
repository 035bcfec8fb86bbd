"""The JSON scanner every reader shares (memory profiles, search states, edit sets, placement
files): checks of JSON text vectorised with numpy over its bytes.

- ``decode_error``: a decoder's complaint as a located ``InputError`` (byte, line, column);
  a lone UTF-16 surrogate escape (``"\\ud800"``, which no Unicode text holds) is named as such.
- ``refuse_duplicate_keys``: an object naming one key twice is refused at the second one (JSON
  decoders keep the last silently, so the file would not mean what it shows). The scan is numpy
  over the bytes, a few MiB at a time: strings are found from the unescaped quotes, keys are the
  strings followed by ``:``, their object is the innermost ``{`` still open (brace depth); keys are
  compared by a hash of their object, length and first and last 8 bytes, and every hash match is
  confirmed on the bytes themselves before it is reported.
- ``nesting_error``: where text nests deeper than a decoder will follow.

The scans assume text a JSON decoder has accepted (or, for nesting, got as far as decoding):
on other bytes they return nothing rather than fail.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import msgspec
import numpy as np

from tilescope.models.errors import InputError, describe
from tilescope.models.limits import MAX_JSON_DEPTH

_CHUNK = 1 << 22  # bytes per scanned chunk: the temporary arrays stay a few times this
_QUOTE, _BACKSLASH, _COLON = 34, 92, 58
_LBRACE, _RBRACE, _LBRACKET, _RBRACKET = 123, 125, 91, 93
_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[[32, 9, 10, 13]] = True
_WHITESPACE.setflags(write=False)
_DEPTH_SHIFT = 40  # (depth << 40) | byte offset orders braces by depth, then position (files < 1 TiB)
_OFFSET_MASK = (1 << _DEPTH_SHIFT) - 1
_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93], dtype=np.uint64)
_MIX.setflags(write=False)  # (module arrays are shared by every session of an app process)
_BYTE = re.compile(r"\(byte (\d+)\)")
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _view(data) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8)


def locate_byte(data: bytes, offset: int) -> str:
    """``byte N (line L, column C)`` for an error position in raw JSON."""
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"byte {offset} (line {line}, column {column})"


# ----------------------------------------------------------------------------- decoding errors


def _escaped(data, offset: int) -> bool:
    """Whether the byte at ``offset`` follows an odd run of backslashes (is itself escaped)."""
    run = 0
    while offset - run - 1 >= 0 and data[offset - run - 1] == _BACKSLASH:
        run += 1
    return run % 2 == 1


def lone_surrogate(data) -> int | None:
    """Byte offset of the first ``\\uD800``–``\\uDFFF`` escape that is not half of a pair."""
    pending = None  # offset of a high surrogate waiting for its low half
    for match in _SURROGATE.finditer(data):
        start = match.start()
        if _escaped(data, start):  # ``\\\\ud800`` is a backslash, then text
            continue
        high = match.group()[2:3].lower() in b"89ab"
        if pending is not None:
            if not high and start == pending + 6:
                pending = None
                continue
            return pending
        if not high:
            return start
        pending = start
    return pending


def decode_error(data: bytes, exc: msgspec.DecodeError, what: str = "a JSON object") -> InputError:
    """A JSON syntax or encoding error, located by byte offset, line and column; ``what`` is what
    an empty file should have held."""
    text = str(exc)
    if not bytes(data).strip():
        return InputError("$", what, "an empty file")
    if not isinstance(exc, msgspec.ValidationError):
        # msgspec names a lone surrogate variously ("truncated", "unexpected end of hex escape"):
        # look for one first.
        surrogate = lone_surrogate(data)
        if surrogate is not None:
            return InputError(
                locate_byte(data, surrogate),
                "text of Unicode characters (a \\ud800–\\udfff escape is half of a pair)",
                f"a lone {bytes(data[surrogate : surrogate + 6]).decode('ascii')}",
            )
    if "truncated" in text:
        return InputError(f"{locate_byte(data, len(data))}", "more JSON (the file ends early)", "end of file")
    match = _BYTE.search(text)
    if match:
        offset = int(match.group(1))
        excerpt = bytes(data[max(0, offset - 20) : offset + 20]).decode("utf-8", "replace")
        return InputError(locate_byte(data, offset), "valid JSON", f"{text.split(' (byte')[0]} near {excerpt!r}")
    if "UTF-8" in text:
        try:
            bytes(data).decode("utf-8")
        except UnicodeDecodeError as ude:
            return InputError(locate_byte(data, ude.start), "UTF-8 text", f"byte 0x{data[ude.start]:02x}")
    return InputError("$", "valid JSON", text)


# ----------------------------------------------------------------------------- strings, chunk by chunk


class _Quotes:
    """The unescaped quotes of a text, a chunk at a time, with what carries over between chunks:
    how many came before (whether a chunk starts inside a string), the last one's offset, and the
    run of backslashes the previous chunk ended with."""

    def __init__(self, buf: np.ndarray):
        self.buf = buf
        self.count = 0  # unescaped quotes before the current chunk
        self.last = -1  # offset of the last unescaped quote before it
        self._trailing_backslashes = 0

    def chunk(self, start: int, stop: int) -> np.ndarray:
        """Offsets of the unescaped quotes in ``[start, stop)``; call with consecutive ranges."""
        piece = self.buf[start:stop]
        quotes = np.flatnonzero(piece == _QUOTE)
        backslashes = np.flatnonzero(piece == _BACKSLASH)
        carried = self._trailing_backslashes
        if backslashes.size:
            run_first = np.zeros(backslashes.size, dtype=np.int64)  # index of the first backslash of each one's run
            breaks = np.flatnonzero(np.diff(backslashes) != 1) + 1
            run_first[breaks] = breaks
            np.maximum.accumulate(run_first, out=run_first)
            escaped = np.zeros(quotes.size, dtype=bool)
            after = np.flatnonzero((quotes > 0) & np.isin(quotes - 1, backslashes, assume_unique=True))
            if after.size:
                at = np.searchsorted(backslashes, quotes[after] - 1)
                run = at - run_first[at] + 1 + np.where(backslashes[run_first[at]] == 0, carried, 0)
                escaped[after] = run % 2 == 1
            if quotes.size and quotes[0] == 0 and carried % 2:
                escaped[0] = True
            quotes = quotes[~escaped]
            if backslashes[-1] == piece.size - 1:
                run = backslashes.size - run_first[-1]
                self._trailing_backslashes = run + (carried if backslashes[run_first[-1]] == 0 else 0)
            else:
                self._trailing_backslashes = 0
        else:
            if quotes.size and quotes[0] == 0 and carried % 2:
                quotes = quotes[1:]
            self._trailing_backslashes = 0
        return quotes + start

    def advance(self, quotes: np.ndarray) -> None:
        if quotes.size:
            self.count += quotes.size
            self.last = int(quotes[-1])

    def outside(self, quotes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Which of ``offsets`` (in the current chunk) lie outside every string."""
        return (np.searchsorted(quotes, offsets) + self.count) % 2 == 0


_NOT_BLANK = re.compile(rb"[^ \t\r\n]")


def _skip_blanks(data, buf: np.ndarray, at: np.ndarray) -> None:
    """Move each offset in ``at`` forward past blanks (in place): a few vectorised steps cover the
    usual indentation, a regular-expression search the rare long run."""
    end = buf.size - 1
    pending = np.flatnonzero(_WHITESPACE[buf[at]])
    for _ in range(16):
        if not pending.size:
            return
        at[pending] = np.minimum(at[pending] + 1, end)
        pending = pending[_WHITESPACE[buf[at[pending]]] & (at[pending] < end)]
    for i in pending.tolist():
        match = _NOT_BLANK.search(data, int(at[i]))
        at[i] = match.start() if match else end


# _LOW_BYTES[w] keeps the first w bytes of a little-endian 8-byte word.
_LOW_BYTES = np.array([(1 << (8 * w)) - 1 for w in range(8)] + [2**64 - 1], dtype=np.uint64)
_LOW_BYTES.setflags(write=False)


class _Words:
    """The little-endian uint64 of the 8 bytes at any offset of ``buf``, read as one unaligned
    word (a strided view: no copy), bytes past the end read as zeros."""

    def __init__(self, buf: np.ndarray):
        self.buf = buf
        whole = buf[: buf.size // 8 * 8].view("<u8")
        self.windows = np.lib.stride_tricks.as_strided(
            whole, shape=(max(buf.size - 7, 0),), strides=(1,), writeable=False
        )

    def at(self, start: np.ndarray, length: np.ndarray) -> np.ndarray:
        """The first ``min(length, 8)`` bytes from each ``start`` (the rest zero)."""
        keep = _LOW_BYTES[np.minimum(length, 8)]
        inside = start < self.windows.size
        if inside.all():
            return self.windows[start] & keep
        out = np.zeros(start.size, dtype=np.uint64)
        out[inside] = self.windows[start[inside]] & keep[inside]
        for i in np.flatnonzero(~inside).tolist():  # within 8 bytes of the end
            tail = bytes(self.buf[int(start[i]) : int(start[i]) + 8]).ljust(8, b"\0")
            out[i] = np.frombuffer(tail, dtype="<u8")[0] & keep[i]
        return out


# ----------------------------------------------------------------------------- duplicate keys


@dataclass(frozen=True)
class DuplicateKey:
    offset: int  # byte offset of the repeated key's opening quote
    first_offset: int  # the first occurrence's
    object_offset: int  # the object's '{'
    key: bytes  # the key as written between its quotes


class _Keys:
    """Keys seen so far (hash, object, start, length, offset), as sorted runs merged as they grow."""

    def __init__(self):
        self.runs: list[tuple[np.ndarray, ...]] = []

    def add(self, keys: tuple[np.ndarray, ...], open_objects: np.ndarray) -> None:
        """Keep the keys of ``keys`` whose object is still open (only those can be repeated later)."""
        keep = np.isin(keys[1], open_objects)
        keys = tuple(column[keep] for column in keys)
        if keys[0].size:
            order = np.argsort(keys[0], kind="stable")
            self.runs.append(tuple(column[order] for column in keys))
        while len(self.runs) >= 2 and self.runs[-2][0].size <= 2 * self.runs[-1][0].size:
            merged = [np.concatenate((a, b)) for a, b in zip(self.runs[-2], self.runs[-1])]
            still_open = np.isin(merged[1], open_objects)  # keys of closed objects cannot match again
            order = np.argsort(merged[0][still_open], kind="stable")
            self.runs[-2:] = [tuple(column[still_open][order] for column in merged)]

    def matches(self, hashes: np.ndarray, objects: np.ndarray):
        """``(index into hashes, run, index in run)`` of every earlier key with an equal hash
        (only keys of an object some earlier key was kept for can match)."""
        if not self.runs:
            return
        kept_objects = np.unique(np.concatenate([run[1] for run in self.runs]))
        candidates = np.flatnonzero(np.isin(objects, kept_objects))
        if not candidates.size:
            return
        hashes = hashes[candidates]
        everything = np.sort(np.concatenate([run[0] for run in self.runs]))
        at = np.minimum(np.searchsorted(everything, hashes), everything.size - 1)
        hit = np.flatnonzero(everything[at] == hashes)
        if not hit.size:
            return
        hashes = hashes[hit]
        hit = candidates[hit]
        for run in self.runs:
            lo = np.searchsorted(run[0], hashes, side="left")
            hi = np.searchsorted(run[0], hashes, side="right")
            for i in np.flatnonzero(hi > lo).tolist():
                for j in range(int(lo[i]), int(hi[i])):
                    yield int(hit[i]), run, j


def first_duplicate_key(data) -> DuplicateKey | None:
    """The first object key (in file order of its second occurrence) that its object names twice."""
    buf = _view(data)
    quotes = _Quotes(buf)
    depth = 0
    open_at: list[int] = [-1]  # open_at[d]: offset of the '{' of the object open at brace depth d
    seen = _Keys()
    words = _Words(buf)
    for start in range(0, buf.size, _CHUNK):
        stop = min(start + _CHUNK, buf.size)
        q = quotes.chunk(start, stop)
        closers = np.arange(1 - quotes.count % 2, q.size, 2)  # every second quote ends a string
        # A key is a string whose closing quote is followed (after blanks) by ':'.
        after = q[closers] + 1
        np.minimum(after, buf.size - 1, out=after)
        _skip_blanks(data, buf, after)
        is_key = buf[after] == _COLON
        key_close = q[closers[is_key]]
        previous = np.concatenate(([quotes.last], q))  # previous[i] is the quote before q[i]
        key_open = previous[closers[is_key]]
        piece = buf[start:stop]
        braces = np.flatnonzero((piece == _LBRACE) | (piece == _RBRACE)) + start
        braces = braces[quotes.outside(q, braces)]
        opens = buf[braces] == _LBRACE
        depth_after = depth + np.cumsum(np.where(opens, 1, -1))
        # Each key's object: the last '{' before it opened at the key's depth (else still open from before).
        before = np.searchsorted(braces, key_open)
        key_depth = np.concatenate(([depth], depth_after)).astype(np.int64)[
            before
        ]  # the depth after the braces before it
        # Sorted by (depth, offset), after a sentinel (-1: depth -1) so every search lands on an entry.
        opener_key = np.concatenate(
            ([-1], np.sort((depth_after[opens].astype(np.int64) << _DEPTH_SHIFT) | braces[opens]))
        )
        found = np.searchsorted(opener_key, (key_depth << _DEPTH_SHIFT) | key_open) - 1
        in_chunk = (opener_key[found] >> _DEPTH_SHIFT) == key_depth
        stack = np.array(open_at, dtype=np.int64)
        outer = stack[np.clip(key_depth, 0, stack.size - 1)]
        objects = np.where(in_chunk, opener_key[found] & _OFFSET_MASK, outer)

        key_start = key_open + 1
        key_length = key_close - key_start
        first = words.at(key_start, key_length)
        last = np.where(key_length > 8, words.at(np.maximum(key_close - 8, 0), np.full(key_length.size, 8)), 0).astype(
            np.uint64
        )
        hashes = (
            (first * _MIX[0])
            ^ (last * _MIX[1])
            ^ (key_length.astype(np.uint64) * _MIX[2])
            ^ (objects.astype(np.uint64) * _MIX[3])
        )
        keys = (hashes, objects, key_start, key_length, key_open)

        # Chunk end: the objects still open, for the next chunk and for what to keep.
        new_depth = int(depth_after[-1]) if depth_after.size else depth
        if new_depth < 0 or new_depth > 1 << 20:
            return None  # not JSON a decoder accepted
        levels = np.arange(1, new_depth + 1, dtype=np.int64)
        last_opener = np.searchsorted(opener_key, (levels + 1) << _DEPTH_SHIFT) - 1
        here = (opener_key[last_opener] >> _DEPTH_SHIFT) == levels
        inherited = np.array(open_at + [-1] * max(0, new_depth + 1 - len(open_at)), dtype=np.int64)[1 : new_depth + 1]
        open_at = [-1] + np.where(here, opener_key[last_opener] & _OFFSET_MASK, inherited).tolist()
        depth = new_depth
        quotes.advance(q)

        duplicate = _first_confirmed(buf, keys, seen)
        if duplicate is not None:
            return duplicate
        seen.add(keys, np.array(open_at[1:], dtype=np.int64))
    return None


def _first_confirmed(buf: np.ndarray, keys: tuple[np.ndarray, ...], seen: _Keys) -> DuplicateKey | None:
    """The earliest key of this chunk whose hash matches an earlier key's (of this chunk or a
    previous one) and whose object and bytes are the same."""
    hashes, objects, starts, lengths, offsets = keys
    candidates: list[tuple[int, int]] = []  # (offset of the repeat, offset of the earlier key)

    def same(i: int, object_offset: int, start: int, length: int) -> bool:
        return (
            int(objects[i]) == object_offset
            and int(lengths[i]) == length
            and bytes(buf[int(starts[i]) : int(starts[i]) + length]) == bytes(buf[start : start + length])
        )

    ordered = np.sort(hashes)
    if (ordered[1:] == ordered[:-1]).any():  # rare: only then is the order of equal hashes needed
        order = np.argsort(hashes, kind="stable")
        ordered = hashes[order]
    else:
        order = ordered = ordered[:0]
    for k in np.flatnonzero(ordered[1:] == ordered[:-1]).tolist():
        b = int(order[k + 1])
        # Every earlier member of b's group of equal hashes (stable sort: earlier keys first).
        k0 = k
        while k0 > 0 and ordered[k0 - 1] == ordered[k]:
            k0 -= 1
        for a in order[k0 : k + 1].tolist():
            if same(b, int(objects[a]), int(starts[a]), int(lengths[a])):
                candidates.append((int(offsets[b]), int(offsets[a])))
                break
    for i, run, j in seen.matches(hashes, objects):
        if same(i, int(run[1][j]), int(run[2][j]), int(run[3][j])):
            candidates.append((int(offsets[i]), int(run[4][j])))
    if not candidates:
        return None
    offset, first_offset = min(candidates)
    i = int(np.searchsorted(offsets, offset))
    return DuplicateKey(
        offset, first_offset, int(objects[i]), bytes(buf[int(starts[i]) : int(starts[i]) + int(lengths[i])])
    )


def json_path_to(data, offset: int) -> str | None:
    """The JSON path of the value starting at byte ``offset`` (``$.timeline.values[3]``), found by
    decoding one level at a time (msgspec skips the rest); None when it cannot be followed."""
    buf = _view(data)
    text = np.flatnonzero(~_WHITESPACE[buf[: min(buf.size, 1 << 16)]])
    if not text.size:
        return None
    base = buf.ctypes.data
    node, path, at = msgspec.Raw(memoryview(data)[int(text[0]) :]), "$", int(text[0])
    for _ in range(MAX_JSON_DEPTH):
        if at == offset:
            return path
        head = bytes(memoryview(node)[:1])
        children: Iterable[tuple[str | int, msgspec.Raw]]
        try:
            if head == b"{":
                children = msgspec.json.decode(node, type=dict[str, msgspec.Raw]).items()
            elif head == b"[":
                children = enumerate(msgspec.json.decode(node, type=list[msgspec.Raw]))
            else:
                return None
        except (msgspec.DecodeError, RecursionError):
            return None
        for key, child in children:
            first = np.frombuffer(child, dtype=np.uint8).ctypes.data - base
            if first <= offset < first + len(child):
                node, at = child, first
                path = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"
                break
        else:
            return None
    return None


def _key_text(raw: bytes) -> str:
    try:
        return msgspec.json.decode(b'"' + raw + b'"', type=str)
    except msgspec.DecodeError:
        return raw.decode("utf-8", "replace")


def refuse_duplicate_keys(data) -> None:
    """Raise an ``InputError`` at the first key an object names twice (text a decoder accepted)."""
    duplicate = first_duplicate_key(data)
    if duplicate is None:
        return
    key = _key_text(duplicate.key)
    parent = json_path_to(data, duplicate.object_offset)
    where = f"{parent}.{key}" if parent is not None else locate_byte(data, duplicate.offset)
    if parent is not None:
        where += f" ({locate_byte(data, duplicate.offset)})"
    raise InputError(
        where,
        "each key once in an object (a JSON decoder would keep only the last)",
        f"{describe(key)} a second time (the first at {locate_byte(data, duplicate.first_offset)})",
    )


# ----------------------------------------------------------------------------- nesting


def deeper_than(data, limit: int = MAX_JSON_DEPTH) -> int | None:
    """Byte offset of the first bracket nesting deeper than ``limit``, or None."""
    buf = _view(data)
    quotes = _Quotes(buf)
    depth = 0
    for start in range(0, buf.size, _CHUNK):
        stop = min(start + _CHUNK, buf.size)
        q = quotes.chunk(start, stop)
        piece = buf[start:stop]
        brackets = (
            np.flatnonzero((piece == _LBRACE) | (piece == _RBRACE) | (piece == _LBRACKET) | (piece == _RBRACKET))
            + start
        )
        brackets = brackets[quotes.outside(q, brackets)]
        opens = (buf[brackets] == _LBRACE) | (buf[brackets] == _LBRACKET)
        levels = depth + np.cumsum(np.where(opens, 1, -1))
        deep = np.flatnonzero(levels > limit)
        if deep.size:
            return int(brackets[deep[0]])
        depth = int(levels[-1]) if levels.size else depth
        quotes.advance(q)
    return None


def nesting_error(data, limit: int = MAX_JSON_DEPTH) -> InputError:
    """An ``InputError`` at the first bracket nesting deeper than ``limit`` (else at ``$``)."""
    offset = deeper_than(data, limit)
    where = locate_byte(data, offset) if offset is not None else "$"
    return InputError(where, f"JSON nested at most {limit} deep", "deeper nesting")


def refuse_deep_nesting(data, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise ``nesting_error`` when ``data`` nests deeper than ``limit`` (text a decoder accepted)."""
    if deeper_than(data, limit) is not None:
        raise nesting_error(data, limit)
