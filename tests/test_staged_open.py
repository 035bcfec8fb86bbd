"""The app's staged open of a cached profile (README "Big profiles"): the timeline is drawn from
the overview kept beside the cache entry before the plan exists, then the page completes; a build
that fails puts back what was open.

- Served (``panel serve app``, driven by the raw Bokeh client of ``tests/raw_bokeh_client.py``,
  which sees every message in the order the server sends it): a cached synthetic profile's
  ``?file=`` sends the timeline's usage points — the cache's overview table, read here with
  pyarrow, each point's usage checked against the raw JSON (docs/formats.md §1) — and the status
  "building the rest of the page…" in messages before any summary; later messages bring the
  summary with the peaks the raw JSON records.
- In one process (``ExplorerApp`` without a server): a staged open whose build fails leaves the
  open profile, its page and its timeline as they were, with the error in one line.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import shutil
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from async_support import run_on_own_loop
from browser_support import SAMPLE, AppServer, kib
from raw_bokeh_client import RawSession

from tilescope.derived.overview import PIXEL_COLUMNS
from tilescope.synth import write_synthetic_profile

USAGE_SOURCE = "ts-timeline-usage"


def recorded(path: Path) -> dict:
    """What the file records (docs/formats.md §1), read with the stdlib."""
    raw = json.loads(path.read_bytes())
    steps = raw["timeline"]["steps"]
    return {
        "standard": np.array([s["usage"]["standard"] for s in steps], dtype=np.int64),
        "interleaved": np.array([s["usage"]["interleaved"] for s in steps], dtype=np.int64),
        "peak": raw["peak"],
    }


def cached_overview(cache_dir: Path) -> pa.Table:
    (path,) = cache_dir.rglob("*.overview.arrow")  # the table written beside the entry (derived.overview)
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


class RecordingSession(RawSession):
    """A raw session that keeps, in order, every model change the server sends, with the arrays
    of its binary buffers decoded (the base client drops buffers)."""

    def __init__(self, app_url: str):
        super().__init__(app_url)
        self.messages: list[dict] = []

    async def _receive(self) -> tuple[dict, dict]:
        header = json.loads(await self.ws.read_message())
        await self.ws.read_message()  # metadata
        content = json.loads(await self.ws.read_message())
        buffers = {}
        for _ in range(header.get("num_buffers", 0)):
            buffer_id = json.loads(await self.ws.read_message())["id"]
            buffers[buffer_id] = await self.ws.read_message()
        content = _decoded(content, buffers)
        self.messages.append(content)
        return header, content

    async def read_until(self, done, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while not done():
            remaining = end - loop.time()
            assert remaining > 0, "the page did not complete in time"
            _, content = await asyncio.wait_for(self._receive(), remaining)
            self._index(content)


def _decoded(node, buffers: dict):
    if isinstance(node, dict):
        if (
            node.get("type") == "ndarray"
            and isinstance(node.get("array"), dict)
            and node["array"].get("type") == "bytes"
        ):
            ref = node["array"]["data"]
            data = buffers[ref["id"]] if isinstance(ref, dict) else __import__("base64").b64decode(ref)
            return (
                np.frombuffer(data, dtype=node["dtype"])
                .astype(np.int64 if "int" in node["dtype"] else np.float64)
                .tolist()
            )
        return {k: _decoded(v, buffers) for k, v in node.items()}
    if isinstance(node, list):
        return [_decoded(v, buffers) for v in node]
    return node


def usage_changes(session: RecordingSession, usage_id: str) -> list[tuple[int, dict]]:
    """(message index, data) of every value the timeline's usage source was sent: as the model
    arrived (its attributes) or changed later."""
    found = []

    def scan(index: int, node) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and node.get("id") == usage_id and "data" in node.get("attributes", {}):
                found.append((index, dict(node["attributes"]["data"]["entries"])))
            if (
                node.get("kind") == "ModelChanged"
                and node.get("model", {}).get("id") == usage_id
                and node.get("attr") == "data"
            ):
                found.append((index, dict(node["new"]["entries"])))
            for value in node.values():
                scan(index, value)
        elif isinstance(node, list):
            for value in node:
                scan(index, value)

    for index, message in enumerate(session.messages):
        scan(index, message)
    return found


def as_text(message) -> str:
    """A message as text, HTML panes' escaped text unescaped."""
    return html.unescape(json.dumps(message, ensure_ascii=False))


def first_with(session: RecordingSession, text: str) -> int | None:
    for index, message in enumerate(session.messages):
        if text in as_text(message):
            return index
    return None


