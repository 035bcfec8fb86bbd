"""Property-based fuzzing of the loaders (hypothesis).

Whatever the bytes, loading a memory profile ends in exactly one of two ways: a valid
``MemoryProfile`` that the planner and ``check`` can use, or an ``InputError`` whose message is one
line naming the file and a location (``fuzz_support``). Any other exception fails the test. Debug
text parses, or raises ``DebugSyntaxError`` at a position inside the text; a rendered Debug value parses back to
itself.

Profiles are mutated from a small cut of the sample (``fuzz_support.fuzz_base``) so that each case
loads in milliseconds; Debug strings are the sample's own layouts, precisions and operations.
The number of cases run is written to the terminal at the end of the module.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from fuzz_support import BASE, BASE_BYTES, SOURCE, load_outcome, report
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
from tilescope.loaders.layouts import layout_from_debug_text, precision_from_text
from tilescope.loaders.memory_profile import parse_memory_profile
from tilescope.models.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = json.loads((ROOT / "sample_data" / "vit_finalist5.memory_profile.json").read_bytes())
EXAMPLES = 300
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,  # seeded: the same cases every run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


# Debug strings of the sample: every distinct layout, precision and operation.
LAYOUTS = sorted({v["layout"] for v in SAMPLE["timeline"]["values"]})
PRECISIONS = sorted({v["precision"] for v in SAMPLE["timeline"]["values"]})
OPERATIONS = sorted({s["operation"] for s in SAMPLE["timeline"]["steps"]})
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|-?\d+(?:\.\d+)?|\S')


@pytest.fixture(scope="module")
def tally(request):
    """Counts per property; written as one line per property and a total when the module ends."""
    counts: dict[str, Counter] = {}
    yield counts
    lines = []
    for name, c in counts.items():
        extra = "".join(f", {n} {key}" for key, n in sorted(c.items()) if key not in ("cases", "valid", "error"))
        lines.append(f"fuzz {name}: {c['cases']} cases, {c['valid']} valid, {c['error']} errors{extra}")
    total = sum((c for c in counts.values()), Counter())
    lines.append(
        f"fuzz: {total['cases']} cases, {total['valid']} valid loads/parses, {total['error']} InputErrors/DebugSyntaxErrors"
    )
    report(request, lines)


# ----------------------------------------------------------------------------- outcomes


def parse_outcome(text: str, counts: Counter, parse) -> object | None:
    counts["cases"] += 1
    try:
        value = parse(text)
    except DebugSyntaxError as exc:
        assert 0 <= exc.position <= len(text), (exc.position, len(text))
        assert exc.snippet == text[max(0, exc.position - 20) : exc.position + 20].replace("\n", "\\n")
        counts["error"] += 1
        return None
    counts["valid"] += 1
    return value


# ----------------------------------------------------------------------------- strategies: Debug text

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True).filter(lambda n: n not in ("true", "false"))
SCALARS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.text(max_size=12),
    NAMES.map(Unit),
)


def _compound(children):
    return st.one_of(
        st.lists(children, max_size=4),
        st.builds(Tuple, NAMES, st.lists(children, max_size=3)),
        st.builds(Struct, NAMES, st.dictionaries(NAMES, children, max_size=3)),
        st.builds(Map, st.lists(st.tuples(children, children), max_size=3)),
        # An empty set prints as `{}`, which Rust and we read as an empty map.
        st.builds(Set, st.lists(children, min_size=1, max_size=3)),
    )


DEBUG_VALUES = st.recursive(SCALARS, _compound, max_leaves=15)
# In a space-separated sequence, `Unit {…}` would read as one struct: no top-level braces there.
SEQUENCE_ITEMS = DEBUG_VALUES.filter(lambda v: not isinstance(v, (Map, Set)))

EDIT_CHARS = st.one_of(st.sampled_from(list('{}()[],: "\\-0123456789_aZ\n')), st.characters())


@st.composite
def mutated_text(draw, texts: list[str]) -> str:
    """A sample string with 1–3 edits: delete, insert, replace, truncate or swap two tokens."""
    text = draw(st.sampled_from(texts))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["delete", "insert", "replace", "truncate", "swap"]))
        at = draw(st.integers(0, len(text)))
        if kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 8)) :]
        elif kind == "insert":
            text = text[:at] + draw(st.text(EDIT_CHARS, min_size=1, max_size=4)) + text[at:]
        elif kind == "replace" and at < len(text):
            text = text[:at] + draw(EDIT_CHARS) + text[at + 1 :]
        elif kind == "truncate":
            text = text[:at]
        elif kind == "swap":
            tokens = [m.span() for m in TOKEN.finditer(text)]
            if len(tokens) >= 2:
                i, j = sorted(draw(st.lists(st.integers(0, len(tokens) - 1), min_size=2, max_size=2, unique=True)))
                (a, b), (c, d) = tokens[i], tokens[j]
                text = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    return text


# ----------------------------------------------------------------------------- strategies: profiles


def _node_paths(node, path=()) -> list[tuple]:
    out = [path]
    if isinstance(node, dict):
        for key, child in node.items():
            out += _node_paths(child, (*path, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            out += _node_paths(child, (*path, index))
    return out


NODE_PATHS = _node_paths(BASE)[1:]
STRING_PATHS = [p for p in NODE_PATHS if p[-1] in ("layout", "precision", "operation")]
INTERESTING_INTS = [0, 1, -1, 2, 3, 45, 46, 99, 1472, 2**31, 2**31 + 1, 2**53, 2**53 + 1, 2**63, 2**64, -(2**63) - 1]
JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.sampled_from(INTERESTING_INTS),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=10),
        st.sampled_from(["F16", "F32", "Ipu21Standard", "Ipu21Interleaved", "Linear", "", "Layout {"]),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)


def _parent(doc, path):
    node = doc
    for key in path[:-1]:
        node = node[key]
    return node


@st.composite
def tree_mutation(draw) -> bytes:
    """The fuzz base with 1–3 JSON-level changes: a node replaced (by any JSON value or a nearby
    integer), deleted, duplicated in its list, or two list items swapped."""
    doc = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 3))):
        paths = _node_paths(doc)[1:]
        path = draw(st.sampled_from(paths))
        parent, key = _parent(doc, path), path[-1]
        kind = draw(st.sampled_from(["replace", "nudge", "delete", "duplicate", "swap"]))
        if kind == "replace":
            parent[key] = draw(JSON_VALUES)
        elif kind == "nudge" and isinstance(parent[key], int) and not isinstance(parent[key], bool):
            parent[key] = parent[key] + draw(st.sampled_from([-(2**53), -2, -1, 1, 2, 2**31, 2**53]))
        elif kind == "delete":
            del parent[key]
        elif kind == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif kind == "swap" and isinstance(parent, list) and len(parent) > 1:
            other = draw(st.integers(0, len(parent) - 1))
            parent[key], parent[other] = parent[other], parent[key]
    return json.dumps(doc, indent=1).encode()


@st.composite
def byte_mutation(draw) -> bytes:
    """The fuzz base's bytes with 1–3 deletions, insertions, replacements or a truncation."""
    data = BASE_BYTES
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["delete", "insert", "replace", "truncate"]))
        if kind == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 16)) :]
        elif kind == "insert":
            data = (
                data[:at]
                + draw(
                    st.binary(min_size=1, max_size=4)
                    | st.sampled_from([b",", b"]", b"}", b'"', b"-", b"9" * 30, b"\xff", b"\xc3"])
                )
                + data[at:]
            )
        elif kind == "replace":
            data = data[:at] + draw(st.binary(min_size=1, max_size=2)) + data[at + 1 :]
        else:
            data = data[:at]
    return data


