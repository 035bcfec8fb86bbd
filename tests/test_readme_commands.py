"""The README's "Command line" section can be followed from outside the repository: every command
of its ``sh`` block runs, as written, in a temporary folder against an installed wheel (built and
installed as ``tests/test_wheel.py`` does), and exits as the block's comments say (0 unless the
comment starts ``exit N``). ``tilescope serve`` is run with its ``--port`` replaced by a free one
(the machine's port 5006 may be taken), and must answer at /app before it is stopped."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from browser_support import REPO_ROOT, free_port

pytestmark = pytest.mark.slow

_EXIT = re.compile(r"#\s*exit (\d+)\b")


def readme_commands() -> list[str]:
    """The lines of the Command line section's ``sh`` block(s), comments and blank lines aside."""
    text = (REPO_ROOT / "README.md").read_text()
    section = text[text.index("\n## Command line\n") :]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert blocks, "the Command line section has no sh block"
    return [
        line for block in blocks for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]


def expected_exit(line: str) -> int:
    found = _EXIT.search(line)
    return int(found[1]) if found else 0


def environment(venv: Path, folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["TILESCOPE_CACHE_DIR"] = str(folder / ".cache")
    return env


def test_every_readme_command_runs_from_the_wheel(installed, tmp_path):
    _, venv = installed
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    assert not folder.resolve().is_relative_to(REPO_ROOT)
    lines = readme_commands()
    served = [line for line in lines if line.startswith("tilescope serve")]
    commands = [line for line in lines if not line.startswith("tilescope serve")]
    assert len(commands) >= 20 and served  # the section covers every command

    # One bash session (so S=… carries on), each command's exit code written to fd 3 after it.
    script = "exec 3>exit-codes\n" + "".join(f"{line}\nprintf '%s\\n' \"$?\" >&3\n" for line in commands)
    (folder / "readme.sh").write_text(script)
    done = subprocess.run(
        ["bash", "readme.sh"], cwd=folder, env=environment(venv, folder), capture_output=True, text=True, timeout=1200
    )
    codes = [int(c) for c in (folder / "exit-codes").read_text().split()]
    assert len(codes) == len(commands), done.stderr[-3000:]
    wrong = [(line, code) for line, code in zip(commands, codes, strict=True) if code != expected_exit(line)]
    assert wrong == [], f"{wrong}\n{done.stderr[-3000:]}"
    # what the commands wrote is there (and all of it here, nothing in the repository)
    for made in (
        "placement.json",
        "tables/values.parquet",
        "synth.json",
        "report/report.png",
        "edited.json",
        "report-compare/compare.png",
        "fleet-data",
    ):
        assert (folder / made).exists(), made
    assert "tilescope " in done.stdout and "Traceback" not in done.stderr

    for line in served:
        port = free_port()
        command = re.sub(r"--port \d+", f"--port {port}", line)
        process = subprocess.Popen(
            ["bash", "-c", f"exec {command}"],
            cwd=folder,
            env=environment(venv, folder),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline, status = time.monotonic() + 120, None
            while status is None and process.poll() is None and time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/app", timeout=30) as response:
                        status = response.status
                except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                    time.sleep(0.3)
            assert status == 200, f"{line}: exit {process.poll()}"
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
