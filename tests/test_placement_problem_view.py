"""The dump view's derived data (``derived.placement_problem_view``) on the compiler's own fixtures:
one rectangle per request at its lifetime and its group's span, the conflict partners, the element
grid, and the exports of tilescope's placement, checked by ``dump_check`` (rules read from the raw
JSON; no code shared with the solver or the view)."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest
from dump_check import conflict_partners, problems

from tilescope.derived.placement_opened import solved
from tilescope.derived.placement_problem_view import Picture, ProblemGeometry, solution_csv, solution_json
from tilescope.loaders.placement_dump import load_placement_dump
from tilescope.report.placement_problem_png import problem_png

# ``../shared/bench`` beside the repository (a worktree elsewhere names it in TILESCOPE_SHARED_BENCH)
BENCH = (
    Path(os.environ.get("TILESCOPE_SHARED_BENCH", Path(__file__).resolve().parent.parent.parent / "shared" / "bench"))
    / "ipu-stack-placement"
)
MAX_EVENT = 4_294_967_295


def fixture(name: str):
    path = BENCH / f"{name}.json"
    if not path.exists():
        pytest.skip(f"{path} is not here")
    return json.loads(path.read_text()), load_placement_dump(path, path.name)


def test_rectangles_are_the_requests():
    raw, problem = fixture("fragmented")
    geometry = ProblemGeometry.of(problem)
    finite = [e for r in raw["requests"] for e in (r["lifetime"]["first"], r["lifetime"]["last"]) if e != MAX_EVENT]
    end_x = max(finite) + 1
    # A made-up placement (every other request, stacked): each one placed is one rectangle.
    spans, at = {}, 0
    for i, r in enumerate(raw["requests"]):
        if i % 2 == 0:
            for root, _ in r["assignments"]:
                spans[root] = (at, at + r["bytes"])
            at += r["bytes"]
    picture = Picture.of(geometry, spans)
    assert picture.missing == tuple(range(1, len(raw["requests"]), 2))
    assert picture.height == at
    got = sorted(
        zip(
            picture.request.tolist(),
            picture.left.tolist(),
            picture.right.tolist(),
            picture.bottom.tolist(),
            picture.top.tolist(),
        )
    )
    want = []
    for i, r in enumerate(raw["requests"]):
        if i % 2 == 0:
            life = r["lifetime"]
            last = end_x if life["last"] == MAX_EVENT else life["last"]
            span = spans[r["assignments"][0][0]]
            want.append((i, life["first"] - 0.5, last + 0.5, float(span[0]), float(span[1])))
    assert got == want


def test_conflict_partners_and_grid():
    raw, problem = fixture("fragmented")
    geometry = ProblemGeometry.of(problem)
    expected = conflict_partners(raw)
    assert [set(p) for p in geometry.partners] == expected
    assert sum(len(p) for p in expected) // 2 == 47  # the fixture README's count of conflict edges
    low, high = raw["ranges"][0][0], raw["ranges"][-1][1]
    lines = geometry.grid()
    assert lines == sorted(lines)
    want = [a for a in range(0, 524_288 + 1, 16_384) if low <= a <= high] + list(
        range(524_288 + 32_768, high + 1, 32_768)
    )
    assert lines == want


def test_solution_exports_pass_an_independent_check():
    raw, problem = fixture("bank-branching")
    result = solved(problem, 10.0)
    assert result.verdict == "placed"
    rows = list(csv.DictReader(io.StringIO(solution_csv(problem, result.spans))))
    assert [int(r["request"]) for r in rows] == list(range(len(raw["requests"])))
    spans = {int(r["request"]): (int(r["start"]), int(r["end"])) for r in rows}
    assert problems(raw, spans) == []
    assert max(e for _, e in spans.values()) == result.height
    data = json.loads(solution_json(problem, result.spans, result.verdict, "tilescope"))
    assert (
        data["verdict"] == "placed"
        and problems(raw, {r["request"]: (r["start"], r["end"]) for r in data["requests"]}) == []
    )
    png = problem_png(ProblemGeometry.of(problem), result.spans, result.headline)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000


def test_overcapacity_is_infeasible_with_its_proof():
    raw, problem = fixture("overcapacity")
    result = solved(problem, 10.0)
    assert result.verdict == "infeasible" and "16,328" in result.headline and result.spans == {}
    # the README's figures: 515,200 B live against 498,872 B available
    assert sum(e - s for s, e in raw["ranges"]) == 498_872
    assert "515,200" in result.proof and "498,872" in result.proof


def test_version_1_dump_draws_the_compilers_placement(tmp_path):
    """A version-1 dump (§4: ``placed``, the region constants, ``assigned_root_spans``), made from the
    fixture and a placement of it: the compiler's picture has one rectangle per request at its span,
    and the view's header says how many the compiler placed."""
    from tilescope.app.views.placement_problem import PlacementProblemView
    from tilescope.derived.placement_opened import OpenedPlacementDump

    raw, problem = fixture("bank-branching")
    spans = solved(problem, 10.0).spans
    dump = dict(
        raw,
        version=1,
        tile=40,
        placed=True,
        region_boundary=524_288,
        region0_element_bytes=16_384,
        region1_element_bytes=32_768,
        host_scratch_range=[327_680, 360_448],
        assigned_root_spans={str(root): list(span) for root, span in spans.items()},
    )
    path = tmp_path / "tile-40-0123456789abcdef.json"
    path.write_text(json.dumps(dump))
    opened = OpenedPlacementDump(path.name, load_placement_dump(path, path.name))
    picture = Picture.of(opened.geometry, opened.problem.assigned_root_spans)
    assert picture.missing == ()
    for k, bottom, top in zip(picture.request.tolist(), picture.bottom.tolist(), picture.top.tolist()):
        root = raw["requests"][k]["assignments"][0][0]
        assert (bottom, top) == tuple(float(v) for v in spans[root])
    view = PlacementProblemView(opened=opened)
    assert (
        "tile 40" in view.head.object
        and "The compiler placed it; its assigned_root_spans place 101 of 101 requests" in view.head.object
    )
    view.which.value = "the compiler's placement"
    assert len(view.rects.data["left"]) == len(raw["requests"])


