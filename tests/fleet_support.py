"""What the fleet tests share: a tree of planner outputs, the compiler's files under the names it
gives them, an external Dask cluster run as real ``dask scheduler`` / ``dask worker`` subprocesses
on 127.0.0.1, and reading a dataset back with pyarrow alone (the independent reader)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import profile_generator as gen
import pyarrow.dataset as pads
import pytest
from browser_support import REPO_ROOT, _die_with_parent
from placement_profile_gen import placement_profile

from tilescope import cli
from tilescope.synth import write_synthetic_profile

SAMPLE_DIR = REPO_ROOT / "sample_data"
PROFILE_SAMPLE = SAMPLE_DIR / "vit_finalist5.memory_profile.json"
SEARCH_SAMPLE = SAMPLE_DIR / "flash_attention.search_state.json"
TABLES = (
    "profiles",
    "profile_headers",
    "values",
    "axes",
    "steps",
    "live_intervals",
    "mismatches",
    "value_tiles",
    "step_tiles",
)
VOLATILE = ("normalised_at", "seconds", "batch_id", "fragment")  # differ between two runs over the same files

# Synthetic profiles of several sizes in nested folders: path → (blocks, layers, gaps).
SYNTHETIC = {
    "nightly/2024-05-01/model_a/finalist1.memory_profile.json": (1, 2, False),
    "nightly/2024-05-01/model_b.memory_profile.json": (2, 3, False),
    "nightly/2024-05-02/model_a/finalist1.memory_profile.json": (3, 2, True),
    "nightly/2024-05-02/deep/er/model_c.memory_profile.json": (5, 4, False),
}
SAMPLE_COPY = "samples/vit_finalist5.memory_profile.json"
EDITED = "samples/vit_peak_off.memory_profile.json"  # recorded peak.standard one byte too high
SEARCH_STATE = "samples/flash_attention.search_state.json"
BROKEN = "broken/truncated.memory_profile.json"
NOT_A_PLANNER_OUTPUT = "notes/edits.json"


def build_tree(root: Path) -> dict[str, str]:
    """Write the tree; returns each planner output's path → the kind it is ("broken" for the
    file that does not load)."""
    kinds = {}
    for rel, (blocks, layers, gaps) in SYNTHETIC.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        write_synthetic_profile(root / rel, blocks, layers, gaps=gaps)
        kinds[rel] = "memory_profile"
    (root / "samples").mkdir(parents=True, exist_ok=True)
    shutil.copy(PROFILE_SAMPLE, root / SAMPLE_COPY)
    shutil.copy(SEARCH_SAMPLE, root / SEARCH_STATE)
    edited = json.loads(PROFILE_SAMPLE.read_text())
    edited["peak"]["standard"] += 1
    (root / EDITED).write_text(json.dumps(edited))
    kinds.update({SAMPLE_COPY: "memory_profile", EDITED: "memory_profile", SEARCH_STATE: "search_state"})
    (root / BROKEN).parent.mkdir(parents=True, exist_ok=True)
    (root / BROKEN).write_bytes(PROFILE_SAMPLE.read_bytes()[:50_000])
    kinds[BROKEN] = "broken"
    (root / NOT_A_PLANNER_OUTPUT).parent.mkdir(parents=True, exist_ok=True)
    (root / NOT_A_PLANNER_OUTPUT).write_text("[]")
    return kinds


# A placement dump as the compiler writes it (docs/compiler-formats.md §4), written with its keys sorted.
PLACEMENT_DUMP = {
    "assigned_root_spans": {},
    "host_scratch_range": [327680, 360448],
    "interleaved_offset": 0,
    "placed": False,
    "ranges": [[327680, 360448]],
    "region0_element_bytes": 16384,
    "region1_element_bytes": 32768,
    "region_boundary": 524288,
    "requests": [
        {
            "class": "Ipu21Standard",
            "region1_stride": None,
            "lifetime": {"first": 1, "last": 3, "seen": 1},
            "bytes": 64,
            "alignment": 8,
            "assignments": [[1, 0]],
            "conflicts": [],
        }
    ],
    "tile": 3,
    "version": 1,
}
COMPILER_HTML = "finalist-5-12345-0001.html"  # the HTML copy the compiler writes beside a profile


def write_compiler_outputs(root: Path, folders: dict[str, str] | None = None) -> list[str]:
    """Each kind of planner output the compiler writes, under the name it gives it: memory profiles
    ``{scope}-{pid}-{serial}.json`` (the v1 sample and a generated v3 one), a placement profile
    ``placement-{pid}.json``, a placement dump ``tile-{tile}-{hash}.json``; and at ``root`` the HTML
    copy of the first profile (not a planner output). Each goes in ``root / folders[name]`` if named
    there; returns the planner outputs' paths under ``root``, in that order."""
    writers = {
        "finalist-5-12345-0001.json": lambda path: shutil.copy(PROFILE_SAMPLE, path),
        "finalist-6-12345-0002.json": lambda path: gen.write(gen.program_scaled(2), 3, path),
        "placement-12345.json": lambda path: path.write_text(json.dumps(placement_profile(tiles=2, seed=3))),
        "tile-3-0123456789abcdef.json": lambda path: path.write_text(
            json.dumps(PLACEMENT_DUMP, indent=2, sort_keys=True)
        ),
    }
    written = []
    for name, write in writers.items():
        rel = f"{folders[name]}/{name}" if folders and name in folders else name
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        write(root / rel)
        written.append(rel)
    (root / COMPILER_HTML).write_text("<!DOCTYPE html><html><script>{}</script></html>")
    return written


