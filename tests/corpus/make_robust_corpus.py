"""Write the robustness corpus: ``python tests/corpus/make_robust_corpus.py``.

Where ``make_corpus.py`` makes files that are each wrong in one way the loader must name, this one
makes the cases of docs/formats.md §6: figures at the 2^53 bound and one past it, every invariant
of §2, degenerate timelines, text that cannot be represented, repeated keys, and hostile edit sets.
Each case is the corpus base (``base_valid.json``, itself cut from the sample) changed in one way,
its recorded figures recomputed here by the rules of docs/formats.md §2 (so a valid case passes
``check``), and ``robust/expected.json`` says, for each, its exact outcome under every command:

    {"file.json": {"edits": "edits file or null", "what": "...",
                   "outcome": "valid" | "refused" | "check",
                   "path": "<JSON path or byte location the one-line error names>" (refused),
                   "words": [...words of the error (refused) or of each check finding (check)],
                   "findings": N (check: how many lines check prints)}}

"valid": every command exits 0. "refused": every command exits 2 with one line naming the file and
``path``. "check": ``check`` exits 1 with ``findings`` lines, the other commands exit 0. The
expectations are written here from docs/formats.md §6, not taken from tilescope's output. The
generator is deterministic.
"""

from __future__ import annotations

import copy
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "robust"
sys.path.insert(0, str(HERE))
from make_corpus import reduced_sample  # noqa: E402

BOUND = 2**53
ELEMENT_BYTES = {"F16": 2, "F32": 4}

# ----------------------------------------------------------------------------- docs/formats.md §2, again


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def recompute(doc: dict) -> dict:
    """Usage per step and the peaks of ``doc`` from its values' recorded bytes (docs/formats.md §2)."""
    values = {v["id"]: v for v in doc["timeline"]["values"]}
    steps = doc["timeline"]["steps"]
    for s in steps:
        usage = dict(s["scratch"])
        for i in set(s["live"]):
            usage["standard" if values[i]["class"] == "Ipu21Standard" else "interleaved"] += values[i]["bytes"]
        s["usage"] = usage
    std = [s["usage"]["standard"] for s in steps] or [0]
    itl = [s["usage"]["interleaved"] for s in steps] or [0]
    both = [a + b for a, b in zip(std, itl)]
    rows = doc["peak"]["exchange_rows"]
    doc["peak"].update(
        standard=max(std) + rows,
        interleaved=max(itl),
        total=max(both) + rows,
        maximum_standard_allocation=max(
            [v["bytes"] for v in values.values() if v["class"] == "Ipu21Standard"], default=0
        ),
    )
    doc["standard_peak_step"], doc["interleaved_peak_step"], doc["total_peak_step"] = (
        std.index(max(std)),
        itl.index(max(itl)),
        both.index(max(both)),
    )
    doc["effective_peak_bytes"] = max(both) + doc["support_reserve_bytes"]
    doc["fits_budget"] = (
        doc["effective_peak_bytes"] <= doc["budget_bytes"]
        and doc["peak"]["interleaved"] <= doc["interleaved_budget_bytes"]
    )
    return doc


def layout_text(axes: list[dict], replicas: int, memory_class: str) -> str:
    tiles = math.prod(a["partitions"] for a in axes) * replicas
    parts = [
        f"AxisTiling {{ axis: {a['axis']}, partitions: {a['partitions']}, padding_groups: 1, block_size: {a['block']}, "
        f"padding_multiple: {a['multiple']}, shard_padding_multiple: 1, padding: {a.get('padding', 'Zero')}, tile_stride: None }}"
        for a in axes
    ]
    return (
        f"Layout {{ order: RowMajor, tiling: TensorTiling {{ tile_count: {tiles}, replicas: {replicas}, axes: [{', '.join(parts)}] }}, "
        f"memory_class: {memory_class} }}"
    )


