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


def _tiling_codes(side: "CompareSide", codes: dict[TensorTiling, int]) -> np.ndarray:
    """A code per value row for its current tiling; equal codes on both sides ⇔ equal tilings."""
    arrays = side.arrays
    by_text: dict[str, int] = {}
    out = np.empty(arrays.n_values, dtype=np.int64)
    for row, text in enumerate(arrays.layout_text):
        code = by_text.get(text)
        if code is None:
            code = by_text[text] = codes.setdefault(arrays.tiling(row), len(codes))
        out[row] = code
    for row, tiling in side.tilings.items():
        out[row] = codes.setdefault(tiling, len(codes))
    return out


def _text_codes(side: "CompareSide", column: str, codes: dict[str, int]) -> np.ndarray:
    texts = side.profile.values.column(column).to_pylist()
    return np.fromiter((codes.setdefault(t, len(codes)) for t in texts), dtype=np.int64, count=len(texts))


def differing_pairs(a: "CompareSide", b: "CompareSide", match: "ValueMatch") -> np.ndarray:
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
    shapes_a, shapes_b = a.arrays.shapes, b.arrays.shapes
    differ |= np.fromiter((shapes_a[i] != shapes_b[j] for i, j in zip(ra.tolist(), rb.tolist())), dtype=bool, count=pairs.size)
    return pairs[differ]


def _axes_text(tiling: TensorTiling) -> str:
    return " · ".join(str(axis.axis) for axis in tiling.axes) or "no axes"


def value_changes(a: "CompareSide", a_row: int, b: "CompareSide", b_row: int) -> dict:
    """What differs between two matched values, each item ``{"a": …, "b": …}``:
    ``partitions`` (a list of ``{"axis", "a", "b"}``, one per axis position whose partitions
    differ, when both tilings have the same axes otherwise), ``axes`` (when they do not),
    ``replicas``, ``precision``, ``region``, ``granule``, ``shape``, ``copies``."""
    out: dict = {}
    ta, tb = current_tiling(a.arrays, a_row, a.tilings), current_tiling(b.arrays, b_row, b.tilings)
    same_axes = len(ta.axes) == len(tb.axes) and all(
        x.axis == y.axis and x.block_size == y.block_size and x.padding_multiple == y.padding_multiple
        and x.shard_padding_multiple == y.shard_padding_multiple and x.padding_groups == y.padding_groups
        and x.padding == y.padding and x.tile_stride == y.tile_stride
        for x, y in zip(ta.axes, tb.axes)
    )
    if same_axes:
        partitions = [
            {"axis": k, "a": x.partitions, "b": y.partitions}
            for k, (x, y) in enumerate(zip(ta.axes, tb.axes)) if x.partitions != y.partitions
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

    def __init__(self, side: "CompareSide"):
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


def value_diffs(a: "CompareSide", b: "CompareSide", match: "ValueMatch") -> list[ValueDiff]:
    """Changed pairs and unmatched values, largest ``|delta_bytes|`` first (ties in entry order:
    pairs by A's file order, then A-only, then B-only values)."""
    entries = np.concatenate((differing_pairs(a, b, match), match.only_a, match.only_b))
    ra, rb = match.a_row[entries], match.b_row[entries]
    bytes_a = np.where(ra >= 0, a.plan.figures.bytes[np.maximum(ra, 0)], 0) if a.arrays.n_values else np.zeros(entries.size, np.int64)
    bytes_b = np.where(rb >= 0, b.plan.figures.bytes[np.maximum(rb, 0)], 0) if b.arrays.n_values else np.zeros(entries.size, np.int64)
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
