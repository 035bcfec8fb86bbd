"""The timeline's first picture of a cached profile (derived.overview) and opening a profile in
stages (derived.opening.open_file(staged=...): the overview from the cache handed over first, then the
arrays and the plan built), and
the cache's remembered keys (loaders.cache_files: an unchanged file is not read again)."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import tilescope.derived.opened as opened_module
import tilescope.loaders.cache as cache
from tilescope.derived.opening import open_file
from tilescope.derived.overview import OVERVIEW_TABLE, PIXEL_COLUMNS, UsageOverview
from tilescope.loaders import cache_files
from tilescope.loaders.cache import CACHE_ENV, load_profile_cached
from tilescope.synth import SAMPLE_PATH, write_synthetic_profile


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def aged(path: Path) -> Path:
    """Wait until ``path`` is older than the racy window, so its key may be remembered."""
    time.sleep(max(0.0, os.stat(path).st_ctime + cache_files.RACY_SECONDS + 0.05 - time.time()))
    return path


@pytest.fixture(scope="module")
def long_profile(tmp_path_factory) -> Path:
    """A profile with more steps than the timeline draws points (PIXEL_COLUMNS × 8)."""
    path = tmp_path_factory.mktemp("long") / "long.memory_profile.json"
    write_synthetic_profile(path, 50, 24)
    return aged(path)


def recorded_series(path: Path) -> tuple[np.ndarray, np.ndarray, int]:
    """Each step's usage as the file records it (docs/formats.md §1), read with the stdlib: the
    planner reproduces these for the synthetic profiles and the sample."""
    raw = json.loads(path.read_bytes())
    steps = raw["timeline"]["steps"]
    std = np.array([s["usage"]["standard"] for s in steps], dtype=np.int64)
    intl = np.array([s["usage"]["interleaved"] for s in steps], dtype=np.int64)
    return std, intl, raw["peak"]["exchange_rows"]


def test_the_overview_keeps_every_columns_extremes_and_stays_small(long_profile, cache_dir):
    std, intl, exchange = recorded_series(long_profile)
    overview = open_file(long_profile).overview
    n = std.size
    assert overview.n_steps == n > PIXEL_COLUMNS * 8
    assert overview.step.size <= PIXEL_COLUMNS * 8
    assert np.all(np.diff(overview.step) > 0)
    assert np.array_equal(overview.standard, std[overview.step]) and np.array_equal(
        overview.interleaved, intl[overview.step]
    )
    # brute force: in every pixel column the highest and lowest total (and standard, interleaved) is kept
    kept = set(overview.step.tolist())
    column = np.arange(n) * PIXEL_COLUMNS // n
    for line in (std + intl + exchange, std + exchange, intl):
        for c in range(PIXEL_COLUMNS):
            inside = np.flatnonzero(column == c)
            values = line[inside]
            assert kept & set(inside[values == values.max()].tolist()), c
            assert kept & set(inside[values == values.min()].tolist()), c
    total = std + intl
    assert overview.peaks.total == int(total.max()) + exchange and overview.peaks.total_step == int(np.argmax(total))
    assert (
        overview.operation[0]
        == json.loads(long_profile.read_bytes())["timeline"]["steps"][int(overview.step[0])]["operation"]
    )


@pytest.mark.parametrize("which", ["sample", "long"])
def test_the_timeline_draws_the_cached_overview_for_the_whole_profile(which, long_profile, tmp_path, cache_dir):
    """What the timeline sends for the whole profile of a freshly opened file is what the cache's
    overview holds, point for point: the first chart drawn from the overview alone is the same."""
    from tilescope.app.state import SessionState
    from tilescope.app.views.timeline import TimelineView

    path = long_profile if which == "long" else aged(Path(shutil.copyfile(SAMPLE_PATH, tmp_path / "vit.json")))
    open_file(path)  # plans it: writes the overview beside the entry
    first = []
    staged = open_file(path, staged=first.append)
    assert first == [staged]  # the overview came first
    overview = staged.overview
    state = SessionState()
    state.adopt(staged)
    timeline = TimelineView(state=state)
    sent = timeline.usage_source.data
    assert np.array_equal(sent["step"], overview.step)
    assert np.array_equal(sent["std"], overview.standard) and np.array_equal(sent["intl"], overview.interleaved)
    assert list(sent["source"]) == list(overview.source) and list(sent["count"]) == list(overview.execution_count)
    near = timeline.near_peak_source.data
    assert np.array_equal(near["left"], overview.near_first - 0.5)
    assert np.array_equal(timeline.loop_source.data["left"], overview.loop_first - 0.5)
    assert np.array_equal(timeline.repeat_source.data["x"], overview.repeat_steps)
    assert state.selected_step == overview.peaks.total_step == staged.plan.peaks.total_step


def test_a_staged_reopen_returns_before_the_plan_is_built(long_profile, cache_dir, monkeypatch):
    first = open_file(long_profile)
    (overview_file,) = cache_dir.rglob(f"*.{OVERVIEW_TABLE}.arrow")
    release = threading.Event()
    real_plan = opened_module.plan_profile

    def slow_plan(profile):
        assert release.wait(60)
        return real_plan(profile)

    monkeypatch.setattr(opened_module, "plan_profile", slow_plan)
    shown, handed = [], threading.Event()

    def hand_over(opened) -> None:
        shown.append(opened)
        handed.set()

    opening = threading.Thread(target=lambda: shown.append(open_file(long_profile, staged=hand_over)))
    opening.start()
    assert handed.wait(60)
    staged = shown[0]  # handed over while its plan waits
    assert not staged.ready  # the plan is waiting: the overview did not
    assert staged.overview.same_as(first.overview)
    assert staged.total_peak_step == first.plan.peaks.total_step
    release.set()
    opening.join(60)
    assert shown[1] is staged and staged.ready
    assert np.array_equal(staged.plan.usage_standard, first.plan.usage_standard)
    assert overview_file.exists()


def test_without_a_usable_overview_the_open_builds_everything_and_writes_one(long_profile, cache_dir):
    open_file(long_profile)
    (overview_file,) = cache_dir.rglob(f"*.{OVERVIEW_TABLE}.arrow")
    good = overview_file.read_bytes()
    for damage in (lambda: overview_file.write_bytes(good[: len(good) // 2]), overview_file.unlink):
        damage()
        shown = []
        open_file(long_profile, staged=shown.append)
        assert shown == []  # nothing to draw first: built before returning
        assert overview_file.read_bytes() == good  # and written again
    # one written by another version of tilescope (or of the overview) is not trusted either
    table = UsageOverview.from_table(
        cache.CacheEntry(cache_dir, overview_file.name.split(".")[0]).read_table(OVERVIEW_TABLE)
    ).to_table()
    header = json.loads(table.schema.metadata[b"tilescope.overview"])
    foreign = table.replace_schema_metadata({"tilescope.overview": json.dumps({**header, "overview_version": -1})})
    assert UsageOverview.from_table(foreign) is None


def test_an_unchanged_file_reopens_without_being_read_a_changed_one_is_hashed(tmp_path, cache_dir, monkeypatch):
    path = aged(Path(shutil.copyfile(SAMPLE_PATH, tmp_path / "vit.json")))
    first = load_profile_cached(path)
    assert cache_files.record_path(cache_dir, os.path.realpath(path)).exists()

    def refuse(*args, **kwargs):
        raise AssertionError("the file was hashed although its key is remembered")

    monkeypatch.setattr(cache, "file_sha256", refuse)
    again = load_profile_cached(path)
    assert again.content_sha256 == first.content_sha256
    monkeypatch.undo()
    monkeypatch.setenv(CACHE_ENV, str(cache_dir))

    # Same size, same modification time put back: the change time still moved, so it is hashed.
    stat = os.stat(path)
    text = path.read_bytes()
    assert b'"scope":"finalist-5"' in text.replace(b": ", b":")
    path.write_bytes(text.replace(b"finalist-5", b"finalist-6", 1))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert os.stat(path).st_size == stat.st_size and os.stat(path).st_mtime_ns == stat.st_mtime_ns
    changed = load_profile_cached(path)
    assert changed.header["scope"] == "finalist-6"
    assert changed.content_sha256 != first.content_sha256


def test_a_file_written_just_now_is_not_remembered(tmp_path, cache_dir):
    """Within the racy window a change in the same clock tick could keep every stat field."""
    path = Path(shutil.copyfile(SAMPLE_PATH, tmp_path / "fresh.json"))
    load_profile_cached(path)
    load_profile_cached(path)
    assert not cache_files.record_path(cache_dir, os.path.realpath(path)).exists()


def test_clearing_the_cache_forgets_the_remembered_keys(tmp_path, cache_dir):
    from tilescope.loaders import cache_store

    path = aged(Path(shutil.copyfile(SAMPLE_PATH, tmp_path / "vit.json")))
    open_file(path)
    record = cache_files.record_path(cache_dir, os.path.realpath(path))
    assert record.exists() and list(cache_dir.rglob(f"*.{OVERVIEW_TABLE}.arrow"))
    assert cache_store.clear(cache_dir)[0] == 1
    assert not record.exists() and not list(cache_dir.rglob("*.arrow"))
