"""The changed values of a comparison: every matched pair whose bytes, tiling, precision, region,
granule, shape or copies differ, and every value found on one side only.

A pair's tiling is each side's current tiling (a what-if side's edited tiling where it has one,
else the file's: ``planner.edits.current_tiling``). Tilings are compared as ``TensorTiling``
records, one per distinct layout text, so a profile of 10⁵ values costs a few dictionary look-ups
per value; what changed is spelled out only for the rows listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tilescope.models.tiling import TensorTiling
from tilescope.planner.edits import current_tiling

from .values import tiling_summary

if TYPE_CHECKING:
    from .compare import CompareSide
    from .compare_match import ValueMatch

CHANGED = "changed"
ONLY_A = "only_a"
ONLY_B = "only_b"
REGION_NAMES = ("standard", "interleaved")


def _distinct_texts(column: pa.ChunkedArray) -> tuple[list[str], np.ndarray, np.ndarray]:
    """A text column's distinct texts, each row's index among them, and a row holding each text
    (dictionary-encoded columns are read through their dictionaries: no Python string per row)."""
    encoded = column if pa.types.is_dictionary(column.type) else column.dictionary_encode()
    texts: dict[str, int] = {}
    parts = []
    for chunk in encoded.chunks:
        mapping = np.array([texts.setdefault(t, len(texts)) for t in chunk.dictionary.to_pylist()], dtype=np.int64)
        parts.append(
            mapping[chunk.indices.to_numpy(zero_copy_only=False)] if mapping.size else np.zeros(len(chunk), np.int64)
        )
    index = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    distinct, first_row = np.unique(index, return_index=True)
    rows = np.zeros(len(texts), dtype=np.int64)
    rows[distinct] = first_row
    return list(texts), index, rows


def _tiling_codes(side: CompareSide, codes: dict[TensorTiling, int]) -> np.ndarray:
    """A code per value row for its current tiling; equal codes on both sides ⇔ equal tilings."""
    arrays = side.arrays
    texts, index, rows = _distinct_texts(side.profile.values.column("layout"))
    # One tiling per distinct layout text (read from a row that has it; a text never used by a row
    # of this table cannot occur); aliases share their root's layout text (docs/formats.md §2).
    per_text = np.array([codes.setdefault(arrays.tiling(int(r)), len(codes)) for r in rows], dtype=np.int64)
    out = per_text[index] if index.size else np.zeros(0, np.int64)
    for row, tiling in side.tilings.items():
        out[row] = codes.setdefault(tiling, len(codes))
    return out


def _text_codes(side: CompareSide, column: str, codes: dict[str, int]) -> np.ndarray:
    texts, index, _ = _distinct_texts(side.profile.values.column(column))
    mapping = np.array([codes.setdefault(t, len(codes)) for t in texts], dtype=np.int64)
    return mapping[index] if index.size else np.zeros(0, np.int64)


def _shape_matrix(side: CompareSide, rows: np.ndarray, width: int) -> np.ndarray:
    """The shapes of ``rows`` as a ``(rows, width)`` matrix padded with -1 (width ≥ every rank)."""
    shapes = side.profile.values.column("shape").take(pa.array(rows, pa.int64())).combine_chunks()
    lengths = np.diff(shapes.offsets.to_numpy())
    out = np.full((rows.size, width), -1, dtype=np.int64)
    starts = np.repeat(shapes.offsets.to_numpy()[:-1], lengths)
    position = np.arange(lengths.sum()) - starts + shapes.offsets[0].as_py()
    out[np.repeat(np.arange(rows.size), lengths), position] = shapes.flatten().to_numpy()
    return out


def _max_rank(side: CompareSide) -> int:
    lengths = pc.list_value_length(side.profile.values.column("shape"))
    return int(pc.max(lengths).as_py() or 0)


def differing_pairs(a: CompareSide, b: CompareSide, match: ValueMatch) -> np.ndarray:
    """Entries of matched pairs that differ in anything ``value_changes`` reports, or in bytes."""
    pairs = np.flatnonzero(match.matched)
    ra, rb = match.a_row[pairs], match.b_row[pairs]
    tilings: dict[TensorTiling, int] = {}
    precisions: dict[str, int] = {}
    differ = a.plan.figures.bytes[ra] != b.plan.figures.bytes[rb]
    differ |= _tiling_codes(a, tilings)[ra] != _tiling_codes(b, tilings)[rb]
    differ |= _text_codes(a, "precision", precisions)[ra] != _text_codes(b, "precision", precisions)[rb]
    for name in ("region", "granule", "copies"):
        differ |= getattr(a.arrays, name)[ra] != getattr(b.arrays, name)[rb]
    if pairs.size:
        width = max(_max_rank(a), _max_rank(b), 1)
        differ |= np.any(_shape_matrix(a, ra, width) != _shape_matrix(b, rb, width), axis=1)
    return pairs[differ]


def _axes_text(tiling: TensorTiling) -> str:
    return " · ".join(str(axis.axis) for axis in tiling.axes) or "no axes"


def value_changes(a: CompareSide, a_row: int, b: CompareSide, b_row: int) -> dict:
    """What differs between two matched values, each item ``{"a": …, "b": …}``:
    ``partitions`` (a list of ``{"axis", "a", "b"}``, one per axis position whose partitions
    differ, when both tilings have the same axes otherwise), ``axes`` (when they do not),
    ``replicas``, ``precision``, ``region``, ``granule``, ``shape``, ``copies``."""
    out: dict = {}
    ta, tb = current_tiling(a.arrays, a_row, a.tilings), current_tiling(b.arrays, b_row, b.tilings)
    same_axes = len(ta.axes) == len(tb.axes) and all(
        x.axis == y.axis
        and x.block_size == y.block_size
        and x.padding_multiple == y.padding_multiple
        and x.shard_padding_multiple == y.shard_padding_multiple
        and x.padding_groups == y.padding_groups
        and x.padding == y.padding
        and x.tile_stride == y.tile_stride
        for x, y in zip(ta.axes, tb.axes)
    )
    if same_axes:
        partitions = [
            {"axis": k, "a": x.partitions, "b": y.partitions}
            for k, (x, y) in enumerate(zip(ta.axes, tb.axes))
            if x.partitions != y.partitions
        ]
        if partitions:
            out["partitions"] = partitions
    else:
        out["axes"] = {"a": _axes_text(ta), "b": _axes_text(tb)}
    pairs = {
        "replicas": (ta.replicas, tb.replicas),
        "precision": (a.precision_text(a_row), b.precision_text(b_row)),
        "region": (REGION_NAMES[int(a.arrays.region[a_row])], REGION_NAMES[int(b.arrays.region[b_row])]),
        "granule": (int(a.arrays.granule[a_row]), int(b.arrays.granule[b_row])),
        "shape": (list(a.arrays.shapes[a_row]), list(b.arrays.shapes[b_row])),
        "copies": (int(a.arrays.copies[a_row]), int(b.arrays.copies[b_row])),
    }
    for key, (x, y) in pairs.items():
        if x != y:
            out[key] = {"a": x, "b": y}
    return out


def changes_text(changes: dict) -> str:
    """``axis 1 partitions 9 → 18; replicas 54 → 27`` (empty when only the bytes differ)."""
    parts = [f"axis {p['axis']} partitions {p['a']} → {p['b']}" for p in changes.get("partitions", ())]
    for key, item in changes.items():
        if key == "partitions":
            continue
        parts.append(f"{key} {item['a']} → {item['b']}")
    return "; ".join(parts)


@dataclass(frozen=True)
class ValueDiff:
    """One changed or unmatched value. Bytes of an absent side are None; ``delta_bytes`` counts an
    absent side as 0 bytes (a value only in B adds its bytes)."""

    entry: int
    status: str  # "changed", "only_a" or "only_b"
    name: str
    a_id: int | None
    b_id: int | None
    a_bytes: int | None
    b_bytes: int | None
    delta_bytes: int
    a_tiling: str | None
    b_tiling: str | None
    changes: dict  # value_changes (empty for an unmatched value)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "status": self.status,
            "a_id": self.a_id,
            "b_id": self.b_id,
            "a_bytes": self.a_bytes,
            "b_bytes": self.b_bytes,
            "delta_bytes": self.delta_bytes,
            "a_tiling": self.a_tiling,
            "b_tiling": self.b_tiling,
            "changed": self.changes,
        }


class _Summaries:
    """Tiling summary per value row of one side, computed once per distinct layout text."""

    def __init__(self, side: CompareSide):
        self.side = side
        self.memo: dict[str, str] = {}

    def __call__(self, row: int) -> str:
        arrays, tilings = self.side.arrays, self.side.tilings
        if row in tilings:
            return tiling_summary(tilings[row])
        text = arrays.layout_text[int(arrays.root_rows[row])]
        found = self.memo.get(text)
        if found is None:
            found = self.memo[text] = tiling_summary(current_tiling(arrays, row))
        return found


def value_diffs(a: CompareSide, b: CompareSide, match: ValueMatch) -> list[ValueDiff]:
    """Changed pairs and unmatched values, largest ``|delta_bytes|`` first (ties in entry order:
    pairs by A's file order, then A-only, then B-only values)."""
    entries = np.concatenate((differing_pairs(a, b, match), match.only_a, match.only_b))
    ra, rb = match.a_row[entries], match.b_row[entries]
    bytes_a = (
        np.where(ra >= 0, a.plan.figures.bytes[np.maximum(ra, 0)], 0)
        if a.arrays.n_values
        else np.zeros(entries.size, np.int64)
    )
    bytes_b = (
        np.where(rb >= 0, b.plan.figures.bytes[np.maximum(rb, 0)], 0)
        if b.arrays.n_values
        else np.zeros(entries.size, np.int64)
    )
    delta = bytes_b - bytes_a
    order = np.lexsort((entries, -np.abs(delta)))
    summary_a, summary_b = _Summaries(a), _Summaries(b)
    out = []
    for k in order.tolist():
        i, j = int(ra[k]), int(rb[k])
        status = CHANGED if i >= 0 and j >= 0 else (ONLY_A if i >= 0 else ONLY_B)
        out.append(
            ValueDiff(
                entry=int(entries[k]),
                status=status,
                name=str(match.name[entries[k]]),
                a_id=int(a.arrays.value_ids[i]) if i >= 0 else None,
                b_id=int(b.arrays.value_ids[j]) if j >= 0 else None,
                a_bytes=int(bytes_a[k]) if i >= 0 else None,
                b_bytes=int(bytes_b[k]) if j >= 0 else None,
                delta_bytes=int(delta[k]),
                a_tiling=summary_a(i) if i >= 0 else None,
                b_tiling=summary_b(j) if j >= 0 else None,
                changes=value_changes(a, i, b, j) if status == CHANGED else {},
            )
        )
    return out
