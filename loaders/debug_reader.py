"""Reading a parsed line of Rust ``Debug`` text (``loaders.debug_text``) with located errors:
``$.context line N <path in the Debug value>``, for the search state's context lines."""

from __future__ import annotations

import math
from typing import Any

from tilescope.models.errors import InputError, describe
from tilescope.models.limits import MAX_INT

from .debug_text import Map, Set, Struct, Tuple, Unit, render


def debug_found(value: Any) -> str:
    return describe(render(value) if isinstance(value, (Unit, Struct, Tuple, Map, Set, list)) else value)


class DebugReader:
    """Reads one parsed context line. Errors are at ``$.context line N <path in the Debug value>``."""

    def __init__(self, line: int):
        self.where = f"$.context line {line}"

    def at(self, path: str) -> str:
        return f"{self.where} {path}"

    def error(self, path: str, expected: str, value: Any) -> InputError:
        return InputError(self.at(path), expected, debug_found(value))

    def struct(self, value: Any, name: str, path: str) -> dict:
        if not isinstance(value, Struct) or value.name != name:
            raise self.error(path, f"a {name} {{ … }}", value)
        return value.fields

    def field(self, fields: dict, key: str, path: str) -> Any:
        if key not in fields:
            raise InputError(self.at(f"{path}.{key}"), f"a field `{key}`", "none")
        return fields[key]

    def items(self, value: Any, path: str) -> list:
        if not isinstance(value, list):
            raise self.error(path, "a list [ … ]", value)
        return value

    def entries(self, value: Any, path: str, what: str) -> list[tuple[Any, Any]]:
        if isinstance(value, Map):
            return value.entries
        raise self.error(path, what, value)

    def integer(self, value: Any, path: str, minimum: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_INT:
            raise self.error(path, f"an integer from {minimum} to {MAX_INT}", value)
        return value

    def wrapped(self, value: Any, name: str, path: str) -> int:
        """``ValueId(3)``, ``OperationId(0)`` → the integer."""
        if not isinstance(value, Tuple) or value.name != name or len(value.items) != 1:
            raise self.error(path, f"{name}(n)", value)
        return self.integer(value.items[0], path)

    def shape(self, value: Any, path: str) -> tuple[int, ...]:
        if not isinstance(value, Tuple) or value.name != "TensorShape" or len(value.items) != 1:
            raise self.error(path, "TensorShape([…])", value)
        dims = tuple(self.integer(d, f"{path}[{i}]") for i, d in enumerate(self.items(value.items[0], path)))
        if math.prod(dims) > MAX_INT:
            raise self.error(path, f"at most {MAX_INT} elements", value)
        return dims


def variant_text(value: Any) -> str:
    """The variant name of a parsed Debug enum value (``Host``, ``FlashAttention(…)`` → FlashAttention)."""
    return value.name if isinstance(value, (Unit, Struct, Tuple)) else render(value)