def simple_value(
    value_id: int, shape: list[int], precision: str, axes: list[dict], replicas: int = 1, copies: int = 1
) -> dict:
    """A standard-region value with a RowMajor layout, its figures by §2 (granule 1); ``axes``
    as ``{"axis": "FromEnd(1)", "partitions": P, "block": B, "multiple": M}``, applied in order
    to distinct dimensions (no Linear)."""
    dims = list(shape)
    for a in axes:
        k = int(a["axis"][a["axis"].index("(") + 1 : -1])
        d = len(dims) - k if a["axis"].startswith("FromEnd") else k
        padded = ceil_div(dims[d], a["multiple"]) * a["multiple"]
        dims[d] = ceil_div(ceil_div(padded, a["block"]), a["partitions"]) * a["block"]
    shard = math.prod(dims) * ELEMENT_BYTES[precision]
    return {
        "id": value_id,
        "origin": value_id,
        "root": value_id,
        "name": f"huge.{value_id}",
        "group": "huge",
        "storage_group": value_id,
        "shape": shape,
        "precision": precision,
        "layout": layout_text(axes, replicas, "Ipu21Standard"),
        "layout_error": None,
        "class": "Ipu21Standard",
        "shard_bytes": shard,
        "aligned_bytes": shard,
        "copies": copies,
        "bytes": shard * copies,
    }


def clamp(node: Any) -> Any:
    """Every recorded number at most 2^53, as the file format's types require (in place)."""
    if isinstance(node, dict):
        for key, item in node.items():
            node[key] = clamp(item)
    elif isinstance(node, list):
        node[:] = [clamp(item) for item in node]
    elif isinstance(node, int) and not isinstance(node, bool):
        return min(node, BOUND)
    return node


def huge_profile(values: list[dict], live: list[list[int]], scratch: int = 0, reserve: int = 0) -> dict:
    """The base's header with only ``values``, one step per entry of ``live``; a recorded figure past
    2^53 is written as 2^53 (the loader must refuse the file for what it could compute, not for that)."""
    doc = copy.deepcopy(reduced_sample())
    doc["peak"]["exchange_rows"] = 0
    doc["support_reserve_bytes"] = reserve
    template = doc["timeline"]["steps"][0]
    steps = [
        dict(copy.deepcopy(template), index=i, live=ids, scratch={"standard": scratch, "interleaved": 0})
        for i, ids in enumerate(live)
    ]
    doc["timeline"] = {"values": values, "steps": steps}
    return clamp(recompute(doc))


# A value whose whole tensor is 2^53 bytes (2^52 F16 elements), tiled over 1472 tiles: its largest
# cost under any edit (one partition) is exactly 2^53.
WHOLE_2_53 = {
    "shape": [2**52],
    "precision": "F16",
    "axes": [{"axis": "FromEnd(1)", "partitions": 1472, "block": 1, "multiple": 1}],
}

# ----------------------------------------------------------------------------- cases

CASES: dict[str, dict] = {}


def case(
    name: str,
    what: str,
    outcome: str,
    path: str | None = None,
    words: list[str] | None = None,
    *,
    findings: int = 0,
    edits: str | None = None,
):
    def register(build: Callable[[], bytes]) -> Callable[[], bytes]:
        CASES[f"{name}.json"] = {
            "build": build,
            "what": what,
            "outcome": outcome,
            "path": path,
            "words": words or [],
            "findings": findings,
            "edits": edits,
        }
        return build

    return register


def dump(doc: Any) -> bytes:
    return json.dumps(doc, indent=1).encode("utf-8")


def changed(change: Callable[[dict], Any], figures: bool = True) -> Callable[[], bytes]:
    def build() -> bytes:
        doc = copy.deepcopy(reduced_sample())
        change(doc)
        return dump(recompute(doc) if figures else doc)

    return build


def value(doc: dict, row: int) -> dict:
    return doc["timeline"]["values"][row]


def set_layout(doc: dict, row: int, old: str, new: str) -> None:
    text = value(doc, row)["layout"]
    assert old in text, (row, old)
    value(doc, row)["layout"] = text.replace(old, new, 1)


