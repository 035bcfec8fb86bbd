"""What-if tiling edits, and the edit-set JSON file:
``[{"value": ID, "axis": K, "partitions": N} | {"value": ID, "replicas": N}, ...]``.

``loaders.edit_sets.parse_edit_set`` reads one from its bytes (an upload), ``load_edit_set`` from
a file (a regular file only). Ids are at most 2^53, axis positions and counts at most 2^31
(``models.limits``); a key given twice, JSON nested deeper than ``MAX_JSON_DEPTH`` or a lone
surrogate escape is refused where it is, like any other fault, with one located line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InputError, describe
from .files import write_atomically
from .limits import MAX_COUNT, MAX_INT

# The edit-set file's reference, shown by the --help of every command that takes one (and
# ``tilescope sample --help``); docs/formats.md "Edit-set files" says the same at length.
EDIT_SET_FORMAT = (
    'An edit-set file (EDITS.json) is a JSON list of edits, applied in order as one set: {"value": ID, "axis": K, '
    '"partitions": N} sets the partitions of axis position K (0-based, in the order of the value\'s axes) of value ID; '
    '{"value": ID, "replicas": N} sets its replicas. Example (tilescope sample edits): [{"value": 84, "axis": 1, '
    '"partitions": 18}, {"value": 84, "replicas": 27}]. Integers only (ID up to 2^53, K and N up to 2^31), no other '
    "keys, no key twice. --edit V:K=N and --edit V:replicas=N are the same edits on the command line."
)


@dataclass(frozen=True, slots=True)
class TilingEdit:
    """Set the partition count of axis position ``axis`` of value ``value``'s tiling, or its replicas.

    Exactly one of ``partitions`` (with ``axis``) or ``replicas`` is set.
    """

    value: int
    axis: int | None = None
    partitions: int | None = None
    replicas: int | None = None

    def __post_init__(self):
        partition_edit = self.axis is not None and self.partitions is not None and self.replicas is None
        replica_edit = self.axis is None and self.partitions is None and self.replicas is not None
        if not (partition_edit or replica_edit):
            raise ValueError("a TilingEdit sets either axis+partitions or replicas")

    @property
    def count(self) -> int:
        count = self.partitions if self.partitions is not None else self.replicas
        assert count is not None  # __post_init__: one of the two is set
        return count

    def to_json(self) -> dict:
        if self.replicas is not None:
            return {"value": self.value, "replicas": self.replicas}
        return {"value": self.value, "axis": self.axis, "partitions": self.partitions}

    def describe(self) -> str:
        if self.replicas is not None:
            return f"value {self.value}: replicas → {self.replicas}"
        return f"value {self.value}: axis {self.axis} partitions → {self.partitions}"

    @staticmethod
    def from_json(obj: Any, where: str = "$") -> TilingEdit:
        if not isinstance(obj, dict):
            raise InputError(
                where, 'an edit object {"value", "axis", "partitions"} or {"value", "replicas"}', describe(obj)
            )
        unknown = set(obj) - {"value", "axis", "partitions", "replicas"}
        if unknown:
            raise InputError(
                f"{where}.{sorted(unknown)[0]}", "only value, axis, partitions or replicas", "an unknown field"
            )

        def integer(key: str, minimum: int) -> int:
            v = obj[key]
            maximum = MAX_INT if key == "value" else MAX_COUNT
            if isinstance(v, bool) or not isinstance(v, int) or not minimum <= v <= maximum:
                raise InputError(f"{where}.{key}", f"an integer from {minimum} to {maximum:,}", describe(v))
            return v

        if "value" not in obj:
            raise InputError(f"{where}.value", "a field `value`", "none")
        value = integer("value", 0)
        if "replicas" in obj:
            if "axis" in obj or "partitions" in obj:
                raise InputError(where, "either replicas or axis+partitions, not both", "both")
            return TilingEdit(value, replicas=integer("replicas", 0))
        for key in ("axis", "partitions"):
            if key not in obj:
                raise InputError(f"{where}.{key}", f"a field `{key}` (or `replicas`)", "none")
        return TilingEdit(value, axis=integer("axis", 0), partitions=integer("partitions", 0))


def edit_set_json(edits: Sequence[TilingEdit]) -> str:
    return json.dumps([e.to_json() for e in edits], indent=1) + "\n"


def save_edit_set(path: str | Path, edits: Sequence[TilingEdit], *, overwrite: bool = False) -> Path:
    return write_atomically(path, edit_set_json(edits).encode(), overwrite=overwrite)


# ----------------------------------------------------------------------------- compact form (URLs)

# re.ASCII: ``\d`` would also match ``²`` (int() refuses it) and ``٨`` (int() reads it as 8).
_COMPACT_EDIT = re.compile(r"^(?P<value>\d{1,18}):(?:(?P<axis>\d{1,4})|(?P<replicas>r))=(?P<count>\d{1,18})$", re.ASCII)
# More edits than any hand-made or advised set holds, few enough to apply at once; a URL past
# this (one 64 KiB request line holds about 8,000) is refused whole, not cut.
MAX_COMPACT_EDITS = 1000


def compact_edits(edits: Sequence[TilingEdit]) -> str:
    """An edit set in one short line, for a URL: ``84:1=18,84:r=27`` (value:axis=partitions, value:r=replicas)."""
    return ",".join(
        f"{e.value}:r={e.replicas}" if e.replicas is not None else f"{e.value}:{e.axis}={e.partitions}" for e in edits
    )


def parse_compact_edits(text: str, source: str = "the URL's edits") -> list[TilingEdit]:
    """The edits of ``compact_edits`` text; an InputError names the first item that is not one, or
    says that there are more than ``MAX_COMPACT_EDITS`` (counted before any is parsed)."""
    items = [part for part in text.split(",") if part]
    if len(items) > MAX_COMPACT_EDITS:
        raise InputError("$", f"at most {MAX_COMPACT_EDITS:,} edits", f"{len(items):,}", file=source)
    edits = []
    for position, item in enumerate(items):
        found = _COMPACT_EDIT.match(item)
        if found is None:
            raise InputError(f"$[{position}]", "V:K=N or V:r=N (e.g. 84:1=18)", describe(item), file=source)
        value, count = int(found["value"]), int(found["count"])
        if found["replicas"]:
            edits.append(TilingEdit(value, replicas=count))
        else:
            edits.append(TilingEdit(value, axis=int(found["axis"]), partitions=count))
    return edits
