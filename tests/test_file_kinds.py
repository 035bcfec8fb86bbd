"""The one open path (docs/architecture.md "Opening a file"): a file's kind is recognised once, by
``derived.opening.FILE_KINDS``, and adding a kind is one registration — its recogniser, its opener
and its view — after which the app's page opens and shows it with nothing else changed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import ClassVar

import panel as pn
import pytest
from async_support import run_on_own_loop

import tilescope.derived.opening as opening
from tilescope.app.explorer import ExplorerApp
from tilescope.app.loading import AppOptions
from tilescope.app.shared import SharedProfiles
from tilescope.app.state import SessionState
from tilescope.derived.opening import FileKind, OpenedProfile, OpenedSearchState, Source, open_file
from tilescope.loaders.json_input import InputBuffer
from tilescope.models.errors import InputError
from tilescope.synth import SAMPLE_PATH

SEARCH_STATE = SAMPLE_PATH.parent / "flash_attention.search_state.json"


@dataclass(frozen=True)
class Ranges:
    """A toy kind's opened object: a list of byte ranges."""

    kind: ClassVar[str] = "toy_ranges"
    name: str
    ranges: tuple[tuple[int, int], ...]


def open_ranges(found, progress) -> Ranges:
    doc = json.loads(found.bytes())
    ranges = tuple((int(a), int(b)) for a, b in doc["ranges"])
    if any(b < a for a, b in ranges):
        raise InputError("$.ranges", "[start, end] with start ≤ end", "an end before its start")
    return Ranges(found.source.name, ranges)


def ranges_page(context) -> pn.pane.HTML:
    """The toy kind's view: the total bytes of the open file's ranges."""
    state = context.state
    pane = pn.pane.HTML("", name="toy-ranges")

    def draw(*_):
        opened = state.opened
        pane.object = f"{sum(b - a for a, b in opened.ranges)} bytes" if isinstance(opened, Ranges) else ""

    state.param.watch(draw, "opened")
    draw()
    return pane


TOY = FileKind(
    "toy_ranges",
    "range list",
    "with `ranges` and `toy`",
    lambda found: found.has("ranges", "toy"),
    open_ranges,
    "test_file_kinds:ranges_page",
)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_each_kind_is_recognised_once_from_the_bytes_or_the_cache(tmp_path, cache, monkeypatch):
    profile = tmp_path / "vit.json"
    profile.write_bytes(SAMPLE_PATH.read_bytes())
    assert isinstance(open_file(profile), OpenedProfile)  # read once, normalised into the cache
    assert isinstance(open_file(Source.of_bytes(SEARCH_STATE.read_bytes(), "s.json")), OpenedSearchState)

    def no_read(*_args, **_kwargs):
        raise AssertionError("a cached profile's file was read")

    monkeypatch.setattr(InputBuffer, "read", no_read)
    reopened = open_file(Source.of_path(profile, "vit.json"))  # the cache knows it: its bytes are not read
    assert isinstance(reopened, OpenedProfile) and reopened.name == "vit.json"
    assert reopened.plan.peaks.total == json.loads(SAMPLE_PATH.read_bytes())["peak"]["total"]


def test_a_file_of_no_known_kind_names_every_kind_it_could_have_been(monkeypatch):
    with pytest.raises(InputError) as refused:
        open_file(Source.of_bytes(b'{"version": 1, "tile": 3}', "odd.json"))
    assert str(refused.value) == (
        "odd.json: at $: expected a memory profile (with `timeline`) or a search state "
        "(with `context` and `recipe`) or a placement dump (with `requests` and `ranges`) "
        "or a placement profile (with `schema_version` and `tiles`), found an object with none of these"
    )
    monkeypatch.setattr(opening, "FILE_KINDS", (*opening.FILE_KINDS, TOY))
    with pytest.raises(InputError) as refused:
        open_file(Source.of_bytes(b'{"version": 1, "tile": 3}', "odd.json"))
    assert "or a range list (with `ranges` and `toy`)" in str(refused.value)


def test_adding_a_kind_is_one_registration_and_the_page_shows_it(tmp_path, monkeypatch):
    """A kind the app never heard of: registered in FILE_KINDS alone, the page opens a file of it
    by path (in the load workers), shows its view, and goes back to a profile's page."""
    monkeypatch.setattr(opening, "FILE_KINDS", (*opening.FILE_KINDS, TOY))
    toy = tmp_path / "ranges.json"
    toy.write_text(json.dumps({"toy": True, "ranges": [[0, 100], [4096, 4352]]}))
    bad = tmp_path / "bad_ranges.json"
    bad.write_text(json.dumps({"toy": True, "ranges": [[10, 5]]}))
    app = ExplorerApp(AppOptions(None, tmp_path), state=SessionState(), shared=SharedProfiles())

    def open_path(path, name):
        return run_on_own_loop(app.opener.open_path(path, name, partial(app.router.adopt, name=name)))

    assert open_path(SAMPLE_PATH, "vit")
    profile_page = list(app.body.objects)
    assert open_path(toy, "ranges.json")
    state = app.state
    assert state.kind == "toy_ranges" and state.data is None and state.source == "ranges.json"
    (shown,) = app.body.objects
    assert shown.name == "toy-ranges" and shown.object == f"{100 + 256} bytes"
    assert "range list" in app.file_bar.source.object  # the file bar says the kind's label
    assert not open_path(bad, "bad_ranges.json")  # its opener's located error; what was open stays
    assert (
        state.error
        == "bad_ranges.json: at $.ranges: expected [start, end] with start ≤ end, found an end before its start"
    )
    assert state.kind == "toy_ranges" and list(app.body.objects) == [shown]
    assert open_path(SAMPLE_PATH, "vit") and list(app.body.objects) == profile_page
