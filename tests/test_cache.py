"""The normalised-profile cache (loaders.cache) and the stderr progress display (tilescope.cli.progress)."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest

import tilescope.loaders.memory_profile as memory_profile
from tilescope.cli import progress as progress_module
from tilescope.loaders.cache import CACHE_ENV, content_key, load_profile_cached
from tilescope.models.errors import InputError
from tilescope.models.schemas import PER_TILE_TABLES, PROFILE_TABLES
from tilescope.synth import SAMPLE_PATH, write_synthetic_profile


@pytest.fixture
def sample(tmp_path) -> Path:
    path = tmp_path / "input" / "vit.memory_profile.json"
    path.parent.mkdir()
    shutil.copyfile(SAMPLE_PATH, path)
    return path


def entry_files(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.rglob("*.arrow"))


def forbid_json_decoding(monkeypatch):
    def refuse(data):
        raise AssertionError("the JSON was decoded although the cache holds this file")

    monkeypatch.setattr(memory_profile, "decode_profile", refuse)


def assert_same_tables(a, b):
    for name in PROFILE_TABLES:
        assert getattr(a, name).equals(getattr(b, name), check_metadata=True), name


def test_second_open_reads_the_cache_without_decoding_json(sample, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    before = sample.read_bytes(), sample.stat().st_mtime_ns
    first = load_profile_cached(sample, cache)
    assert [p.name.split(".")[1] for p in entry_files(cache)] == sorted(PROFILE_TABLES)

    forbid_json_decoding(monkeypatch)
    second = load_profile_cached(sample, cache)
    assert_same_tables(first, second)
    assert second.source == str(sample)
    with pytest.raises(AssertionError):  # the patch is live: a real load would have failed
        memory_profile.load_memory_profile(sample)
    assert (sample.read_bytes(), sample.stat().st_mtime_ns) == before  # the input is only read
    assert not list(sample.parent.glob("*.arrow"))


def test_cached_tables_equal_a_fresh_load(sample, tmp_path):
    fresh = memory_profile.load_memory_profile(sample)
    load_profile_cached(sample, tmp_path / "cache")
    assert_same_tables(load_profile_cached(sample, tmp_path / "cache"), fresh)
    # The header figures survive (independent expectation: the file's own fields).
    recorded = json.loads(sample.read_bytes())
    header = load_profile_cached(sample, tmp_path / "cache").header
    assert (
        header["peak_total"] == recorded["peak"]["total"] and header["total_peak_step"] == recorded["total_peak_step"]
    )


def test_modified_file_gets_a_new_key(sample, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    key = content_key(sample)
    load_profile_cached(sample, cache)
    data = json.loads(sample.read_bytes())
    data["scope"] = "finalist-6"
    sample.write_text(json.dumps(data))
    assert content_key(sample) != key
    changed = load_profile_cached(sample, cache)
    assert changed.header["scope"] == "finalist-6"
    assert len(entry_files(cache)) == 2 * len(PROFILE_TABLES)
    forbid_json_decoding(monkeypatch)
    assert load_profile_cached(sample, cache).header["scope"] == "finalist-6"


@pytest.mark.parametrize("damage", ["truncate", "garble", "delete", "other_table"])
def test_corrupt_entry_is_rebuilt(sample, tmp_path, damage):
    cache = tmp_path / "cache"
    good = load_profile_cached(sample, cache)
    target = next(p for p in entry_files(cache) if ".values." in p.name)
    if damage == "truncate":
        target.write_bytes(target.read_bytes()[:100])
    elif damage == "garble":
        target.write_bytes(b"not arrow at all" * 10)
    elif damage == "delete":
        target.unlink()
    else:  # a readable Arrow file holding the wrong table
        shutil.copyfile(next(p for p in entry_files(cache) if ".steps." in p.name), target)
    assert_same_tables(load_profile_cached(sample, cache), good)
    assert target.exists() and target.stat().st_size > 1000
    assert_same_tables(load_profile_cached(sample, cache), good)


def test_input_errors_stay_input_errors(tmp_path):
    with pytest.raises(InputError) as err:
        load_profile_cached(tmp_path / "missing.json", tmp_path / "cache")
    assert "missing.json" in str(err.value)
    bad = tmp_path / "bad.json"
    bad.write_bytes(SAMPLE_PATH.read_bytes()[:500])
    with pytest.raises(InputError) as err:
        load_profile_cached(bad, tmp_path / "cache")
    assert str(err.value).startswith(f"{bad}: at byte 500")
    assert not entry_files(tmp_path / "cache")


def test_unwritable_cache_still_loads(sample, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    profile = load_profile_cached(sample, blocker)
    assert profile.n_steps == len(json.loads(sample.read_bytes())["timeline"]["steps"])


def test_cache_folder_from_environment(sample, tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "from-env"))
    load_profile_cached(sample)
    assert len(entry_files(tmp_path / "from-env")) == len(PROFILE_TABLES)


def test_progress_goes_from_zero_to_one(sample, tmp_path):
    for _ in range(2):  # a miss, then a hit
        seen = []
        load_profile_cached(sample, tmp_path / "cache", progress=lambda stage, f: seen.append((stage, f)))
        fractions = [f for _, f in seen]
        assert fractions[0] < 0.2 and fractions[-1] == 1.0
        assert fractions == sorted(fractions)
    assert "reading cache" in [stage for stage, _ in seen]


def test_cached_large_synthetic_profile_round_trips(tmp_path, monkeypatch):
    path = write_synthetic_profile(tmp_path / "synthetic.json", 3, 4, gaps=True)
    fresh = memory_profile.load_memory_profile(path)
    load_profile_cached(path, tmp_path / "cache")
    forbid_json_decoding(monkeypatch)
    assert_same_tables(load_profile_cached(path, tmp_path / "cache"), fresh)


# --------------------------------------------------------------------------- progress display


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_is_rewritten_in_place_and_cleared_on_a_terminal(sample):
    stream = FakeTerminal()
    show = progress_module.progress_for(sample, stream=stream)
    assert show is not None
    memory_profile.load_memory_profile(sample, show)
    text = stream.getvalue()
    assert "\n" not in text and text.count("\r") > 3
    assert "loading vit.memory_profile.json: decoding JSON   0%" in text
    assert text.endswith("\r") and text.rstrip("\r").split("\r")[-1].strip() == ""  # cleared at the end


def test_progress_only_for_terminals_or_large_files(sample, monkeypatch):
    log = io.StringIO()
    assert progress_module.progress_for(sample, stream=log) is None  # small file, not a terminal
    assert progress_module.progress_for(sample, quiet=True, stream=FakeTerminal()) is None
    monkeypatch.setattr(progress_module, "LARGE_FILE_BYTES", os.path.getsize(sample) - 1)
    show = progress_module.progress_for(sample, stream=log)
    assert show is not None
    memory_profile.load_memory_profile(sample, show)
    text = log.getvalue()
    assert "\r" not in text and text.endswith("\n")  # in a log: whole lines, nothing rewritten
    lines = text.splitlines()
    stages = [line.split(": ", 1)[1].rsplit(" ", 3)[0] for line in lines]
    assert stages == ["decoding JSON", "values and layouts", "live lists", "steps", "done"]  # one line per stage
    assert all(line.startswith("loading vit.memory_profile.json: ") for line in lines)
    assert lines[-1].startswith("loading vit.memory_profile.json: done 100% (")


def forbid_reading_json(monkeypatch):
    """Fail any read of the file's JSON text: decoding it, reading it whole, or telling its kind,
    under whatever name any of the project's modules imported those functions."""
    import sys

    from tilescope.loaders.detect import detect_kind, kind_of_bytes
    from tilescope.loaders.json_input import InputBuffer, read_bytes

    forbid_json_decoding(monkeypatch)

    def refuse(*args, **kwargs):
        raise AssertionError("the file's JSON was read although the cache holds this file")

    originals = {id(f) for f in (read_bytes, kind_of_bytes, detect_kind)}
    for name, module in list(sys.modules.items()):
        if module is not None and name.split(".")[0] in ("loaders", "app", "tilescope"):
            for attribute, value in list(vars(module).items()):
                if id(value) in originals:
                    monkeypatch.setattr(module, attribute, refuse)
    monkeypatch.setattr(InputBuffer, "read", classmethod(refuse))


