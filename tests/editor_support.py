"""Expected figures for editor tests, computed straight from the raw sample JSON by docs/formats.md §2.

Deliberately independent of loaders/ and planner/: the layout's ``AxisTiling`` fields are read
with a regular expression, and the shard rule and the per-step usage are re-implemented here.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

AXIS_RE = re.compile(
    r"AxisTiling \{ axis: (?P<axis>FromEnd\((?P<end>\d+)\)|FromStart\((?P<start>\d+)\)|Linear), "
    r"partitions: (?P<partitions>\d+), padding_groups: \d+, block_size: (?P<block>\d+), "
    r"padding_multiple: (?P<pad>\d+), shard_padding_multiple: (?P<shard_pad>\d+),"
)
REPLICAS_RE = re.compile(r"replicas: (\d+)")
ELEMENT_BYTES = {"F16": 2, "F32": 4}


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass
class RawAxis:
    kind: str
    index: int | None
    partitions: int
    block: int
    pad: int
    shard_pad: int


def raw_axes(layout: str) -> list[RawAxis]:
    out = []
    for m in AXIS_RE.finditer(layout):
        kind = m["axis"].split("(")[0]
        index = m["end"] or m["start"]
        out.append(
            RawAxis(
                kind,
                None if index is None else int(index),
                int(m["partitions"]),
                int(m["block"]),
                int(m["pad"]),
                int(m["shard_pad"]),
            )
        )
    return out


def element_bytes(precision: str) -> int:
    return 1 if precision.startswith("F8") else ELEMENT_BYTES[precision]


def shard_bytes(value: dict, partitions: dict[int, int] | None = None) -> int:
    """docs/formats.md §2 "Shard size of one tiling", with some axes' partitions overridden."""
    dims = list(value["shape"])
    for position, axis in enumerate(raw_axes(value["layout"])):
        count = (partitions or {}).get(position, axis.partitions)
        if axis.kind == "Linear":
            dims, dim = [math.prod(dims)], 0
        else:
            dim = axis.index if axis.kind == "FromStart" else len(dims) - axis.index
        padded = ceil_div(dims[dim], axis.pad) * axis.pad
        blocks = ceil_div(padded, axis.block)
        per_partition = ceil_div(ceil_div(blocks, count) * axis.block, axis.shard_pad) * axis.shard_pad
        dims[dim] = per_partition
    return math.prod(dims) * element_bytes(value["precision"])


def blocks_of(value: dict, position: int) -> int:
    dims = list(value["shape"])
    for p, axis in enumerate(raw_axes(value["layout"])):
        if axis.kind == "Linear":
            dims, dim = [math.prod(dims)], 0
        else:
            dim = axis.index if axis.kind == "FromStart" else len(dims) - axis.index
        blocks = ceil_div(ceil_div(dims[dim], axis.pad) * axis.pad, axis.block)
        if p == position:
            return blocks
        dims[dim] = ceil_div(blocks, axis.partitions) * axis.block
    raise IndexError(position)


def granule(value: dict) -> int:
    """The allocation granule docs/formats.md describes: 1 unless the recorded aligned size differs."""
    if value["aligned_bytes"] == value["shard_bytes"]:
        return 1
    return 16384 if value["class"] == "Ipu21Standard" else 32768


def edited_bytes(value: dict, partitions: dict[int, int]) -> tuple[int, int, int]:
    """(shard, aligned, bytes) of a value with some axes re-partitioned."""
    shard = shard_bytes(value, partitions)
    g = granule(value)
    aligned = ceil_div(shard, g) * g
    return shard, aligned, aligned * value["copies"]


@dataclass
class RawProfile:
    doc: dict

    @staticmethod
    def load(path: Path) -> RawProfile:
        return RawProfile(json.loads(Path(path).read_text()))

    def value(self, value_id: int) -> dict:
        return next(v for v in self.doc["timeline"]["values"] if v["id"] == value_id)

    def peaks_with(self, deltas: dict[int, int]) -> dict[str, int]:
        """Recorded per-step usage plus each value's byte delta on the steps it is live at."""
        values = {v["id"]: v for v in self.doc["timeline"]["values"]}
        exchange = self.doc["peak"]["exchange_rows"]
        std, intl = [], []
        for step in self.doc["timeline"]["steps"]:
            s, i = step["usage"]["standard"], step["usage"]["interleaved"]
            for value_id, delta in deltas.items():
                if value_id in step["live"]:
                    if values[value_id]["class"] == "Ipu21Standard":
                        s += delta
                    else:
                        i += delta
            std.append(s)
            intl.append(i)
        return {
            "standard": max(std) + exchange,
            "interleaved": max(intl),
            "total": max(a + b for a, b in zip(std, intl)) + exchange,
        }
