"""Reading fields of decoded JSON (dicts, lists, numbers) with located errors: the search-state
readers' helpers. Each raises ``InputError`` at the JSON path it is given."""

from __future__ import annotations

from typing import Any

from tilescope.models.errors import InputError, describe
from tilescope.models.limits import MAX_INT

from .layouts import serde_to_debug_text

MISSING: Any = object()
_ID_DIGITS = len(str(MAX_INT))


def field_of(obj: dict, key: str, path: str, default: Any = MISSING) -> Any:
    if key in obj:
        return obj[key]
    if default is MISSING:
        raise InputError(f"{path}.{key}", f"a field `{key}`", "none")
    return default


def as_object(value: Any, path: str, what: str = "an object") -> dict:
    if not isinstance(value, dict):
        raise InputError(path, what, describe(value))
    return value


def as_list(value: Any, path: str, what: str = "a list") -> list:
    if not isinstance(value, list):
        raise InputError(path, what, describe(value))
    return value


def as_integer(value: Any, path: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_INT:
        raise InputError(path, f"an integer from {minimum} to {MAX_INT}", describe(value))
    return value


def optional_integer(value: Any, path: str) -> int | None:
    return None if value is None else as_integer(value, path)


def optional_boolean(value: Any, path: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise InputError(path, "true or false", describe(value))
    return value


def debug_text_of(value: Any) -> str | None:
    """A serde value in Debug spelling (null → None): for fields the explorer only shows."""
    return None if value is None else serde_to_debug_text(value)


def variant_name(value: Any) -> str:
    """The variant of a serde externally tagged enum: ``"RowMajor"`` or ``{"Amp": …}`` → Amp."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1:
        return next(iter(value))
    return serde_to_debug_text(value)


def id_keys(obj: dict, path: str) -> list[tuple[int, str, Any]]:
    """``(id, key, value)`` of an object keyed by ids (``"0"``), in id order."""
    out = []
    for key, value in obj.items():
        # One spelling per id: "07" or "+7" would alias "7".
        if not (key.isascii() and key.isdigit()) or len(key) > _ID_DIGITS or key != str(int(key)) or int(key) > MAX_INT:
            raise InputError(path, 'object keys that are ids ("0", "1", …)', describe(key))
        out.append((int(key), key, value))
    return sorted(out)
