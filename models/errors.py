"""The one error type for bad input: it always says which file, where in it, and what was expected.

Messages are one line whatever the file holds or is called: every character that is not printable
(newlines, tabs, ANSI escapes, other control and format characters) is written as its escape
(``\\n``, ``\\x1b``, ``\\u202e``), and a run of more than ``LONG_TOKEN`` characters without a space
(a 5,000-digit number, a path of thousands of characters) is cut in the middle, saying how long
it was (``one_line``).
"""

from __future__ import annotations

import re
import sys

LONG_TOKEN = 200  # a path of a few directories fits; a 5,000-digit number does not
_TOKEN = re.compile(r"\S{%d,}" % (LONG_TOKEN + 1))


def json_path(*parts: str | int) -> str:
    """Build a JSON path such as ``$.timeline.values[3].shape`` from keys and indices."""
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def printable(text: str) -> str:
    """``text`` with every non-printable character as its escape: safe on one terminal line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _cut(match: re.Match) -> str:
    token = match.group()
    return f"{token[: LONG_TOKEN // 2]}…[{len(token):,} characters]…{token[-LONG_TOKEN // 4 :]}"


def one_line(text: str) -> str:
    """``text`` escaped (``printable``) with every overlong token cut in the middle."""
    return _TOKEN.sub(_cut, printable(text))


def describe(found: object, limit: int = 60) -> str:
    """A short, single-line rendering of a found value for an error message."""
    if found is None:
        return "null"
    if isinstance(found, bool):
        return "true" if found else "false"
    if isinstance(found, (dict,)):
        return "an object"
    if isinstance(found, (list, tuple)):
        return f"a list of {len(found)}"
    if isinstance(found, int):  # a long one is never echoed whole
        try:
            text = str(found)
        except ValueError:  # more digits than Python writes out
            return f"an integer of more than {sys.get_int_max_str_digits():,} digits"
        return text if len(text) <= limit else f"{text[: limit // 2]}… (an integer of {len(text.lstrip('-')):,} digits)"
    text = repr(found) if isinstance(found, str) else str(found)
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TilescopeError(Exception):
    """An error the user can act on: the CLI prints its one-line message and exits 2."""


class InputError(TilescopeError):
    """Bad input. ``str(error)`` is one line: ``FILE: at PATH: expected X, found Y``."""

    def __init__(self, path: str, expected: str, found: str | None = None, *, file: str | None = None):
        self.file = file
        self.path = path
        self.expected = expected
        self.found = found
        super().__init__(self.message)

    @property
    def message(self) -> str:
        where = f"{self.file}: " if self.file else ""
        found = f", found {self.found}" if self.found is not None else ""
        return one_line(f"{where}at {self.path}: expected {self.expected}{found}")

    def __str__(self) -> str:
        return self.message

    def in_file(self, file: str) -> InputError:
        """The same error, naming the file (loaders add it once, at the boundary)."""
        if self.file is None:
            self.file = file
            self.args = (self.message,)
        return self

    def naming(self, file: str) -> InputError:
        """A copy of this error (of the same kind) naming ``file`` instead: the file as the user
        named it, not the path it was read from."""
        renamed = type(self).__new__(type(self))  # (copy.copy would call __init__ with ``args``)
        renamed.__dict__.update(self.__dict__)
        renamed.file = file
        renamed.args = (renamed.message,)
        return renamed
