"""How many sessions one server serves at once: Bokeh protocol clients, no browser.

    .venv/bin/python -m benchmarks.bench_sessions [--sessions 1,20,50] [--num-procs 1] [--rounds 1]

Serves the app on the sample (``panel serve app``, as ``tests/browser_support.py`` does; with
``--num-procs N``, N server processes behind one port as ``tilescope serve --num-procs N`` runs
them) and opens sessions the way a browser does, without drawing anything: the page's HTTP GET
(which creates the session and builds its page), the websocket with the page's token, the
document pulled (``PULL-DOC-REQ``), then ``DocumentReady`` (what starts the app's loading: Panel's
``onload``), and waits until the server has sent the summary with the sample's total peak (the
figure read from the raw JSON). All clients run in one asyncio loop of this process; they read
the messages' text and never build documents, so the client costs little of the shared CPUs.

For each batch (1, 20 and 50 sessions at once by default, one warm-up session first so the file
is opened and shared before timing), prints the time from the first request to each session's
summary (median, max), errors, and the server's CPU time per session (all its processes, from
/proc). The target of issue #17: 50 at once all served within 3× the time of one, without errors.
Issue #26's, printed last: at most 100 ms of server CPU per session, and 50 at once served within
5× the floor page's 50 at once (below) in the same run.

The same batches are then run against the floor page of ``bench_browser``
(``benchmarks/floor_page.py``: a button and a text), each session counted as served when its
document has arrived: what the framework itself costs per session on this machine, whatever an app
does, and so the lowest ratio to one session any Panel app could reach here (``--no-floor`` skips it).
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser_support import SAMPLE, AppServer, kib  # noqa: E402

TOKEN = re.compile(r'"token"\s*:\s*"([^"]+)"|token=([A-Za-z0-9_.\-]+)')
TOTAL = re.compile(r'data-testid="ts-peak-total">([^<]*)<')
DOCUMENT_READY = json.dumps(
    {
        "events": [
            {
                "kind": "MessageSent",
                "msg_type": "bokeh_event",
                "msg_data": {"type": "event", "name": "document_ready", "values": {"type": "map"}},
            }
        ]
    }
)
TIMEOUT_S = 240.0
FLOOR_APP = "benchmarks/floor_page.py"


@dataclass
class Batch:
    sessions: int
    times: list[float] = field(default_factory=list)  # seconds, first request → summary
    errors: list[str] = field(default_factory=list)
    cpu_seconds: float | None = None
    wall_seconds: float = 0.0  # the whole batch

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")

    @property
    def worst(self) -> float:
        return max(self.times) if self.times else float("nan")


def _message(msgtype: str, msgid: str, content: str) -> list[str]:
    return [json.dumps({"msgid": msgid, "msgtype": msgtype, "num_buffers": 0}), "{}", content]


async def one_session(base_url: str, expected: str | None, app: str = "app") -> float:
    """Seconds from the page's request to the summary showing ``expected`` (``None``: to the
    document, for the floor page)."""
    from tornado.httpclient import AsyncHTTPClient, HTTPRequest
    from tornado.websocket import websocket_connect

    started = time.monotonic()
    page = await AsyncHTTPClient().fetch(f"{base_url}/{app}", request_timeout=TIMEOUT_S)
    text = page.body.decode("utf-8", "replace")
    found = TOKEN.search(text)
    if found is None:
        raise RuntimeError("no session token in the page")
    token = found.group(1) or found.group(2)
    ws_url = base_url.replace("http://", "ws://") + f"/{app}/ws"
    socket = await websocket_connect(
        HTTPRequest(ws_url, request_timeout=TIMEOUT_S), subprotocols=["bokeh", token], max_message_size=1 << 30
    )
    try:

        async def frames():
            """Each message's (header, content), buffers skipped."""
            while True:
                header = await socket.read_message()
                if header is None:
                    raise RuntimeError("the server closed the websocket")
                head = json.loads(header)
                await socket.read_message()  # metadata
                content = await socket.read_message()
                for _ in range(2 * int(head.get("num_buffers", 0))):
                    await socket.read_message()
                yield head, content

        messages = frames()
        head, _ = await messages.__anext__()
        if head["msgtype"] != "ACK":
            raise RuntimeError(f"expected ACK, got {head['msgtype']}")
        for part in _message("PULL-DOC-REQ", "pull", "{}"):
            await socket.write_message(part)
        ready_sent = False
        async for head, content in messages:
            if head["msgtype"] == "ERROR":
                raise RuntimeError(f"server error: {content[:300]}")
            if head["msgtype"] == "PULL-DOC-REPLY" and expected is None:
                return time.monotonic() - started
            if head["msgtype"] == "PULL-DOC-REPLY" and not ready_sent:
                for part in _message("PATCH-DOC", "ready", DOCUMENT_READY):
                    await socket.write_message(part)
                ready_sent = True
            if isinstance(content, bytes) or "ts-peak-total" not in content:
                continue
            shown = TOTAL.search(html.unescape(html.unescape(content)).replace('\\"', '"'))
            if shown is not None:
                if shown.group(1).strip() != expected:
                    raise RuntimeError(f"total peak {shown.group(1)!r}, expected {expected!r}")
                return time.monotonic() - started
    finally:
        socket.close()
    raise RuntimeError("the websocket ended before the summary")