@st.composite
def debug_field_mutation(draw) -> bytes:
    """The fuzz base with one layout, precision or operation string edited as in ``mutated_text``."""
    doc = copy.deepcopy(BASE)
    path = draw(st.sampled_from(STRING_PATHS))
    parent = _parent(doc, path)
    parent[path[-1]] = draw(mutated_text([parent[path[-1]]]))
    return json.dumps(doc, indent=1).encode()


# ----------------------------------------------------------------------------- properties


def _run(property_name: str, strategy, check, tally) -> Counter:
    counts = tally.setdefault(property_name, Counter())

    @FUZZ
    @given(strategy)
    def run(case):
        check(case, counts)

    run()
    return counts


def test_fuzz_base_loads():
    profile = parse_memory_profile(BASE_BYTES, SOURCE)
    assert profile.n_values == 5 and profile.n_steps == 3


def test_debug_round_trip(tally):
    def check(value, counts):
        text = render(value)
        parsed = parse_outcome(text, counts, parse_debug)
        assert parsed == value, text
        assert render(parsed) == text  # also tells 1 from true and 1 from 1.0

    counts = _run("debug round trip", DEBUG_VALUES, check, tally)
    assert counts["error"] == 0


def test_debug_sequence_round_trip(tally):
    def check(values, counts):
        text = " ".join(render(v) for v in values)
        parsed = parse_outcome(text, counts, parse_debug_sequence)
        assert parsed == values, text

    counts = _run("debug sequence round trip", st.lists(SEQUENCE_ITEMS, min_size=1, max_size=4), check, tally)
    assert counts["error"] == 0


def test_mutated_debug_strings(tally):
    """Edited sample strings: the parser answers with a value or a located syntax error, and the
    layout/precision readers with a model or an InputError at the given path."""

    def check(case, counts):
        kind, text = case
        parse = parse_debug_sequence if kind == "operation" else parse_debug
        parse_outcome(text, counts, parse)
        if kind == "operation":
            return
        read = layout_from_debug_text if kind == "layout" else precision_from_text
        try:
            read(text, "$.timeline.values[0].layout")
        except InputError as exc:
            message = str(exc)
            assert message.startswith("at $.timeline.values[0].layout") and "\n" not in message, message
            counts[f"{kind} readings → InputError"] += 1

    strategy = st.one_of(
        st.tuples(st.just("layout"), mutated_text(LAYOUTS)),
        st.tuples(st.just("precision"), mutated_text(PRECISIONS)),
        st.tuples(st.just("operation"), mutated_text(OPERATIONS)),
    )
    counts = _run("debug text mutations", strategy, check, tally)
    assert counts["valid"] and counts["error"]


def test_profile_tree_mutations(tally):
    counts = _run("profile JSON mutations", tree_mutation(), load_outcome, tally)
    assert counts["valid"] and counts["error"]


def test_profile_byte_mutations(tally):
    counts = _run("profile byte mutations", byte_mutation(), load_outcome, tally)
    assert counts["error"]


def test_profile_debug_field_mutations(tally):
    counts = _run("profile Debug-field mutations", debug_field_mutation(), load_outcome, tally)
    assert counts["valid"] and counts["error"]
