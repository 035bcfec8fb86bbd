"""Reading a planner output's bytes and turning JSON decoding errors into located InputErrors."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import msgspec

from models.errors import InputError, describe

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
        raise InputError("$", "a readable file", exc.strerror or str(exc), file=str(path)) from None


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
