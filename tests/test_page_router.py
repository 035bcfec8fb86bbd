"""The page's router (``app.page_router.PageRouter``) without a browser: the first open as the URL
says (file, edits, step, value, tab, comparison; a refused file falls back to the default with
its message and none of the URL), Back to another file, and the URL written once per change, never
half-applied. Expected figures come from the URL itself and the stdlib's reading of the sample.

The router needs of the page only ``app.page_router.RoutedPage``: the tests of the router alone
give it a page that records what it was asked to show."""

from __future__ import annotations

import asyncio

import panel as pn
import pytest
from async_support import run_on_own_loop

from tilescope.app.fleet_open import requested_dataset
from tilescope.app.loading import DEFAULT_DATA_ROOT, AppOptions, display_name
from tilescope.app.open_flow import SessionOpener
from tilescope.app.page_router import PageRouter
from tilescope.app.shared import SharedProfiles
from tilescope.app.side_tabs import TAB_KEYS
from tilescope.app.state import SessionState
from tilescope.app.url_state import parse_query
from tilescope.derived.opening import open_file
from tilescope.models.edits import TilingEdit

SAMPLE_NAME = "vit_finalist5.memory_profile.json"  # under the default data root, sample_data/
SEARCH_STATE_NAME = "flash_attention.search_state.json"


class RecordedControls:
    """The page's URL control: every query written, in order."""

    def __init__(self) -> None:
        self.written: list[str] = []

    @property
    def query(self) -> str:
        return self.written[-1] if self.written else ""

    @query.setter
    def query(self, text: str) -> None:
        self.written.append(text)


class RecordedPage:
    """A ``RoutedPage`` drawing nothing: what the router asked it to show, in order."""

    profile_page = None

    def __init__(self) -> None:
        self.controls = RecordedControls()
        self.shown: list = []

    def show_opened(self) -> None:
        self.shown.append("opened")

    def show_body(self, tab=None) -> None:
        self.shown.append(("body", tab))

    def show_tab(self, tab) -> None:
        self.shown.append(("tab", tab))


@pytest.fixture
def routed(sample_path):
    state = SessionState()
    page = RecordedPage()
    options = AppOptions(sample_path, DEFAULT_DATA_ROOT)
    router = PageRouter(page, state, SessionOpener(state, SharedProfiles(), options, lambda: None), options)
    return router, page, state


@pytest.fixture
def url_args(monkeypatch):
    """Panel's ``session_args`` as a browser opening ``?QUERY`` sends them (name → list of bytes)."""

    def set_query(query: str) -> None:
        args = {}
        for part in query.lstrip("?").split("&"):
            name, _, value = part.partition("=")
            args.setdefault(name, []).append(value.encode())
        monkeypatch.setattr(type(pn.state), "session_args", property(lambda self: args))

    return set_query


def test_an_adopted_file_gets_the_urls_state_and_the_url_is_written_once(routed, sample_path):
    router, page, state = routed
    wanted = parse_query("?step=45&value=84&edits=84:1=18,84:r=27", TAB_KEYS)
    router.adopt(open_file(sample_path), "sample", wanted=wanted)
    assert (state.source, state.selected_step, state.selected_values) == ("sample", 45, [84])
    assert state.edits == [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)]
    assert page.shown == ["opened", ("body", None), ("tab", None)]
    # applying the URL changed the step, the value and the edits: none of it was written half-done
    assert page.controls.written == ["?step=45&value=84&edits=84:1=18,84:r=27"]
    assert router.requested_file is None  # (not a ?file=: the served file)


def test_back_to_the_same_file_applies_its_url_and_a_change_writes_a_new_one(routed, sample_path):
    router, page, state = routed
    router.adopt(
        open_file(sample_path), "sample", wanted=parse_query("?step=45&value=84&edits=84:1=18,84:r=27", TAB_KEYS)
    )
    page.controls.written.clear()
    router.restore_query("?step=10")  # Back: no edits, no value
    assert (state.selected_step, state.selected_values, state.edits) == (10, [], [])
    assert page.controls.written == ["?step=10"] and page.shown[-1] == ("tab", None)
    state.select_step(11)
    assert page.controls.written == ["?step=10", "?step=11"]


