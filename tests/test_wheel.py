"""The wheel as a user gets it: built from the tracked files, installed with a plain ``pip install``
into a fresh venv (dependencies from the lock, the stack CI tests), and used from a folder outside
the repository: ``--version``, ``summary`` and ``synth`` on the bundled sample, and ``serve``
answering at /app on loopback only. Only ``tilescope`` is installed at the top level."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from browser_support import REPO_ROOT
from wheel_support import tracked_files

pytestmark = pytest.mark.slow

# The folders pyproject.toml maps into the package, and where each lands inside the wheel.
MAPPED = {
    "tilescope": "tilescope",
    "app": "tilescope/app",
    "derived": "tilescope/derived",
    "report": "tilescope/report",
    "loaders": "tilescope/loaders",
    "models": "tilescope/models",
    "planner": "tilescope/planner",
    "sample_data": "tilescope/sample_data",
}


def test_the_wheel_holds_only_tilescope_and_every_tracked_file(installed):
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/", 1)[0] for name in names}
    dist_info = {t for t in top_level if t.endswith(".dist-info")}
    assert top_level - dist_info == {"tilescope"}, (
        f"top-level names besides tilescope: {sorted(top_level - dist_info - {'tilescope'})}"
    )
    assert len(dist_info) == 1 and next(iter(dist_info)).startswith("tilescope-")
    missing = []
    for name in tracked_files():
        folder, _, rest = name.partition("/")
        if folder in MAPPED and rest and not name.endswith(".pyc") and f"{MAPPED[folder]}/{rest}" not in names:
            missing.append(name)
    assert missing == [], f"tracked files of packaged folders missing from the wheel: {missing}"


def run_installed(venv: Path, cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["TILESCOPE_CACHE_DIR"] = str(cwd / "cache")
    return subprocess.run(
        [str(venv / "bin" / "tilescope"), *argv], cwd=cwd, capture_output=True, text=True, env=env, timeout=300
    )


def test_the_installed_command_works_outside_the_repository(installed, tmp_path, raw):
    wheel, venv = installed
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert not outside.resolve().is_relative_to(REPO_ROOT)
    version = run_installed(venv, outside, "--version")
    assert version.returncode == 0 and version.stdout == f"tilescope {wheel.name.split('-')[1]}\n"

    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import tilescope.samples as s; print(s.sample_path())"],
        cwd=outside,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    bundled = Path(where)
    assert (
        bundled.is_relative_to(venv) and bundled.read_bytes() == (REPO_ROOT / "sample_data" / bundled.name).read_bytes()
    )

    summary = run_installed(venv, outside, "summary", "--json", str(bundled))
    assert summary.returncode == 0, summary.stderr
    figures = json.loads(summary.stdout)
    assert figures["peak"]["total"] == raw["peak"]["total"] and figures["values"] == len(raw["timeline"]["values"])

    synth = run_installed(
        venv, outside, "synth", "--blocks", "1", "--layers", "2", "--out", "s.json", "--json"
    )  # no --sample: the bundled one
    assert synth.returncode == 0, synth.stderr
    assert json.loads((outside / "s.json").read_bytes())["version"] == 1
    assert sorted(p.name for p in outside.iterdir()) == ["cache", "s.json"]  # nothing else written here


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="reads Linux's /proc/net/tcp")
def test_the_installed_server_answers_on_loopback_only(installed, tmp_path):
    from test_serve import listening_addresses, served, websocket_status

    _, venv = installed
    with served(cwd=str(tmp_path), executable=[str(venv / "bin" / "tilescope")]) as server:
        assert server.status == 200
        assert listening_addresses(server.port) == {"127.0.0.1"}
        assert websocket_status(server.port, f"http://127.0.0.1:{server.port}") == 101
        assert websocket_status(server.port, f"http://elsewhere.example:{server.port}") == 403


def test_the_wheel_carries_the_apache_licence(installed):
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        header = archive.read(metadata).decode().split("\n\n", 1)[0].splitlines()
        (licence,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert archive.read(licence) == (REPO_ROOT / "LICENSE").read_bytes()
    assert "License-Expression: Apache-2.0" in header and "License-File: LICENSE" in header
    assert "Project-URL: Compiler, https://github.com/osmarks/ipu-stack" in header
    assert (
        (REPO_ROOT / "LICENSE")
        .read_text()
        .lstrip()
        .startswith("Apache License\n                           Version 2.0, January 2004")
    )
