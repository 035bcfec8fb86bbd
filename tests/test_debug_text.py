"""The Debug-text grammar and the one tiling model built from both spellings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilescope.loaders.debug_text import (
    DebugSyntaxError,
    Map,
    Set,
    Struct,
    Tuple,
    Unit,
    parse_debug,
    parse_debug_sequence,
    render,
)
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


@pytest.mark.parametrize(
    "text, position", [("Layout { order: Amp(Left, tiling: 3 }", 32), ("Layout { order: }", 16), ("[1, 2", 5)]
)
def test_syntax_errors_are_located(text, position):
    with pytest.raises(DebugSyntaxError) as info:
        parse_debug(text)
    assert info.value.position == position
    assert text[max(0, position - 5) : position] in info.value.snippet


def test_both_spellings_give_one_model():
    state = json.loads((ROOT / "sample_data/flash_attention.search_state.json").read_text())
    config = parse_debug(state["context"].split("\n")[1])
    debug_inputs = {render(k): format_from_debug(v, "$.context") for k, v in config.fields["inputs"].entries}
    for key, serde in state["inputs"].items():
        assert debug_inputs[f"ValueId({key})"].layout == layout_from_serde(serde["layout"], f"$.inputs.{key}.layout")


def test_unknown_axis_kind_is_an_error_but_unknown_order_is_data():
    base = (
        "Layout { order: %s, tiling: TensorTiling { tile_count: 4, replicas: 1, axes: [AxisTiling { axis: %s, "
        "partitions: 4, padding_groups: 1, block_size: 1, padding_multiple: 1, shard_padding_multiple: 1, "
        "padding: Zero, tile_stride: None }] }, memory_class: Ipu21Standard }"
    )
    layout = layout_from_debug_text(base % ("Hilbert(Curve { depth: 3 })", "FromEnd(1)"), "$.x")
    assert str(layout.order) == "Hilbert(Curve { depth: 3 })"
    with pytest.raises(InputError, match=r"\$\.x \(tiling\.axes\[0\]\.axis\).*axis kind"):
        layout_from_debug_text(base % ("RowMajor", "Diagonal(1)"), "$.x")


# ----------------------------------------------------------------------------- the fast reader


def _by_lark(text: str, start: str):
    """lark's parse of ``text`` (the reference), or None when lark refuses it."""
    from tilescope.loaders import debug_text

    try:
        debug_text._check_depth(text)
        return ("parsed", debug_text._parser(start).parse(text))
    except Exception:  # any refusal: the reader must refuse it too, or give what lark gives
        return None


def _by_reader(text: str, start: str):
    from tilescope.loaders import debug_text

    try:
        debug_text._check_depth(text)
        return ("parsed", debug_text._Reader(text).read(start))
    except (debug_text._NotRead, debug_text.DebugSyntaxError, RecursionError):
        return None


def _texts_of(paths) -> list[tuple[str, str]]:
    """The layout, precision and operation texts of memory profiles, with the rule each parses by."""
    texts = []
    for path in paths:
        try:
            timeline = json.loads(path.read_text())["timeline"]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):
            continue
        for v in timeline.get("values", []) if isinstance(timeline, dict) else []:
            texts += [
                (v[k], "start") for k in ("layout", "precision") if isinstance(v, dict) and isinstance(v.get(k), str)
            ]
        for s in timeline.get("steps", []) if isinstance(timeline, dict) else []:
            if isinstance(s, dict) and isinstance(s.get("operation"), str):
                texts.append((s["operation"], "sequence"))
    return list(dict.fromkeys(texts))


EDGES = [
    "A { true: 1 }",
    "{true: 1}",
    "A {1}",
    "A {x: 1}",
    "A (1)",
    "1A",
    "truex",
    "true {1}",
    "{1,}",
    "{1: 2,}",
    "A(,)",
    "[1,]",
    "{}",
    "A {}",
    "A { }",
    "1.",
    "1e5",
    "-x",
    '"\\u{41}"',
    '"\\u{d800}"',
    "{1: 2, 3}",
    "{1, 2: 3}",
    "A { x: 1 y: 2 }",
    "[1 2]",
    "",
    " ",
    "A B(1) C { d: [] }",
    "\u0663",
    "x\u00b2",
]


def test_the_reader_accepts_every_planner_text_and_gives_larks_parse(tmp_path):
    from tilescope.synth import write_synthetic_profile

    synthetic = write_synthetic_profile(tmp_path / "s.json", 4, 2)
    texts = _texts_of([ROOT / "sample_data/vit_finalist5.memory_profile.json", synthetic])
    assert len(texts) > 100
    for text, start in texts:
        assert _by_reader(text, start) == _by_lark(text, start) is not None, text


def test_on_the_corpus_the_reader_gives_larks_parse_or_leaves_the_text_to_lark():
    texts = _texts_of(sorted((ROOT / "tests/corpus").rglob("*.json")))
    assert any(_by_lark(t, s) is None for t, s in texts)  # the corpus has bad ones
    for text, start in texts:
        read = _by_reader(text, start)
        assert read is None or read == _by_lark(text, start), text


@pytest.mark.parametrize("start", ["start", "sequence"])
@pytest.mark.parametrize("text", EDGES)
def test_the_reader_gives_larks_parse_or_leaves_the_text_to_lark(text, start):
    read = _by_reader(text, start)
    assert read is None or read == _by_lark(text, start)


def test_the_reader_on_mutated_text_gives_larks_parse_or_leaves_it_to_lark():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    seeds = [t for t, _ in _texts_of([ROOT / "sample_data/vit_finalist5.memory_profile.json"])][:200] + EDGES
    pieces = st.sampled_from(
        list('{}()[],: "\\-.eE019tfx_\t\n') + ["true", "false", "A", "{x: 1}", "\\u{41}", "1.5", "-2"]
    )

    @settings(max_examples=3000, deadline=None, database=None)
    @given(
        st.sampled_from(seeds),
        st.lists(st.tuples(st.integers(0, 400), st.sampled_from(["insert", "delete"]), pieces), max_size=4),
        st.sampled_from(["start", "sequence"]),
    )
    def check(seed, edits, start):
        text = seed
        for at, how, piece in edits:
            at = at % (len(text) + 1)
            text = text[:at] + piece + text[at:] if how == "insert" else text[:at] + text[at + len(piece) :]
        read = _by_reader(text, start)
        assert read is None or read == _by_lark(text, start), (text, start)

    check()