# --- figures at the bound (docs/formats.md §6: every figure at most 2^53, whatever the edits)
case(
    "bound_largest_accepted",
    "a value of 2^53 bytes at one partition, live alone, no scratch or reserve: 2^53 exactly",
    "valid",
)(lambda: dump(huge_profile([simple_value(0, **WHOLE_2_53)], [[0]])))
case(
    "bound_one_past_by_reserve",
    "the same with support_reserve_bytes 1: 2^53 + 1",
    "refused",
    "$.timeline.steps[0].live",
    ["2^53", "9,007,199,254,740,993", "value 0 (values[0])"],
)(lambda: dump(huge_profile([simple_value(0, **WHOLE_2_53)], [[0]], reserve=1)))
case(
    "bound_one_past_by_scratch",
    "the same with 1 byte of scratch",
    "refused",
    "$.timeline.steps[0].live",
    ["9,007,199,254,740,993", "value 0"],
)(lambda: dump(huge_profile([simple_value(0, **WHOLE_2_53)], [[0]], scratch=1)))
case(
    "bound_two_live_together",
    "two such values, each fine alone, live at one step: 2^54",
    "refused",
    "$.timeline.steps[1].live",
    ["18,014,398,509,481,984", "value 1 (values[1])"],
)(lambda: dump(huge_profile([simple_value(0, **WHOLE_2_53), simple_value(1, **WHOLE_2_53)], [[0], [0, 1]])))
case("bound_two_at_different_steps", "two such values never live together: every step 2^53", "valid")(
    lambda: dump(huge_profile([simple_value(0, **WHOLE_2_53), simple_value(1, **WHOLE_2_53)], [[0], [1]]))
)
case(
    "bound_copies",
    "the value with copies 2: 2^54 at its largest",
    "refused",
    "$.timeline.values[0].copies",
    ["2 × 9,007,199,254,740,992"],
)(lambda: dump(huge_profile([simple_value(0, **WHOLE_2_53, copies=2)], [[0]])))

# --- the invariants of docs/formats.md §2
case(
    "tiling_over_device",
    "value 0 tiled over 2944 tiles (replicas 16) on a 1472-tile device",
    "refused",
    "$.timeline.values[0].layout (tiling.tile_count)",
    ["1,472 tiles", "2,944"],
)(changed(lambda d: set_layout(d, 0, "tile_count: 1472, replicas: 8", "tile_count: 2944, replicas: 16")))
case(
    "device_below_tilings",
    "the device's tile_count 1000, below the 1472 tiles of value 0",
    "refused",
    "$.timeline.values[0].layout (tiling.tile_count)",
    ["1,000 tiles", "1,472"],
)(changed(lambda d: d.__setitem__("tile_count", 1000)))
case(
    "partitions_over_blocks",
    "axis 1 of value 0 (4 blocks) cut into 8 partitions (replicas 4 keeps 1472 tiles)",
    "refused",
    "$.timeline.values[0].layout (tiling.axes[1].partitions)",
    ["4 blocks", "8 partitions"],
)(
    changed(
        lambda d: set_layout(d, 0, "replicas: 8", "replicas: 4") or set_layout(d, 0, "partitions: 4,", "partitions: 8,")
    )
)
case(
    "zero_dimension",
    "value 0 of shape [1, 0, 588]: no blocks for its 46 partitions",
    "refused",
    "$.timeline.values[0].layout (tiling.axes[0].partitions)",
    ["0 blocks", "46 partitions"],
)(changed(lambda d: value(d, 0).__setitem__("shape", [1, 0, 588])))
case(
    "class_disagrees",
    "value 0's class Ipu21Standard under its interleaved layout",
    "refused",
    "$.timeline.values[0].class",
    ["Ipu21Interleaved", "Ipu21Standard"],
)(changed(lambda d: value(d, 0).__setitem__("class", "Ipu21Standard")))


def _alias_layout(d: dict) -> None:
    # Value 49 (values[14]) is an alias of value 4: 1 partition × 729 replicas becomes 3 × 243.
    set_layout(d, 14, "replicas: 729", "replicas: 243")
    set_layout(d, 14, "partitions: 1,", "partitions: 3,")


