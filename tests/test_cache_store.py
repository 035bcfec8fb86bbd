"""The cache folder (loaders.cache_store): where it is, its size cap with least-recently-used
eviction, and ``tilescope cache list|clear``."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from tilescope import cli
from tilescope.loaders import cache_store
from tilescope.loaders.cache import load_profile_cached
from tilescope.models.errors import TilescopeError
from tilescope.models.schemas import PROFILE_TABLES, SCHEMA_VERSION
from tilescope.synth import SAMPLE_PATH


def variant(folder: Path, n: int) -> Path:
    """A copy of the sample with different bytes (so a different cache key), same size class."""
    data = json.loads(SAMPLE_PATH.read_bytes())
    data["scope"] = f"variant-{n}"
    path = folder / f"variant{n}.memory_profile.json"
    path.write_text(json.dumps(data))
    return path


def entry_keys(cache: Path) -> set[str]:
    return {e.key for e in cache_store.entries(cache)}


def key_of(path: Path) -> str:
    return f"{hashlib.sha256(path.read_bytes()).hexdigest()}-v{SCHEMA_VERSION}"


def test_default_folder_follows_xdg_and_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(cache_store.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if os.name == "posix" and os.uname().sysname != "Darwin":
        assert cache_store.default_cache_dir() == tmp_path / "xdg" / "tilescope"
    monkeypatch.setenv(cache_store.CACHE_ENV, str(tmp_path / "mine"))
    assert cache_store.default_cache_dir() == tmp_path / "mine"


def test_key_is_the_files_sha256(tmp_path):
    path = variant(tmp_path, 1)
    load_profile_cached(path, tmp_path / "cache")
    assert entry_keys(tmp_path / "cache") == {key_of(path)}  # what `sha256sum FILE` prints, and the schema version
    entry = cache_store.entries(tmp_path / "cache")[0]
    assert entry.source == str(path.resolve()) and entry.source_bytes == path.stat().st_size
    assert entry.size_bytes == sum(p.stat().st_size for p in entry.files)
    assert len(entry.files) == len(PROFILE_TABLES) + 1  # the tables and the entry's note


@pytest.mark.parametrize(
    "text, expected",
    [("0", 0), ("500", 500), ("2k", 2000), ("2KiB", 2048), ("1.5G", 1_500_000_000), ("4GiB", 4 * 2**30)],
)
def test_sizes(text, expected):
    assert cache_store.parse_size(text) == expected


def test_a_bad_cap_is_a_clear_error(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(cache_store.MAX_BYTES_ENV, "lots")
    with pytest.raises(TilescopeError, match="TILESCOPE_CACHE_MAX_BYTES: expected a size"):
        cache_store.max_cache_bytes()
    assert cli.main(["cache", "list"]) == 2
    assert capsys.readouterr().err.startswith("tilescope: TILESCOPE_CACHE_MAX_BYTES: expected a size in bytes")


def test_the_cap_evicts_the_least_recently_used(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    files = [variant(tmp_path, n) for n in range(4)]
    load_profile_cached(files[0], cache)
    one_entry = cache_store.entries(cache)[0].size_bytes
    # room for three entries of this size (the variants differ by a byte or two), not four
    monkeypatch.setenv(cache_store.MAX_BYTES_ENV, str(int(one_entry * 3.5)))
    for _n, path in enumerate(files[1:3], 1):
        time.sleep(0.02)  # distinct modification times
        load_profile_cached(path, cache)
    assert entry_keys(cache) == {key_of(p) for p in files[:3]}
    time.sleep(0.02)
    load_profile_cached(files[0], cache)  # a hit: entry 0 becomes the most recently used
    time.sleep(0.02)
    load_profile_cached(files[3], cache)  # over the cap: entry 1, now the least recently used, goes
    assert entry_keys(cache) == {key_of(files[0]), key_of(files[2]), key_of(files[3])}
    assert sum(e.size_bytes for e in cache_store.entries(cache)) <= one_entry * 3.5
    assert next(e.key for e in cache_store.entries(cache)) == key_of(files[3])  # most recent first


def test_an_entry_larger_than_the_cap_is_not_kept_and_a_zero_cap_keeps_nothing(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv(cache_store.MAX_BYTES_ENV, "1000")
    profile = load_profile_cached(variant(tmp_path, 1), cache)
    assert profile.n_values == len(json.loads(SAMPLE_PATH.read_bytes())["timeline"]["values"])
    assert cache_store.entries(cache) == []
    monkeypatch.setenv(cache_store.MAX_BYTES_ENV, "0")
    load_profile_cached(variant(tmp_path, 2), cache)
    assert not cache.exists() or cache_store.entries(cache) == []


def test_cache_list_and_clear(tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache"
    monkeypatch.setenv(cache_store.CACHE_ENV, str(cache))
    paths = [variant(tmp_path, n) for n in range(2)]
    for path in paths:
        load_profile_cached(path)
    old = cache / "aa" / f"{'a' * 40}-v2.values.arrow"  # an entry of the previous version (BLAKE2b keys)
    old.parent.mkdir(exist_ok=True)
    old.write_bytes(b"x" * 100)
    stranger = cache / "notes.txt"  # not ours: clear must leave it
    stranger.write_text("mine")
    (cache / "ab").mkdir(exist_ok=True)
    (cache / "ab" / "keep.arrow").write_text("not an entry name")

    assert cli.main(["cache", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["folder"] == str(cache) and listed["max_bytes"] == cache_store.DEFAULT_MAX_BYTES
    assert {e["source"] for e in listed["entries"]} == {str(p.resolve()) for p in paths} | {None}
    assert {e["sha256"] for e in listed["entries"]} == {hashlib.sha256(p.read_bytes()).hexdigest() for p in paths} | {
        None
    }
    on_disk = sum(
        f.stat().st_size for f in cache.rglob("*") if f.is_file() and f.name not in ("notes.txt", "keep.arrow")
    )
    assert listed["total_bytes"] == on_disk == sum(e["size_bytes"] for e in listed["entries"])

    assert cli.main(["cache"]) == 0  # list is the default
    text = capsys.readouterr().out
    assert text.startswith(f"{cache}: 3 entries, {on_disk:,} B (") and str(paths[0].resolve()) in text

    assert cli.main(["cache", "clear", "--json"]) == 0
    cleared = json.loads(capsys.readouterr().out)
    assert cleared == {"folder": str(cache), "removed_entries": 3, "freed_bytes": on_disk}
    assert not old.exists()
    assert cache_store.entries(cache) == []
    assert stranger.read_text() == "mine" and (cache / "ab" / "keep.arrow").exists()
    assert cli.main(["cache", "clear"]) == 0
    assert capsys.readouterr().out == f"{cache}: removed 0 entries, 0 B (0.0 KiB)\n"


def test_a_cleared_cache_is_rebuilt_on_the_next_open(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(cache_store.CACHE_ENV, str(tmp_path / "cache"))
    sample = tmp_path / "s.json"
    shutil.copyfile(SAMPLE_PATH, sample)
    assert cli.main(["summary", "--json", str(sample)]) == 0
    first = capsys.readouterr().out
    assert cli.main(["cache", "clear", "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    assert cli.main(["summary", "--json", str(sample)]) == 0
    assert capsys.readouterr().out == first
    assert entry_keys(tmp_path / "cache") == {key_of(sample)}
