"""derived.compare_match against plain Python written here: values paired by (name, k-th
occurrence of that name) from dictionaries, steps aligned on a longest common subsequence whose
length a textbook dynamic programme gives. Random programs with repeated names and operations,
plus the real sample against an edited copy of itself (its values' names repeat)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pytest

from tilescope.derived.compare_match import ALIGNED, SAME, align_steps, match_values
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.samples import sample_path


@dataclass
class Tables:
    """What the matching reads of a profile: its values' names and its steps' (source, operation)."""

    values: pa.Table
    steps: pa.Table

    @property
    def n_steps(self) -> int:
        return self.steps.num_rows


def tables(names: list[str], steps: list[tuple[int, str]]) -> Tables:
    return Tables(
        pa.table({"name": pa.array(names, pa.string())}),
        pa.table({"source": pa.array([s for s, _ in steps], pa.int64()), "operation": [o for _, o in steps]}),
    )


def expected_pairs(a: list[str], b: list[str]) -> dict[int, int]:
    where_b: dict[tuple[str, int], int] = {}
    seen: dict[str, int] = {}
    for row, name in enumerate(b):
        where_b[(name, seen.get(name, 0))] = row
        seen[name] = seen.get(name, 0) + 1
    pairs, seen = {}, {}
    for row, name in enumerate(a):
        k = seen.get(name, 0)
        seen[name] = k + 1
        if (name, k) in where_b:
            pairs[row] = where_b[(name, k)]
    return pairs


def lcs_length(a: list, b: list) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    return table[0][0]


def _program(rng: random.Random, n_values: int, n_steps: int) -> tuple[list[str], list[tuple[int, str]]]:
    names = [rng.choice(["w", "x", "operation 18 result 0", "bias", f"v{rng.randint(0, 9)}"]) for _ in range(n_values)]
    steps = [(rng.randint(0, 3), rng.choice(["Copy", "Matmul", "Add", "Repeat 2 boundary"])) for _ in range(n_steps)]
    return names, steps


@pytest.mark.parametrize("seed", range(40))
def test_values_pair_by_name_and_occurrence(seed):
    rng = random.Random(seed)
    names_a, _ = _program(rng, rng.randint(0, 30), 0)
    names_b = [n for n in names_a if rng.random() < 0.7] + [rng.choice(["w", "new"]) for _ in range(rng.randint(0, 5))]
    rng.shuffle(names_b)
    m = match_values(tables(names_a, []), tables(names_b, []))
    pairs = expected_pairs(names_a, names_b)
    both = (m.a_row >= 0) & (m.b_row >= 0)
    assert dict(zip(m.a_row[both].tolist(), m.b_row[both].tolist())) == pairs
    assert m.a_row[both].tolist() == sorted(pairs)  # pairs by A's row, then A-only, then B-only
    assert m.a_row[(m.a_row >= 0) & (m.b_row < 0)].tolist() == sorted(set(range(len(names_a))) - set(pairs))
    assert m.b_row[m.a_row < 0].tolist() == sorted(set(range(len(names_b))) - set(pairs.values()))
    for entry, (a, b) in enumerate(zip(m.a_row.tolist(), m.b_row.tolist())):
        assert m.name[entry] == (names_a[a] if a >= 0 else names_b[b])
        assert (a < 0 or m.entry_of_a_row[a] == entry) and (b < 0 or m.entry_of_b_row[b] == entry)


@pytest.mark.parametrize("seed", range(40))
def test_steps_align_on_a_longest_common_subsequence(seed):
    rng = random.Random(1000 + seed)
    _, steps_a = _program(rng, 0, rng.randint(0, 25))
    steps_b = [s for s in steps_a if rng.random() < 0.8]
    for _ in range(rng.randint(0, 4)):
        steps_b.insert(rng.randint(0, len(steps_b)), (9, "Inserted"))
    al = align_steps(tables([], steps_a), tables([], steps_b))
    assert al.mode == (SAME if steps_a == steps_b else ALIGNED)
    a, b = al.a_step.tolist(), al.b_step.tolist()
    # every step of each side once, in order, and each position has at least one side
    assert [s for s in a if s >= 0] == list(range(len(steps_a))) and [s for s in b if s >= 0] == list(
        range(len(steps_b))
    )
    assert all(x >= 0 or y >= 0 for x, y in zip(a, b))
    matched = [(x, y) for x, y in zip(a, b) if x >= 0 and y >= 0]
    assert all(steps_a[x] == steps_b[y] for x, y in matched)
    assert len(matched) == lcs_length(steps_a, steps_b)
    # in each run of unmatched positions, A's steps come before B's
    for k in range(1, len(a)):
        assert not (a[k] >= 0 and b[k] < 0 and a[k - 1] < 0 and b[k - 1] >= 0)
    assert al.b_of_a().tolist() == [dict(matched).get(x, -1) for x in range(len(steps_a))]


def test_the_sample_against_itself_with_a_step_removed():
    profile = load_memory_profile(sample_path())
    keys = list(zip(profile.steps.column("source").to_pylist(), profile.steps.column("operation").to_pylist()))
    names = profile.values.column("name").to_pylist()
    assert len(set(names)) < len(names)  # its names repeat: occurrences matter
    same = match_values(profile, profile)
    assert same.a_row.tolist() == same.b_row.tolist() == list(range(len(names)))
    cut = 40
    shorter = tables(names[::-1], keys[:cut] + keys[cut + 1 :])
    al = align_steps(profile, shorter)
    assert al.mode == ALIGNED and al.unmatched_a.tolist() == [cut] and al.unmatched_b.size == 0
    assert np.array_equal(al.b_of_a()[:cut], np.arange(cut)) and np.array_equal(
        al.b_of_a()[cut + 1 :], np.arange(cut, len(keys) - 1)
    )
    reversed_match = match_values(profile, shorter)
    assert dict(zip(reversed_match.a_row.tolist(), reversed_match.b_row.tolist())) == expected_pairs(names, names[::-1])