case(
    "alias_layout_differs",
    "alias 49 (root 4) tiled 3 partitions × 243 replicas, its root 1 × 729",
    "refused",
    "$.timeline.values[14].layout (tiling.replicas)",
    ["729 as in the layout of its root, value 4 (values[4])", "found 243"],
)(changed(_alias_layout))


def _alias_live(d: dict) -> None:
    for s in d["timeline"]["steps"][1:3]:
        s["live"].append(49)


case(
    "alias_live_with_root",
    "alias 49 live at steps 1–2 beside its root 4",
    "check",
    None,
    ["step 1", "one value of an alias class live per step", "values 4 and 49", "steps 1–2"],
    findings=1,
)(changed(_alias_live))


def _reject_needs_padding(d: dict) -> None:
    # Value 0 is [1, 729, 588]; its axis 0 cuts 729 with padding_multiple 16.
    set_layout(d, 0, "padding: Zero, tile_stride: Some(1)", "padding: Reject, tile_stride: Some(1)")


case(
    "reject_needs_padding",
    "value 0's axis 0 (size 729, padding multiple 16) marked padding: Reject",
    "check",
    None,
    ["value 0", "padding Reject needs no padding", "axis 0 has size 729", "padding_multiple 16", "736"],
    findings=1,
)(changed(_reject_needs_padding))
case(
    "live_id_unknown",
    "step 2 lists value 777, which the file does not have",
    "refused",
    "$.timeline.steps[2].live[3]",
    ["id of a value", "777"],
)(changed(lambda d: d["timeline"]["steps"][2]["live"].__setitem__(3, 777), figures=False))

# --- degenerate timelines (docs/formats.md §6)


def _no_values(d: dict) -> None:
    d["timeline"]["values"] = []
    for s in d["timeline"]["steps"]:
        s["live"] = []


case("no_values", "no values; every live list empty: usage is scratch alone", "valid")(changed(_no_values))
case("no_steps", "values but no steps", "refused", "$.timeline.steps", ["at least one step", "an empty list"])(
    changed(lambda d: d["timeline"].__setitem__("steps", []), figures=False)
)
case("no_values_no_steps", "neither values nor steps", "refused", "$.timeline.steps", ["at least one step"])(
    changed(lambda d: d.__setitem__("timeline", {"values": [], "steps": []}), figures=False)
)
case("one_step", "only the first step", "valid")(
    changed(lambda d: d["timeline"].__setitem__("steps", d["timeline"]["steps"][:1]))
)
case("value_never_live", "value 0 in no live list", "valid")(
    changed(lambda d: [s["live"].remove(0) for s in d["timeline"]["steps"] if 0 in s["live"]])
)
case("step_nothing_live", "step 2 with an empty live list", "valid")(
    changed(lambda d: d["timeline"]["steps"][2].__setitem__("live", []))
)

# --- text and JSON (docs/formats.md §6)
case(
    "layout_surrogate_escape",
    "a \\u{D800} escape in a string of value 0's layout",
    "refused",
    "$.timeline.values[0].layout (character",
    ["surrogates"],
)(
    changed(
        lambda d: set_layout(
            d,
            0,
            "order: BlockMajor(TransposedMatrix { row_block: 160, column_block: 16 })",
            'order: Named("\\u{D800}")',
        )
    )
)


@case(
    "name_lone_surrogate",
    "value 0's name holds the JSON escape \\ud800 alone",
    "refused",
    "byte",
    ["lone \\ud800", "Unicode"],
)
def _name_lone_surrogate() -> bytes:
    return dump(reduced_sample()).replace(b'"vit.image.patches"', b'"vit.image\\ud800patches"', 1)


@case(
    "duplicate_key_value",
    "value 3 gives shard_bytes twice",
    "refused",
    "$.timeline.values[3].shard_bytes",
    ["each key once", "'shard_bytes' a second time"],
)
def _duplicate_key_value() -> bytes:
    doc = reduced_sample()
    text = dump(doc).decode()
    key = f'"shard_bytes": {value(doc, 3)["shard_bytes"]},'
    at = text.index(key, text.index(f'"id": {value(doc, 3)["id"]},'))
    return (text[:at] + key + " " + text[at:]).encode()


