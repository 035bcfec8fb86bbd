"""benchmarks.bench_compare_app on a small synthetic pair (no timing assertions: speed goals live in
the benchmark): every figure it prints is measured, and what it times really happened (B opened
and compared, the clicked row's value selected, each edit followed by the comparison)."""

from __future__ import annotations

import pytest

from benchmarks.bench_compare_app import Session, bench_interactions, bench_open, write_pair
from tilescope.synth import write_synthetic_profile


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench_compare_app")
    path_a = write_synthetic_profile(root / "a.memory_profile.json", 2, 2)
    path_c = write_synthetic_profile(root / "c.memory_profile.json", 2, 3)
    return root, path_a, write_pair(root, path_a, 3), path_c


def test_the_benchmark_measures_opening_selecting_and_editing(pair, capsys):
    root, path_a, path_b, path_c = pair
    session = Session(path_a, root)
    worker, loop, sent = session.open_compare(path_b.name)
    assert worker > 0 and loop > 0 and sent > 0
    compare = session.state.compare
    assert compare.b.opened.name == path_b.name and compare.comparison.steps.mode == "same"
    assert len(compare.changed_frame) >= 3  # the three edit sets changed values
    bench_open(session, path_c, "C", 2)
    assert session.state.compare.comparison.steps.mode == "aligned"
    bench_interactions(session, 4, 2)
    text = capsys.readouterr().out
    assert "steps aligned by LCS" in text and "worker thread" in text and "event loop" in text
    assert (
        "select a changed value ×4" in text
        and "apply an edit while comparing ×2" in text
        and "not comparing ×2" in text
    )
    assert session.state.compare is not None and session.state.compare.a is session.state.data
