"""What the fuzz tests share: the small profile they mutate, the two outcomes a load may have, and
the report of their counts in pytest's output.

Whatever the bytes, loading a memory profile ends in exactly one of two ways: a valid
``MemoryProfile`` that the planner, ``check`` and a what-if edit can use, or an ``InputError``
whose message is one line naming the file and a location. Any other exception is an escape.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from tilescope.loaders.memory_profile import parse_memory_profile
from tilescope.models.edits import TilingEdit
from tilescope.models.errors import InputError
from tilescope.models.limits import MAX_BYTES
from tilescope.planner.check import check_plan
from tilescope.planner.edits import EditError, apply_edits
from tilescope.planner.model import plan_profile

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "fuzzed.memory_profile.json"


def fuzz_base() -> dict:
    """The corpus base (``tests/corpus/base_valid.json``, itself cut from the sample) cut further to
    five values and three steps: an interleaved BlockMajor value, an F8 Amp value, a Linear-tiled
    value (36), a root (4) and its alias (49), under Convert, Copy and Gemm steps."""
    base = json.loads((ROOT / "tests" / "corpus" / "base_valid.json").read_bytes())
    keep = {0, 1, 4, 36, 49}
    timeline = base["timeline"]
    timeline["values"] = [v for v in timeline["values"] if v["id"] in keep]
    timeline["steps"] = [dict(s, live=[i for i in s["live"] if i in keep]) for s in timeline["steps"][:3]]
    for name in ("total_peak_step", "standard_peak_step", "interleaved_peak_step"):
        base[name] = min(base[name], 2)
    return base


BASE = fuzz_base()
BASE_BYTES = json.dumps(BASE, indent=1).encode()


def assert_input_error(exc: InputError, source: str = SOURCE) -> None:
    message = str(exc)
    assert len(message.splitlines()) == 1 and "\n" not in message and message.isprintable(), message
    assert message.startswith(f"{source}: at "), message
    assert ": expected " in message, message


def load_outcome(data: bytes, counts: Counter, edit_seed: int | None = None) -> None:
    """Load ``data``; a valid load must also plan and check (what ``tilescope plan``/``check`` do),
    every figure within 2^53, and (with ``edit_seed``) take the largest edit of one value:
    one partition on every axis, its figures exact and still within 2^53."""
    counts["cases"] += 1
    try:
        profile = parse_memory_profile(data, SOURCE)
    except InputError as exc:
        assert_input_error(exc)
        counts["error"] += 1
        return
    arrays, plan = plan_profile(profile)
    check_plan(profile, arrays, plan)
    for figure in (plan.usage_standard, plan.usage_interleaved, plan.figures.bytes):
        assert figure.size == 0 or (int(figure.min()) >= 0 and int(figure.max()) <= MAX_BYTES)
    counts["valid"] += 1
    if edit_seed is None or not arrays.n_values:
        return
    row = edit_seed % arrays.n_values
    edits = [
        TilingEdit(int(arrays.value_ids[row]), axis=k, partitions=1)
        for k in range(int(arrays.axes_count[arrays.root_rows[row]]))
    ]
    try:
        whatif = apply_edits(arrays, plan, edits)
    except EditError:
        counts["edit refused"] += 1
        return
    usage = whatif.plan.usage_standard + whatif.plan.usage_interleaved
    assert usage.size == 0 or int(usage.max()) <= MAX_BYTES
    # Exact: the usage moved by exactly the edited values' byte changes over their live steps.
    moved = np.zeros(arrays.n_steps, dtype=object)
    for value, before, after in whatif.diff.changed_values:
        r = arrays.row_of_id[value]
        for i in arrays.intervals_of(r):
            moved[arrays.interval_first[i] : arrays.interval_last[i] + 1] += after - before
    assert (usage.astype(object) - (plan.usage_standard + plan.usage_interleaved).astype(object) == moved).all()
    counts["edited"] += 1


def report(request, lines: list[str]) -> None:
    """Write ``lines`` to pytest's terminal after the progress dots (shown without ``-s``)."""
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if reporter is None or capture is None:  # e.g. under xdist workers: print, shown with -s
        print("\n".join(lines))
        return
    with capture.global_and_fixture_disabled():  # teardown output is captured otherwise
        reporter.write("\n")
        for line in lines:
            reporter.write_line(line)
