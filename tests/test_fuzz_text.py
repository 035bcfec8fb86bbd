"""Property-based fuzzing (hypothesis, seeded) of layouts' Debug text and of edit sets.

- Layouts are generated from the grammar of docs/formats.md §2 and §4, with awkward parts:
  counts at and past every bound, unknown axis kinds and memory classes, string literals with
  ``\\u{…}`` escapes (surrogates, past U+10FFFF), deep orders. Read alone, a layout is a ``Layout``
  or an ``InputError`` at the given path; put into the fuzz profile, the profile loads, plans,
  checks and takes its largest edit, or is refused with one line (``fuzz_support``).
- Edit sets are generated as JSON text (lists of objects with the edit keys and others, integers
  of any size, repeated keys, nesting of any depth, escapes). Parsing gives edits or one located
  ``InputError``; applying valid edits to the sample gives a plan or an ``EditError``, and adding
  them one at a time (``extend_edits``) gives the same.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest
from fuzz_support import BASE, assert_input_error, load_outcome, report
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilescope.loaders.edit_sets import parse_edit_set
from tilescope.loaders.layouts import layout_from_debug_text
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.errors import InputError
from tilescope.models.tiling import Layout
from tilescope.planner.edits import EditError, apply_edits, extend_edits
from tilescope.planner.model import plan_profile

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "vit_finalist5.memory_profile.json"
FUZZ = settings(
    max_examples=400,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
AWKWARD_COUNTS = st.one_of(
    st.sampled_from([0, 1, 2, 3, 4, 16, 46, 160, 729, 1472, 2**31, 2**31 + 1, 2**53, 2**64]),
    st.integers(min_value=-5, max_value=3000),
)


def mostly(usual, rare, one_in: int = 12):
    """``usual``, but one draw in about ``one_in`` from ``rare`` (a middle index: hypothesis favours
    the ends of a range)."""
    return st.integers(0, one_in - 1).flatmap(lambda k: rare if k == one_in // 2 else usual)


# Mostly small counts (a layout that reads and plans), now and then an awkward one.
COUNTS = mostly(st.integers(1, 8), AWKWARD_COUNTS)
ESCAPES = st.sampled_from(
    ["\\u{D800}", "\\u{DFFF}", "\\u{110000}", "\\u{FFFFFFFFFFFF}", "\\u{41}", "\\u{1F600}", "\\n", '\\"', "\\\\", "\\q"]
)
STRINGS = st.lists(
    st.one_of(ESCAPES, st.text(alphabet=st.characters(blacklist_characters='"\\'), max_size=4)), max_size=4
).map(lambda parts: '"' + "".join(parts) + '"')
AXES = st.one_of(
    st.builds(lambda k: f"FromEnd({k})", st.integers(1, 3)),
    st.builds(lambda k: f"FromStart({k})", st.integers(0, 2)),
    st.just("Linear"),
    st.builds(lambda k: f"FromEnd({k})", AWKWARD_COUNTS),
    st.sampled_from(["Middle(1)", "FromEnd", "FromEnd(1, 2)", "Linear(1)"]),
)
ORDERS = st.recursive(
    mostly(
        st.sampled_from(["RowMajor", "Amp(Left)", "BlockMajor(Matrix { row_block: 64, column_block: 16 })"]), STRINGS, 4
    ),
    lambda inner: st.builds(
        lambda name, item: f"{name}({item})", st.sampled_from(["Named", "BlockMajor", "Amp"]), inner
    ),
    max_leaves=8,
)


@st.composite
def axis_tilings(draw) -> str:
    fields = {
        "axis": draw(mostly(st.sampled_from(["FromEnd(1)", "FromEnd(2)", "FromStart(0)", "Linear"]), AXES, 4)),
        "partitions": draw(COUNTS),
        "padding_groups": draw(COUNTS),
        "block_size": draw(COUNTS),
        "padding_multiple": draw(COUNTS),
        "shard_padding_multiple": draw(mostly(st.sampled_from([1, 2]), st.just(0))),
        "padding": draw(mostly(st.sampled_from(["Zero", "Reject"]), st.sampled_from(["Other", '"Zero"']))),
        "tile_stride": draw(st.one_of(st.just("None"), st.builds(lambda n: f"Some({n})", COUNTS))),
    }
    if draw(st.integers(0, 15)) == 0:
        del fields[draw(st.sampled_from(sorted(fields)))]
    return "AxisTiling { " + ", ".join(f"{k}: {v}" for k, v in fields.items()) + " }"


@st.composite
def layouts(draw) -> str:
    axes = draw(st.lists(axis_tilings(), max_size=3))
    replicas = draw(COUNTS)
    tiles = draw(mostly(st.just(None), COUNTS, 6))
    if tiles is None:  # usually consistent, so that later checks are reached
        tiles = replicas
        for text in axes:
            part = text.split("partitions: ", 1)[1].split(",", 1)[0] if "partitions: " in text else "1"
            tiles *= int(part) if part.lstrip("-").isdigit() else 1
    memory_class = draw(
        mostly(st.just("Ipu21Interleaved"), st.sampled_from(["Ipu21Standard", "Ipu9Sram", '"Ipu21Standard"']), 8)
    )
    return (
        f"Layout {{ order: {draw(ORDERS)}, tiling: TensorTiling {{ tile_count: {tiles}, replicas: {replicas}, "
        f"axes: [{', '.join(axes)}] }}, memory_class: {memory_class} }}"
    )


@pytest.fixture(scope="module")
def tally(request):
    counts: dict[str, Counter] = {}
    yield counts
    report(
        request,
        [
            f"fuzz {name}: {c['cases']} cases, {c['valid']} valid, {c['error']} InputErrors"
            + "".join(f", {n} {key}" for key, n in sorted(c.items()) if key not in ("cases", "valid", "error"))
            for name, c in counts.items()
        ],
    )


def run(name: str, strategy, check, tally) -> Counter:
    counts = tally.setdefault(name, Counter())

    @FUZZ
    @given(strategy)
    def property_(case):
        check(case, counts)

    property_()
    return counts


def test_generated_layouts(tally):
    def check(case, counts):
        text, row = case
        memory_class = BASE["timeline"]["values"][row]["class"]
        text = text.replace(
            "memory_class: Ipu21Interleaved", f"memory_class: {memory_class}"
        )  # usually the value's own
        try:
            layout = layout_from_debug_text(text, f"$.timeline.values[{row}].layout")
        except InputError as exc:
            message = str(exc)
            assert message.startswith(f"at $.timeline.values[{row}].layout") and message.isprintable(), message
            counts["layout alone refused"] += 1
        else:
            assert isinstance(layout, Layout)
            counts["layout alone read"] += 1
        doc = copy.deepcopy(BASE)
        doc["timeline"]["values"][row]["layout"] = text
        load_outcome(json.dumps(doc).encode(), counts, edit_seed=row)

    # Row 0 is [1, 729, 588] F16 (no alias), row 3 value 36 (Linear in the file).
    counts = run("generated layouts in the profile", st.tuples(layouts(), st.sampled_from([0, 0, 1, 3])), check, tally)
    assert counts["valid"] and counts["error"] and counts["layout alone read"]


JSON_KEYS = st.sampled_from(["value", "axis", "partitions", "replicas", "other", "\\ud800", "\\u0061xis", ""])
JSON_NUMBERS = st.one_of(
    COUNTS, st.integers(min_value=-(10**30), max_value=10**30), st.sampled_from(["1e3", "1.5", "-0", "7" * 5000])
)


def json_text(depth: int = 0):
    leaves = st.one_of(
        JSON_NUMBERS.map(str), st.sampled_from(["true", "false", "null", '"84"', '"\\ud800"', '"\\udc00x"'])
    )
    if depth > 2:
        return leaves
    child = json_text(depth + 1)
    pairs = st.lists(st.tuples(JSON_KEYS, child), max_size=5)
    objects = pairs.map(lambda kv: "{" + ", ".join(f'"{k}": {v}' for k, v in kv) + "}")
    return st.one_of(leaves, objects, st.lists(child, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"))


SAMPLE_IDS = [v["id"] for v in json.loads(SAMPLE.read_bytes())["timeline"]["values"]]


@st.composite
def plausible_edit(draw) -> str:
    """An edit of a sample value, now and then with a stray, repeated or awkward part."""
    value = draw(st.sampled_from(SAMPLE_IDS))
    if draw(st.booleans()):
        fields = [("value", str(value)), ("replicas", str(draw(COUNTS)))]
    else:
        fields = [("value", str(value)), ("axis", str(draw(st.integers(0, 2)))), ("partitions", str(draw(COUNTS)))]
    twist = draw(mostly(st.just("none"), st.sampled_from(["stray", "repeat"]), 6))
    if twist == "stray":
        fields.append((draw(JSON_KEYS), draw(JSON_NUMBERS.map(str))))
    elif twist == "repeat":
        fields.insert(draw(st.integers(0, len(fields))), draw(st.sampled_from(fields)))
    return "{" + ", ".join(f'"{k}": {v}' for k, v in fields) + "}"


EDIT_SETS = mostly(
    st.lists(plausible_edit(), max_size=8).map(lambda items: "[" + ", ".join(items) + "]"),
    st.one_of(
        json_text(),
        st.lists(json_text(1), max_size=6).map(lambda items: "[" + ", ".join(items) + "]"),
        st.integers(1, 3000).map(lambda n: "[" * n + "]" * n),
        st.integers(1, 3000).map(lambda n: '[{"value": 84, "replicas": ' + "[" * n + "1" + "]" * n + "}]"),
    ),
    3,
)


@pytest.fixture(scope="module")
def sample_plan():
    return plan_profile(load_memory_profile(SAMPLE))


def test_generated_edit_sets(tally, sample_plan):
    arrays, base = sample_plan

    def check(text, counts):
        counts["cases"] += 1
        try:
            edits = parse_edit_set(text.encode("utf-8", "surrogatepass"), "fuzzed.edits.json")
        except InputError as exc:
            assert_input_error(exc, "fuzzed.edits.json")
            counts["error"] += 1
            return
        counts["valid"] += 1
        try:
            whole = apply_edits(arrays, base, edits)
        except EditError as exc:
            counts["edit set refused by the planner"] += 1
            assert "\n" not in str(exc)
            whole = None
        stepwise = apply_edits(arrays, base, [])
        try:
            for edit in edits:
                stepwise = extend_edits(arrays, stepwise, [edit])
        except EditError:
            stepwise = None  # a set valid only as a whole stops early, one at a time
        if whole is not None and stepwise is not None:
            assert (
                whole.plan.peaks == stepwise.plan.peaks
                and whole.plan.usage_standard.tolist() == stepwise.plan.usage_standard.tolist()
            )
            counts["applied both ways"] += 1

    counts = run("generated edit sets", EDIT_SETS, check, tally)
    assert counts["valid"] and counts["error"]
