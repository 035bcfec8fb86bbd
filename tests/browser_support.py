"""Serving the real app (``panel serve app`` in a subprocess) and driving it with Debian's Chromium.

Used by tests/conftest.py fixtures and by any test that needs its own server (``served_app``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SAMPLE = REPO_ROOT / "sample_data" / "vit_finalist5.memory_profile.json"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def panel_command() -> list[str]:
    # This interpreter's panel, not the `panel` script beside it: a copied virtualenv's scripts
    # still name the interpreter (and so the installed code) of the one it was copied from.
    return [sys.executable, "-m", "panel"]


def _die_with_parent() -> None:
    """In the child, before exec: on Linux, have the kernel stop the server if the test process
    dies without running its cleanup (killed by a timeout, say)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def stop_server(process: subprocess.Popen, log) -> None:
    """Stop a server subprocess (terminate, kill after 15 s) and delete its log file."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
    log.close()
    with contextlib.suppress(OSError):
        os.unlink(log.name)


PORT_TRIES = 5


class _PortTaken(Exception):
    """The server exited because another process took its port first."""


class AppServer:
    """A ``panel serve app`` subprocess bound to 127.0.0.1 on a free port; stopped by ``stop()``."""

    def __init__(
        self,
        app_args: list[str] | None = None,
        startup_timeout: float = 90.0,
        app: str = "app",
        serve_args: list[str] | None = None,
        env: dict[str, str] | None = None,
    ):
        """``app``: what ``panel serve`` serves (a folder or a script, relative to the repository);
        ``serve_args``: more ``panel serve`` options (``--num-procs 2``); ``env``: more variables.

        The port is found free here, then bound by the server a moment later: on a machine where
        other test runs start servers too (and every client connection takes an ephemeral port),
        another process can take it in between. The server then exits ("address already in use")
        while the other one answers our first requests: the test ran against a stranger's server
        that later went away (ERR_CONNECTION_REFUSED in the middle of a test). So the server is
        ready only when *its own* log says it runs on the port and it answers; if it exited,
        another port is tried (``PORT_TRIES``)."""
        for attempt in range(PORT_TRIES):
            self._start(app_args, app, serve_args, env)
            try:
                self._wait_ready(startup_timeout)
                return
            except _PortTaken:
                self.stop()
                if attempt == PORT_TRIES - 1:
                    raise RuntimeError(f"panel serve found its port taken {PORT_TRIES} times") from None

    def _start(self, app_args, app, serve_args, env) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base_url}/{Path(app).stem}"
        self.log = tempfile.NamedTemporaryFile(prefix="tilescope-panel-", suffix=".log", delete=False)
        command = [
            *panel_command(),
            "serve",
            app,
            "--port",
            str(self.port),
            "--address",
            "127.0.0.1",
            f"--allow-websocket-origin=127.0.0.1:{self.port}",
            *(serve_args or []),
        ]
        if app_args:
            command += ["--args", *app_args]
        # Resources from this server only, as ``make run`` serves them (app/resources.py: RESOURCES_ENV).
        env = dict(os.environ, PYTHONUNBUFFERED="1", BOKEH_RESOURCES="server", **(env or {}))
        self.process = subprocess.Popen(
            command, cwd=REPO_ROOT, stdout=self.log, stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent
        )

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        ours = f"running at: http://127.0.0.1:{self.port}/"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                output = self.output()
                if "already in use" in output:
                    raise _PortTaken(output)
                raise RuntimeError(f"panel serve exited with {self.process.returncode}:\n{output}")
            if ours not in self.output():  # (an answer before that would be another process's)
                time.sleep(0.3)
                continue
            try:
                with urllib.request.urlopen(self.url, timeout=30) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"panel serve did not answer at {self.url} within {timeout:.0f}s:\n{self.output()}")

    def output(self) -> str:
        return Path(self.log.name).read_text(errors="replace")[-6000:]

    def stop(self) -> None:
        stop_server(self.process, self.log)


@contextlib.contextmanager
def served_app(*app_args: str):
    """``with served_app("--data-root", DIR) as server: page.goto(server.url)``."""
    server = AppServer(list(app_args))
    try:
        yield server
    finally:
        server.stop()


def chromium_missing_reason() -> str | None:
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        return f"{CHROMIUM} is not installed (make chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright (python) is not installed"
    return None


def launch_chromium(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def watch_console(page) -> list[str]:
    """Collect console errors and uncaught page errors into ``page.console_errors``."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.console_errors = errors
    return errors


def wait_for_app(page, timeout: float = 60_000) -> None:
    """Until the summary view is drawn (the app's first view) and a Bokeh canvas exists."""
    page.wait_for_selector("[data-testid=ts-summary]", timeout=timeout)
    page.wait_for_selector("canvas", timeout=timeout)


# Canvas position (page pixels) of data point (x, y) in the Bokeh figure named `name`.
JS_DATA_TO_PAGE = """([name, x, y]) => {
  for (const doc of Bokeh.documents) for (const m of doc._all_models.values()) if (m.name === name) {
    const view = Bokeh.index.find_one(m);
    const box = view.canvas_view.el.getBoundingClientRect();
    return [box.left + view.frame.x_scale.compute(x), box.top + view.frame.y_scale.compute(y)];
  }
  return null;
}"""


# Ids in the "at this step" table's data source (the one with a ``share`` column).
# The columns of the data source named `name`, as plain arrays.
JS_SOURCE_DATA = """(name) => {
  for (const doc of Bokeh.documents) for (const m of doc._all_models.values())
    if (m.name === name && m.data) { const out = {}; for (const [k, v] of Object.entries(m.data)) out[k] = Array.from(v); return out; }
  return null;
}"""


JS_STEP_TABLE_IDS = """() => {
  for (const doc of Bokeh.documents) for (const m of doc._all_models.values())
    if (m.source && m.source.data && m.source.data.share !== undefined) return Array.from(m.source.data.id);
  return null;
}"""


def kib(n: int) -> str:
    """The UI's byte figure, written out independently: exact bytes, then the largest of KiB, MiB,
    GiB it reaches (KiB below 1 MiB) to one decimal, both with thousands separators."""
    for power, unit in ((3, "GiB"), (2, "MiB")):
        if abs(n) >= 1024**power:
            return f"{n:,} B ({n / 1024**power:,.1f} {unit})"
    return f"{n:,} B ({n / 1024:,.1f} KiB)"


def drag_to_count(page, axis: str, count: int) -> None:
    """Press the handle, move over the track in small steps, release on the stop for ``count``."""
    track = page.locator(f".ts-track[data-axis='{axis}']")
    stops = json.loads(track.get_attribute("data-stops"))
    box = track.bounding_box()
    handle = page.locator(f".ts-handle[data-axis='{axis}']").bounding_box()
    x0, y0 = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
    target = box["x"] + box["width"] * stops.index(count) / (len(stops) - 1)
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(target, y0 + 3, steps=12)
    page.mouse.up()
