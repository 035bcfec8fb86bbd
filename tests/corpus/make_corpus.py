"""Write the bad-input corpus: ``python tests/corpus/make_corpus.py``.

Every file is the sample memory profile, cut down to a small self-consistent profile
(``base_valid.json``: a few steps and the values live in them, usage and peaks recomputed by the
docs/formats.md §2 rules), with exactly one thing made wrong. ``expected.json`` maps each bad file to
what its error must say:

    {"file.json": {"path": "<substring of the error's JSON path>", "words": ["key", "words"],
                   "what": "<the defect, for a reader>"}}

The expectations are written here by hand from docs/formats.md, not taken from the loader's output.
The generator is deterministic: running it twice writes identical files.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parents[1] / "sample_data" / "vit_finalist5.memory_profile.json"
BASE_NAME = "base_valid.json"
EXPECTED_NAME = "expected.json"

# The reduced profile: these steps of the sample, and of their live values those listed here.
# Chosen to keep every feature a mutation needs: F16/F32/F8 precisions, both memory classes,
# a Linear axis (value 36), an alias (value 49 → root 4), Gemm/Copy/Convert operations.
KEEP_STEPS = range(0, 6)
KEEP_VALUES = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 36, 44, 45, 46, 49}


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def reduced_sample() -> dict:
    """A small profile cut from the sample whose recorded figures obey docs/formats.md §2."""
    full = json.loads(SAMPLE.read_bytes())
    values = [v for v in full["timeline"]["values"] if v["id"] in KEEP_VALUES]
    kept_ids = {v["id"] for v in values}
    assert kept_ids == KEEP_VALUES, sorted(KEEP_VALUES - kept_ids)
    assert all(v["root"] in kept_ids for v in values)
    by_id = {v["id"]: v for v in values}
    steps = []
    for s in (full["timeline"]["steps"][i] for i in KEEP_STEPS):
        s = dict(s, live=[i for i in s["live"] if i in kept_ids])
        usage = {"standard": s["scratch"]["standard"], "interleaved": s["scratch"]["interleaved"]}
        for i in s["live"]:
            region = "standard" if by_id[i]["class"] == "Ipu21Standard" else "interleaved"
            usage[region] += by_id[i]["bytes"]
        s["usage"] = usage
        steps.append(s)
    std = [s["usage"]["standard"] for s in steps]
    intl = [s["usage"]["interleaved"] for s in steps]
    both = [a + b for a, b in zip(std, intl)]
    rows = full["peak"]["exchange_rows"]
    out = {k: v for k, v in full.items() if k != "timeline"}
    out["peak"] = {
        "standard": max(std) + rows,
        "interleaved": max(intl),
        "total": max(both) + rows,
        "exchange_rows": rows,
        "maximum_standard_allocation": max(v["bytes"] for v in values if v["class"] == "Ipu21Standard"),
    }
    out["standard_peak_step"] = std.index(max(std))
    out["interleaved_peak_step"] = intl.index(max(intl))
    out["total_peak_step"] = both.index(max(both))
    out["effective_peak_bytes"] = max(both) + out["support_reserve_bytes"]
    out["fits_budget"] = (
        out["effective_peak_bytes"] <= out["budget_bytes"]
        and out["peak"]["interleaved"] <= out["interleaved_budget_bytes"]
    )
    out["timeline"] = {"values": values, "steps": steps}
    return out


def dump(doc: Any) -> bytes:
    return json.dumps(doc, indent=1).encode("utf-8")


# ----------------------------------------------------------------------------- mutations

Case = tuple[str, Callable[[dict], bytes], str, list[str], str]
CASES: list[Case] = []


def case(name: str, path: str, words: list[str], what: str):
    """Register ``fn(base) -> bytes`` as corpus file ``name``.json."""

    def register(fn: Callable[[dict], bytes]) -> Callable[[dict], bytes]:
        CASES.append((f"{name}.json", fn, path, words, what))
        return fn

    return register


def edit(name: str, path: str, words: list[str], what: str, change: Callable[[dict], Any]) -> None:
    """A case that changes the parsed base in place and writes it back as JSON."""

    def build(base: dict) -> bytes:
        doc = copy.deepcopy(base)
        change(doc)
        return dump(doc)

    case(name, path, words, what)(build)


def value(doc: dict, row: int) -> dict:
    return doc["timeline"]["values"][row]


def step(doc: dict, row: int) -> dict:
    return doc["timeline"]["steps"][row]


def set_layout(row: int, old: str, new: str) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        text = value(doc, row)["layout"]
        assert old in text, (row, old)
        value(doc, row)["layout"] = text.replace(old, new, 1)

    return change


def assign(getter: Callable[[dict], dict], key: str, new: Any) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        getter(doc)[key] = new

    return change


def delete(getter: Callable[[dict], dict], key: str) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        del getter(doc)[key]

    return change


top = lambda doc: doc  # noqa: E731
v = lambda row: lambda doc: value(doc, row)  # noqa: E731
s = lambda row: lambda doc: step(doc, row)  # noqa: E731

# --- the file as a whole: bytes, encoding, JSON syntax, top-level type
case("empty", "$", ["empty"], "a file of zero bytes")(lambda base: b"")
case("whitespace_only", "$", ["empty"], "only blanks and newlines")(lambda base: b"  \n\t\n")


@case("truncated_half", "byte", ["ends early", "end of file"], "the first half of the file")
def _truncated_half(base: dict) -> bytes:
    data = dump(base)
    return data[: len(data) // 2]


@case("truncated_in_string", "byte", ["ends early"], "cut inside a layout string")
def _truncated_in_string(base: dict) -> bytes:
    data = dump(base)
    return data[: data.index(b"Layout {") + 20]


@case("not_utf8", "byte", ["UTF-8", "0xff"], "a 0xFF byte inside a value name")
def _not_utf8(base: dict) -> bytes:
    data = dump(base)
    return data.replace(b'"vit.image.patches"', b'"vit.image.\xffpatches"', 1)


@case("latin1_name", "byte", ["UTF-8", "0xe9"], "a name written in Latin-1 (é as one byte 0xE9)")
def _latin1_name(base: dict) -> bytes:
    doc = copy.deepcopy(base)
    value(doc, 0)["name"] = "vit.image.patchés"
    return json.dumps(doc, indent=1, ensure_ascii=False).encode("latin-1")


@case("utf16", "byte", ["JSON"], "the whole file in UTF-16 with a byte-order mark")
def _utf16(base: dict) -> bytes:
    return dump(base).decode("utf-8").encode("utf-16")


@case("syntax_semicolon", "byte", ["valid JSON"], "a ';' where a ':' belongs")
def _syntax_semicolon(base: dict) -> bytes:
    return dump(base).replace(b'"tile_count":', b'"tile_count";', 1)


@case("trailing_garbage", "byte", ["valid JSON", "trailing"], "a second value after the object")
def _trailing_garbage(base: dict) -> bytes:
    return dump(base) + b"\n{}"


@case("trailing_comma", "byte", ["valid JSON"], "a comma before a closing brace")
def _trailing_comma(base: dict) -> bytes:
    return dump(base).replace(b'"interleaved": 0\n', b'"interleaved": 0,\n', 1)


case("top_list", "$", ["object", "array"], "the profile wrapped in a list")(lambda base: dump([base]))
case("top_string", "$", ["object", "str"], "a JSON string")(lambda base: b'"memory profile"')
case("top_null", "$", ["object", "null"], "JSON null")(lambda base: b"null")
case("top_number", "$", ["object", "int"], "a JSON number")(lambda base: b"1")

# --- version and kind
edit("version_missing", "$.version", ["version", "none"], "no `version` field", delete(top, "version"))
edit("version_4", "$.version", ["version 1, 2 or 3", "4"], "`version: 4`", assign(top, "version", 4))
edit("version_string", "$.version", ["version 1", '"1"'], 'version as the string "1"', assign(top, "version", "1"))
edit("version_null", "$.version", ["version 1", "null"], "`version: null`", assign(top, "version", None))


@case("search_state_given", "$", ["memory profile", "search state"], "a (tiny) search state")
def _search_state_given(base: dict) -> bytes:
    return dump({"version": 1, "context": "ComputeGraph { inputs: [] }\nNone\nNone", "recipe": {"plans": {}}})


edit(
    "neither_kind",
    "$",
    ["memory profile", "neither"],
    "`timeline` removed: no kind recognisable",
    delete(top, "timeline"),
)

# --- missing fields
edit("missing_tile_count", "$.tile_count", ["tile_count", "none"], "no device `tile_count`", delete(top, "tile_count"))
edit("missing_peak_total", "$.peak.total", ["total", "none"], "no `peak.total`", delete(lambda d: d["peak"], "total"))
edit(
    "missing_value_shape",
    "$.timeline.values[3].shape",
    ["shape", "none"],
    "a value without `shape`",
    delete(v(3), "shape"),
)
edit(
    "missing_value_class",
    "$.timeline.values[1].class",
    ["class", "none"],
    "a value without `class`",
    delete(v(1), "class"),
)
edit("missing_step_live", "$.timeline.steps[2].live", ["live", "none"], "a step without `live`", delete(s(2), "live"))
edit(
    "missing_steps",
    "$.timeline.steps",
    ["steps", "none"],
    "a timeline without `steps`",
    delete(lambda d: d["timeline"], "steps"),
)

# --- wrong types
edit("tile_count_string", "$.tile_count", ["int", "str"], 'tile_count "1472"', assign(top, "tile_count", "1472"))
edit("tile_count_float", "$.tile_count", ["int", "float"], "tile_count 1472.5", assign(top, "tile_count", 1472.5))
edit("budget_bool", "$.budget_bytes", ["int", "bool"], "budget_bytes true", assign(top, "budget_bytes", True))
edit("fits_budget_string", "$.fits_budget", ["bool", "str"], 'fits_budget "yes"', assign(top, "fits_budget", "yes"))
edit(
    "values_object",
    "$.timeline.values",
    ["array", "object"],
    "timeline.values an object",
    assign(lambda d: d["timeline"], "values", {}),
)
edit(
    "shape_string",
    "$.timeline.values[2].shape",
    ["array", "str"],
    'shape "1x729x588"',
    assign(v(2), "shape", "1x729x588"),
)
edit(
    "shape_float",
    "$.timeline.values[2].shape[1]",
    ["int", "float"],
    "a shape dimension 729.5",
    lambda d: value(d, 2)["shape"].__setitem__(1, 729.5),
)
edit("name_null", "$.timeline.values[0].name", ["str", "null"], "name null", assign(v(0), "name", None))
edit("layout_number", "$.timeline.values[0].layout", ["str", "int"], "layout 7", assign(v(0), "layout", 7))
edit(
    "operation_list",
    "$.timeline.steps[1].operation",
    ["str", "array"],
    "operation a list",
    assign(s(1), "operation", ["Copy"]),
)
edit(
    "scratch_list",
    "$.timeline.steps[0].scratch",
    ["object", "array"],
    "scratch [0, 0]",
    assign(s(0), "scratch", [0, 0]),
)
edit(
    "live_object",
    "$.timeline.steps[1].live",
    ["list of value ids"],
    "live an object",
    assign(s(1), "live", {"ids": [1, 2]}),
)
edit(
    "live_string_id",
    "$.timeline.steps[1].live",
    ["list of value ids", '"3"'],
    "a live id as a string",
    lambda d: step(d, 1)["live"].__setitem__(2, "3"),
)
edit(
    "live_nested",
    "$.timeline.steps[1].live",
    ["list of value ids"],
    "a list inside a live list",
    lambda d: step(d, 1)["live"].__setitem__(2, [3]),
)
edit(
    "live_float_id",
    "$.timeline.steps[4].live",
    ["list of value ids", "3.5"],
    "a live id 3.5",
    lambda d: step(d, 4)["live"].__setitem__(0, 3.5),
)

# --- negative or absurdly large numbers
edit(
    "shard_bytes_negative",
    "$.timeline.values[0].shard_bytes",
    [">= 0"],
    "shard_bytes -5120",
    assign(v(0), "shard_bytes", -5120),
)
edit(
    "budget_huge", "$.budget_bytes", ["<= 9007199254740992"], "budget_bytes 10**30", assign(top, "budget_bytes", 10**30)
)
edit(
    "shape_dim_huge",
    "$.timeline.values[0].shape[0]",
    ["<= 9007199254740992"],
    "a dimension of 2**60",
    lambda d: value(d, 0)["shape"].__setitem__(0, 2**60),
)
edit("copies_zero", "$.timeline.values[0].copies", [">= 1"], "copies 0", assign(v(0), "copies", 0))
edit("step_index_negative", "$.timeline.steps[0].index", [">= 0"], "a step index -1", assign(s(0), "index", -1))
edit(
    "usage_negative",
    "$.timeline.steps[3].usage.standard",
    [">= 0"],
    "usage.standard -1",
    assign(lambda d: step(d, 3)["usage"], "standard", -1),
)
edit(
    "live_id_negative",
    "$.timeline.steps[1].live",
    ["list of value ids", "-"],
    "a live id -3",
    lambda d: step(d, 1)["live"].__setitem__(2, -3),
)
edit(
    "live_id_huge",
    "$.timeline.steps[1].live",
    ["list of value ids", "(character"],
    "a live id of 25 digits",
    lambda d: step(d, 1)["live"].__setitem__(2, 10**24),
)
edit(
    "step_index_order",
    "$.timeline.steps[3].index",
    ["3", "program order", "4"],
    "steps 3 and 4 swapped",
    lambda d: d["timeline"]["steps"].insert(3, d["timeline"]["steps"].pop(4)),
)
edit(
    "total_peak_step_beyond",
    "$.total_peak_step",
    ["step index below 6", "6"],
    "total_peak_step = number of steps",
    assign(top, "total_peak_step", 6),
)
edit(
    "standard_peak_step_beyond",
    "$.standard_peak_step",
    ["step index below 6", "40"],
    "standard_peak_step 40 of 6 steps",
    assign(top, "standard_peak_step", 40),
)
edit(
    "interleaved_peak_step_beyond",
    "$.interleaved_peak_step",
    ["step index below 6", "99"],
    "interleaved_peak_step 99 of 6 steps",
    assign(top, "interleaved_peak_step", 99),
)
edit(
    "shape_elements_huge",
    "$.timeline.values[0].shape",
    ["2^53", "bytes"],
    "each dimension fine, the tensor 2^66 bytes",
    assign(v(0), "shape", [2**22, 2**22, 2**21]),
)
edit(
    "padding_multiple_huge",
    "$.timeline.values[0].layout (tiling)",
    ["2^53", "bytes", "padded"],
    "padding multiples of 2^31 on both axes of value 0",
    lambda d: [set_layout(0, f"padding_multiple: {m},", "padding_multiple: 2147483648,")(d) for m in (16, 160)],
)

# --- ids, roots, live ids
edit(
    "duplicate_id",
    "$.timeline.values[3].id",
    ["unique", "1", "already used by values[1]"],
    "two values with id 1",
    assign(v(3), "id", 1),
)
edit(
    "root_unknown",
    "$.timeline.values[13].root",
    ["id of a value", "4444"],
    "an alias whose root is no value",
    assign(v(13), "root", 4444),
)
edit(
    "root_is_alias",
    "$.timeline.values[14].root",
    ["root", "46", "45"],
    "value 49 rooted at 46, itself an alias of 45",
    assign(v(14), "root", 46),
)
edit(
    "live_id_unknown",
    "$.timeline.steps[2].live[3]",
    ["id of a value", "777"],
    "a live id no value has",
    lambda d: step(d, 2)["live"].__setitem__(3, 777),
)

# --- layouts: shapes and axes, precision, memory class, axis kind, Debug syntax
edit(
    "axis_beyond_rank",
    "$.timeline.values[0].layout (tiling.axes[0].axis)",
    ["rank-3", "FromEnd(5)"],
    "FromEnd(5) on a rank-3 shape",
    set_layout(0, "FromEnd(2)", "FromEnd(5)"),
)
edit(
    "axis_from_start_beyond",
    "$.timeline.values[0].layout (tiling.axes[1].axis)",
    ["rank-3", "FromStart(3)"],
    "FromStart(3) on a rank-3 shape",
    set_layout(0, "FromEnd(1)", "FromStart(3)"),
)
edit(
    "shape_rank_too_small",
    "$.timeline.values[0].layout (tiling.axes[0].axis)",
    ["rank-1", "FromEnd(2)"],
    "shape [729] under a two-axis tiling",
    assign(v(0), "shape", [729]),
)
edit(
    "axis_twice",
    "$.timeline.values[0].layout (tiling.axes[1].axis)",
    ["dimension", "at most one axis", "FromStart(1)"],
    "FromEnd(2) and FromStart(1) cut the same dimension",
    set_layout(0, "FromEnd(1)", "FromStart(1)"),
)
edit(
    "tile_count_disagrees",
    "$.timeline.values[0].layout (tiling.tile_count)",
    ["1472", "partitions", "replicas", "1400"],
    "tile_count 1400 ≠ 46·4·8",
    set_layout(0, "tile_count: 1472", "tile_count: 1400"),
)
edit(
    "axis_from_end_zero",
    "$.timeline.values[0].layout (tiling.axes[0].axis)",
    ["from 1", "0"],
    "FromEnd(0)",
    set_layout(0, "FromEnd(2)", "FromEnd(0)"),
)
edit(
    "axis_kind_unknown",
    "$.timeline.values[0].layout (tiling.axes[0].axis)",
    ["axis kind", "Middle(2)"],
    "an axis kind Middle(2)",
    set_layout(0, "FromEnd(2)", "Middle(2)"),
)
edit(
    "partitions_zero",
    "$.timeline.values[0].layout (tiling.axes[1].partitions)",
    ["from 1", "0"],
    "partitions: 0",
    set_layout(0, "partitions: 4,", "partitions: 0,"),
)
edit(
    "partitions_huge",
    "$.timeline.values[0].layout (tiling.axes[1].partitions)",
    ["to 2147483648", "99999999999"],
    "partitions: 99999999999",
    set_layout(0, "partitions: 4,", "partitions: 99999999999,"),
)
edit(
    "tile_stride_negative",
    "$.timeline.values[0].layout (tiling.axes[0].tile_stride)",
    ["from 1", "-1"],
    "tile_stride: Some(-1)",
    set_layout(0, "Some(1)", "Some(-1)"),
)
edit(
    "replicas_string",
    "$.timeline.values[0].layout (tiling.replicas)",
    ["integer", "'8'"],
    'replicas: "8"',
    set_layout(0, "replicas: 8", 'replicas: "8"'),
)
edit(
    "layout_missing_tiling",
    "$.timeline.values[0].layout (tiling)",
    ["tiling", "none"],
    "a Layout without tiling",
    lambda d: value(d, 0).__setitem__("layout", "Layout { order: RowMajor, memory_class: Ipu21Interleaved }"),
)
edit(
    "layout_wrong_struct",
    "$.timeline.values[0].layout",
    ["Layout", "Format"],
    "a struct that is not a Layout",
    lambda d: value(d, 0).__setitem__("layout", "Format { order: RowMajor }"),
)
edit(
    "precision_unknown",
    "$.timeline.values[1].precision",
    ["precision", "BF16"],
    "precision BF16",
    assign(v(1), "precision", "BF16"),
)
edit(
    "precision_not_debug",
    "$.timeline.values[1].precision (character",
    ["Debug", "scale_exponent"],
    "precision text that does not parse",
    assign(v(1), "precision", "F8F143 { scale_exponent: -4"),
)
edit(
    "memory_class_unknown",
    "$.timeline.values[2].class",
    ["memory class", "Ipu21Fast"],
    "class Ipu21Fast",
    assign(v(2), "class", "Ipu21Fast"),
)
edit(
    "layout_memory_class_unknown",
    "$.timeline.values[0].layout (memory_class)",
    ["memory class", "Ipu9Sram"],
    "the layout's memory_class Ipu9Sram",
    set_layout(0, "memory_class: Ipu21Interleaved", "memory_class: Ipu9Sram"),
)
edit(
    "layout_class_disagrees",
    "$.timeline.values[0].class",
    ["Ipu21Interleaved", "Ipu21Standard", "layout"],
    "class Ipu21Standard under an interleaved layout",
    assign(v(0), "class", "Ipu21Standard"),
)
edit(
    "layout_unbalanced",
    "$.timeline.values[0].layout (character",
    ["Debug", "AxisTiling"],
    "a '}' missing",
    set_layout(0, "padding: Zero, tile_stride: Some(1) }", "padding: Zero, tile_stride: Some(1)"),
)
edit(
    "layout_unterminated_string",
    "$.timeline.values[0].layout (character",
    ["Debug", '"oops'],
    "an unterminated string in a layout",
    set_layout(0, "padding: Zero", 'padding: "oops'),
)
edit(
    "layout_empty",
    "$.timeline.values[0].layout (character 0)",
    ["Debug"],
    "an empty layout string",
    assign(v(0), "layout", ""),
)
edit(
    "operation_truncated",
    "$.timeline.steps[2].operation (character",
    ["Debug", "more text", "exponent"],
    "a Gemm operation cut short",
    lambda d: step(d, 2).__setitem__("operation", step(d, 2)["operation"][:48]),
)
edit(
    "operation_stray_colon",
    "$.timeline.steps[0].operation (character 7)",
    ["Debug", "Convert"],
    "'Convert: LocalKernel'",
    assign(s(0), "operation", "Convert: LocalKernel"),
)
edit(
    "operation_empty",
    "$.timeline.steps[5].operation (character 0)",
    ["Debug"],
    "an empty operation",
    assign(s(5), "operation", ""),
)


# --- found by fuzzing or by reading the loader: nesting, literals, encodings
@case("deep_nesting", "byte", ["nested", "256 deep"], "a name that is a list nested 50000 deep")
def _deep_nesting(base: dict) -> bytes:
    return dump(base).replace(b'"vit.image.patches"', b"[" * 50000 + b"]" * 50000, 1)


case("integer_400_digits", "$.budget_bytes", ["<= 9007199254740992", "7777"], "budget_bytes of 400 digits")(
    lambda base: dump(base).replace(b'"budget_bytes": 586960', b'"budget_bytes": ' + b"7" * 400, 1)
)
case(
    "integer_5000_digits",
    "$.budget_bytes",
    ["integer", "digits"],
    "budget_bytes of 5000 digits, more than Python reads",
)(lambda base: dump(base).replace(b'"budget_bytes": 586960', b'"budget_bytes": ' + b"7" * 5000, 1))


case("utf8_bom", "byte 0", ["valid JSON"], "a UTF-8 byte-order mark before the object")(
    lambda base: b"\xef\xbb\xbf" + dump(base)
)
case("nan_literal", "byte", ["valid JSON", "NaN"], "NaN, which JSON does not have")(
    lambda base: dump(base).replace(b'"budget_bytes": 586960', b'"budget_bytes": NaN', 1)
)
case("version_multiline", "$.version", ["version 1", "[ null ]"], "version a list written over three lines")(
    lambda base: dump(base).replace(b'"version": 1', b'"version": [\n  null\n ]', 1)
)


def _layout_error_at(name: str, row: int, old: str, new: str, marker: str, words: list[str], what: str) -> None:
    """A Debug syntax error in value ``row``'s layout, expected at the first ``marker`` after the edit."""

    def build(base: dict) -> bytes:
        doc = copy.deepcopy(base)
        set_layout(row, old, new)(doc)
        return dump(doc)

    text = value(reduced_sample(), row)["layout"].replace(old, new, 1)
    position = text.index(marker, text.index(new))
    case(name, f"$.timeline.values[{row}].layout (character {position})", words, what)(build)


