"""Ten thousand mutated profiles, seeded, in-process (docs/formats.md §6).

Each case is the fuzz base (``fuzz_support.fuzz_base``: five values, three steps) changed by one
to three mutations of one kind: the JSON tree (a node replaced by an awkward value, deleted,
duplicated, swapped, an integer nudged to a bound), the bytes, the Debug text of a layout,
precision or operation (a ``\\u{D800}`` escape, a huge number, a token deleted or swapped), a key
repeated inside an object, the timeline emptied, or figures pushed towards 2^53 (huge shapes,
copies, every value live at every step). Every case must end as a valid profile that plans,
checks and takes its largest what-if edit with every figure exact and within 2^53, or as an
``InputError`` of one line naming the file and a place; anything else fails the test. The counts,
per kind, are written to the pytest output.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections import Counter

from fuzz_support import BASE, BASE_BYTES, load_outcome, report

CASES = 10_000
SEED = 18
AWKWARD_INTS = [
    0,
    1,
    -1,
    2,
    45,
    46,
    729,
    1472,
    2**31,
    2**31 + 1,
    2**52,
    2**53 - 1,
    2**53,
    2**53 + 1,
    2**63,
    2**64,
    10**400,
]
AWKWARD = [
    None,
    True,
    False,
    "",
    "\ud800",
    "a\udc00b",
    "\x1b[31m\n",
    "F16",
    "Ipu21Standard",
    "Layout {",
    [],
    {},
    [1, [2]],
    {"id": 1},
    1.5,
]
DEBUG_INSERTS = [
    '"\\u{D800}"',
    '"\\u{110000}"',
    '"\\u{41}"',
    "9" * 30,
    "9" * 5000,
    "{",
    "}",
    "(",
    ")",
    ",",
    ":",
    "Linear",
    "FromEnd(9)",
    "partitions: 0",
    "Some(",
    "None",
    '"',
    "\\",
]
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|\d+|\S')


def _paths(node, path=()):
    out = [path]
    if isinstance(node, dict):
        for key, child in node.items():
            out += _paths(child, (*path, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            out += _paths(child, (*path, index))
    return out


def _parent(doc, path):
    for key in path[:-1]:
        doc = doc[key]
    return doc


def tree(rng: random.Random) -> bytes:
    doc = copy.deepcopy(BASE)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(_paths(doc)[1:])
        parent, key = _parent(doc, path), path[-1]
        kind = rng.choice(["replace", "int", "nudge", "delete", "duplicate", "swap"])
        if kind == "replace":
            parent[key] = copy.deepcopy(rng.choice(AWKWARD))
        elif kind == "int":
            parent[key] = rng.choice(AWKWARD_INTS)
        elif kind == "nudge" and isinstance(parent[key], int) and not isinstance(parent[key], bool):
            parent[key] += rng.choice([-(2**53), -2, -1, 1, 2, 2**31, 2**53])
        elif kind == "delete":
            del parent[key]
        elif kind == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif kind == "swap" and isinstance(parent, list) and len(parent) > 1:
            other = rng.randrange(len(parent))
            parent[key], parent[other] = parent[other], parent[key]
    return json.dumps(doc, indent=1).encode()


def raw_bytes(rng: random.Random) -> bytes:
    data = BASE_BYTES
    for _ in range(rng.randint(1, 3)):
        at = rng.randint(0, len(data))
        kind = rng.choice(["delete", "insert", "replace", "truncate"])
        if kind == "delete":
            data = data[:at] + data[at + rng.randint(1, 16) :]
        elif kind == "insert":
            data = (
                data[:at]
                + rng.choice(
                    [
                        b",",
                        b"]",
                        b"}",
                        b'"',
                        b"-",
                        b"9" * 30,
                        b"\xff",
                        b"\xc3",
                        b"\\ud800",
                        b"[" * 300,
                        bytes([rng.randrange(256)]),
                    ]
                )
                + data[at:]
            )
        elif kind == "replace":
            data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1 :]
        else:
            data = data[:at]
    return data


def debug_text(rng: random.Random) -> bytes:
    doc = copy.deepcopy(BASE)
    fields = [(v, "layout") for v in doc["timeline"]["values"]] + [(v, "precision") for v in doc["timeline"]["values"]]
    fields += [(s, "operation") for s in doc["timeline"]["steps"]]
    holder, name = rng.choice(fields)
    text = holder[name]
    for _ in range(rng.randint(1, 3)):
        tokens = [m.span() for m in TOKEN.finditer(text)] or [(0, 0)]
        a, b = rng.choice(tokens)
        kind = rng.choice(["insert", "delete", "number", "swap"])
        if kind == "insert":
            text = text[:a] + rng.choice(DEBUG_INSERTS) + text[a:]
        elif kind == "delete":
            text = text[:a] + text[b:]
        elif kind == "number":
            numbers = [m.span() for m in re.finditer(r"\d+", text)]
            if numbers:
                a, b = rng.choice(numbers)
                text = text[:a] + str(rng.choice(AWKWARD_INTS[:14])) + text[b:]
        else:
            c, d = rng.choice(tokens)
            if (a, b) < (c, d) and b <= c:
                text = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    holder[name] = text
    return json.dumps(doc, indent=1).encode()


def repeated_key(rng: random.Random) -> bytes:
    """A key of some object given a second time (any value), at the text level."""
    text = BASE_BYTES.decode()
    keys = list(re.finditer(r'\n( *)"([a-z_]+)": ', text))
    m = rng.choice(keys)
    value = rng.choice(["1", "null", '"x"', "[]", "{}", str(2**53 + 1)])
    return (text[: m.start()] + f'\n{m.group(1)}"{m.group(2)}": {value},' + text[m.start() :]).encode()


def timeline(rng: random.Random) -> bytes:
    doc = copy.deepcopy(BASE)
    t = doc["timeline"]
    kind = rng.choice(["no values", "no steps", "one step", "empty lists", "nothing"])
    if kind in ("no values", "nothing"):
        t["values"] = []
    if kind in ("no steps", "nothing"):
        t["steps"] = []
    if kind == "one step":
        t["steps"] = t["steps"][:1]
    if kind in ("no values", "empty lists"):
        for s in t["steps"]:
            s["live"] = []
    return json.dumps(doc, indent=1).encode()


def figures(rng: random.Random) -> bytes:
    doc = copy.deepcopy(BASE)
    values = doc["timeline"]["values"]
    for _ in range(rng.randint(1, 3)):
        v = rng.choice(values)
        kind = rng.choice(["shape", "copies", "all live", "scratch"])
        if kind == "shape":
            v["shape"] = [rng.choice([1, 2**20, 2**26, 2**30]) for _ in v["shape"]]
        elif kind == "copies":
            v["copies"] = rng.choice([2, 2**20, 2**40, 2**53])
        elif kind == "all live":
            for s in doc["timeline"]["steps"]:
                s["live"] = [x["id"] for x in values]
        else:
            rng.choice(doc["timeline"]["steps"])["scratch"]["standard"] = rng.choice([2**40, 2**52, 2**53])
    return json.dumps(doc, indent=1).encode()


MUTATIONS = {
    "JSON tree": tree,
    "bytes": raw_bytes,
    "Debug text": debug_text,
    "repeated key": repeated_key,
    "timeline": timeline,
    "figures": figures,
}
WEIGHTS = {"JSON tree": 30, "bytes": 20, "Debug text": 25, "repeated key": 10, "timeline": 5, "figures": 10}


def test_ten_thousand_mutated_profiles(request):
    rng = random.Random(SEED)
    kinds = list(MUTATIONS)
    by_kind: dict[str, Counter] = {kind: Counter() for kind in kinds}
    for case in range(CASES):
        kind = rng.choices(kinds, weights=[WEIGHTS[k] for k in kinds])[0]
        data = MUTATIONS[kind](rng)
        load_outcome(data, by_kind[kind], edit_seed=case)
    total = sum(by_kind.values(), Counter())
    lines = [
        f"fuzz {kind}: {c['cases']} cases, {c['valid']} valid ({c['edited']} edited to their largest, {c['edit refused']} edits refused), "
        f"{c['error']} InputErrors"
        for kind, c in by_kind.items()
    ]
    lines.append(
        f"fuzz (seed {SEED}): {total['cases']} mutated profiles, {total['valid']} valid, {total['error']} InputErrors, 0 escapes"
    )
    report(request, lines)
    assert total["cases"] == CASES and total["valid"] + total["error"] == CASES
    assert all(c["valid"] and c["error"] for kind, c in by_kind.items() if kind != "repeated key")
    assert by_kind["repeated key"]["error"] == by_kind["repeated key"]["cases"]  # every repeated key is refused
