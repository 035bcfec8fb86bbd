"""Sessions of one server process share a loaded profile (app.shared), and nothing else.

Two sessions opening the same file get the same tables, arrays and file plan (one load); a
changed file is loaded again; an upload or a search state is never shared; the entry goes when
the last session holding it lets go; one session's edits never reach the other, and the shared
arrays refuse in-place writes.
"""

from __future__ import annotations

import gc
import os
import shutil

import numpy as np
import pytest
from async_support import run_on_own_loop

from tilescope.app.shared import SharedProfiles
from tilescope.app.state import SessionState
from tilescope.derived.opening import Source, open_file
from tilescope.models.edits import TilingEdit
from tilescope.models.errors import InputError
from tilescope.planner.edits import current_tiling, valid_partition_counts


@pytest.fixture
def profile_copy(tmp_path, sample_path):
    path = tmp_path / "profile.memory_profile.json"
    shutil.copyfile(sample_path, path)
    return path


def session(shared: SharedProfiles, path, name: str) -> SessionState:
    state = SessionState()
    state.adopt(shared.open(Source.of_path(path, name)), name)
    return state


def test_two_sessions_share_one_load(profile_copy):
    shared = SharedProfiles()
    first = session(shared, profile_copy, "first.json")
    second = session(shared, profile_copy, "second.json")
    assert shared.loads == 1 and len(shared) == 1
    assert second.arrays is first.arrays
    assert second.base_plan is first.base_plan
    assert second.profile is first.profile
    assert (first.source, second.source) == ("first.json", "second.json")


def test_a_changed_file_is_loaded_again(profile_copy):
    shared = SharedProfiles()
    first = session(shared, profile_copy, "p.json")
    stat = profile_copy.stat()
    os.utime(profile_copy, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    second = session(shared, profile_copy, "p.json")
    assert shared.loads == 2
    assert second.arrays is not first.arrays
    assert np.array_equal(second.base_plan.usage_standard, first.base_plan.usage_standard)


def test_the_entry_goes_with_the_last_session(profile_copy):
    shared = SharedProfiles()
    first = session(shared, profile_copy, "p.json")
    second = session(shared, profile_copy, "p.json")
    del first
    gc.collect()
    assert len(shared) == 1  # the second session still shows it
    second.adopt(open_file(Source.of_bytes(profile_copy.read_bytes(), "upload.json")))  # it opens something else
    gc.collect()
    assert len(shared) == 0
    third = session(shared, profile_copy, "p.json")
    assert shared.loads == 2 and third.arrays is not second.arrays


def test_uploads_search_states_and_bad_files_are_not_shared(tmp_path, profile_copy):
    shared = SharedProfiles()
    SessionState().adopt(
        open_file(Source.of_bytes(profile_copy.read_bytes(), "upload.json"))
    )  # an upload never goes through it
    search = tmp_path / "search.json"
    shutil.copyfile(_search_sample(), search)
    assert shared.open(Source.of_path(search)).kind == "search_state"
    assert len(shared) == 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "timeline": []}')
    with pytest.raises(InputError):
        shared.open(Source.of_path(bad))
    assert len(shared) == 0


def _search_sample():
    from tilescope.synth import SAMPLE_PATH

    return next(SAMPLE_PATH.parent.glob("*search*.json"))


def test_one_sessions_edits_stay_its_own(profile_copy):
    shared = SharedProfiles()
    first = session(shared, profile_copy, "p.json")
    second = session(shared, profile_copy, "p.json")
    arrays = first.arrays
    row = next(
        r
        for r in range(arrays.n_values)
        if current_tiling(arrays, r, None).axes
        and arrays.roots[r] == arrays.value_ids[r]
        and len(valid_partition_counts(arrays, r, 0, None)) > 1
    )
    now = current_tiling(arrays, row, None).axes[0].partitions
    count = next(n for n in valid_partition_counts(arrays, row, 0, None) if n != now)
    before = second.plan.figures.bytes.copy()
    assert first.apply_edit(TilingEdit(value=int(arrays.value_ids[row]), axis=0, partitions=count)) is None
    assert first.plan is not first.base_plan and first.plan.figures.bytes[row] != before[row]
    assert second.plan is second.base_plan
    assert np.array_equal(second.plan.figures.bytes, before)
    with pytest.raises(ValueError, match="read-only"):
        second.base_plan.figures.bytes[row] = 0
    with pytest.raises(ValueError, match="read-only"):
        second.arrays.tile_counts[row] = 1


def test_apps_of_one_process_share_through_panels_cache(sample_path):
    """``build_app`` (what ``panel serve app`` runs per session) hands every session the
    process's one SharedProfiles, kept in ``pn.state.cache``."""

    import panel as pn

    from tilescope.app.main import build_app
    from tilescope.app.shared import CACHE_KEY

    pn.state.cache.pop(CACHE_KEY, None)
    try:
        apps = [build_app([str(sample_path)]) for _ in range(2)]
        for app in apps:
            run_on_own_loop(app.router.load_initial())
        assert apps[0].shared is apps[1].shared is pn.state.cache[CACHE_KEY]
        assert apps[0].shared.loads == 1
        assert apps[1].state.arrays is apps[0].state.arrays
        assert apps[1].state.base_plan.peaks.total == apps[0].state.base_plan.peaks.total > 0
    finally:
        pn.state.cache.pop(CACHE_KEY, None)


def test_sessions_opening_a_file_together_load_it_once(profile_copy, tmp_path):
    """Eight sessions asking at the same moment: one load, one shared profile; a bad file asked for
    together is refused to each."""
    import concurrent.futures
    import threading

    shared = SharedProfiles()
    start = threading.Barrier(8)

    def open_together(path, name):
        start.wait()
        return shared.open(Source.of_path(path, name))

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        opened = list(pool.map(lambda k: open_together(profile_copy, f"s{k}.json"), range(8)))
    assert shared.loads == 1 and all(o is opened[0] for o in opened)
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "timeline": 7}')
    start.reset()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        outcomes = [f.exception() for f in [pool.submit(open_together, bad, "bad.json") for _ in range(8)]]
    assert all(isinstance(e, InputError) and str(e).startswith("bad.json: at $") for e in outcomes)
