"""Nothing lost: loading, and the ``check``/``plan``/``normalise`` commands, never modify their input.

Each test works on read-only (0o444) copies of the samples whose modification time is first set to
a fixed old value, and compares bytes, size, mode and mtime (in nanoseconds) before and after, and
the listing of the folder holding them. Tests run as root in CI, and root may write a 0o444 file,
so an audit hook also records every file the Python process opens: the input must be opened only
for reading (and opened at all: the hook is seen to work).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tilescope import cli
from tilescope.loaders.detect import detect_kind
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.loaders.search_state import load_search_state
from tilescope.models.errors import InputError
from tilescope.planner.model import plan_profile

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_data"
PROFILE = "vit_finalist5.memory_profile.json"
SEARCH_STATE = "flash_attention.search_state.json"
BAD = ROOT / "tests" / "corpus" / "layout_unbalanced.json"
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable
OLD_MTIME_NS = 1_600_000_000_123_456_789  # 2020-09-13: any rewrite would move it
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

# path → modes it was opened with while watched. Audit hooks cannot be removed; this one only
# records paths registered here by the `opens` fixture, and is added once per process.
_WATCHED: dict[str, list[str]] = {}


def _audit(event: str, args: tuple) -> None:
    if event != "open" or not _WATCHED:
        return
    path, mode, flags = args
    if isinstance(path, int):
        return
    key = os.path.realpath(os.fsdecode(path))
    if key in _WATCHED:
        writes = (mode is not None and any(c in mode for c in "wax+")) or bool((flags or 0) & _WRITE_FLAGS)
        _WATCHED[key].append("write" if writes else "read")


if not getattr(sys, "_tilescope_no_writes_hook", False):
    sys.addaudithook(_audit)
    sys._tilescope_no_writes_hook = True  # type: ignore[attr-defined]


@pytest.fixture
def opens():
    """``watch(path)`` starts recording opens of ``path``; the returned list fills as they happen."""

    def watch(path: Path) -> list[str]:
        return _WATCHED.setdefault(os.path.realpath(path), [])

    yield watch
    _WATCHED.clear()


def read_only_copy(source: Path, folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / source.name
    shutil.copyfile(source, path)
    os.utime(path, ns=(OLD_MTIME_NS, OLD_MTIME_NS))
    path.chmod(0o444)
    return path


def snapshot(path: Path) -> tuple:
    stat = path.stat()
    listing = sorted(p.name for p in path.parent.iterdir())
    return path.read_bytes(), stat.st_size, stat.st_mode & 0o777, stat.st_mtime_ns, listing


@pytest.fixture
def inputs(tmp_path):
    """Read-only copies of both samples in their own folder."""
    folder = tmp_path / "inputs"
    return {
        kind: read_only_copy(SAMPLES / name, folder) for kind, name in (("profile", PROFILE), ("search", SEARCH_STATE))
    }


def test_copies_start_as_described(inputs):
    for path in inputs.values():
        data, _, mode, mtime, _ = snapshot(path)
        assert mode == 0o444 and mtime == OLD_MTIME_NS
        assert data == (SAMPLES / path.name).read_bytes()


def test_loading_a_read_only_profile_changes_nothing(inputs, opens):
    path = inputs["profile"]
    before = snapshot(path)
    seen = opens(path)
    profile = load_memory_profile(path)
    _, plan = plan_profile(profile)
    assert profile.n_values == 176 and profile.n_steps == 116  # the sample's counts
    assert plan.peaks.total == 429904  # the sample's recorded peak.total
    assert detect_kind(path) == "memory_profile"
    assert seen and set(seen) == {"read"}
    assert snapshot(path) == before


def test_loading_a_read_only_search_state_changes_nothing(inputs, opens):
    path = inputs["search"]
    before = snapshot(path)
    seen = opens(path)
    load_search_state(path)
    assert detect_kind(path) == "search_state"
    assert seen and set(seen) == {"read"}
    assert snapshot(path) == before


def test_rejecting_a_read_only_bad_file_changes_nothing(tmp_path, opens):
    path = read_only_copy(BAD, tmp_path / "bad")
    before = snapshot(path)
    seen = opens(path)
    with pytest.raises(InputError):
        load_memory_profile(path)
    assert cli.main(["plan", str(path)]) == 2
    assert seen and set(seen) == {"read"}
    assert snapshot(path) == before


def test_cli_in_process_opens_input_only_to_read(inputs, opens, tmp_path, capsys):
    profile, search = inputs["profile"], inputs["search"]
    before = {p: snapshot(p) for p in (profile, search)}
    seen = [opens(profile), opens(search)]
    assert cli.main(["check", str(profile)]) == 0
    assert cli.main(["plan", "--json", str(profile)]) == 0
    assert cli.main(["normalise", str(profile), "--out", str(tmp_path / "profile_tables")]) == 0
    assert cli.main(["normalise", str(search), "--out", str(tmp_path / "search_tables")]) == 0
    capsys.readouterr()
    assert all(s and set(s) == {"read"} for s in seen), seen
    assert {p: snapshot(p) for p in (profile, search)} == before
    assert list((tmp_path / "profile_tables").glob("*.parquet")) and list(
        (tmp_path / "search_tables").glob("*.parquet")
    )


def test_cli_subprocesses_leave_inputs_untouched(inputs, tmp_path):
    profile, search = inputs["profile"], inputs["search"]
    before = {p: snapshot(p) for p in (profile, search)}
    commands = [
        ["check", str(profile)],
        ["plan", str(profile)],
        ["normalise", str(profile), "--out", str(tmp_path / "p")],
        ["normalise", str(search), "--out", str(tmp_path / "s")],
    ]
    runs = [
        subprocess.Popen(
            [PYTHON, "-m", "tilescope", *c], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for c in commands
    ]
    for command, run in zip(commands, runs):
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, (command, err)
    assert {p: snapshot(p) for p in (profile, search)} == before


def test_the_audit_hook_sees_writes(tmp_path, opens):
    """The hook that the tests above rely on does tell a write from a read."""
    path = tmp_path / "scratch.json"
    path.write_bytes(b"{}")
    seen = opens(path)
    path.read_bytes()
    with open(path, "ab"):
        pass
    os.close(os.open(path, os.O_RDWR))
    assert seen == ["read", "write", "write"]