_layout_error_at(
    "layout_map_and_set_mixed",
    0,
    "row_block: 160, column_block: 16",
    "row_block: {1, a: 2}, column_block: 16",
    ": 2",
    ["Debug", "{1, a: 2}"],
    "braces holding a set item then a map entry",
)
_layout_error_at(
    "layout_bad_unicode_escape",
    0,
    "padding: Zero",
    'padding: "\\u{zz}"',
    '"',
    ["Debug", "escape"],
    "a \\u{zz} escape in a string",
)
_layout_error_at(
    "layout_number_too_long",
    0,
    "partitions: 46",
    "partitions: " + "9" * 5000,
    "9",
    ["Debug", "digits"],
    "a 5000-digit number",
)
edit(
    "layout_nested_too_deep",
    "$.timeline.values[0].layout (character",
    ["nested"],
    "an order nested 150 deep",
    set_layout(0, "order: BlockMajor(", "order: " + "A(" * 150 + "x" + ")" * 150 + ", ignored: BlockMajor("),
)
edit(
    "linear_then_beyond",
    "$.timeline.values[10].layout (tiling.axes[1].axis)",
    ["Linear", "FromEnd(2)"],
    "FromEnd(2) after Linear has flattened value 36",
    set_layout(
        10,
        "tile_stride: None }]",
        "tile_stride: None }, AxisTiling { axis: FromEnd(2), partitions: 1, padding_groups: 1, block_size: 1, "
        "padding_multiple: 1, shard_padding_multiple: 1, padding: Zero, tile_stride: None }]",
    ),
)


def write_corpus(out: Path = HERE) -> dict[str, dict]:
    base = reduced_sample()
    (out / BASE_NAME).write_bytes(dump(base))
    expected: dict[str, dict] = {}
    for name, build, path, words, what in CASES:
        data = build(base)
        assert data != dump(base), f"{name}: the mutation changed nothing"
        (out / name).write_bytes(data)
        expected[name] = {"path": path, "words": words, "what": what}
    (out / EXPECTED_NAME).write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for stale in {p.name for p in out.glob("*.json")} - {*expected, BASE_NAME, EXPECTED_NAME}:
        (out / stale).unlink()  # a case since renamed or removed
    return expected


if __name__ == "__main__":
    written = write_corpus(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
    print(
        f"{len(written)} bad files, {BASE_NAME} and {EXPECTED_NAME} written to {HERE if len(sys.argv) < 2 else sys.argv[1]}"
    )
