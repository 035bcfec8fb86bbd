"""Running a coroutine from a test, whatever else the test process runs.

pytest runs every test in one process and the browser tests share one Playwright session
(``conftest.browser``). Playwright's sync API keeps its event loop *running* in the main thread
while that session lasts, so a later ``asyncio.run`` in the main thread fails with "cannot be
called from a running event loop" — depending only on which tests ran first. ``run_on_own_loop``
runs the coroutine on a new loop in a thread of its own.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor


def run_on_own_loop(coroutine):
    """``asyncio.run(coroutine)`` on a thread of its own; its result (or its exception)."""
    with ThreadPoolExecutor(1) as worker:
        return worker.submit(asyncio.run, coroutine).result()
