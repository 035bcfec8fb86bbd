"""The wheel as a user gets it, built once per test run (``conftest.installed``): from a copy of the
tracked files (as in a clean clone), installed with a plain ``pip install`` into a fresh venv
(dependencies from the lock). tests/test_wheel.py and tests/test_readme_commands.py use it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browser_support import REPO_ROOT


def tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True)
    if done.returncode != 0:
        pytest.skip("not a git checkout: cannot tell which files a clean clone has")
    return [name for name in done.stdout.decode().split("\0") if name]


def pip(*args: str, python: Path | None = None) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    if python is not None:
        command += ["--python", str(python)]
    done = subprocess.run([*command, *args], capture_output=True, text=True)
    assert done.returncode == 0, f"pip {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def build_and_install(root: Path) -> tuple[Path, Path]:
    """``(wheel, venv)``: the wheel built from a copy of the tracked files (as in a clean clone)
    and a fresh venv it was installed into."""
    source = root / "source"
    for name in tracked_files():
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / name, target)
    pip("wheel", "--quiet", "--no-deps", "-w", str(root / "dist"), str(source))
    (wheel,) = (root / "dist").glob("tilescope-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip("install", "--quiet", "-r", str(REPO_ROOT / "requirements" / "run.lock"), python=python)
    pip("install", "--quiet", str(wheel), python=python)  # a plain install: pip checks the declared dependencies
    return wheel, venv
