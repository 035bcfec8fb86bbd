"""SessionState and app.loading, without a browser. Expected figures come from the sample file's
recorded fields (json.load) or are worked out by hand from docs/formats.md."""

from __future__ import annotations

import json
import os

import pytest
from opening_support import open_into

from tilescope.app.loading import MAX_UPLOAD_BYTES, PathRefused, check_upload_size, parse_app_args, resolve_in_root
from tilescope.app.state import SessionState
from tilescope.models.edits import TilingEdit
from tilescope.models.errors import TilescopeError


@pytest.fixture
def state(sample_path):
    s = SessionState()
    assert open_into(s, sample_path), s.error
    return s


def test_opening_the_sample_reproduces_its_recorded_peaks(state, raw, sample_path):
    peaks = state.plan.peaks
    assert (peaks.standard, peaks.interleaved, peaks.total) == (
        raw["peak"]["standard"],
        raw["peak"]["interleaved"],
        raw["peak"]["total"],
    )
    assert peaks.effective_peak_bytes == raw["effective_peak_bytes"]
    assert (peaks.standard_step, peaks.interleaved_step, peaks.total_step) == (
        raw["standard_peak_step"],
        raw["interleaved_peak_step"],
        raw["total_peak_step"],
    )
    assert state.selected_step == raw["total_peak_step"]  # the view opens at the total peak
    assert state.error == "" and state.kind == "memory_profile" and state.source == str(sample_path)
    assert state.plan is state.base_plan and state.whatif is None


def test_select_step_clamps_and_select_values_drops_unknown_ids(state, raw):
    n = len(raw["timeline"]["steps"])
    state.select_step(12)
    assert state.selected_step == 12
    state.select_step(n + 50)
    assert state.selected_step == n - 1
    state.select_step(-3)
    assert state.selected_step == 0
    state.select_values([84, 85, 999_999])
    assert state.selected_values == [84, 85]


def test_a_bad_file_keeps_the_open_profile_and_says_where(state, sample_path, tmp_path):
    broken = tmp_path / "broken.memory_profile.json"
    data = json.loads(sample_path.read_text())
    data["timeline"]["values"][0]["shard_bytes"] = "lots"
    broken.write_text(json.dumps(data))
    profile, plan = state.profile, state.plan
    assert not open_into(state, broken)
    assert state.profile is profile and state.plan is plan and state.source == str(sample_path)
    assert state.error.startswith(f"{broken}: at $.timeline.values[0].shard_bytes: expected int")
    assert "\n" not in state.error

    truncated = tmp_path / "truncated.json"
    truncated.write_bytes(sample_path.read_bytes()[:5000])
    assert not open_into(state, truncated)
    assert state.error.startswith(f"{truncated}: at byte 5000 (line ")
    assert state.profile is profile

    assert not open_into(state, b"[1, 2", "upload.json")
    assert state.error.startswith("upload.json: at ")
    assert not open_into(state, tmp_path / "missing.json")
    assert "missing.json" in state.error and state.profile is profile


def test_a_good_load_clears_the_error(state, sample_path, tmp_path):
    open_into(state, b"{}", "empty.json")
    assert state.error
    assert open_into(state, sample_path.read_bytes(), "again.json")
    assert state.error == "" and state.source == "again.json"


def test_a_search_state_is_routed_not_planned(sample_path):
    s = SessionState()
    search = sample_path.parent / "flash_attention.search_state.json"
    assert open_into(s, search)
    assert s.kind == "search_state" and s.profile is None and s.data is None
    assert s.search.search_state.source == str(search)  # parsed when opened, in the open path
    assert len(s.search.search_state.plans[0].alternatives) == 384


def test_paths_outside_the_data_root_are_refused(tmp_path):
    root = tmp_path / "data"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.json").write_text("{}")
    (tmp_path / "secret.json").write_text("{}")
    assert resolve_in_root(root, "sub/a.json") == (root / "sub" / "a.json").resolve()
    for name in (
        "../secret.json",
        "../../etc/passwd",
        "sub/../../secret.json",
        "/etc/passwd",
        str(tmp_path / "secret.json"),
        "",
        "a\x00b",
    ):
        with pytest.raises(PathRefused):
            resolve_in_root(root, name)
    os.symlink(tmp_path / "secret.json", root / "link.json")
    with pytest.raises(PathRefused, match="outside the data root"):
        resolve_in_root(root, "link.json")


