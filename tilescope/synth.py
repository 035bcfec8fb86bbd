"""Synthetic memory profiles at any scale, built from the sample's structure (for tests and benchmarks).

A synthetic profile is ``blocks`` independent copies of the sample program, one after another, each
loop carrying ``layers`` layers of stacked weights:

- Block ``b``'s values get ids ``b * V + p`` (``V`` values per block, ``p`` the value's position in
  the block), its steps come after block ``b - 1``'s, and its names and groups are prefixed
  ``block{b}.``. A block's values are live only during its own steps.
- Each per-layer weight family of the sample (``vit.encoder.layer0.X`` / ``layer1.X`` sharing one
  storage group, with a ``(body argument)`` alias) becomes ``layer0.X`` … ``layer{L-1}.X`` in that
  same storage group; a generated layer is live wherever the sample's last layer value is live.
- The loop's steps (execution count = the sample's layer count) get execution count ``L`` and the
  ``Repeat 2 boundary`` step becomes ``Repeat L boundary``.
- With ``gaps``, every value live over three or more steps of a block is left out of the live list
  at the middle step of its range, so its live steps are not contiguous (docs/formats.md allows it).

Every figure the file records is recomputed with ``planner.model``: per-value shard/aligned/bytes
and per-step usage for one block (all blocks are equal), then peaks over the whole program. The
allocation granule of each value is inferred from the sample's recorded figures, as the planner
does for any file. The JSON is written step by step (never one string for the whole file) in the
sample's compact style, to a temporary file renamed into place at the end (``models.files``).
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tilescope import samples
from tilescope.loaders.memory_profile import parse_memory_profile
from tilescope.models.files import atomic_output, cannot_read, cannot_write, exists_already, refuse_inputs
from tilescope.planner.model import Plan, ProfileArrays, arrays_of, compute_plan, peaks_of

SAMPLE_PATH = samples.sample_path()
_LAYER_NAME = re.compile(r"^(?P<head>.*)\.layer(?P<k>\d+)\.(?P<tail>.*)$")
_REPEAT = re.compile(r"^Repeat (?P<n>\d+) boundary$")
_WRITE_BUFFER = 1 << 20


def _dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Block:
    """One block of the synthetic program, with ids as in block 0 and figures recomputed."""

    header: dict  # the sample's top-level fields (figures replaced later), in file order
    values: list[dict]  # value records, block-0 ids, recomputed figures
    steps: list[dict]  # step records without ``live``, block-0 indices
    live: list[np.ndarray]  # per step: sorted block-0 value ids
    origin_stride: int  # added to origins per block
    source_stride: int  # added to step sources per block
    plan: Plan  # the model's plan of one block
    arrays: ProfileArrays  # of one block


def _layer_families(values: list[dict]) -> dict[int, list[dict]]:
    """Storage group → its per-layer weight values (root == id, name ``….layer{k}.…``), by layer."""
    families: dict[int, dict[int, dict]] = {}
    for v in values:
        match = _LAYER_NAME.match(v["name"])
        if match and v["root"] == v["id"]:
            families.setdefault(v["storage_group"], {})[int(match.group("k"))] = v
    out = {}
    for group, by_layer in families.items():
        if sorted(by_layer) != list(range(len(by_layer))):
            raise ValueError(f"storage group {group}: layers {sorted(by_layer)} are not 0..n-1")
        out[group] = [by_layer[k] for k in range(len(by_layer))]
    return out


def _layer_value(template: dict, k: int, origin: int) -> dict:
    match = _LAYER_NAME.match(template["name"])
    if match is None:
        raise ValueError(f"not a layer's value name: {template['name']!r}")
    return {**template, "name": f"{match.group('head')}.layer{k}.{match.group('tail')}", "origin": origin}


def _with_layers(sample: dict, layers: int) -> tuple[list[dict], dict[int, list[int]], int]:
    """The sample's values with each layer family resized to ``layers`` values (original ids kept,
    generated layers get fresh ids after the sample's).

    Returns the values in block order, old id → ids that replace it in live lists, and the number
    of origins a block uses.
    """
    values = sample["timeline"]["values"]
    families = _layer_families(values)
    sample_layers = {len(f) for f in families.values()}
    if len(sample_layers) > 1:
        raise ValueError(f"layer families of different depths: {sorted(sample_layers)}")
    next_id = max(v["id"] for v in values) + 1
    next_origin = max(v["origin"] for v in values) + 1
    last_of_family = {f[-1]["id"]: f for f in families.values()}
    dropped = {v["id"] for f in families.values() for v in f[layers:]}
    replaces: dict[int, list[int]] = {v["id"]: [v["id"]] for v in values}
    out: list[dict] = []
    for v in values:
        if v["id"] in dropped:
            replaces[v["id"]] = []
        else:
            out.append(v)
        family = last_of_family.get(v["id"])
        if family is None:
            continue
        # Generated layers follow the family's last sample layer (ids stay in file order).
        for k in range(len(family), layers):
            out.append({**_layer_value(family[0], k, next_origin), "id": next_id, "root": next_id})
            replaces[v["id"]].append(next_id)
            next_id += 1
            next_origin += 1
    return out, replaces, next_origin


def _loop_step(step: dict, sample_layers: int, layers: int) -> dict:
    step = dict(step)
    repeat = _REPEAT.match(step["operation"])
    if repeat and int(repeat.group("n")) == sample_layers:
        step["operation"] = f"Repeat {layers} boundary"
    elif step["execution_count"] == sample_layers and sample_layers > 1:
        step["execution_count"] = layers
    return step


def _punch_gaps(live: list[np.ndarray], roots: set[int]) -> list[np.ndarray]:
    """Leave every root value out of its live list at the middle of a range of ≥ 3 steps."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, ids in enumerate(live):
        for value in ids.tolist():
            first.setdefault(value, i)
            last[value] = i
    holes: dict[int, set[int]] = {}
    for value, start in first.items():
        if value in roots and last[value] - start >= 2:
            holes.setdefault((start + last[value]) // 2, set()).add(value)
    return [ids[~np.isin(ids, list(holes[i]))] if i in holes else ids for i, ids in enumerate(live)]


def build_block(sample_path: str | Path | None, layers: int, gaps: bool = False) -> Block:
    """Block 0 of the synthetic program with every figure recomputed by the planner."""
    if layers < 1:
        raise ValueError("layers must be at least 1")
    path = Path(sample_path) if sample_path is not None else SAMPLE_PATH
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise cannot_read(path, exc) from None
    sample = json.loads(data)
    timeline = sample["timeline"]
    families = _layer_families(timeline["values"])
    sample_layers = len(next(iter(families.values()))) if families else 1
    values, replaces, origins = _with_layers(sample, layers)

    # Block-0 ids are positions in block order: compact, and monotone in the sample's ids.
    position = {v["id"]: p for p, v in enumerate(values)}
    renumber = {old: [position[n] for n in new] for old, new in replaces.items()}
    block_values = []
    for v in values:
        block_values.append(
            {**v, "id": position[v["id"]], "root": position[v["root"]], "storage_group": position[v["storage_group"]]}
        )
    live = [
        np.sort(np.array([n for old in s["live"] for n in renumber[old]], dtype=np.int64)) for s in timeline["steps"]
    ]
    if gaps:
        live = _punch_gaps(live, {v["id"] for v in block_values if v["root"] == v["id"]})
    steps = [_loop_step({k: s[k] for k in s if k != "live"}, sample_layers, layers) for s in timeline["steps"]]

    header = {k: sample[k] for k in sample if k != "timeline"}
    one_block = {
        **header,
        "timeline": {"values": block_values, "steps": [{**s, "live": ids.tolist()} for s, ids in zip(steps, live)]},
    }
    profile = parse_memory_profile(json.dumps(one_block).encode(), f"{path} (one synthetic block)")
    arrays = arrays_of(profile)
    plan = compute_plan(arrays)
    for row, v in enumerate(block_values):
        v["shard_bytes"] = int(plan.figures.shard[row])
        v["aligned_bytes"] = int(plan.figures.aligned[row])
        v["bytes"] = int(plan.figures.bytes[row])
    for i, s in enumerate(steps):
        s["usage"] = {"standard": int(plan.usage_standard[i]), "interleaved": int(plan.usage_interleaved[i])}
    return Block(
        header=header,
        values=block_values,
        steps=steps,
        live=live,
        origin_stride=origins,
        source_stride=max(s["source"] for s in steps) + 1,
        plan=plan,
        arrays=arrays,
    )


def _header_figures(block: Block, blocks: int) -> dict:
    """Peaks of the whole program: every block uses memory exactly as block 0 does."""
    std = np.tile(block.plan.usage_standard, blocks)
    intl = np.tile(block.plan.usage_interleaved, blocks)
    peaks = peaks_of(block.arrays, std, intl, block.plan.figures.bytes)
    return {
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


def _block_value(v: dict, b: int, id_offset: int, origin_offset: int) -> dict:
    return {
        **v,
        "id": v["id"] + id_offset,
        "origin": v["origin"] + origin_offset,
        "root": v["root"] + id_offset,
        "storage_group": v["storage_group"] + id_offset,
        "name": f"block{b}.{v['name']}",
        "group": f"block{b}.{v['group']}",
    }


def _step_text(step: dict, index: int, source: int, live: np.ndarray) -> str:
    head = _dumps(
        {"index": index, "source": source, "operation": step["operation"], "execution_count": step["execution_count"]}
    )
    tail = _dumps({"scratch": step["scratch"], "usage": step["usage"]})
    return f'{head[:-1]},"live":[{",".join(map(str, live.tolist()))}],{tail[1:]}'


def write_synthetic_profile(
    out_path: str | Path,
    blocks: int,
    layers: int,
    sample_path: str | Path | None = None,
    gaps: bool = False,
    *,
    overwrite: bool = False,
) -> Path:
    """Write a synthetic profile of ``blocks`` × the sample program with ``layers`` layers per loop.

    Written atomically with the permissions of a normal file (``models.files``); an existing file
    is a FileAccessError unless ``overwrite``; the sample it is built from is never written
    (``models.files.refuse_inputs``)."""
    if blocks < 1:
        raise ValueError("blocks must be at least 1")
    out = Path(out_path)
    refuse_inputs(out, [sample_path if sample_path is not None else SAMPLE_PATH])
    if out.exists() and not overwrite:
        raise exists_already(out)  # before the work of building the block
    block = build_block(sample_path, layers, gaps)
    header = {**block.header, **_header_figures(block, blocks)}
    try:
        _write_blocks(out, block, header, blocks, overwrite, sample_path if sample_path is not None else SAMPLE_PATH)
    except OSError as exc:  # e.g. the disk filled up
        raise cannot_write(out, exc) from None
    return out


def _write_blocks(out: Path, block: Block, header: dict, blocks: int, overwrite: bool, sample: str | Path) -> None:
    n_values, n_steps = len(block.values), len(block.steps)
    with atomic_output(out, overwrite=overwrite, buffering=_WRITE_BUFFER, inputs=[sample]) as raw:
        f = io.TextIOWrapper(raw, encoding="utf-8")
        try:
            f.write(_dumps(header)[:-1] + ',"timeline":{"values":[')
            for b in range(blocks):
                for p, v in enumerate(block.values):
                    if b or p:
                        f.write(",")
                    f.write(_dumps(_block_value(v, b, b * n_values, b * block.origin_stride)))
            f.write('],"steps":[')
            for b in range(blocks):
                for i, (step, live) in enumerate(zip(block.steps, block.live)):
                    if b or i:
                        f.write(",")
                    f.write(
                        _step_text(step, b * n_steps + i, step["source"] + b * block.source_stride, live + b * n_values)
                    )
            f.write("]}}")
            f.flush()
        finally:
            f.detach()  # the handle stays atomic_output's to close and rename
