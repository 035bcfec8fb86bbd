"""The served app the browser tests use is the one they started (``tests/browser_support.AppServer``).

On a machine where several test runs start servers, the free port found for a server can be taken
by another process before the server binds it: the server then exits ("port … is already in use")
while the other process answers. A test ran against that stranger, and failed with
ERR_CONNECTION_REFUSED once it went away. ``AppServer`` is ready only when its own log says it runs
on the port; a taken port is given up for another.
"""

from __future__ import annotations

import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer

import browser_support
from browser_support import SAMPLE, AppServer


class Stranger(BaseHTTPRequestHandler):
    """Another process's web server: 200 for every path."""

    def do_GET(self):
        body = b"<html>not tilescope</html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_port_taken_by_another_server_is_not_mistaken_for_ours(monkeypatch):
    stranger = HTTPServer(("127.0.0.1", 0), Stranger)
    threading.Thread(target=stranger.serve_forever, daemon=True).start()
    taken = stranger.server_address[1]
    offered = iter([taken])  # the first port found "free" is the stranger's
    real_free_port = browser_support.free_port
    monkeypatch.setattr(browser_support, "free_port", lambda: next(offered, None) or real_free_port())
    server = None
    try:
        server = AppServer([str(SAMPLE)])
        assert server.port != taken
        assert server.process.poll() is None
        with urllib.request.urlopen(server.url, timeout=60) as response:
            assert b"not tilescope" not in response.read()
    finally:
        if server is not None:
            server.stop()
        stranger.shutdown()
        stranger.server_close()