def test_app_arguments():
    options = parse_app_args(["some/file.json", "--data-root", "/srv/profiles"])
    assert str(options.file) == "some/file.json" and str(options.data_root) == "/srv/profiles"
    options = parse_app_args([])
    assert options.file is None and options.data_root.name == "sample_data"


def test_uploads_over_the_cap_are_refused():
    check_upload_size(MAX_UPLOAD_BYTES)
    with pytest.raises(TilescopeError, match="upload limit"):
        check_upload_size(MAX_UPLOAD_BYTES + 1)


def test_an_edit_changes_the_plan_and_undo_restores_it(state, raw):
    """Value 85 ([1, 729, 1152] F8, standard, granule 16384, live at steps 45–47) with axis 0
    (FromEnd(1), block 384) in 1 partition: dims 1152 × ceil(365 / 9) · 2 = 82 → 94,464 B, aligned
    to 98,304 B (was 32,768): +65,536 B at each step where 85 is live."""
    delta = 98_304 - 32_768
    live85 = {s["index"] for s in raw["timeline"]["steps"] if 85 in s["live"]}
    expected_standard = (
        max(s["usage"]["standard"] + (delta if s["index"] in live85 else 0) for s in raw["timeline"]["steps"])
        + raw["peak"]["exchange_rows"]
    )
    assert state.apply_edit(TilingEdit(85, axis=0, partitions=1)) is None
    assert state.whatif is not None and state.plan is state.whatif.plan
    assert state.plan.peaks.standard == expected_standard
    assert state.base_plan.peaks.standard == raw["peak"]["standard"]
    assert state.edits == [TilingEdit(85, axis=0, partitions=1)]
    state.undo()
    assert state.edits == [] and state.plan.peaks.standard == raw["peak"]["standard"]


def test_an_invalid_edit_is_refused_and_changes_nothing(state, raw):
    plan = state.plan
    error = state.apply_edit(TilingEdit(85, axis=0, partitions=4))  # 3 blocks of 384: at most 3 partitions
    assert error and state.error == error
    assert state.plan is plan and state.edits == []


def test_load_edits_replaces_the_set_and_reports_bad_files(state):
    assert state.load_edits(b'[{"value": 85, "axis": 0, "partitions": 1}]', "e.json") is None
    assert len(state.edits) == 1
    error = state.load_edits(b'[{"value": 85, "axis": 0}]', "bad.json")
    assert error.startswith("bad.json: at $[0].partitions")
    assert len(state.edits) == 1  # the previous set stays
    state.reset()
    assert state.edits == [] and state.plan is state.base_plan


def test_sessions_do_not_share_state(sample_path):
    a, b = SessionState(), SessionState()
    open_into(a, sample_path)
    open_into(b, sample_path)
    a.apply_edit(TilingEdit(85, axis=0, partitions=1))
    a.select_step(3)
    a.select_values([84])
    assert b.edits == [] and b.whatif is None and b.plan is b.base_plan
    assert b.selected_step != 3 and b.selected_values == []
    assert a.edits is not b.edits and a.selected_values is not b.selected_values


def test_the_summary_shows_before_after_and_difference(state, raw):
    from tilescope.app.views.summary import summary_html

    html = summary_html(state)
    assert '<span class="ts-fig" data-testid="ts-peak-total">429,904 B (419.8 KiB)</span>' in html
    state.apply_edit(TilingEdit(85, axis=0, partitions=1))
    after = state.plan.peaks.standard  # checked by hand in test_an_edit_changes_the_plan_and_undo_restores_it
    before = raw["peak"]["standard"]
    html = summary_html(state)
    expected = (
        f"{before:,} B ({before / 1024:.1f} KiB) → {after:,} B ({after / 1024:.1f} KiB) "
        f"(+{after - before:,} B (+{(after - before) / 1024:.1f} KiB))"
    )
    assert f'data-testid="ts-peak-standard">{expected}</span>' in html
    assert expected == "206,032 B (201.2 KiB) → 271,568 B (265.2 KiB) (+65,536 B (+64.0 KiB))"


def test_format_rules():
    from tilescope.app.format import esc
    from tilescope.models.format import fmt_bytes, fmt_change, fmt_signed_bytes

    assert fmt_bytes(206_032) == "206,032 B (201.2 KiB)"
    assert fmt_bytes(0) == "0 B (0.0 KiB)"
    assert fmt_signed_bytes(-2048) == "−2,048 B (−2.0 KiB)"
    assert fmt_change(5, 5) == "5 B (0.0 KiB)"
    assert esc('<b a="1">&') == "&lt;b a=&quot;1&quot;&gt;&amp;"
