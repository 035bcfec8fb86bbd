"""The Debug-text grammar and the one tiling model built from both spellings."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilescope.loaders.debug_text import DebugSyntaxError, Map, Set, Struct, Tuple, Unit, parse_debug, parse_debug_sequence, render
from tilescope.loaders.layouts import format_from_debug, layout_from_debug_text, layout_from_serde
from tilescope.models.errors import InputError

ROOT = Path(__file__).resolve().parents[1]


def test_grammar_shapes():
    assert parse_debug("RowMajor") == Unit("RowMajor")
    assert parse_debug("Some(4)") == Tuple("Some", [4])
    assert parse_debug("F8F143 { scale_exponent: -4 }") == Struct("F8F143", {"scale_exponent": -4})
    assert parse_debug("{ValueId(0): [1, 2]}") == Map([(Tuple("ValueId", [0]), [1, 2])])
    assert parse_debug("{ValueId(0), ValueId(1)}") == Set([Tuple("ValueId", [0]), Tuple("ValueId", [1])])
    assert parse_debug('"a \\"quoted\\" name"') == 'a "quoted" name'
    assert parse_debug("[true, false, 1.5]") == [True, False, 1.5]
    assert parse_debug_sequence("Repeat 2 boundary") == [Unit("Repeat"), 2, Unit("boundary")]


def test_every_sample_string_round_trips():
    raw = json.loads((ROOT / "sample_data/vit_finalist5.memory_profile.json").read_text())
    for v in raw["timeline"]["values"]:
        assert render(parse_debug(v["layout"])) == v["layout"]
        assert render(parse_debug(v["precision"])) == v["precision"]
    state = json.loads((ROOT / "sample_data/flash_attention.search_state.json").read_text())
    for line in state["context"].split("\n"):
        assert render(parse_debug(line)) == line


@pytest.mark.parametrize("text, position", [
    ("Layout { order: Amp(Left, tiling: 3 }", 32),
    ("Layout { order: }", 16),
    ("[1, 2", 5),
])
def test_syntax_errors_are_located(text, position):
    with pytest.raises(DebugSyntaxError) as info:
        parse_debug(text)
    assert info.value.position == position
    assert text[max(0, position - 5):position] in info.value.snippet


def test_both_spellings_give_one_model():
    state = json.loads((ROOT / "sample_data/flash_attention.search_state.json").read_text())
    config = parse_debug(state["context"].split("\n")[1])
    debug_inputs = {render(k): format_from_debug(v, "$.context") for k, v in config.fields["inputs"].entries}
    for key, serde in state["inputs"].items():
        assert debug_inputs[f"ValueId({key})"].layout == layout_from_serde(serde["layout"], f"$.inputs.{key}.layout")


def test_unknown_axis_kind_is_an_error_but_unknown_order_is_data():
    base = ("Layout { order: %s, tiling: TensorTiling { tile_count: 4, replicas: 1, axes: [AxisTiling { axis: %s, "
            "partitions: 4, padding_groups: 1, block_size: 1, padding_multiple: 1, shard_padding_multiple: 1, "
            "padding: Zero, tile_stride: None }] }, memory_class: Ipu21Standard }")
    layout = layout_from_debug_text(base % ("Hilbert(Curve { depth: 3 })", "FromEnd(1)"), "$.x")
    assert str(layout.order) == "Hilbert(Curve { depth: 3 })"
    with pytest.raises(InputError, match=r"\$\.x \(tiling\.axes\[0\]\.axis\).*axis kind"):
        layout_from_debug_text(base % ("RowMajor", "Diagonal(1)"), "$.x")
