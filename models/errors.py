"""The one error type for bad input: it always says which file, where in it, and what was expected."""
from __future__ import annotations


def json_path(*parts: str | int) -> str:
    """Build a JSON path such as ``$.timeline.values[3].shape`` from keys and indices."""
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


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
    text = repr(found) if isinstance(found, str) else str(found)
    text = text.replace("\n", "\\n")
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
        return f"{where}at {self.path}: expected {self.expected}{found}"

    def __str__(self) -> str:
        return self.message

    def in_file(self, file: str) -> "InputError":
        """The same error, naming the file (loaders add it once, at the boundary)."""
        if self.file is None:
            self.file = file
            self.args = (self.message,)
        return self
