"""The static checks CI runs over the source: ruff (lint), ruff's format check and mypy, each with
the settings of ``pyproject.toml``. ``make check`` runs this file; ``tests/test_static_checks.py``
runs the same checks from ``make test`` and shows that each fails on a finding.

mypy does not know setuptools' ``package-dir`` mapping (``tilescope.loaders`` is ``loaders/``), so
it is shown the package as Python imports it: a tree of links under ``build/typecheck``
(``link_tree``), made from ``[tool.setuptools.package-dir]`` at every run — ``tilescope/`` linked
file by file, each mapped folder (``app/``, ``loaders/``…) linked whole, so a new module is seen
without a reinstall. Its findings are reported with the repository's own paths.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TREE = REPO / "build" / "typecheck"
PYTHON_FILES = [
    "app",
    "derived",
    "loaders",
    "models",
    "planner",
    "report",
    "fleet",
    "tilescope",
    "tests",
    "benchmarks",
    "docs",
]


def package_dirs(repo: Path = REPO) -> dict[str, Path]:
    """``[tool.setuptools.package-dir]``: dotted package → its folder."""
    config = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    return {name: repo / folder for name, folder in config["tool"]["setuptools"]["package-dir"].items()}


def link_tree(tree: Path = TREE, repo: Path = REPO, replace: dict[str, Path] | None = None) -> Path:
    """The package as imports see it, under ``tree`` (made anew). ``replace``: a dotted package
    → another folder to link instead (a test's changed copy)."""
    dirs = {**package_dirs(repo), **(replace or {})}
    if tree.exists():
        shutil.rmtree(tree)
    root = tree / "tilescope"
    root.mkdir(parents=True)
    for entry in dirs.pop("tilescope").iterdir():  # the root package file by file: its subfolders may be mapped too
        if entry.name != "__pycache__":
            (root / entry.name).symlink_to(entry)
    for name, folder in dirs.items():
        parts = name.split(".")[1:]
        (root.joinpath(*parts[:-1])).mkdir(parents=True, exist_ok=True)
        root.joinpath(*parts).symlink_to(folder)
    return tree


def _repository_paths(output: str, tree: Path, repo: Path = REPO) -> str:
    """mypy's paths in the tree (``tilescope/loaders/x.py``) as the repository's (``loaders/x.py``)."""
    dirs = sorted(package_dirs(repo).items(), key=lambda item: -len(item[0]))
    lines = []
    for line in output.splitlines():
        for name, folder in dirs:
            prefix = name.replace(".", "/") + "/"
            if line.startswith(prefix):
                line = os.path.relpath(folder, repo) + "/" + line[len(prefix) :]
                break
        lines.append(line)
    return "\n".join(lines)


def run(command: list[str], cwd: Path = REPO) -> tuple[int, str]:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    return done.returncode, (done.stdout + done.stderr).strip()


def ruff_lint(paths: list[str] | None = None, cwd: Path = REPO) -> tuple[int, str]:
    return run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--output-format",
            "concise",
            "--config",
            str(REPO / "pyproject.toml"),
            *(paths or PYTHON_FILES),
        ],
        cwd,
    )


def ruff_format_check(paths: list[str] | None = None, cwd: Path = REPO) -> tuple[int, str]:
    return run(
        [
            sys.executable,
            "-m",
            "ruff",
            "format",
            "--check",
            "--no-cache",
            "--config",
            str(REPO / "pyproject.toml"),
            *(paths or PYTHON_FILES),
        ],
        cwd,
    )


def mypy(tree: Path = TREE, replace: dict[str, Path] | None = None) -> tuple[int, str]:
    """mypy over the package (``-p tilescope``) in a link tree at ``tree``."""
    link_tree(tree, replace=replace)
    code, output = run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",
            str(REPO / "build" / "mypy-cache"),
            "-p",
            "tilescope",
        ],
        tree,
    )
    return code, _repository_paths(output, tree)


def main() -> int:
    failed = 0
    for name, check in (("ruff check", ruff_lint), ("ruff format --check", ruff_format_check), ("mypy", mypy)):
        code, output = check()
        print(f"== {name}: {'ok' if code == 0 else 'FINDINGS'}\n{output}\n", flush=True)
        failed |= code != 0
    return int(failed)


if __name__ == "__main__":
    sys.exit(main())
