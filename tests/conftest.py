"""Shared fixtures: the sample profile, a served app (real ``panel serve`` subprocess) and Chromium.

Browser tests skip when Chromium/Playwright are missing on a developer machine, but fail under CI
(the ``CI`` environment variable set), where ``make test`` installs Chromium first.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser_support import SAMPLE, AppServer, chromium_missing_reason, launch_chromium, watch_console
from regress_support import nightly  # noqa: F401 - one session fixture for the regress and fleet-view tests


@pytest.fixture(autouse=True)
def no_foreign_running_loop(request):
    """Playwright's sync API (the session's browser) leaves its event loop marked as running in the
    main thread; the app's code asks ``asyncio.get_running_loop()`` to choose between the load
    workers (a served session's loop) and computing in place, so a test that builds a page
    synchronously after a browser test would queue its work on a loop that never comes back to it.
    Each test that drives no browser starts with no running loop in its thread, and Playwright's is
    put back after it."""
    foreign = asyncio.events._get_running_loop()
    if foreign is None or request.node.get_closest_marker("browser") or "browser" in request.fixturenames:
        yield
        return
    asyncio.events._set_running_loop(None)
    try:
        yield
    finally:
        asyncio.events._set_running_loop(foreign)


@pytest.fixture(scope="session", autouse=True)
def private_cache_folder(tmp_path_factory) -> Path:
    """The whole run (and the servers it starts) caches under a temporary folder, never in the
    user's cache; a test that needs another folder sets ``TILESCOPE_CACHE_DIR`` itself."""
    folder = tmp_path_factory.mktemp("tilescope-cache")
    previous = os.environ.get("TILESCOPE_CACHE_DIR")
    os.environ["TILESCOPE_CACHE_DIR"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("TILESCOPE_CACHE_DIR", None)
    else:
        os.environ["TILESCOPE_CACHE_DIR"] = previous


@pytest.fixture(scope="session")
def sample_path() -> Path:
    return SAMPLE


@pytest.fixture(scope="session")
def raw() -> dict:
    """The sample profile as the stdlib reads it: the independent source of expected figures.
    Shared by every test module, so tests copy it before changing anything."""
    return json.loads(SAMPLE.read_text())


def _require_browser() -> None:
    reason = chromium_missing_reason()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"browser tests need Chromium under CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def app_server():
    """Base URL of the app (``.../app``) served with no arguments; stopped after the session."""
    server = AppServer()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser():
    _require_browser()
    from playwright.sync_api import expect, sync_playwright

    # Every expect() waits for its condition as long as a page action may (60 s): Playwright's own
    # 5 s failed a test whose table Tabulator drew late on a loaded CI machine (test_tileview_browser).
    expect.set_options(timeout=60_000)
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser):
    """A fresh context and page; console errors land in ``page.console_errors``."""
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    if os.environ.get("TS_THROTTLE"):  # e.g. TS_THROTTLE=10: Chromium 10× slower, as on a loaded CI machine
        # (how the Tiles table's lost rows were reproduced: tests/test_table_rows_browser.py)
        throttle = {"rate": float(os.environ["TS_THROTTLE"])}
        context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", throttle)
    watch_console(page)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    """``(wheel, venv)``: the wheel built from the tracked files and the fresh venv it was installed
    into, once per run (tests/wheel_support.py; a minute of building, shared by two test modules)."""
    from wheel_support import build_and_install

    return build_and_install(tmp_path_factory.mktemp("wheel"))