def read_table(dataset: Path, table: str) -> list[dict]:
    """Every row of one table, read with pyarrow's dataset reader, in a stable order."""
    rows = pads.dataset(dataset / table, format="parquet").to_table().to_pylist()
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def dataset_content(dataset: Path) -> dict[str, list[dict]]:
    """The whole dataset without the columns that differ between runs."""
    out = {}
    for table in TABLES:
        rows = [{k: v for k, v in r.items() if k not in VOLATILE} for r in read_table(dataset, table)]
        out[table] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))
    return out


def run_cli(*args: str) -> tuple[int, str, str]:
    """``tilescope ARGS`` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in args])
        except SystemExit as exit:  # argparse's usage errors
            code = exit.code
    return code, out.getvalue(), err.getvalue()


@dataclass(frozen=True)
class Batch:
    """A tree and the dataset one batch over it wrote."""

    root: Path
    kinds: dict[str, str]
    dataset: Path
    code: int
    report: dict
    stderr: str
    tree_before: dict[str, tuple[bytes, int]]  # path → (bytes, mtime_ns) before the batch


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="session")
def local_batch(tmp_path_factory) -> Batch:
    """The tree normalised in 2 local worker processes (``fleet.workers``) by ``tilescope batch --json``."""
    root = tmp_path_factory.mktemp("fleet_tree")
    kinds = build_tree(root)
    before = snapshot(root)
    dataset = tmp_path_factory.mktemp("fleet_local") / "dataset"
    code, out, err = run_cli("batch", root, "--out", dataset, "--workers", "2", "--json")
    return Batch(root, kinds, dataset, code, json.loads(out), err, before)


def tilescope(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilescope", *args], capture_output=True, text=True, timeout=timeout)


class ExternalCluster:
    """``dask scheduler`` and ``dask worker`` processes on 127.0.0.1, each in its own process
    group (a worker is its nanny and the worker process it starts: killed together)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.scheduler_file = folder / "scheduler.json"
        self.workers: list[subprocess.Popen] = []
        self.scheduler = self._start(
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
            "--dashboard-address",
            "127.0.0.1:0",
            "--scheduler-file",
            str(self.scheduler_file),
        )
        deadline = time.monotonic() + 60
        while not self._address():
            if self.scheduler.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"dask scheduler did not start:\n{self._log('scheduler')}")
            time.sleep(0.1)
        self.address = self._address()

    def _address(self) -> str | None:
        try:
            return json.loads(self.scheduler_file.read_text())["address"]
        except (OSError, ValueError, KeyError):
            return None

    def _log(self, name: str) -> str:
        try:
            return (self.folder / f"{name}.log").read_text()[-3000:]
        except OSError:
            return ""

    def _start(self, role: str, *args: str) -> subprocess.Popen:
        name = role if role == "scheduler" else f"worker{len(self.workers)}"
        log = open(self.folder / f"{name}.log", "w")
        return subprocess.Popen(
            [sys.executable, "-m", "dask", role, *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
            cwd=self.folder,
        )

    def add_worker(self) -> subprocess.Popen:
        worker = self._start(
            "worker", self.address, "--host", "127.0.0.1", "--nworkers", "1", "--nthreads", "1", "--no-dashboard"
        )
        self.workers.append(worker)
        return worker

    def kill(self, process: subprocess.Popen) -> None:
        """SIGKILL to the process group: a worker's nanny and its worker process die together."""
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=30)

    def stop(self) -> None:
        for process in [*self.workers, self.scheduler]:
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                    process.wait(timeout=10)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    self.kill(process)
