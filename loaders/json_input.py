"""Opening and reading a planner output's bytes, and turning msgspec's validation errors into
located InputErrors (decoding errors: ``loaders.json_scan.decode_error``).

Every input file is opened by ``open_input``: only a regular file (or a link to one) is read. A
FIFO, a device such as ``/dev/zero``, a directory or a socket is refused before a byte is read,
with a one-line error naming what it is, so no reader can block on a pipe, read forever or fill
memory. The FIFO is opened non-blocking, so even opening it cannot wait for a writer.
"""

from __future__ import annotations

import io
import mmap
import os
import re
import stat
import sys
from pathlib import Path

import msgspec
import numpy as np

from tilescope.models.errors import InputError, describe
from tilescope.models.files import FileAccessError, cannot_read

_VALIDATION = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<path>[^`]*)`)?$", re.S)
_EXPECTED = re.compile(r"^Expected `(?P<exp>[^`]*)`(?P<bound>[^,`]*)(?:, got `(?P<got>[^`]*)`)?$")
_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+)\]")

_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _unreadable(path: str | Path, exc: OSError) -> InputError:
    """Why ``path`` could not be opened or read: what it is when that is not a regular file (a
    socket cannot even be opened), else the system's reason."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        return not_a_regular_file(path, mode)
    return cannot_read(path, exc)


def not_a_regular_file(path: str | Path, mode: int) -> InputError:
    return FileAccessError(path, "cannot read it", f"{file_kind(mode)}, not a regular file")


def file_kind(mode: int) -> str:
    """What a ``st_mode`` says a file is, for a message (``"a FIFO (named pipe)"``)."""
    for test, name in _FILE_KINDS:
        if test(mode):
            return name
    return "not a regular file"


def open_input(path: str | Path) -> io.BufferedReader:
    """The file at ``path`` opened for reading, refused (InputError, nothing read) unless it is a
    regular file. Non-blocking open: a FIFO without a writer is refused at once, not waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _unreadable(path, exc) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise not_a_regular_file(path, mode)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def check_input(path: str | Path) -> None:
    """Refuse ``path`` now (InputError) unless it is a readable regular file; nothing is read."""
    open_input(path).close()


def read_bytes(path: str | Path) -> bytes:
    """Read a planner output (never written to). A missing, unreadable or non-regular file is an
    InputError."""
    with open_input(path) as handle:
        try:
            return handle.read()
        except OSError as exc:
            raise _unreadable(path, exc) from None


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
    def read(cls, path: str | Path) -> InputBuffer:
        """The file's bytes; a missing, unreadable or non-regular file is an InputError."""
        with open_input(path) as handle:
            try:
                size = os.fstat(handle.fileno()).st_size
                if size < mmap.PAGESIZE or not _CAN_RELEASE:
                    return cls(handle.read(), path)
                # Private: released pages are freed (a shared mapping would only unmap them).
                memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
                view = memoryview(memory)
                done = 0
                while done < size:
                    n = handle.readinto(view[done:])
                    if not n:
                        break
                    done += n
                rest = handle.read()
                del view
                if done < size or rest:  # the file changed size while being read
                    return cls(memory[:done] + rest, path)
                return cls(memory, path)
            except OSError as exc:
                raise _unreadable(path, exc) from None

    def release(self, first: msgspec.Raw, last: msgspec.Raw) -> None:
        """Hand back the whole pages from ``first``'s start to ``last``'s end (Raw views into
        ``data``, ``last`` not before ``first``): nothing on them may be read again."""
        if not self._base or not isinstance(self.data, mmap.mmap):  # (only a mapped file has pages to release)
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
    message, path = (match.group("msg"), match.group("path") or "$") if match else (str(exc), "$")
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
