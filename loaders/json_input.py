"""Reading a planner output's bytes and turning JSON decoding errors into located InputErrors."""
from __future__ import annotations

import mmap
import os
import re
import stat
import sys
from pathlib import Path

import msgspec
import numpy as np

from tilescope.models.errors import InputError, describe
from tilescope.models.files import cannot_read

_VALIDATION = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<path>[^`]*)`)?$", re.S)
_EXPECTED = re.compile(r"^Expected `(?P<exp>[^`]*)`(?P<bound>[^,`]*)(?:, got `(?P<got>[^`]*)`)?$")
_BYTE = re.compile(r"\(byte (\d+)\)")
_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def read_bytes(path: str | Path) -> bytes:
    """Read a planner output (never written to). A missing or unreadable file is an InputError."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise cannot_read(path, exc) from None


# Private anonymous memory whose pages can be handed back (Linux, macOS); elsewhere plain bytes.
_CAN_RELEASE = all(hasattr(mmap, name) for name in ("MAP_PRIVATE", "MAP_ANONYMOUS", "MADV_DONTNEED"))


class InputBuffer:
    """One load's input bytes, whose memory can be handed back a span at a time once parsed.

    Read from a file, the bytes go into private anonymous memory (the file is copied, not mapped:
    another program rewriting it cannot fault this process, and the file is never written). The
    loader decodes in place, keeping parts of the text as ``msgspec.Raw`` views into it, and calls
    ``release(first, last)`` when the parts from ``first`` to ``last`` are parsed: the whole pages
    they cover go back to the system, so a large file does not stay resident beside what is built
    from it (peak memory). Bytes given by the caller (an upload) are kept as they are.
    """

    def __init__(self, data: bytes | mmap.mmap, path: str | Path | None = None):
        self.data = data  # what decoders read
        self._path = path
        self._released = False
        self._base = np.frombuffer(data, dtype=np.uint8).ctypes.data if isinstance(data, mmap.mmap) and len(data) else 0

    @classmethod
    def read(cls, path: str | Path) -> "InputBuffer":
        """The file's bytes; a missing or unreadable file is an InputError."""
        try:
            with open(path, "rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode) or info.st_size < mmap.PAGESIZE or not _CAN_RELEASE:
                    return cls(handle.read(), path)
                # Private: released pages are freed (a shared mapping would only unmap them).
                memory = mmap.mmap(-1, info.st_size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
                view = memoryview(memory)
                done = 0
                while done < info.st_size:
                    n = handle.readinto(view[done:])
                    if not n:
                        break
                    done += n
                rest = handle.read()
                del view
                if done < info.st_size or rest:  # the file changed size while being read
                    return cls(memory[:done] + rest, path)
                return cls(memory, path)
        except OSError as exc:
            raise cannot_read(path, exc) from None

    def release(self, first: msgspec.Raw, last: msgspec.Raw) -> None:
        """Hand back the whole pages from ``first``'s start to ``last``'s end (Raw views into
        ``data``, ``last`` not before ``first``): nothing on them may be read again."""
        if not self._base:
            return
        start = np.frombuffer(first, dtype=np.uint8).ctypes.data - self._base
        end = np.frombuffer(last, dtype=np.uint8).ctypes.data - self._base + len(last)
        page = mmap.PAGESIZE
        start = -(-start // page) * page  # pages partly outside the span may hold text still needed
        end = end // page * page
        if 0 <= start < end <= len(self.data):
            self.data.madvise(mmap.MADV_DONTNEED, start, end - start)
            self._released = True

    def whole(self) -> bytes:
        """All the bytes, for an error message (read again from the file if some were released)."""
        if self._released and self._path is not None:
            return read_bytes(self._path)
        return self.data if isinstance(self.data, bytes) else bytes(self.data)


def locate_byte(data: bytes, offset: int) -> str:
    """``byte N (line L, column C)`` for an error position in raw JSON."""
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"byte {offset} (line {line}, column {column})"


def decode_error(data: bytes, exc: msgspec.DecodeError) -> InputError:
    """A JSON syntax or encoding error, located by byte offset, line and column."""
    text = str(exc)
    if not data.strip():
        return InputError("$", "a JSON object", "an empty file")
    if "truncated" in text:
        return InputError(f"{locate_byte(data, len(data))}", "more JSON (the file ends early)", "end of file")
    match = _BYTE.search(text)
    if match:
        offset = int(match.group(1))
        excerpt = data[max(0, offset - 20) : offset + 20].decode("utf-8", "replace")
        return InputError(locate_byte(data, offset), "valid JSON", f"{text.split(' (byte')[0]} near {excerpt!r}")
    if "UTF-8" in text:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as ude:
            return InputError(locate_byte(data, ude.start), "UTF-8 text", f"byte 0x{data[ude.start]:02x}")
    return InputError("$", "valid JSON", text)


def _found_at(data: bytes, path: str) -> str:
    """The value at JSON path ``path`` of ``data`` (valid JSON), described for a message."""
    try:
        node = msgspec.json.decode(data)
        for key, index in _PATH_PART.findall(path[1:]):
            node = node[int(index)] if index else node[key]
    except (msgspec.DecodeError, LookupError, TypeError, ValueError, RecursionError):
        return "a value outside that range"
    return describe(node)


def validation_error(exc: msgspec.ValidationError, data: bytes | None = None) -> InputError:
    match = _VALIDATION.match(str(exc))
    message, path = match.group("msg"), match.group("path") or "$"
    expected = _EXPECTED.match(message)
    if expected:
        if expected.group("got"):
            return InputError(path, expected.group("exp"), expected.group("got"))
        # msgspec names the bound, not the number that broke it: show the number.
        found = _found_at(data, path) if data is not None else "a value outside that range"
        return InputError(path, f"{expected.group('exp')}{expected.group('bound')}", found)
    if message.startswith("Integer value out of range"):  # more digits than Python converts
        return InputError(path, f"an integer of at most {sys.get_int_max_str_digits()} digits", "a longer one")
    missing = re.match(r"Object missing required field `([^`]*)`", message)
    if missing:
        return InputError(f"{path}.{missing.group(1)}", f"a field `{missing.group(1)}`", "none")
    return InputError(path, "a valid memory profile", message)
