"""Edit-set files (``models.edits``): ``parse_edit_set`` reads one from its bytes (an upload),
``load_edit_set`` from disk (a regular file only, ``json_input.open_input``)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import msgspec

from tilescope.models.edits import TilingEdit
from tilescope.models.errors import InputError, describe

from .json_input import read_bytes
from .json_scan import decode_error, locate_byte, nesting_error, refuse_deep_nesting, refuse_duplicate_keys

_DIGITS = sys.get_int_max_str_digits() or 4300
_LONG_NUMBER = re.compile(rb"\d{%d,}" % (_DIGITS + 1))


def parse_edit_set(data: bytes | str, source: str = "<edits>") -> list[TilingEdit]:
    """The edits of an edit-set file's bytes; an InputError naming ``source`` and the place."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")  # a lone surrogate is then refused as in a file
    data = bytes(data)
    try:
        try:
            obj = msgspec.json.decode(data)
        except msgspec.ValidationError:  # valid JSON msgspec will not convert: a huge integer
            long = _LONG_NUMBER.search(data)
            where = locate_byte(data, long.start()) if long else "$"
            raise InputError(where, f"an integer of at most {_DIGITS:,} digits", "a longer one") from None
        except msgspec.DecodeError as exc:
            raise decode_error(data, exc, "a JSON list of edits") from None
        except RecursionError:  # msgspec decodes nested JSON recursively: say where it starts
            raise nesting_error(data) from None
        refuse_deep_nesting(data)
        refuse_duplicate_keys(data)
        if not isinstance(obj, list):
            raise InputError("$", "a JSON list of edits", describe(obj))
        return [TilingEdit.from_json(item, f"$[{i}]") for i, item in enumerate(obj)]
    except InputError as exc:
        raise exc.in_file(source) from None


def load_edit_set(path: str | Path) -> list[TilingEdit]:
    return parse_edit_set(read_bytes(path), str(path))
