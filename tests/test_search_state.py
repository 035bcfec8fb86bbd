"""Search state: the sample loads, its figures follow docs/formats.md, its tables and CLI keep their contract.

Expected figures come from docs/formats.md (the stated sizes) or from the sample read with the stdlib
``json`` and the shard rule of docs/formats.md §2 written out again here, never from the code under test.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tilescope.cli import main
from tilescope.loaders.debug_text import parse_debug
from tilescope.loaders.detect import detect_kind
from tilescope.loaders.layouts import format_from_debug, format_from_serde, layout_from_debug_text, layout_from_serde
from tilescope.loaders.search_state import load_search_state
from tilescope.loaders.search_tables import search_state_tables, write_search_state_tables
from tilescope.models.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "flash_attention.search_state.json"
PROFILE = ROOT / "sample_data" / "vit_finalist5.memory_profile.json"
QUERY, KEY, VALUE, OUTPUT = 0, 1, 2, 3


# ----------------------------------------------------------------------------- independent oracle


def rule_shard_bytes(shape: list[int], element_bytes: int, axes: list[dict]) -> int:
    """docs/formats.md §2, on serde AxisTiling objects straight from the JSON."""
    dims = list(shape)
    for a in axes:
        if a["axis"] == "Linear":
            dims, d = [math.prod(dims)], 0
        elif "FromEnd" in a["axis"]:
            d = len(dims) - a["axis"]["FromEnd"]
        else:
            d = a["axis"]["FromStart"]
        padded = -(-dims[d] // a["padding_multiple"]) * a["padding_multiple"]
        blocks = -(-padded // a["block_size"])
        per = -(-blocks // a["partitions"]) * a["block_size"]
        dims[d] = -(-per // a["shard_padding_multiple"]) * a["shard_padding_multiple"]
    return math.prod(dims) * element_bytes


ELEMENT_BYTES = {"F16": 2, "F32": 4}


def rule_figures(fmt: dict, shape: list[int]) -> dict:
    tiling = fmt["layout"]["tiling"]
    return {
        "tile_count": tiling["tile_count"],
        "shard_bytes": rule_shard_bytes(shape, ELEMENT_BYTES[fmt["precision"]], tiling["axes"]),
    }


def flatten(obj: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in obj.items():
        name = f"{prefix}_{k}" if prefix else k
        out.update(flatten(v, name) if isinstance(v, dict) and v else {name: v})
    return out


@pytest.fixture(scope="module")
def raw() -> dict:
    return json.loads(SAMPLE.read_text())


@pytest.fixture(scope="module")
def shapes() -> dict[int, list[int]]:
    # docs/formats.md §3: query/output [4, 17, 72], key/value [4, 19, 72].
    return {QUERY: [4, 17, 72], KEY: [4, 19, 72], VALUE: [4, 19, 72], OUTPUT: [4, 17, 72]}


@pytest.fixture(scope="module")
def state():
    return load_search_state(SAMPLE)


@pytest.fixture(scope="module")
def tables(state):
    return search_state_tables(state)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilescope", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


# ----------------------------------------------------------------------------- the model


def test_graph_is_read_from_the_debug_context(state, shapes):
    g = state.graph
    assert [(i.name, i.kind, i.value, list(i.shape)) for i in g.inputs] == [
        ("query", "Host", QUERY, shapes[QUERY]),
        ("key", "Host", KEY, shapes[KEY]),
        ("value", "Host", VALUE, shapes[VALUE]),
    ]
    (op,) = g.operations
    assert (op.id, op.inputs, op.results, op.kind_name) == (0, (0, 1, 2), (3,), "FlashAttention")
    assert op.kind == "FlashAttention(AttentionOptions { causal: false, scale: InverseSqrtQueryWidth })"
    assert g.outputs == (OUTPUT,)
    assert {k: list(v) for k, v in g.shapes.items()} == shapes
    assert state.tile_count == 64 and state.tile_memory_budget_bytes == 586960
    assert state.context_rest == ("None",)


def test_chosen_plan_is_alternative_128_of_384(state, raw):
    alternatives = raw["alternatives"]["0"]
    assert len(alternatives) == 384
    assert alternatives.index(raw["recipe"]["plans"]["0"]) == 128
    plans = state.plans[0]
    assert (len(plans.alternatives), plans.chosen) == (384, 128)
    assert plans.chosen_plan.dispatch == flatten(raw["recipe"]["plans"]["0"]["dispatch"]["Attention"])


def test_query_arrives_and_is_required_as_320_bytes_on_64_tiles(state, raw, shapes):
    required = state.plans[0].chosen_plan.inputs[QUERY]
    arrives = state.arrival(QUERY)
    for placed in (arrives, required):
        assert (placed.format.layout.tiling.tile_count, placed.shard_bytes) == (64, 320)
    assert rule_figures(raw["inputs"]["0"], shapes[QUERY]) == {"tile_count": 64, "shard_bytes": 320}


@pytest.mark.parametrize("value", [KEY, VALUE])
def test_key_and_value_arrive_as_3040_and_are_required_as_10240_on_4_tiles(state, raw, shapes, value):
    arrives = state.arrival(value)
    required = state.plans[0].chosen_plan.inputs[value]
    assert (arrives.format.layout.tiling.tile_count, arrives.shard_bytes) == (4, 3040)
    assert (required.format.layout.tiling.tile_count, required.shard_bytes) == (4, 10240)
    # The same figures from the rule, on the file's own JSON.
    chosen = raw["recipe"]["plans"]["0"]["requirements"]["inputs"][value]["format"]
    assert rule_figures(raw["inputs"][str(value)], shapes[value]) == {"tile_count": 4, "shard_bytes": 3040}
    assert rule_figures(chosen, shapes[value]) == {"tile_count": 4, "shard_bytes": 10240}


def test_debug_and_serde_spellings_of_the_input_formats_are_equal(raw):
    config = parse_debug(raw["context"].split("\n")[1])
    debug = {key.items[0]: value for key, value in config.fields["inputs"].entries}
    assert sorted(debug) == sorted(int(k) for k in raw["inputs"])
    for key, serde in raw["inputs"].items():
        from_debug = format_from_debug(debug[int(key)], "debug")
        from_serde = format_from_serde(serde, "serde")
        assert from_debug.layout.tiling == from_serde.layout.tiling
        assert from_debug == from_serde


def debug_axis_tiling(a: dict) -> str:
    """A serde AxisTiling written by hand in Debug spelling."""
    ((kind, index),) = a["axis"].items()
    stride = "None" if a["tile_stride"] is None else f"Some({a['tile_stride']})"
    return (
        f"AxisTiling {{ axis: {kind}({index}), partitions: {a['partitions']}, padding_groups: {a['padding_groups']}, "
        f"block_size: {a['block_size']}, padding_multiple: {a['padding_multiple']}, "
        f"shard_padding_multiple: {a['shard_padding_multiple']}, padding: {a['padding']}, tile_stride: {stride} }}"
    )


def test_block_major_order_reads_the_same_in_both_spellings(raw):
    serde = raw["recipe"]["plans"]["0"]["requirements"]["inputs"][2]["format"]["layout"]
    assert serde["order"] == {"BlockMajor": {"Matrix": {"row_block": 64, "column_block": 16}}}
    tiling = serde["tiling"]
    debug = (
        "Layout { order: BlockMajor(Matrix { row_block: 64, column_block: 16 }), tiling: TensorTiling { "
        f"tile_count: {tiling['tile_count']}, replicas: {tiling['replicas']}, "
        f"axes: [{', '.join(debug_axis_tiling(a) for a in tiling['axes'])}] }}, memory_class: {serde['memory_class']} }}"
    )
    assert layout_from_debug_text(debug, "debug") == layout_from_serde(serde, "serde")


def test_input_formats_say_both_spellings_hold_them(state):
    assert {f.source for f in state.input_formats.values()} == {"inputs and context"}
    assert [f.json_path for f in state.input_formats.values()] == ["$.inputs.0", "$.inputs.1", "$.inputs.2"]


# ----------------------------------------------------------------------------- the tables


def test_table_row_counts(tables, raw):
    alternatives = raw["alternatives"]["0"]
    requirement_formats = sum(len(a["requirements"]["inputs"]) + 1 for a in alternatives)
    counts = {name: table.num_rows for name, table in tables.items()}
    assert counts == {
        "graph_inputs": 3,
        "operations": 1,
        "graph_values": 4,
        "config": 1,
        "formats": len(raw["inputs"]) + requirement_formats,
        "plans": len(alternatives),
        "recipe": 1,
        "visited": len(raw["visited"]),
    }
    assert counts["formats"] == 3 + 384 * 4


def test_every_format_row_follows_the_rule(tables, raw, shapes):
    rows = tables["formats"].to_pylist()
    expected = [("arrives", int(k), None, None, rule_figures(f, shapes[int(k)])) for k, f in raw["inputs"].items()]
    for index, plan in enumerate(raw["alternatives"]["0"]):
        for position, entry in enumerate(plan["requirements"]["inputs"]):
            expected.append(("input", position, 0, index, rule_figures(entry["format"], shapes[position])))
        expected.append(
            ("output", OUTPUT, 0, index, rule_figures(plan["requirements"]["output"]["format"], shapes[OUTPUT]))
        )
    got = [
        (
            r["role"],
            r["value_id"],
            r["operation_id"],
            r["alternative"],
            {"tile_count": r["tile_count"], "shard_bytes": r["shard_bytes"]},
        )
        for r in rows
    ]
    assert got == expected
    assert [r["alternative"] for r in rows if r["chosen"]] == [128] * 4
    query_axes = rows[0]["axes"]
    assert [(a["axis_kind"], a["axis_index"], a["partitions"]) for a in query_axes] == [
        ("FromEnd", 2, 16),
        ("FromEnd", 3, 4),
        ("FromEnd", 1, 1),
    ]


def test_plans_table_flattens_the_dispatch(tables, raw):
    plans = tables["plans"]
    for column in (
        "query_key_rows",
        "query_key_columns",
        "query_key_inner",
        "probability_value_rows",
        "probability_value_columns",
        "probability_value_inner",
        "materialized",
        "key_block_rows",
        "padded_query_dimension",
        "padded_value_dimension",
        "fp8_scales",
    ):
        assert column in plans.column_names
    rows = plans.to_pylist()
    for index, (row, alternative) in enumerate(zip(rows, raw["alternatives"]["0"])):
        assert (row["operation_id"], row["alternative"], row["chosen"]) == (0, index, index == 128)
        for name, value in flatten(alternative["dispatch"]["Attention"]).items():
            assert row[name] == value, (index, name)
    assert rows[128]["query_key_rows"] == 6 and rows[128]["dispatch_kind"] == "Attention"


def test_config_and_recipe_rows(tables, raw):
    (config,) = tables["config"].to_pylist()
    assert config["tile_count"] == 64
    assert config["tile_memory_budget_bytes"] == 586960
    assert config["standard_memory_reservation_bytes"] == 49152
    assert config["attention_fp8_scales"] == [-4, None]
    assert config["attention_products"] == "Independent"
    assert config["input_count"] == 3
    (recipe,) = tables["recipe"].to_pylist()
    assert recipe["cast_before_copies"] == raw["recipe"]["cast_before_copies"]
    assert recipe["parallel_reductions"] == raw["recipe"]["parallel_reductions"]
    assert recipe["disjoint_copy_sources"] is raw["recipe"]["disjoint_copy_sources"]
    assert recipe["plan_count"] == len(raw["recipe"]["plans"])


def test_operations_and_values_tables(tables):
    assert tables["operations"].to_pylist()[0]["chosen_alternative"] == 128
    assert tables["operations"].to_pylist()[0]["alternatives"] == 384
    values = tables["graph_values"].to_pylist()
    assert [(v["id"], v["is_graph_input"], v["is_graph_output"], v["producer"]) for v in values] == [
        (0, True, False, None),
        (1, True, False, None),
        (2, True, False, None),
        (3, False, True, 0),
    ]


def test_every_field_is_documented(tables):
    for name, table in tables.items():
        for field in table.schema:
            assert field.metadata and field.metadata.get(b"doc"), f"{name}.{field.name}"


def test_parquet_files_round_trip(state, tables, tmp_path):
    written = write_search_state_tables(state, tmp_path / "out")
    assert sorted(p.name for p in written) == sorted(f"{name}.parquet" for name in tables)
    for path in written:
        back = pq.read_table(path)
        assert back.equals(tables[path.stem])
        assert back.schema.field(0).metadata[b"doc"]


def test_normalise_command_writes_the_tables(tmp_path):
    result = run_cli("normalise", str(SAMPLE), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert pq.read_table(tmp_path / "formats.parquet").num_rows == 3 + 384 * 4


# ----------------------------------------------------------------------------- the summary command


def test_summary_json_matches_the_contract(raw, shapes):
    result = run_cli("summary", str(SAMPLE), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    chosen = raw["recipe"]["plans"]["0"]["requirements"]
    expected_inputs = [
        {
            "value": v,
            "shape": shapes[v],
            "arrives": rule_figures(raw["inputs"][str(v)], shapes[v]),
            "required": rule_figures(chosen["inputs"][v]["format"], shapes[v]),
        }
        for v in (QUERY, KEY, VALUE)
    ]
    assert summary == {
        "kind": "search_state",
        "tile_count": 64,
        "tile_memory_budget_bytes": 586960,
        "operations": [
            {
                "id": 0,
                "kind": "FlashAttention",
                "alternatives": 384,
                "chosen_alternative": 128,
                "inputs": expected_inputs,
                "output": rule_figures(chosen["output"]["format"], shapes[OUTPUT]),
            }
        ],
    }
    assert [i["arrives"]["shard_bytes"] for i in summary["operations"][0]["inputs"]] == [320, 3040, 3040]
    assert [i["required"]["shard_bytes"] for i in summary["operations"][0]["inputs"]] == [320, 10240, 10240]


def test_summary_text_is_short():
    result = run_cli("summary", str(SAMPLE))
    assert result.returncode == 0, result.stderr
    assert "alternative 128 of 384" in result.stdout
    assert (
        "3,040 B (3.0 KiB) per tile on 4 tiles" in result.stdout
        and "10,240 B (10.0 KiB) per tile on 4 tiles" in result.stdout
    )
    assert len(result.stdout.splitlines()) < 12


# ----------------------------------------------------------------------------- kinds and bad input


def test_detect_kind_of_both_samples():
    assert detect_kind(SAMPLE) == "search_state"
    assert detect_kind(PROFILE) == "memory_profile"


def test_memory_profile_is_not_a_search_state():
    with pytest.raises(InputError) as caught:
        load_search_state(PROFILE)
    message = str(caught.value)
    assert "expected a search state, found a memory profile" in message
    assert "\n" not in message and message.startswith(str(PROFILE))


def _edited(raw: dict, edit) -> bytes:
    copy = json.loads(json.dumps(raw))
    edit(copy)
    return json.dumps(copy).encode()


def _set_partitions(raw: dict) -> None:
    axes = raw["recipe"]["plans"]["0"]["requirements"]["inputs"][1]["format"]["layout"]["tiling"]["axes"]
    axes[0]["partitions"] = "four"


def _break_context(raw: dict) -> None:
    lines = raw["context"].split("\n")
    lines[1] = lines[1].replace("partitions: 4,", "partitions: 4 4,", 1)
    raw["context"] = "\n".join(lines)


def _disagree(raw: dict) -> None:
    raw["inputs"]["1"]["layout"]["tiling"]["axes"][1]["partitions"] = 2


def _unknown_value(raw: dict) -> None:
    raw["context"] = raw["context"].replace("results: [ValueId(3)]", "results: [ValueId(9)]", 1)


def _not_an_alternative(raw: dict) -> None:
    raw["recipe"]["plans"]["0"]["dispatch"]["Attention"]["key_block_rows"] = 32


def _bad_axis(raw: dict) -> None:
    raw["alternatives"]["0"][5]["requirements"]["inputs"][2]["format"]["layout"]["tiling"]["axes"][0]["axis"] = {
        "FromEnd": 9
    }


BAD_INPUTS = {
    "truncated": (lambda raw: SAMPLE.read_bytes()[:5000], "at byte 5000 (line 1, column 5001)"),
    "empty": (lambda raw: b"", "found an empty file"),
    "not JSON": (lambda raw: b'{\n  "version": 1,\n  "context": ]\n}', "at byte 31 (line 3, column 14)"),
    "not an object": (lambda raw: b"[1, 2]", "at $: expected a JSON object"),
    "neither kind": (
        lambda raw: b'{"version": 1}',
        "at $: expected a memory profile (with `timeline`) or a search state",
    ),
    "no version": (lambda raw: _edited(raw, lambda r: r.pop("version")), "at $.version: expected a field `version`"),
    "deep nesting": (
        lambda raw: _edited(raw, lambda r: r.__setitem__("mapping", json.loads("[" * 900 + "]" * 900))),
        ": expected JSON nested at most 256 deep, found deeper nesting",  # located at its byte (docs/formats.md §6)
    ),
    "version 2": (
        lambda raw: _edited(raw, lambda r: r.__setitem__("version", 2)),
        "at $.version: expected version 1, 3 or 8, found 2",
    ),
    "bad Debug text": (lambda raw: _edited(raw, _break_context), "at $.context line 2 (character "),
    "wrong type": (
        lambda raw: _edited(raw, _set_partitions),
        "at $.recipe.plans.0.requirements.inputs[1].format.layout.tiling.axes[0].partitions: expected an integer",
    ),
    "spellings disagree": (
        lambda raw: _edited(raw, _disagree),
        "at $.inputs.1.layout.tiling.axes[1].partitions: expected 4 as in $.context line 2 PipelineConfig.inputs[ValueId(1)], found 2",
    ),
    "unknown value": (
        lambda raw: _edited(raw, _unknown_value),
        "at $.context line 1 ComputeGraph.operations[0].results[0]",
    ),
    "chosen plan missing": (
        lambda raw: _edited(raw, _not_an_alternative),
        "at $.recipe.plans.0: expected one of the 384 plans",
    ),
    "axis outside the shape": (
        lambda raw: _edited(raw, _bad_axis),
        "at $.alternatives.0[5].requirements.inputs[2].format.layout.tiling.axes[0].axis",
    ),
}


# Run end to end in a fresh interpreter; the other cases run the same entry point in-process.
SUBPROCESS_CASES = {"truncated", "bad Debug text", "wrong type"}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_with_its_path(case, raw, tmp_path, capsys):
    make, expected = BAD_INPUTS[case]
    path = tmp_path / "bad.search_state.json"
    path.write_bytes(make(raw))
    if case in SUBPROCESS_CASES:
        result = run_cli("summary", str(path), "--json")
        code, out, err = result.returncode, result.stdout, result.stderr
    else:
        code = main(["summary", str(path), "--json"])
        out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert str(path) in lines[0] and expected in lines[0], lines[0]