@case(
    "duplicate_key_header",
    "the header gives budget_bytes twice",
    "refused",
    "$.budget_bytes",
    ["each key once", "'budget_bytes'"],
)
def _duplicate_key_header() -> bytes:
    return dump(reduced_sample()).replace(
        b'"budget_bytes": 586960,', b'"budget_bytes": 586960, "budget_bytes": 9999999,', 1
    )


@case(
    "duplicate_key_step",
    "step 4 gives scratch twice",
    "refused",
    "$.timeline.steps[4].scratch",
    ["each key once", "'scratch'"],
)
def _duplicate_key_step() -> bytes:
    doc = reduced_sample()
    text = dump(doc).decode()
    at = text.index('"scratch"', text.index('"index": 4,'))
    return (text[:at] + '"scratch": {"standard": 0, "interleaved": 0}, ' + text[at:]).encode()


case("unknown_fields", "unknown fields, one an object with a ':' in a string (allowed, ignored)", "valid")(
    changed(
        lambda d: d.update(extra={"note": "a: b", "nested": {"x": [1, {"y": 2}]}}) or value(d, 2).update(comment="ok")
    )
)
case(
    "unknown_field_nested_300",
    "an unknown field holding lists nested 300 deep (past 256, within what a decoder follows)",
    "refused",
    "byte",
    ["nested at most 256 deep"],
)(changed(lambda d: d.__setitem__("extra", json.loads("[" * 300 + "]" * 300)), figures=False))
case(
    "control_characters", "a value name with a newline, an ESC [31m sequence and a bidi override (valid text)", "valid"
)(changed(lambda d: value(d, 0).__setitem__("name", "evil\n\x1b[31mred\u202e")))

# --- edit sets, applied to the (valid) base with --edits
case(
    "edits_nested_deep",
    "an edit set nested 100,000 lists deep",
    "refused",
    "byte 256 (line 1, column 257)",
    ["nested at most 256 deep"],
    edits="edits",
)(lambda: b"[" * 100_000 + b"]" * 100_000)
case(
    "edits_duplicate_key",
    "an edit naming its value twice",
    "refused",
    "$[0].value",
    ["each key once", "'value' a second time"],
    edits="edits",
)(lambda: b'[{"value": 84, "value": 8, "replicas": 27}]')
case(
    "edits_count_5000_digits",
    "a replica count of 5,000 digits",
    "refused",
    "byte 27 (line 1, column 28)",
    ["at most 4,300 digits"],
    edits="edits",
)(lambda: b'[{"value": 84, "replicas": ' + b"7" * 5000 + b"}]")
case(
    "edits_count_400_digits",
    "a replica count of 400 digits",
    "refused",
    "$[0].replicas",
    ["0 to 2,147,483,648", "400 digits"],
    edits="edits",
)(lambda: b'[{"value": 84, "replicas": ' + b"7" * 400 + b"}]")
case("edits_lone_surrogate", "an edit's key holding \\udc00 alone", "refused", "byte", ["lone \\udc00"], edits="edits")(
    lambda: b'[{"value": 84, "replicas": 2, "\\udc00": 1}]'
)


def write_corpus(out: Path = OUT) -> dict[str, dict]:
    out.mkdir(parents=True, exist_ok=True)
    expected: dict[str, dict] = {}
    for name, entry in CASES.items():
        (out / name).write_bytes(entry["build"]())
        expected[name] = {k: v for k, v in entry.items() if k != "build"}
    (out / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for stale in {p.name for p in out.glob("*.json")} - {*expected, "expected.json"}:
        (out / stale).unlink()
    return expected


if __name__ == "__main__":
    written = write_corpus(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
    print(f"{len(written)} cases and expected.json written to {sys.argv[1] if len(sys.argv) > 1 else OUT}")
