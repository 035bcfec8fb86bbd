"""An independent path to compared profiles and their expected comparison, for the compare tests.

Nothing here uses tilescope's loaders, planner or derived code: layouts are read and edited as text
with regular expressions, shards are computed by the rules of docs/formats.md §2 written out
again, usage per step is summed from each step's ``live`` list, and the expected comparison is
worked out from two raw JSON documents (values matched by name and occurrence with a plain loop,
the step LCS by dynamic programming).
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections import Counter
from pathlib import Path

AXIS = re.compile(
    r"AxisTiling \{ axis: (?P<axis>FromEnd\((?P<end>\d+)\)|FromStart\((?P<start>\d+)\)|Linear), "
    r"partitions: (?P<partitions>\d+), padding_groups: \d+, block_size: (?P<block>\d+), "
    r"padding_multiple: (?P<pm>\d+), shard_padding_multiple: (?P<spm>\d+), padding: \w+, tile_stride: (?:Some\(\d+\)|None) \}"
)
TILE_COUNT = re.compile(r"TensorTiling \{ tile_count: (?P<n>\d+), replicas: (?P<r>\d+),")
GRANULE = {"Ipu21Standard": 16384, "Ipu21Interleaved": 32768}
REGION = {"Ipu21Standard": "standard", "Ipu21Interleaved": "interleaved"}


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def element_bytes(precision: str) -> int:
    return {"F16": 2, "F32": 4}.get(precision, 1 if precision.startswith("F8") else 0)


def axes_of(layout: str) -> list[dict]:
    out = []
    for m in AXIS.finditer(layout):
        out.append(
            {
                "axis": m["axis"],
                "end": m["end"],
                "start": m["start"],
                "partitions": int(m["partitions"]),
                "block": int(m["block"]),
                "pm": int(m["pm"]),
                "spm": int(m["spm"]),
                "span": m.span("partitions"),
            }
        )
    return out


def replicas_of(layout: str) -> int:
    return int(TILE_COUNT.search(layout)["r"])


def shard_bytes(value: dict) -> int:
    """docs/formats.md §2, step by step."""
    dims = list(value["shape"])
    for a in axes_of(value["layout"]):
        if a["axis"] == "Linear":
            dims, d = [math.prod(dims)], 0
        elif a["end"] is not None:
            d = len(dims) - int(a["end"])
        else:
            d = int(a["start"])
        padded = ceil_div(dims[d], a["pm"]) * a["pm"]
        blocks = ceil_div(padded, a["block"])
        per = ceil_div(blocks, a["partitions"]) * a["block"]
        dims[d] = ceil_div(per, a["spm"]) * a["spm"]
    return math.prod(dims) * element_bytes(value["precision"])


def granule(value: dict) -> int:
    """docs/formats.md §2 (open point, §5): 1 when aligned == shard, else the region's granule."""
    return 1 if value["aligned_bytes"] == value["shard_bytes"] else GRANULE[value["class"]]


def tiling_text(layout: str) -> str:
    """The app's short tiling text, built from the layout text: ``FromEnd(1)/3 · ×27 = 1458 tiles``."""
    parts = [f"{a['axis']}/{a['partitions']}" for a in axes_of(layout)]
    m = TILE_COUNT.search(layout)
    if int(m["r"]) != 1:
        parts.append(f"×{m['r']}")
    return " · ".join(parts) + f" = {m['n']} tiles"


# ----------------------------------------------------------------------------- editing the raw JSON


def with_edits(raw: dict, edits: list[tuple]) -> dict:
    """A copy of the profile with ``(value id, axis position, partitions)`` and ``(value id,
    "replicas", n)`` edits applied to the layout text of the value's whole alias class (same
    ``root``), and every figure recomputed by docs/formats.md §2."""
    out = copy.deepcopy(raw)
    values = out["timeline"]["values"]
    by_id = {v["id"]: v for v in values}
    granules = {v["id"]: granule(v) for v in values}
    for vid, axis, count in edits:
        root = by_id[vid]["root"]
        for v in values:
            if v["root"] != root:
                continue
            text = v["layout"]
            if axis == "replicas":
                m = TILE_COUNT.search(text)
                text = text[: m.start("r")] + str(count) + text[m.end("r") :]
            else:
                start, end = axes_of(text)[axis]["span"]
                text = text[:start] + str(count) + text[end:]
            tiles = math.prod(a["partitions"] for a in axes_of(text)) * replicas_of(text)
            m = TILE_COUNT.search(text)
            v["layout"] = text[: m.start("n")] + str(tiles) + text[m.end("n") :]
    for v in values:
        shard = shard_bytes(v)
        g = granules[v["id"]]
        v["shard_bytes"] = shard
        v["aligned_bytes"] = ceil_div(shard, g) * g
        v["bytes"] = v["aligned_bytes"] * v["copies"]
    refigure(out)
    return out


def usage_of(raw: dict) -> tuple[list[int], list[int]]:
    cost = {v["id"]: (REGION[v["class"]], v["bytes"]) for v in raw["timeline"]["values"]}
    standard, interleaved = [], []
    for s in raw["timeline"]["steps"]:
        total = {"standard": s["scratch"]["standard"], "interleaved": s["scratch"]["interleaved"]}
        for vid in set(s["live"]):
            region, size = cost[vid]
            total[region] += size
        standard.append(total["standard"])
        interleaved.append(total["interleaved"])
    return standard, interleaved


def first_max(xs: list[int]) -> tuple[int, int]:
    top = max(xs)
    return top, xs.index(top)


