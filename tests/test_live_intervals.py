"""The vectorised live-list parser and interval builder against a plain-Python reading of the lists.

Expected intervals come from ``json.loads`` of each list and a loop over steps, independently of
``loaders.live_lists``. Chunks are made tiny so runs cross chunk boundaries many times.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from tilescope.loaders import live_lists as ll
from tilescope.models.errors import InputError


def expected_intervals(lists: list[list[int]], ids: list[int]) -> tuple[list[tuple[int, int, int]], list[int]]:
    """(value row, first, last) runs by row then first step, and distinct live values per step."""
    row_of = {v: r for r, v in enumerate(ids)}
    live_steps: dict[int, list[int]] = {}
    for step, ids_here in enumerate(lists):
        for value in sorted(set(ids_here)):
            live_steps.setdefault(row_of[value], []).append(step)
    runs = []
    for row in sorted(live_steps):
        steps = live_steps[row]
        first = prev = steps[0]
        for step in steps[1:]:
            if step != prev + 1:
                runs.append((row, first, prev))
                first = step
            prev = step
        runs.append((row, first, prev))
    return runs, [len(set(x)) for x in lists]


def run_loader(texts: list[bytes], ids: list[int]):
    ids_array = np.array(ids, dtype=np.int64)
    order = np.argsort(ids_array, kind="stable")
    result = ll.live_lists(texts, ids_array[order], order)
    got = list(
        zip(
            result.intervals.value_row.tolist(),
            result.intervals.first_step.tolist(),
            result.intervals.last_step.tolist(),
        )
    )
    return got, result.live_count.tolist()


@pytest.fixture(params=[64, 1 << 20], ids=["tiny-chunks", "default-chunks"])
def chunk_bytes(request, monkeypatch):
    monkeypatch.setattr(ll, "_CHUNK_BYTES", request.param)
    return request.param


@pytest.mark.parametrize("seed", range(6))
def test_random_lists_match_plain_python(seed, chunk_bytes):
    rng = random.Random(seed)
    # Ids of every width the parser handles: 1 digit up to 15 (beyond the 8-digit fast path).
    ids = rng.sample(range(0, 40), 12) + [rng.randrange(max(40, 10 ** (w - 1)), 10**w) for w in range(2, 16)]
    rng.shuffle(ids)  # values not stored in id order
    lists = []
    for _ in range(40):
        here = [v for v in ids if rng.random() < 0.4]
        if here and rng.random() < 0.3:
            here.append(rng.choice(here))  # a duplicate counts once
        rng.shuffle(here)  # lists need not be sorted
        lists.append(here)
    lists[7] = []  # an empty step
    pretty = seed % 2 == 1  # whitespace as a pretty-printer writes it
    texts = [
        json.dumps(x, indent=1 if pretty else None, separators=None if pretty else (",", ":")).encode() for x in lists
    ]
    assert run_loader(texts, ids) == expected_intervals(lists, ids)


def test_non_contiguous_range_gives_one_row_per_run(chunk_bytes):
    ids = [10, 11, 12]
    lists = [[10], [10, 11], [11], [10, 11], [10], [], [10, 12]]
    texts = [json.dumps(x).encode() for x in lists]
    got, counts = run_loader(texts, ids)
    # By hand: value 10 is live at steps 0-1, 3-4 and 6; 11 at 1-3; 12 at 6.
    assert got == [(0, 0, 1), (0, 3, 4), (0, 6, 6), (1, 1, 3), (2, 6, 6)]
    assert counts == [1, 2, 1, 2, 1, 0, 2]


def test_value_live_at_every_step_is_one_interval(chunk_bytes):
    lists = [[5, 3] for _ in range(300)]
    got, counts = run_loader([json.dumps(x).encode() for x in lists], [3, 5])
    assert got == [(0, 0, 299), (1, 0, 299)]
    assert counts == [2] * 300


@pytest.mark.parametrize(
    "text, fragment",
    [
        (b"[1,-2]", "'[1,-2]' (character 3 of the list)"),
        (b"[1,2.5]", "(character 4 of the list)"),
        (b'[1,"2"]', "(character 3 of the list)"),
        (b"[1,[2]]", "(character 3 of the list)"),
        (b"7", "'7' (character 0 of the list)"),
        (b"[1234567890123456]", "(character 1 of the list)"),
    ],
)
def test_bad_list_names_step_and_character(text, fragment):
    texts = [b"[1]", b"[1,2]", text]
    with pytest.raises(InputError) as err:
        run_loader(texts, [1, 2])
    message = str(err.value)
    assert "$.timeline.steps[2].live" in message and fragment in message


def test_unknown_id_names_step_and_entry(chunk_bytes):
    texts = [b"[1]", b"[1,2]", b"[2,1,99]"]
    with pytest.raises(InputError) as err:
        run_loader(texts, [1, 2])
    assert "$.timeline.steps[2].live[2]" in str(err.value) and "found 99" in str(err.value)


def test_sparse_ids_use_the_binary_search_path():
    ids = [5, 10**12, 3 * 10**14]  # too sparse for a lookup table
    lists = [[10**12], [5, 10**12], [3 * 10**14]]
    texts = [json.dumps(x).encode() for x in lists]
    assert run_loader(texts, ids) == expected_intervals(lists, ids)
