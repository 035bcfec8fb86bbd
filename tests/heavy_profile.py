"""A valid memory profile whose placement is heavy (issue #24: "one valid profile freezes the whole
server"): thousands of values with long, overlapping lifetimes, half of them 16 KiB-granular.

Built from the sample's values (each generated value copies one sample value's layout, class and
figures, under an id of its own, its own root and storage group) over ``steps`` steps whose
operations are the sample's in turn; value ``i`` is live over a seeded random run of steps.
Every figure the file records (aligned and total bytes, per-step usage, peaks) is recomputed with
``planner.model``, as ``tilescope.synth`` does, so the file is consistent: ``tilescope check``
passes it and the app opens it without a warning.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tilescope.loaders.memory_profile import parse_memory_profile
from tilescope.planner.model import arrays_of, compute_plan, peaks_of
from tilescope.synth import SAMPLE_PATH

GRANULE = 16384  # the standard region's allocation granule (docs/formats.md §2)


def heavy_profile(values: int = 6000, steps: int = 400, seed: int = 24) -> dict:
    sample = json.loads(SAMPLE_PATH.read_bytes())
    templates = [v for v in sample["timeline"]["values"] if v["root"] == v["id"] and v["copies"] == 1]
    standard = [v for v in templates if v["class"] == "Ipu21Standard" and v["shard_bytes"] % GRANULE]
    rng = np.random.default_rng(seed)
    out_values = []
    for i in range(values):
        granular = i % 2 == 0  # half of them 16 KiB-granular: aligned to the granule, not the byte
        t = standard[i % len(standard)] if granular else templates[i % len(templates)]
        aligned = -(-t["shard_bytes"] // GRANULE) * GRANULE if granular else t["shard_bytes"]
        out_values.append(
            {
                **t,
                "id": i,
                "origin": i,
                "root": i,
                "storage_group": i,
                "name": f"heavy.v{i}",
                "group": f"heavy.v{i}",
                "aligned_bytes": aligned,
                "bytes": aligned,
            }
        )
    first = rng.integers(0, steps, size=values)
    length = rng.integers(steps // 20, steps // 2, size=values)
    last = np.minimum(first + length, steps - 1)
    sample_steps = sample["timeline"]["steps"]
    out_steps = []
    for s in range(steps):
        template = sample_steps[s % len(sample_steps)]
        live = np.flatnonzero((first <= s) & (s <= last)).tolist()
        out_steps.append(
            {
                "index": s,
                "source": s,
                "operation": template["operation"],
                "execution_count": 1,
                "live": live,
                "scratch": {"standard": 0, "interleaved": 0},
                "usage": {"standard": 0, "interleaved": 0},
            }
        )
    header = {k: sample[k] for k in sample if k != "timeline"}
    doc = {**header, "timeline": {"values": out_values, "steps": out_steps}}
    arrays = arrays_of(parse_memory_profile(json.dumps(doc).encode(), "heavy profile"))
    plan = compute_plan(arrays)
    for row, v in enumerate(out_values):
        v["shard_bytes"], v["aligned_bytes"], v["bytes"] = (
            int(plan.figures.shard[row]),
            int(plan.figures.aligned[row]),
            int(plan.figures.bytes[row]),
        )
    for s, step in enumerate(out_steps):
        step["usage"] = {"standard": int(plan.usage_standard[s]), "interleaved": int(plan.usage_interleaved[s])}
    peaks = peaks_of(arrays, plan.usage_standard, plan.usage_interleaved, plan.figures.bytes)
    doc.update(
        {
            "fits_budget": peaks.fits_budget,
            "effective_peak_bytes": peaks.effective_peak_bytes,
            "peak": {
                "standard": peaks.standard,
                "interleaved": peaks.interleaved,
                "total": peaks.total,
                "exchange_rows": peaks.exchange_rows,
                "maximum_standard_allocation": peaks.maximum_standard_allocation,
            },
            "total_peak_step": peaks.total_step,
            "standard_peak_step": peaks.standard_step,
            "interleaved_peak_step": peaks.interleaved_step,
        }
    )
    return doc


def write_heavy_profile(path: Path, values: int = 6000, steps: int = 400, seed: int = 24) -> Path:
    path.write_text(json.dumps(heavy_profile(values, steps, seed)))
    return path