@pytest.mark.browser
def test_a_cached_profile_shows_its_timeline_from_the_overview_before_the_summary(tmp_path, monkeypatch):
    from tilescope.derived.opening import open_file

    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(cache_dir))
    root = tmp_path / "data"
    root.mkdir()
    path = write_synthetic_profile(root / "big.memory_profile.json", 50, 24)
    open_file(path)  # normalised and planned once: the cache entry and its overview are written
    table = cached_overview(cache_dir)
    file = recorded(path)
    n = file["standard"].size
    steps = np.asarray(table.column("step").to_pylist())
    assert n > PIXEL_COLUMNS * 8 >= steps.size > 0  # a profile the timeline downsamples
    total = file["standard"] + file["interleaved"]
    assert int(np.argmax(total)) in set(steps.tolist())  # the total peak's step is drawn

    server = AppServer(["--data-root", str(root)])
    try:
        session = RecordingSession(server.url)

        async def run():
            await session.open(f"?file={path.name}")  # returns once the page's views (the upload box) arrived
            try:
                await session.read_until(lambda: first_with(session, 'data-testid="ts-peak-total"') is not None, 120)
            finally:
                session.close()

        run_on_own_loop(run())
    finally:
        server.stop()

    (usage_id,) = [m["id"] for m in session.models.values() if m.get("attributes", {}).get("name") == USAGE_SOURCE]
    changes = [(i, d) for i, d in usage_changes(session, usage_id) if d["step"]]
    assert changes, "the timeline's usage source never got points"
    at, first = changes[0]
    summary_at = first_with(session, 'data-testid="ts-summary"')
    building_at = first_with(session, "building the rest of the page…")
    assert summary_at is not None and building_at is not None
    assert at < summary_at and building_at < summary_at  # the chart and the status came before any summary
    # The points are the cache's overview, with the usage the file records at each of them.
    assert first["step"] == steps.tolist()
    exchange = file["peak"]["exchange_rows"]
    assert first["std"] == file["standard"][steps].tolist() and first["intl"] == file["interleaved"][steps].tolist()
    assert max(first["total"]) == int(total.max()) + exchange == file["peak"]["total"]
    # Then the page completes with the plan's figures.
    done = "".join(as_text(m) for m in session.messages[summary_at:])
    for name in ("total", "standard", "interleaved"):
        assert re.search(rf'data-testid="ts-peak-{name}"[^>]*>{re.escape(kib(file["peak"][name]))}<', done), name


def test_a_failed_build_keeps_what_was_open(tmp_path, monkeypatch):
    import threading

    import tilescope.derived.opened as opened_module
    from tilescope.app.explorer import ExplorerApp
    from tilescope.app.loading import AppOptions
    from tilescope.app.shared import SharedProfiles
    from tilescope.app.state import SessionState
    from tilescope.derived.opening import open_file
    from tilescope.models.errors import TilescopeError

    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    other = Path(shutil.copyfile(SAMPLE, tmp_path / "other.memory_profile.json"))
    staged_file = write_synthetic_profile(tmp_path / "big.memory_profile.json", 40, 24)
    expected_overview = open_file(staged_file).overview  # cached, with its overview

    shared = SharedProfiles()
    app = ExplorerApp(AppOptions(None, tmp_path), state=SessionState(), shared=shared)
    assert run_on_own_loop(app.opener.open_path(other, "other", partial(app.router.adopt, name="other")))
    page, sample_points = list(app.body.objects), list(app.timeline.usage_source.data["step"])
    assert app.state.source == "other" and len(sample_points) > 0

    seen = {}
    drawn = threading.Event()
    show_overview = app.opener.stage.show_overview

    def showing(opened, name):  # (on the loop)
        show_overview(opened, name)
        drawn.set()

    app.opener.stage.show_overview = showing

    def failing_plan(profile):  # (in the load worker, while the loop draws the overview)
        assert drawn.wait(30)
        seen["points"] = list(app.timeline.usage_source.data["step"])  # what the page showed meanwhile
        seen["status"], seen["body"] = app.state.status, list(app.body.objects)
        raise TilescopeError("big: the cached tables could not be planned")

    monkeypatch.setattr(opened_module, "plan_profile", failing_plan)
    assert not run_on_own_loop(app.opener.open_path(staged_file, "big", partial(app.router.adopt, name="big")))
    assert seen["points"] == expected_overview.step.tolist()  # the overview was drawn while the build ran
    assert "building the rest of the page…" in seen["status"] and seen["body"] != page
    s = app.state
    assert s.error == "big: the cached tables could not be planned" and "\n" not in s.error
    assert s.source == "other" and s.opened.name == "other" and not s.loading
    assert list(app.body.objects) == page
    assert list(app.timeline.usage_source.data["step"]) == sample_points


@pytest.mark.parametrize("mode", ["stacked", "separate"])
def test_the_overview_draws_what_the_plan_then_draws(tmp_path, monkeypatch, mode):
    """Every source and mark the timeline fills from the overview alone is what it then fills
    from the plan for the whole profile (in either layout mode)."""
    from tilescope.app.state import SessionState
    from tilescope.app.views.timeline import TimelineView
    from tilescope.derived.opening import open_file

    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    path = write_synthetic_profile(tmp_path / "big.memory_profile.json", 50, 24)
    open_file(path)
    state = SessionState()
    timeline = TimelineView(state=state, layout_mode=mode)

    def picture() -> dict:
        sources = {
            name: {k: list(v) for k, v in getattr(timeline, name).data.items()}
            for name in ("usage_source", "near_peak_source", "loop_source", "repeat_source", "peak_source")
        }
        if "op" in sources["usage_source"]:  # (operation texts sent as codes into a table of names: compare the texts)
            names = list(timeline.operation_names.data["text"])
            sources["usage_source"]["op"] = [names[code] for code in sources["usage_source"]["op"]]
        return {
            **sources,
            "y_end": timeline.figure.y_range.end,
            "x": (timeline.figure.x_range.start, timeline.figure.x_range.end),
            "budgets": (
                timeline.budget_span.location,
                timeline.interleaved_budget_span.location,
                timeline.support_band.bottom,
            ),
            "labels": (timeline.budget_label.text, timeline.support_label.text, timeline.ibudget_label.text),
            "selected": timeline.selected_span.location,
        }

    drawn = {}

    def first(staged) -> None:  # handed over before the plan is built
        assert not staged.ready
        timeline.show_overview(staged)
        assert not staged.ready  # drawn without the plan
        drawn.update(picture())

    staged = open_file(path, staged=first)
    from_overview = drawn
    state.adopt(staged)
    from_plan = picture()
    assert len(from_overview["usage_source"]["step"]) == staged.overview.step.size > 0
    for key in from_plan:
        assert from_overview[key] == from_plan[key], key