def test_a_url_part_that_does_not_apply_is_said_and_the_rest_applies(routed, sample_path):
    router, page, state = routed
    router.adopt(open_file(sample_path), "sample", wanted=parse_query("?step=7&value=99999&tab=nope", TAB_KEYS))
    assert state.selected_step == 7 and state.selected_values == []
    assert "value=99999 is not a value of this file" in state.error and "tab='nope'" in state.error


def test_back_to_another_file_opens_it_in_a_load_worker(routed, sample_path):
    router, page, state = routed
    router.adopt(open_file(sample_path), "sample")

    async def back() -> None:
        router.restore_query(f"?file={SEARCH_STATE_NAME}")
        await asyncio.gather(*router._tasks)  # (the open Back started)

    run_on_own_loop(back())
    assert state.error == "" and state.kind == "search_state" and state.source == SEARCH_STATE_NAME
    assert router.requested_file == SEARCH_STATE_NAME and router.url_state().query() == f"?file={SEARCH_STATE_NAME}"
    assert page.shown[-3:] == ["opened", ("body", None), ("tab", None)]


def test_the_first_open_arrives_as_the_url_says(url_args, raw):
    from tilescope.app.explorer import build_app

    url_args(f"?file={SAMPLE_NAME}&step=45&value=84&tab=editor&edits=84:1=18,84:r=27")
    app = build_app([])
    run_on_own_loop(app.router.load_initial())
    s = app.state
    assert s.error == "" and s.source == SAMPLE_NAME and app.router.requested_file == SAMPLE_NAME
    assert (s.selected_step, s.selected_values) == (45, [84]) and app.profile_page.tabs.key == "editor"
    assert s.edits == [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)]
    assert s.data.whatif is not None  # the page arrived with the edited plan, made in the open's worker
    assert app.controls.query == f"?file={SAMPLE_NAME}&step=45&value=84&tab=editor&edits=84:1=18,84:r=27"
    assert app.body.objects == [app.profile_page.layout()]


def test_a_refused_file_falls_back_to_the_default_without_the_rest_of_its_url(url_args, raw):
    from tilescope.app.explorer import build_app

    url_args("?file=../secret.json&step=45&tab=editor")
    app = build_app([])
    run_on_own_loop(app.router.load_initial())
    s = app.state
    assert (
        s.source == display_name(DEFAULT_DATA_ROOT / SAMPLE_NAME) and app.router.requested_file is None
    )  # the default
    assert "refused file name '../secret.json'" in s.error
    assert s.selected_step == raw["total_peak_step"]  # the URL's step was for the refused file
    assert app.profile_page.tabs.key == "step"


def test_the_urls_comparison_opens_after_the_file_with_its_tab_in_front(url_args):
    from tilescope.app.explorer import build_app

    url_args(f"?file={SAMPLE_NAME}&compare={SAMPLE_NAME}")
    app = build_app([])
    run_on_own_loop(app.router.load_initial())
    s = app.state
    assert s.error == "" and s.compare is not None and s.compare.b_name == SAMPLE_NAME
    assert app.router.compared_name() == SAMPLE_NAME == app.profile_page.compare_opener.compared_name()
    assert app.profile_page.tabs.key == "compare"
    assert app.controls.query == f"?file={SAMPLE_NAME}&step={s.selected_step}&tab=compare&compare={SAMPLE_NAME}"


def test_a_dataset_is_named_in_the_url_only_when_the_url_asked_for_it(tmp_path):
    served = AppOptions(None, tmp_path, dataset=tmp_path / "nightly")
    assert requested_dataset({}, served).in_url is False  # the server's: the page's URL stays bare
    assert requested_dataset({"dataset": [b"nightly"]}, served).in_url is True
    refused = requested_dataset({"dataset": [b"../x"]}, AppOptions(None, tmp_path))
    assert refused.in_url is True and refused.path is None and "refused dataset name" in refused.problem