def peaks_of(raw: dict) -> dict:
    standard, interleaved = usage_of(raw)
    both = [s + i for s, i in zip(standard, interleaved)]
    exchange = raw["peak"]["exchange_rows"]
    s, s_step = first_max(standard)
    i, i_step = first_max(interleaved)
    t, t_step = first_max(both)
    effective = t + raw["support_reserve_bytes"]
    return {
        "standard": s + exchange,
        "interleaved": i,
        "total": t + exchange,
        "effective_peak_bytes": effective,
        "standard_peak_step": s_step,
        "interleaved_peak_step": i_step,
        "total_peak_step": t_step,
        "fits_budget": effective <= raw["budget_bytes"] and i <= raw["interleaved_budget_bytes"],
        "maximum_standard_allocation": max(
            v["bytes"] for v in raw["timeline"]["values"] if v["class"] == "Ipu21Standard"
        ),
    }


def refigure(raw: dict) -> None:
    """Write usage per step and the header figures from the values' bytes, in place."""
    standard, interleaved = usage_of(raw)
    for s, std, intl in zip(raw["timeline"]["steps"], standard, interleaved):
        s["usage"] = {"standard": std, "interleaved": intl}
    p = peaks_of(raw)
    raw["peak"].update(
        standard=p["standard"],
        interleaved=p["interleaved"],
        total=p["total"],
        maximum_standard_allocation=p["maximum_standard_allocation"],
    )
    for key in (
        "effective_peak_bytes",
        "fits_budget",
        "standard_peak_step",
        "interleaved_peak_step",
        "total_peak_step",
    ):
        raw[key] = p[key]


def write(raw: dict, path: Path) -> Path:
    path.write_text(json.dumps(raw, separators=(",", ":")))
    return path


# ----------------------------------------------------------------------------- the expected comparison


def keyed(raw: dict) -> dict[tuple[str, int], dict]:
    """(name, occurrence of that name in file order) → value."""
    seen: Counter = Counter()
    out = {}
    for v in raw["timeline"]["values"]:
        out[(v["name"], seen[v["name"]])] = v
        seen[v["name"]] += 1
    return out


def lcs_length(xs: list, ys: list) -> int:
    previous = [0] * (len(ys) + 1)
    for x in xs:
        row = [0]
        for j, y in enumerate(ys):
            row.append(previous[j] + 1 if x == y else max(previous[j + 1], row[j]))
        previous = row
    return previous[-1]


def step_keys(raw: dict) -> list[tuple[int, str]]:
    return [(s["source"], s["operation"]) for s in raw["timeline"]["steps"]]


FIGURE_REGIONS = {"total": ("standard", "interleaved"), "standard": ("standard",), "interleaved": ("interleaved",)}


def _live_by_key(raw: dict, step: int, regions: tuple[str, ...]) -> dict:
    key_of = {v["id"]: k for k, v in keyed(raw).items()}
    by_id = {v["id"]: v for v in raw["timeline"]["values"]}
    return {
        key_of[i]: by_id[i]["bytes"]
        for i in set(raw["timeline"]["steps"][step]["live"])
        if REGION[by_id[i]["class"]] in regions
    }


def expected_comparison(raw_a: dict, raw_b: dict) -> dict:
    pa, pb = peaks_of(raw_a), peaks_of(raw_b)
    va, vb = keyed(raw_a), keyed(raw_b)
    changed = {}
    for key in set(va) | set(vb):
        a, b = va.get(key), vb.get(key)
        if a is not None and b is not None:
            differs = any(
                a[f] != b[f] for f in ("bytes", "layout", "precision", "class", "shape", "copies")
            ) or granule(a) != granule(b)
            if not differs:
                continue
        changed[(key[0], a and a["id"], b and b["id"])] = (b["bytes"] if b else 0) - (a["bytes"] if a else 0)
    attribution = {}
    for figure, regions in FIGURE_REGIONS.items():
        step_key = {
            "total": "total_peak_step",
            "standard": "standard_peak_step",
            "interleaved": "interleaved_peak_step",
        }[figure]
        a_step, b_step = pa[step_key], pb[step_key]
        live_a, live_b = _live_by_key(raw_a, a_step, regions), _live_by_key(raw_b, b_step, regions)
        parts = {}
        for key in set(live_a) | set(live_b):
            part = live_b.get(key, 0) - live_a.get(key, 0)
            if part:
                parts[(key[0], va[key]["id"] if key in va else None, vb[key]["id"] if key in vb else None)] = part
        scratch = sum(
            raw_b["timeline"]["steps"][b_step]["scratch"][r] - raw_a["timeline"]["steps"][a_step]["scratch"][r]
            for r in regions
        )
        exchange = raw_b["peak"]["exchange_rows"] - raw_a["peak"]["exchange_rows"] if "standard" in regions else 0
        attribution[figure] = {
            "a_step": a_step,
            "b_step": b_step,
            "parts": parts,
            "scratch_delta": scratch,
            "exchange_rows_delta": exchange,
            "delta": pb[figure] - pa[figure],
        }
    keys_a, keys_b = step_keys(raw_a), step_keys(raw_b)
    return {
        "a": pa,
        "b": pb,
        "delta": {k: pb[k] - pa[k] for k in ("standard", "interleaved", "total", "effective_peak_bytes")},
        "steps": "same" if keys_a == keys_b else "aligned",
        "matched_steps": len(keys_a) if keys_a == keys_b else lcs_length(keys_a, keys_b),
        "changed": changed,
        "only_a": sorted(v["id"] for k, v in va.items() if k not in vb),
        "only_b": sorted(v["id"] for k, v in vb.items() if k not in va),
        "attribution": attribution,
    }