def test_out_of_time_is_unknown_never_placed():
    """bank-branching needs the search (every first-fit order fails, fixture README); with no time
    for it the answer is "unknown", with what the best attempt reached, and the view says so."""
    from tilescope.app.views.placement_problem import PlacementProblemView
    from tilescope.derived.placement_opened import OpenedPlacementDump

    raw, problem = fixture("bank-branching")
    result = solved(problem, 0.0)
    assert result.verdict == "unknown" and result.headline.startswith("unknown")
    picture = Picture.of(ProblemGeometry.of(problem), result.spans)
    assert len(picture.missing) > 0  # a partial placement: some request found no room
    assert problems(raw, dict.fromkeys(range(len(raw["requests"])), (0, 0)))  # (the checker does refuse a bad one)
    view = PlacementProblemView(opened=OpenedPlacementDump("b.json", problem))
    view._show(result)
    assert 'data-testid="ts-dump-verdict">unknown' in view.head.object


def test_both_placement_kinds_open_from_bytes_as_an_upload_does():
    """The registry recognises a dump and a placement profile from their bytes (the upload box's path)."""
    from placement_profile_gen import placement_profile

    from tilescope.derived.opening import Source, open_file

    raw, _ = fixture("fragmented")
    dump = open_file(Source.of_bytes(json.dumps(raw).encode(), "up.json"), prepare=True)
    assert dump.kind == "placement_dump" and len(dump.problem.requests) == len(raw["requests"])
    profile = open_file(
        Source.of_bytes(json.dumps(placement_profile(tiles=2)).encode(), "placement-1.json"), prepare=True
    )
    assert profile.kind == "placement_profile" and profile.profile.tile_count == 2
