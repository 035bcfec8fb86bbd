"""``tilescope serve``: the explorer at /app on loopback, the websocket only for the pages of that
address, FILE and --data-root passed through to the app, clear errors before anything listens."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from browser_support import _die_with_parent, free_port, kib, stop_server, wait_for_app

from tilescope import cli
from tilescope.cli import serve
from tilescope.synth import SAMPLE_PATH, write_synthetic_profile

SERVE_TIMEOUT = 90.0


def listening_addresses(port: int) -> set[str]:
    from test_app_paths import listening_addresses as addresses  # one reader of /proc/net/tcp

    return addresses(port)


class Served:
    """``tilescope serve ARGS`` in a subprocess (as a user runs it), on a free port."""

    def __init__(self, *args: str, cwd: str | None = None, executable: list[str] | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/app"
        self.log = tempfile.NamedTemporaryFile(prefix="tilescope-serve-", suffix=".log", delete=False)
        command = [*(executable or [sys.executable, "-m", "tilescope"]), "serve", "--port", str(self.port), *args]
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
            preexec_fn=_die_with_parent,
        )
        deadline = time.monotonic() + SERVE_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"tilescope serve exited with {self.process.returncode}:\n{self.output()}")
            try:
                with urllib.request.urlopen(self.url, timeout=30) as response:
                    self.status = response.status
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"tilescope serve did not answer at {self.url}:\n{self.output()}") from None
                time.sleep(0.3)

    def output(self) -> str:
        return Path(self.log.name).read_text(errors="replace")

    def stop(self) -> None:
        stop_server(self.process, self.log)


@contextlib.contextmanager
def served(*args: str, **kwargs):
    server = Served(*args, **kwargs)
    try:
        yield server
    finally:
        server.stop()


def websocket_status(port: int, origin: str) -> int:
    """The HTTP status of a websocket handshake at /app/ws from a page of ``origin`` (101: accepted)."""
    from tornado.httpclient import HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    async def connect() -> int:
        try:
            connection = await websocket_connect(
                HTTPRequest(f"ws://127.0.0.1:{port}/app/ws", headers={"Origin": origin})
            )
        except HTTPClientError as exc:
            return exc.code
        connection.close()
        return 101

    # in a thread of its own: a browser test can leave an event loop running in this one
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, connect()).result(timeout=60)


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="reads Linux's /proc/net/tcp")
def test_serves_the_sample_on_loopback_and_refuses_foreign_pages():
    with served() as server:
        assert server.status == 200
        assert listening_addresses(server.port) == {"127.0.0.1"}
        assert f"serving the explorer at http://127.0.0.1:{server.port}/app" in server.output()
        assert "warning" not in server.output()
        assert websocket_status(server.port, f"http://127.0.0.1:{server.port}") == 101
        assert websocket_status(server.port, f"http://localhost:{server.port}") == 101
        assert websocket_status(server.port, f"http://evil.example:{server.port}") == 403  # another site's page
        assert websocket_status(server.port, "http://127.0.0.1:1") == 403  # another local server's page


def child_processes(pid: int) -> list[int]:
    """The processes ``pid`` forked (Linux's /proc)."""
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads Linux's /proc/PID/task/PID/children")
def test_num_procs_serves_from_that_many_processes():
    """``--num-procs 2``: Panel forks two server processes sharing the port; both answer there."""
    server = Served("--num-procs", "2")
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline:  # the parent forks them before the first answer
            workers = child_processes(server.process.pid)
            time.sleep(0.2)
        assert len(workers) == 2, server.output()
        assert all(
            Path(f"/proc/{w}/cmdline").read_bytes() == Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
            for w in workers
        )
        for _ in range(4):  # pages and websockets keep being served, whichever process takes the connection
            with urllib.request.urlopen(server.url, timeout=30) as response:
                assert response.status == 200
                assert b"bokeh" in response.read().lower()
            assert websocket_status(server.port, f"http://127.0.0.1:{server.port}") == 101
        assert listening_addresses(server.port) == {"127.0.0.1"}
    finally:
        server.stop()
        for worker in workers:  # forked by the server, not by this test: they do not die with it
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, 15)