def process_tree_cpu(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its child processes (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


async def run_batch(base_url: str, n: int, expected: str | None, pid: int, app: str = "app") -> Batch:
    from tornado.httpclient import AsyncHTTPClient

    AsyncHTTPClient.configure(None, max_clients=max(n, 10))
    batch = Batch(n)
    cpu_before = process_tree_cpu(pid)
    started = time.monotonic()
    outcomes = await asyncio.gather(
        *(asyncio.wait_for(one_session(base_url, expected, app), TIMEOUT_S) for _ in range(n)), return_exceptions=True
    )
    batch.wall_seconds = time.monotonic() - started
    await asyncio.sleep(1.0)  # the server finishes what the sessions asked (their last messages)
    batch.cpu_seconds = process_tree_cpu(pid) - cpu_before
    for k, outcome in enumerate(outcomes):
        if isinstance(outcome, BaseException):
            batch.errors.append(f"session {k}: {type(outcome).__name__}: {str(outcome)[:200]}")
        else:
            batch.times.append(outcome)
    return batch


def server_errors(server: AppServer) -> list[str]:
    log = Path(server.log.name).read_text(errors="replace")
    return [line for line in log.splitlines() if "Traceback" in line or " ERROR" in line]


def measure(sizes: list[int], num_procs: int, rounds: int, floor: bool = False) -> tuple[list[Batch], list[str]]:
    """The batches against the app on the sample, or (``floor``) against the floor page."""
    expected = None if floor else kib(json.loads(SAMPLE.read_text())["peak"]["total"])
    serve_args = ["--num-procs", str(num_procs)] if num_procs != 1 else []
    server = AppServer(serve_args=serve_args, app=FLOOR_APP if floor else "app")
    app = Path(FLOOR_APP).stem if floor else "app"
    batches = []
    try:

        async def all_batches():
            for _ in range(max(num_procs, 1) * 2):  # warm-up: every process opens the file once
                await run_batch(server.base_url, 1, expected, server.process.pid, app)
            for _ in range(rounds):
                for n in sizes:
                    batch = await run_batch(server.base_url, n, expected, server.process.pid, app)
                    print(
                        f"  {n:3} at once: median {batch.median:.2f} s, max {batch.worst:.2f} s, "
                        f"errors {len(batch.errors)}, server CPU {batch.cpu_seconds / n:.3f} s per session",
                        flush=True,
                    )
                    batches.append(batch)
                    await asyncio.sleep(2.0)

        asyncio.run(all_batches())
        errors = server_errors(server)
    finally:
        server.stop()
    return batches, errors


def report(batches: list[Batch], num_procs: int, errors: list[str], what: str = "the app on the sample") -> str:
    by_size: dict[int, list[Batch]] = {}
    for b in batches:
        by_size.setdefault(b.sessions, []).append(b)
    one = statistics.median([b.median for b in by_size.get(1, [])]) if 1 in by_size else None
    lines = [
        f"{what}, server processes: {num_procs}",
        "",
        "| sessions at once | median to served | max | max ÷ one session | server CPU per session | errors |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n, group in sorted(by_size.items()):
        median = statistics.median([b.median for b in group])
        worst = max(b.worst for b in group)
        cpu = statistics.median([b.cpu_seconds / n for b in group if b.cpu_seconds is not None])
        ratio = f"{worst / one:.1f}×" if one else "n/a"
        lines.append(
            f"| {n} | {median:.2f} s | {worst:.2f} s | {ratio} | {cpu * 1000:.0f} ms | {sum(len(b.errors) for b in group)} |"
        )
    for b in batches:
        for e in b.errors[:5]:
            lines.append(f"  {e}")
    if errors:
        lines.append(f"server log: {len(errors)} error lines, first: {errors[0]}")
    if one and 50 in by_size and what == "the app on the sample":
        worst = max(b.worst for b in by_size[50])
        met = worst <= 3 * one and not any(b.errors for b in by_size[50]) and not errors
        lines.append(
            f"\ntarget (50 at once all served within 3× one session, no errors): {'met' if met else 'NOT met'} "
            f"({worst:.2f} s vs 3 × {one:.2f} s)"
        )
    return "\n".join(lines)


def against_floor(app: list[Batch], floor: list[Batch], sessions: int = 50) -> str:
    """Issue #26's targets: the app's server CPU per session (one session at a time) at most
    100 ms, and ``sessions`` opened at once all served within 5× the floor page's time for as many
    at once in the same run (the worst session of each batch)."""
    lines = []
    ones = [b.cpu_seconds for b in app if b.sessions == 1 and b.cpu_seconds is not None]
    if ones:
        cpu = statistics.median(ones)
        lines.append(f"server CPU per session (one at a time): {cpu * 1000:.0f} ms (target ≤ 100 ms)")
    mine = [b.worst for b in app if b.sessions == sessions]
    theirs = [b.worst for b in floor if b.sessions == sessions]
    if mine and theirs:
        ratio = statistics.median(mine) / statistics.median(theirs)
        lines.append(
            f"{sessions} at once: {statistics.median(mine):.2f} s vs the floor's {statistics.median(theirs):.2f} s: "
            f"{ratio:.1f}× the floor (target ≤ 5×)"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_sessions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="1,20,50", help="batch sizes, comma-separated (default 1,20,50)")
    parser.add_argument(
        "--num-procs", type=int, default=1, help="server processes (panel serve --num-procs; default 1)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="times to run every batch (default 1)")
    parser.add_argument("--no-floor", action="store_true", help="skip the floor page's batches")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sessions.split(",") if s.strip()]
    print(f"load average at start: {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    batches, errors = measure(sizes, args.num_procs, args.rounds)
    print()
    print(report(batches, args.num_procs, errors))
    if not args.no_floor:
        print("\nthe floor page (benchmarks/floor_page.py), the same batches:", flush=True)
        floor_batches, floor_errors = measure(sizes, args.num_procs, args.rounds, floor=True)
        print()
        print(report(floor_batches, args.num_procs, floor_errors, what="the floor page"))
        print()
        print(against_floor(batches, floor_batches))
    print(f"\nload average at end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
