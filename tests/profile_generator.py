"""Memory profiles v1, v2 and v3 of one program, written from the specification alone
(/work/shared/spec/compiler-formats.md §1, §2): a small independent implementation of the compiler's
per-tile estimate that shares no code with tilescope's loader or planner, so the figures it writes
are an independent expectation for them.

- elements on each owner (§2.2): axis ownership with uneven shards (the first ``blocks mod p``
  partitions one block longer), replicas the fastest-varying digit unless a ``tile_stride`` is
  given; ``Linear`` ownership by grains;
- owner → device tile: ``(owner + offset) mod tiles`` (§2.3; the offset is a per-value rotation
  the file does not record);
- allocated size (§2.4): GEMM operands (roots of input 0 and result 0) aligned to their class's
  element (16,384 / 32,768 B), input 0 with an 8 × element-bytes tail; ``× copies``;
- liveness (§2.5), scratch spread over the first result's owners (§2.6);
- the reconstruction rule (§1.6), the peak tile (ties: the last), peaks per version (§1.3).

``program_18`` is the test program of §1.8 (8 tiles, a ``state</script>`` input, the "weights"
sequence, a Repeat of 3); ``program_scaled(blocks)`` repeats a layer ``blocks`` times on 1,472 tiles
(a ≥ 50 MB v3 profile for the benchmark at ``blocks=…``: ``python -m tests.profile_generator``).
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ELEMENT = {"Ipu21Standard": 16384, "Ipu21Interleaved": 32768}
ELEMENT_BYTES = {"F16": 2, "F32": 4}
MODEL = {
    1: "Planner estimate: sum of per-allocation maximum shard sizes, not a placed tile.",
    2: "Per-tile live storage using selected ownership, before address placement (generated).",
    3: "Per-tile live storage using selected ownership, before address placement (generated).",
}


@dataclass
class Axis:
    kind: str  # FromStart, FromEnd or Linear
    index: int | None
    partitions: int
    block: int
    multiple: int = 1
    padding: str = "Zero"
    stride: int | None = None


@dataclass
class Tiling:
    tile_count: int
    replicas: int
    axes: list[Axis]
    order: str = "RowMajor"

    def text(self, cls: str) -> str:
        axes = ", ".join(
            f"AxisTiling {{ axis: {a.kind if a.index is None else f'{a.kind}({a.index})'}, partitions: {a.partitions}, "
            f"padding_groups: 1, block_size: {a.block}, padding_multiple: {a.multiple}, shard_padding_multiple: 1, "
            f"padding: {a.padding}, tile_stride: {'None' if a.stride is None else f'Some({a.stride})'} }}"
            for a in self.axes
        )
        return (
            f"Layout {{ order: {self.order}, tiling: TensorTiling {{ tile_count: {self.tile_count}, replicas: {self.replicas}, "
            f"axes: [{axes}] }}, memory_class: {cls} }}"
        )


def owner_elements(shape: list[int], tiling: Tiling) -> list[int]:
    """Elements on each owner 0 … tile_count − 1 (§2.2), one owner at a time."""
    t = tiling
    if len(t.axes) == 1 and t.axes[0].kind == "Linear":
        grain = t.axes[0].block
        n = math.prod(shape)
        assert n % grain == 0 and n // grain >= t.tile_count
        grains = n // grain
        return [(grains // t.tile_count + (1 if o < grains % t.tile_count else 0)) * grain for o in range(t.tile_count)]
    dims = list(shape)
    widths = []  # per axis: width of each coordinate
    strides = []
    below = t.replicas
    tiled = set()
    for a in t.axes:
        assert a.index is not None  # (only a Linear axis has none, handled above)
        d = a.index if a.kind == "FromStart" else len(shape) - a.index
        tiled.add(d)
        extent = dims[d]
        padded = -(-extent // a.multiple) * a.multiple
        assert padded % a.block == 0
        blocks = padded // a.block
        short, long = divmod(blocks, a.partitions)
        widths.append([(short + (1 if c < long else 0)) * a.block for c in range(a.partitions)])
        strides.append(a.stride if a.stride is not None else below)
        below *= a.partitions
    rest = math.prod(e for d, e in enumerate(dims) if d not in tiled)
    out = []
    for o in range(t.tile_count):
        n = rest
        for a, w, s in zip(t.axes, widths, strides):
            n *= w[(o // s) % a.partitions]
        out.append(n)
    return out


@dataclass
class Value:
    id: int
    name: str
    group: str
    shape: list[int]
    precision: str
    cls: str
    tiling: Tiling
    root: int | None = None  # alias of this value's storage (None: its own root)
    origin: int | None = None
    storage_group: int | None = None
    offset: int = 0  # owner rotation (not in the file)
    copies: int = 1
    parameter: bool = False
    input: bool = False
    output: bool = False


@dataclass
class Step:
    operation: str
    source: int | None
    inputs: list[int]
    results: list[int]
    scratch: tuple[int, int] = (0, 0)
    execution_count: int = 1
    gemm: bool = False
    members: list[int] = field(default_factory=list)  # a Repeat's iterated sequence members


@dataclass
class Program:
    tiles: int
    values: list[Value]
    steps: list[Step]
    exchange_rows: int = 1000
    budget: int = 586960
    interleaved_budget: int = 424880
    reserve: int = 49152
    overflow: int = 0


def _roots(p: Program) -> dict[int, int]:
    return {v.id: (v.root if v.root is not None else v.id) for v in p.values}


@dataclass
class Estimate:
    """Everything the compiler would write for a program, per §1–§2 (numpy arrays by value/step)."""

    shards: dict[int, np.ndarray]  # value id → tile_shards
    held: dict[int, np.ndarray]  # value id → tile_bytes
    shard_bytes: dict[int, int]
    aligned: dict[int, int]
    live: list[list[int]]
    tile_scratch: np.ndarray  # [steps, tiles, 2]
    tile_usage: np.ndarray  # [steps, tiles, 2]
    usage: np.ndarray  # [steps, 2]: the peak tile's (ties: last)
    usage_tile: np.ndarray  # [steps]
    coarse: np.ndarray  # [steps, 2]


def estimate(p: Program, parameters_live_to_end: bool = False) -> Estimate:
    roots = _roots(p)
    by_id = {v.id: v for v in p.values}
    aligned_roots, tails = set(), {}
    for s in p.steps:
        if s.gemm:
            aligned_roots.add(roots[s.inputs[0]])
            aligned_roots.add(roots[s.results[0]])
            tails[roots[s.inputs[0]]] = 8 * ELEMENT_BYTES[by_id[s.inputs[0]].precision]
    shards, held, shard_bytes, aligned, owners_of = {}, {}, {}, {}, {}
    for v in p.values:
        r = roots[v.id]
        align = ELEMENT[v.cls] if r in aligned_roots else 1
        tail = tails.get(r, 0)
        elements = owner_elements(v.shape, v.tiling)
        sh = np.zeros(p.tiles, np.int64)
        hb = np.zeros(p.tiles, np.int64)
        sizes = []
        for o, n in enumerate(elements):
            if n == 0:
                continue
            t = (o + v.offset) % p.tiles
            shard = n * ELEMENT_BYTES[v.precision]
            size = -(-(shard + tail) // align) * align
            sh[t], hb[t] = shard, size * v.copies
            sizes.append(size)
        shards[v.id], held[v.id] = sh, hb
        shard_bytes[v.id], aligned[v.id] = int(sh.max()), max(sizes)
        owners_of[v.id] = (elements, v.offset)
    # Liveness (§2.5)
    last_use: dict[int, int] = {}
    for i, s in enumerate(p.steps):
        for x in s.inputs + s.results + s.members:
            last_use[roots[x]] = i
    forever = {roots[v.id] for v in p.values if v.output or v.copies > 1 or (parameters_live_to_end and v.parameter)}
    live_now = {roots[v.id] for v in p.values if v.input or v.parameter}
    live = []
    for i, s in enumerate(p.steps):
        live_now |= {roots[x] for x in s.inputs + s.results}
        live.append(sorted(live_now))
        live_now = {r for r in live_now if r in forever or last_use.get(r, -1) > i}
    # Per-tile requirement of each root: max over its aliases; class of the root.
    need: dict[int, np.ndarray] = {}
    for v in p.values:
        r = roots[v.id]
        need[r] = np.maximum(need.get(r, 0), held[v.id])
    coarse_need: dict[int, int] = {}
    for v in p.values:
        coarse_need[roots[v.id]] = max(coarse_need.get(roots[v.id], 0), int(held[v.id].max()))
    n = len(p.steps)
    tile_scratch = np.zeros((n, p.tiles, 2), np.int64)
    tile_usage = np.zeros((n, p.tiles, 2), np.int64)
    coarse = np.zeros((n, 2), np.int64)
    for i, s in enumerate(p.steps):
        if s.results and not s.operation.startswith("Repeat"):
            elements, offset = owners_of[s.results[0]]
            most = max(elements)
            for o, e in enumerate(elements):
                if e:
                    for c in (0, 1):
                        tile_scratch[i, (o + offset) % p.tiles, c] = -(-s.scratch[c] * e // most)
        tile_usage[i] = tile_scratch[i]
        coarse[i] = s.scratch
        for r in live[i]:
            c = 0 if by_id[r].cls == "Ipu21Standard" else 1
            tile_usage[i, :, c] += need[r]
            coarse[i, c] += coarse_need[r]
    total = tile_usage.sum(axis=2)
    usage_tile = p.tiles - 1 - np.argmax(total[:, ::-1], axis=1)  # ties: the last tile
    usage = tile_usage[np.arange(n), usage_tile]
    return Estimate(shards, held, shard_bytes, aligned, live, tile_scratch, tile_usage, usage, usage_tile, coarse)


def _first_max(a: np.ndarray) -> int:
    return int(np.argmax(a))  # ties: the earliest


def profile_json(p: Program, version: int, later_v3: bool = False) -> dict:
    """The profile the compiler would write for ``p`` (``later_v3``: without the two option
    fields, parameters live to the end)."""
    e = estimate(p, parameters_live_to_end=later_v3)
    roots = _roots(p)
    values = []
    for v in p.values:
        item = {
            "id": v.id,
            "origin": v.origin if v.origin is not None else v.id,
            "root": roots[v.id],
            "name": v.name,
            "group": v.group,
            "shape": v.shape,
            "precision": v.precision,
            "layout": v.tiling.text(v.cls),
            "layout_error": None,
            "class": v.cls,
            "storage_group": v.storage_group if v.storage_group is not None else v.id,
            "shard_bytes": e.shard_bytes[v.id],
            "aligned_bytes": e.aligned[v.id],
            "copies": v.copies,
            "bytes": e.aligned[v.id] * v.copies,
        }
        if version >= 2:
            item["tile_shards"] = e.shards[v.id].tolist()
            item["tile_bytes"] = e.held[v.id].tolist()
        values.append(item)
    steps = []
    for i, s in enumerate(p.steps):
        usage = e.usage[i] if version >= 2 else e.coarse[i]
        item = {
            "index": i,
            "source": s.source,
            "operation": s.operation,
            "execution_count": s.execution_count,
            "live": e.live[i],
            "scratch": {"standard": s.scratch[0], "interleaved": s.scratch[1]},
            "usage": {"standard": int(usage[0]), "interleaved": int(usage[1])},
        }
        if version >= 2:
            item["tile_usage"] = e.tile_usage[i].tolist()
            item["tile_scratch"] = e.tile_scratch[i].tolist()
            item["coarse_usage"] = {"standard": int(e.coarse[i, 0]), "interleaved": int(e.coarse[i, 1])}
        steps.append(item)
    rows = p.exchange_rows if version <= 2 else 0
    if version == 1:
        std, intl = e.coarse[:, 0], e.coarse[:, 1]
        total = std + intl
        max_alloc = max((e.aligned[v.id] * v.copies for v in p.values if v.cls == "Ipu21Standard"), default=0)
    else:
        std, intl = e.tile_usage[:, :, 0].max(axis=1), e.tile_usage[:, :, 1].max(axis=1)
        total = e.usage.sum(axis=1)
        max_alloc = max(
            [e.aligned[v.id] * v.copies for v in p.values if v.cls == "Ipu21Standard"] + [s.scratch[0] for s in p.steps]
        )
    peak = {
        "standard": int(std.max()) + rows,
        "interleaved": int(intl.max()),
        "total": int(total.max()) + rows,
        "exchange_rows": p.exchange_rows,
        "maximum_standard_allocation": int(max_alloc),
    }
    effective = peak["total"] - rows + p.reserve
    fits = peak["interleaved"] <= p.interleaved_budget and effective <= p.budget and p.overflow == 0
    out = {
        "version": version,
        "scope": f"generated-v{version}",
        "model": MODEL[version],
        "tile_count": p.tiles,
        "budget_bytes": p.budget,
        "interleaved_budget_bytes": p.interleaved_budget,
        "standard_contiguous_overflow_bytes": p.overflow,
        "fits_budget": bool(fits),
        "support_reserve_bytes": p.reserve,
        "effective_peak_bytes": int(effective),
        "peak": peak,
        "total_peak_step": _first_max(total),
        "standard_peak_step": _first_max(std),
        "interleaved_peak_step": _first_max(intl),
    }
    if not later_v3:
        out["gemm_output_packing"] = "Automatic"
        out["attention_products"] = "Automatic"
    out["timeline"] = {"values": values, "steps": steps}
    return out


def expected_figures(p: Program, version: int, later_v3: bool = False) -> dict:
    """The figures a reader must reproduce, straight from the estimate (not from the JSON)."""
    doc = profile_json(p, version, later_v3)
    e = estimate(p, parameters_live_to_end=later_v3)
    tiles = {}
    if version >= 2:
        std_step, intl_step, tot_step = (
            doc["standard_peak_step"],
            doc["interleaved_peak_step"],
            doc["total_peak_step"],
        )

        def last(a: np.ndarray) -> int:  # ties: the last tile
            return int(a.size - 1 - np.argmax(a[::-1]))

        tiles = {
            "standard": last(e.tile_usage[std_step, :, 0]),
            "interleaved": last(e.tile_usage[intl_step, :, 1]),
            "total": int(e.usage_tile[tot_step]),
        }
    return {"doc": doc, "estimate": e, "peak_tiles": tiles}


def write(p: Program, version: int, path: Path, later_v3: bool = False) -> Path:
    path.write_text(json.dumps(profile_json(p, version, later_v3), separators=(",", ":")))
    return path


# ----------------------------------------------------------------------------- programs


def program_18() -> Program:
    """§1.8: 8 tiles, input ``state</script>`` [1, 8, 32], parameters w0…w2 [1, 32, 32] in the
    sequence "weights", a Repeat of 3 whose body is a GEMM of (carried, iterated); all F16."""
    state_tiling = Tiling(6, 2, [Axis("FromEnd", 2, 3, 1)], "Amp(Left)")  # rows 3, 3, 2 on owner pairs
    weight_tiling = Tiling(8, 1, [Axis("FromEnd", 1, 8, 3, 3)], "Amp(Right)")  # columns 6, 6, 6, 3, 3, 3, 3, 3
    result_tiling = Tiling(8, 1, [Axis("FromEnd", 2, 2, 1), Axis("FromEnd", 1, 4, 3, 3)])  # 9, 9, 9, 6 columns
    out_tiling = Tiling(6, 1, [Axis("Linear", None, 6, 4, 1, "Reject")])  # 11, 11, 11, 11, 10, 10 grains
    S, I = "Ipu21Standard", "Ipu21Interleaved"
    values = [
        Value(0, "state</script>", "state</script>", [1, 8, 32], "F16", S, state_tiling, offset=3, input=True),
        Value(1, "w0", "weights", [1, 32, 32], "F16", I, weight_tiling, parameter=True, storage_group=1),
        Value(2, "w1", "weights", [1, 32, 32], "F16", I, weight_tiling, parameter=True, storage_group=1, offset=1),
        Value(3, "w2", "weights", [1, 32, 32], "F16", I, weight_tiling, parameter=True, storage_group=1, offset=2),
        Value(
            4,
            "state</script> (body argument)",
            "state</script>",
            [1, 8, 32],
            "F16",
            S,
            state_tiling,
            root=0,
            origin=0,
            offset=3,
        ),
        Value(
            5,
            "weights (body argument)",
            "weights",
            [1, 32, 32],
            "F16",
            I,
            weight_tiling,
            root=1,
            origin=1,
            storage_group=1,
        ),
        Value(6, "operation 1 result 0", "operation 1 result 0", [1, 8, 32], "F16", I, result_tiling, offset=5),
        Value(
            7,
            "operation 2 result 0",
            "operation 2 result 0",
            [1, 8, 32],
            "F16",
            S,
            state_tiling,
            root=0,
            origin=0,
            offset=3,
        ),
        Value(
            8, "operation 3 result 0", "operation 3 result 0", [1, 8, 32], "F32", S, out_tiling, offset=2, output=True
        ),
    ]
    gemm = "Gemm { multiply: F16, accumulate: F32, mode: Initialize, weights: Standard, inner_block: 16, output_columns: 16 }"
    steps = [
        Step(gemm, 1, [4, 5], [6], (4096, 0), 3, gemm=True),
        Step(
            "Copy { mapping: CoordinateMapping { offsets: [], view: None }, reuse_local: true }",
            1,
            [6],
            [4],
            (0, 512),
            3,
        ),
        Step("Repeat 3 boundary", 2, [0], [7], (0, 0), 1, members=[1, 2, 3]),
        Step("Convert LocalKernel", 3, [7], [8], (256, 0), 1),
    ]
    return Program(8, values, steps)


# The sample's values 0 and 89 (§2.7): their layouts on 1,472 tiles.
SAMPLE_VALUE_0 = Tiling(
    1472,
    8,
    [Axis("FromEnd", 2, 46, 16, 16, stride=1), Axis("FromEnd", 1, 4, 160, 160)],
    "BlockMajor(TransposedMatrix { row_block: 160, column_block: 16 })",
)
SAMPLE_VALUE_89 = Tiling(1472, 1, [Axis("Linear", None, 1472, 4, 4, "Reject")])


def program_scaled(blocks: int, tiles: int = 1472) -> Program:
    """``blocks`` layers of: a GEMM of the running activation by the layer's weight (uneven
    shards, rotated owners), a bias add and a Convert; plus the sample's values 0 and 89."""
    S, I = "Ipu21Standard", "Ipu21Interleaved"
    values = [
        Value(0, "vit.image.patches", "vit.image.patches", [1, 729, 588], "F16", I, SAMPLE_VALUE_0, input=True),
        Value(1, "operation 0 result 0", "operation 0 result 0", [1, 729, 4304], "F16", S, SAMPLE_VALUE_89, offset=7),
    ]
    steps = [Step("Convert LocalKernel", 0, [0], [1], (2048, 0))]
    act_tiling = Tiling(tiles, 1, [Axis("Linear", None, tiles, 4, 4, "Reject")])
    weight_tiling = Tiling(tiles - tiles % 7, (tiles - tiles % 7) // 7, [Axis("FromEnd", 1, 7, 8, 8)], "Amp(Right)")
    current = 1
    for b in range(blocks):
        base = len(values)
        w = Value(
            base,
            f"layer{b}.weight",
            "layer.weight",
            [64, 1000],
            "F16",
            I,
            weight_tiling,
            parameter=True,
            offset=(37 * b) % tiles,
        )
        bias = Value(
            base + 1,
            f"layer{b}.bias",
            "layer.bias",
            [1, 1000],
            "F16",
            S,
            Tiling(tiles - tiles % 5, (tiles - tiles % 5) // 5, [Axis("FromEnd", 1, 5, 8, 8)]),
            parameter=True,
            offset=(11 * b) % tiles,
        )
        out = Value(
            base + 2,
            f"operation {3 * b + 1} result 0",
            f"operation {3 * b + 1} result 0",
            [1, 729, 4304],
            "F16",
            S,
            act_tiling,
            offset=(101 * b + 3) % tiles,
        )
        added = Value(
            base + 3,
            f"operation {3 * b + 2} result 0",
            f"operation {3 * b + 2} result 0",
            [1, 729, 4304],
            "F16",
            S,
            act_tiling,
            root=base + 2,
            offset=(101 * b + 3) % tiles,
        )
        conv = Value(
            base + 4,
            f"operation {3 * b + 3} result 0",
            f"operation {3 * b + 3} result 0",
            [1, 729, 4304],
            "F16",
            S,
            act_tiling,
            offset=(53 * b + 1) % tiles,
            output=b == blocks - 1,
        )
        values += [w, bias, out, added, conv]
        steps += [
            Step(
                "Gemm { multiply: F16, accumulate: F32, mode: Initialize, weights: Standard, inner_block: 16, output_columns: 16 }",
                3 * b + 1,
                [current, w.id],
                [out.id],
                (8192 + 64 * b, 0),
                gemm=True,
            ),
            Step("Add", 3 * b + 2, [out.id, bias.id], [added.id], (0, 1024)),
            Step("Convert LocalKernel", 3 * b + 3, [added.id], [conv.id], (512, 0)),
        ]
        current = conv.id
    return Program(tiles, values, steps, exchange_rows=62688)


def main(argv: list[str]) -> None:
    """``python -m tests.profile_generator OUT.json BLOCKS [VERSION]``: a scaled profile."""
    out, blocks = Path(argv[0]), int(argv[1])
    version = int(argv[2]) if len(argv) > 2 else 3
    write(program_scaled(blocks), version, out)
    print(f"{out}: {out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main(sys.argv[1:])