def test_app_reopen_skips_the_json_even_to_tell_its_kind(sample, tmp_path, monkeypatch):
    from tilescope.derived.opening import Source, open_file

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    first = open_file(Source.of_path(sample, "vit.json"))
    assert first.kind == "memory_profile"
    forbid_reading_json(monkeypatch)
    second = open_file(Source.of_path(sample, "vit.json"))
    assert second.kind == "memory_profile"
    assert_same_tables(first.profile, second.profile)


def test_cli_summary_and_normalise_reopen_from_the_cache(sample, tmp_path, monkeypatch, capsys):
    from tilescope import cli

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv("TILESCOPE_NO_CACHE", raising=False)
    assert cli.main(["summary", "--json", str(sample)]) == 0
    first = json.loads(capsys.readouterr().out)
    forbid_reading_json(monkeypatch)
    assert cli.main(["summary", "--json", str(sample)]) == 0
    assert json.loads(capsys.readouterr().out) == first
    recorded = json.loads(SAMPLE_PATH.read_bytes())
    assert first["peak"]["total"] == recorded["peak"]["total"] and first["values"] == len(
        recorded["timeline"]["values"]
    )
    assert cli.main(["normalise", str(sample), "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.stem for p in (tmp_path / "out").glob("*.parquet")) == sorted(
        t for t in PROFILE_TABLES if t not in PER_TILE_TABLES
    )  # (a v1 file: no per-tile tables)


def test_uncached_outputs_are_told_apart_and_bad_ones_located(tmp_path, monkeypatch):
    from tilescope.loaders.cache import open_planner_output

    search = next(SAMPLE_PATH.parent.glob("*.search_state.json"))
    kind, data = open_planner_output(search, tmp_path / "cache")
    assert kind == "search_state" and data == search.read_bytes()
    assert not entry_files(tmp_path / "cache")  # only profiles are cached
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "timeline": {"values": 3}}')
    with pytest.raises(InputError) as caught:
        open_planner_output(bad, tmp_path / "cache")
    assert caught.value.file == str(bad) and caught.value.path.startswith("$.timeline.values")
