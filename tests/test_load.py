"""Load: 20 concurrent browser sessions against one ``panel serve app`` on loopback all render the
summary, with no error in any page or in the server's log.

One asyncio Playwright run (its own Chromium, in a worker thread so it does not meet the sync
fixtures' event loop) opens 20 pages spread over 4 browser contexts and navigates them all at
once. Bounded: at most ``BOUND_S`` seconds for the whole run; the server and browser are stopped
by the test. Prints the time from navigation to the summary's peak being visible (median, max),
the error count and the server's CPU time in the normal pytest output. A timing goal is not asserted here (2 shared
cores make it noisy); the figures are for reading and for benchmarks/.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from browser_support import CHROMIUM, CHROMIUM_ARGS, SAMPLE, AppServer, chromium_missing_reason, kib

pytestmark = pytest.mark.browser

SESSIONS = 20
CONTEXTS = 4
BOUND_S = 180.0
OFFLINE_CDN = "https://cdn.holoviz.org/"  # Panel's loading-spinner stylesheet; unreachable offline
UNREACHABLE = "Failed to load resource: net::ERR_NAME_NOT_RESOLVED"


async def open_sessions(url: str, expected_total: str, deadline: float) -> tuple[list[float], list[str]]:
    """Seconds from navigation to the summary's total peak showing ``expected_total``, per page; errors."""
    from playwright.async_api import async_playwright

    errors: list[str] = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            contexts = [await browser.new_context(viewport={"width": 1280, "height": 800}) for _ in range(CONTEXTS)]
            pages = [await contexts[k % CONTEXTS].new_page() for k in range(SESSIONS)]
            for k, page in enumerate(pages):
                page.on("pageerror", lambda exc, k=k: errors.append(f"page {k}: {exc}"))
                page.on(
                    "console",
                    lambda msg, k=k: (
                        errors.append(f"page {k}: console: {msg.text}")
                        if msg.type == "error" and msg.text != UNREACHABLE
                        else None
                    ),
                )
                page.on(
                    "requestfailed",
                    lambda request, k=k: (
                        None
                        if request.url.startswith(OFFLINE_CDN)
                        else errors.append(f"page {k}: request failed: {request.url}")
                    ),
                )

            async def first_render(k: int, page) -> float:
                remaining_ms = max(deadline - time.monotonic(), 1.0) * 1000
                started = time.monotonic()
                await page.goto(url, wait_until="commit", timeout=remaining_ms)
                figure = page.locator("[data-testid=ts-peak-total]")
                await figure.wait_for(state="visible", timeout=max(deadline - time.monotonic(), 1.0) * 1000)
                elapsed = time.monotonic() - started
                shown = (await figure.inner_text()).strip()
                if shown != expected_total:
                    errors.append(f"page {k}: total peak {shown!r}, expected {expected_total!r}")
                return elapsed

            outcomes = await asyncio.gather(*(first_render(k, p) for k, p in enumerate(pages)), return_exceptions=True)
        finally:
            await browser.close()
    times = []
    for k, outcome in enumerate(outcomes):
        if isinstance(outcome, BaseException):
            errors.append(f"page {k}: {type(outcome).__name__}: {str(outcome).splitlines()[0] if str(outcome) else ''}")
        else:
            times.append(outcome)
    return times, errors


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process so far (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_problems(log: str) -> list[str]:
    """The server log's ERROR lines and each traceback as one line: where it was raised and what."""
    lines, problems = log.splitlines(), []
    for i, line in enumerate(lines):
        if " ERROR" in line:
            problems.append(line)
        elif line.startswith("Traceback"):
            block = list(
                itertools.takewhile(
                    lambda text: not text or text[0].isspace() or text.startswith("Traceback"), lines[i + 1 :]
                )
            )
            where = next((text.strip() for text in reversed(block) if text.strip().startswith("File ")), "")
            what = lines[i + 1 + len(block)] if i + 1 + len(block) < len(lines) else "?"
            problems.append(f"{what} ({where})")
    # A page this test closes once its summary shows may still be receiving the rest of the page:
    # tornado then logs the unfinished write ("Task exception was never retrieved ...
    # WebSocketClosedError", chained to StreamClosedError). That is the client leaving, not a fault.
    closed = ("tornado.websocket.WebSocketClosedError", "tornado.iostream.StreamClosedError: Stream is closed")
    return [problem for problem in problems if not problem.startswith(closed)]


def test_twenty_concurrent_sessions_all_render_the_summary(request, capsys):
    reason = chromium_missing_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests need Chromium under CI: {reason}")
        pytest.skip(reason)
    expected_total = kib(json.loads(SAMPLE.read_text())["peak"]["total"])
    server = AppServer()
    try:
        deadline = time.monotonic() + BOUND_S
        cpu_before = cpu_seconds(server.process.pid)
        with ThreadPoolExecutor(max_workers=1) as pool:
            run = pool.submit(asyncio.run, open_sessions(server.url, expected_total, deadline))
            times, errors = run.result(timeout=BOUND_S + 60)  # the browser's own timeouts end it first
        cpu_after = cpu_seconds(server.process.pid)
        log = Path(server.log.name).read_text(errors="replace")
    finally:
        server.stop()
    server_errors = server_problems(log)
    errors += [f"server: {line}" for line in server_errors]

    report = request.config.pluginmanager.get_plugin("terminalreporter")
    summary = (
        f"load: {len(times)}/{SESSIONS} sessions rendered the summary; time to summary visible "
        + (f"median {statistics.median(times):.1f} s, max {max(times):.1f} s" if times else "n/a")
        + f"; errors: {len(errors)}"
    )
    if cpu_before is not None and cpu_after is not None:
        summary += (
            f"; server CPU {cpu_after - cpu_before:.1f} s ({(cpu_after - cpu_before) / SESSIONS:.2f} s per session)"
        )
    if report is not None:
        with capsys.disabled():  # the line belongs in the normal output, not in captured output
            report.write_line("")
            report.write_line(summary)
            for error in errors[:10]:
                report.write_line(f"  {error}")
    assert errors == [], summary
    assert len(times) == SESSIONS, summary
