"""What a planner output's top level holds, read cheaply: msgspec skips every value, keeping
each as raw JSON text (a view into the bytes, no Python objects built), though the whole file is
still checked to be JSON.

- ``top_fields``: every top-level key and its raw JSON text: what ``derived.opening`` recognises a
  file's kind by (each kind's recogniser reads them).
- ``kind_of_bytes``: whether bytes are a v1 memory profile or search state, for the loaders'
  messages about a file of the wrong kind or version.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import msgspec

from tilescope.models.errors import InputError

from .json_input import read_bytes
from .json_scan import decode_error

Kind = Literal["memory_profile", "search_state"]

# An empty Raw marks an absent field. (``msgspec.Raw | None`` is not a usable union: msgspec then
# expects null for the field, so absence is spelled this way.)
_ABSENT = msgspec.Raw(b"")


class _Probe(msgspec.Struct):
    version: msgspec.Raw = _ABSENT
    timeline: msgspec.Raw = _ABSENT
    context: msgspec.Raw = _ABSENT
    recipe: msgspec.Raw = _ABSENT


_PROBE = msgspec.json.Decoder(_Probe)
_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])


FIELD_HEAD = 64  # bytes of each top-level value's JSON text kept: a number or short string whole


def top_fields(data) -> dict[str, bytes]:
    """Each top-level key of the JSON object in ``data`` (bytes-like) and the start of its value's
    JSON text (``FIELD_HEAD`` bytes); InputError (without a file name) when ``data`` is not a JSON
    object."""
    try:
        fields = _FIELDS.decode(data)
    except msgspec.ValidationError as exc:  # (a DecodeError too: first) valid JSON, not an object
        got = re.search(r"got `([^`]*)`", str(exc))
        raise InputError("$", "a JSON object", f"a JSON {got.group(1)}" if got else "not an object") from None
    except msgspec.DecodeError as exc:
        raise decode_error(bytes(data), exc) from None
    except RecursionError:
        raise InputError("$", "JSON nested a few hundred levels deep at most", "deeper nesting") from None
    return {key: bytes(memoryview(raw)[:FIELD_HEAD]) for key, raw in fields.items()}


def kind_of_bytes(data: bytes) -> Kind:
    """The kind of a planner output held in ``data``; InputError (without a file name) otherwise."""
    try:
        probe = _PROBE.decode(data)
    # ValidationError is a subclass of DecodeError: it must be caught first.
    except msgspec.ValidationError as exc:  # valid JSON, just not an object: msgspec names its type
        got = re.search(r"got `([^`]*)`", str(exc))
        found = f"a JSON {got.group(1)}" if got else "not an object"
        raise InputError("$", "a JSON object (a memory profile or a search state)", found) from None
    except msgspec.DecodeError as exc:
        raise decode_error(data, exc) from None
    except RecursionError:
        raise InputError("$", "JSON nested a few hundred levels deep at most", "deeper nesting") from None
    version = bytes(probe.version)
    if not version:
        raise InputError("$.version", "a field `version` (1)", "none")
    search_state = not bytes(probe.timeline) and bool(bytes(probe.context) or bytes(probe.recipe))
    # Memory profiles have versions 1–3 (docs/formats.md §7); search states 1, 3 and 8
    # (models.search_state.SEARCH_STATE_VERSIONS).
    accepted = (b"1", b"3", b"8") if search_state else (b"1", b"2", b"3")
    if version not in accepted:
        # The JSON text as found, on one line (a list or object may span several).
        wanted = "version 1, 3 or 8" if search_state else "version 1, 2 or 3"
        raise InputError("$.version", wanted, " ".join(version.decode("utf-8", "replace").split())[:40])
    if bytes(probe.timeline):
        return "memory_profile"
    if search_state:
        return "search_state"
    raise InputError(
        "$",
        "a memory profile (with `timeline`) or a search state (with `context` and `recipe`)",
        "an object with neither",
    )


def detect_kind(path: str | Path) -> Kind:
    """``"memory_profile"`` or ``"search_state"``; InputError naming the file for anything else."""
    data = read_bytes(path)
    try:
        return kind_of_bytes(data)
    except InputError as exc:
        raise exc.in_file(str(path)) from None
