"""loaders.profile_checks.check_ids (value ids unique, every root a value that is its own root)
against a loop over the values written here: on random id and root lists the first refusal is the
loop's (which value, which rule, what was found), and an accepted list gives each value's root row.
Then the whole loader on the sample with one id repeated and one root chained through an alias."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.loaders.profile_checks import check_ids
from tilescope.models.errors import InputError
from tilescope.samples import sample_path


def reference(ids: list[int], roots: list[int]) -> tuple[str, str] | list[int]:
    """The first broken rule as (path, found), else the root row of every value."""
    row_of: dict[int, int] = {}
    for row, vid in enumerate(ids):
        if vid in row_of:
            return f"$.timeline.values[{row}].id", f"{vid}, already used by values[{row_of[vid]}]"
        row_of[vid] = row
    for row, root in enumerate(roots):
        if root not in row_of:
            return f"$.timeline.values[{row}].root", str(root)
    for row, root in enumerate(roots):
        if roots[row_of[root]] != root:
            return f"$.timeline.values[{row}].root", f"{root}, whose root is {roots[row_of[root]]}"
    return [row_of[root] for root in roots]


@pytest.mark.parametrize("seed", range(5))
def test_check_ids_is_the_loops_answer(seed):
    rng = random.Random(seed)
    outcomes = {"ok": 0, "refused": 0}
    for _ in range(400):
        n = rng.randint(0, 8)
        ids = rng.sample(range(20), n) if rng.random() < 0.7 else [rng.randint(0, 9) for _ in range(n)]
        roots = [vid if rng.random() < 0.6 else rng.choice([*ids, 99] if ids else [99]) for vid in ids]
        expected = reference(ids, roots)
        try:
            order, root_rows = check_ids(np.array(ids, dtype=np.int64), np.array(roots, dtype=np.int64))
        except InputError as exc:
            outcomes["refused"] += 1
            assert isinstance(expected, tuple), (ids, roots, exc)
            assert (exc.path, exc.found) == expected
            continue
        outcomes["ok"] += 1
        assert root_rows.tolist() == expected, (ids, roots)
        assert [ids[i] for i in order.tolist()] == sorted(ids)
    assert min(outcomes.values()) >= 50


def test_the_loader_refuses_a_repeated_id_and_a_chained_root(tmp_path):
    raw = json.loads(sample_path().read_bytes())
    values = raw["timeline"]["values"]
    repeated = json.loads(json.dumps(raw))
    repeated["timeline"]["values"][5]["id"] = values[2]["id"]
    path = tmp_path / "repeated.memory_profile.json"
    path.write_text(json.dumps(repeated))
    with pytest.raises(InputError) as info:
        load_memory_profile(path)
    assert info.value.path == "$.timeline.values[5].id"
    assert info.value.found == f"{values[2]['id']}, already used by values[2]"
    alias = next(v for v in values if v["root"] != v["id"])  # an alias: its root is another value
    chained = json.loads(json.dumps(raw))
    victim = next(i for i, v in enumerate(values) if v["root"] == v["id"] and v["id"] != alias["root"])
    chained["timeline"]["values"][victim]["root"] = alias["id"]
    path = tmp_path / "chained.memory_profile.json"
    path.write_text(json.dumps(chained))
    with pytest.raises(InputError) as info:
        load_memory_profile(path)
    assert info.value.path == f"$.timeline.values[{victim}].root"
    assert info.value.found == f"{alias['id']}, whose root is {alias['root']}"