@pytest.mark.parametrize(
    "argv, message",
    [
        (lambda t: ["serve", str(t / "missing.json")], "missing.json: cannot read it: No such file or directory"),
        (lambda t: ["serve", str(t)], "cannot read it: a directory, not a regular file"),
        (lambda t: ["serve", "--data-root", str(t / "nowhere")], "nowhere: is not a directory"),
    ],
    ids=["missing-file", "a-folder-as-file", "missing-root"],
)
def test_bad_arguments_fail_before_anything_listens(tmp_path, capsys, argv, message):
    assert cli.main(argv(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.rstrip().endswith(message)


def test_file_and_data_root_exclude_each_other(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["serve", str(SAMPLE_PATH), "--data-root", str(tmp_path)])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.endswith("; try 'tilescope serve --help'\n")


def test_another_address_warns_and_allows_only_its_own_pages(tmp_path, capsys, monkeypatch):
    """What tilescope hands to Panel's server for a non-loopback address (Panel's entry point
    records its argv here instead of listening: this test must not open a port on a real network
    interface)."""
    import panel.command

    seen = []
    monkeypatch.setattr(panel.command, "main", lambda: seen.append(list(sys.argv)))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    assert cli.main(["serve", "--data-root", str(tmp_path), "--address", "192.0.2.10", "--port", "5100"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(
        f"tilescope: warning: listening on 192.0.2.10, port 5100: anyone who can reach it can open every file under {tmp_path.resolve()}\n"
    )
    (argv,) = seen
    assert argv[:3] == ["panel", "serve", str(serve.app_directory())]
    assert (serve.app_directory() / "main.py").is_file()
    assert argv[argv.index("--address") + 1] == "192.0.2.10"
    assert [a for a in argv if a.startswith("--allow-websocket-origin")] == ["--allow-websocket-origin=192.0.2.10:5100"]
    assert argv[argv.index("--args") :] == ["--args", "--data-root", str(tmp_path.resolve())]

    seen.clear()
    assert cli.main(["serve", "--port", "5100", "--allow-websocket-origin", "tunnel.example:443"]) == 0
    assert "warning" not in capsys.readouterr().err  # loopback: no warning
    origins = [a.split("=", 1)[1] for a in seen[0] if a.startswith("--allow-websocket-origin")]
    assert origins == ["127.0.0.1:5100", "localhost:5100", "tunnel.example:443"]
    assert "--args" not in seen[0]  # no file: the app opens the bundled sample


# ----------------------------------------------------------------------------- in the browser


def text_of(page, testid: str) -> str:
    return page.locator(f"[data-testid={testid}]").first.inner_text().strip()


@pytest.mark.browser
def test_a_served_file_opens_in_the_browser(page, tmp_path):
    path = write_synthetic_profile(tmp_path / "two.memory_profile.json", 2, 3)
    recorded = json.loads(path.read_bytes())
    with served(str(path)) as server:
        page.goto(server.url)
        wait_for_app(page)
        assert path.name in text_of(page, "ts-source")
        assert text_of(page, "ts-peak-total") == kib(recorded["peak"]["total"])
        assert page.console_errors == []


@pytest.mark.browser
def test_a_data_root_serves_its_files_by_name(page, tmp_path):
    path = write_synthetic_profile(tmp_path / "one.memory_profile.json", 1, 2)
    recorded = json.loads(path.read_bytes())
    with served("--data-root", str(tmp_path)) as server:
        page.goto(f"{server.url}?file={path.name}")
        wait_for_app(page)
        assert text_of(page, "ts-peak-total") == kib(recorded["peak"]["total"])
        assert page.console_errors == []


def test_a_port_in_use_is_one_line_and_exit_2_before_anything_is_printed(tmp_path):
    """Another program listens on the port: one line, exit 2, and no "serving the explorer at" first
    (the user would open a URL that is someone else's)."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "tilescope", "serve", "--port", str(port)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr == f"tilescope: port {port} is already in use on 127.0.0.1 (choose another with --port N)\n"
