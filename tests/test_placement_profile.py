"""Placement profiles (compiler-formats.md §5): the loader on generated files (``placement_profile_gen``:
several tiles, every kind, the aperture twice, support rows over the whole program, padding), its
located errors on broken ones, and the tile figures and solver problem derived from a tile, against
figures computed the simple way in the generator."""

from __future__ import annotations

import copy
import json

import pytest
from placement_profile_gen import (
    END,
    HOST,
    HOSTILE_LABEL,
    START,
    TAIL,
    is_fixed,
    live_lower_bound,
    placed_top,
    placement_profile,
)

from tilescope.derived.placement_opened import solved
from tilescope.derived.placement_profile_view import TileRows, address_bound, tile_problem
from tilescope.loaders.placement_profile import looks_like_placement_profile, parse_placement_profile
from tilescope.models.errors import InputError
from tilescope.models.placement_profile import KINDS

MAX_EVENT = 4_294_967_295


@pytest.fixture(scope="module")
def raw() -> dict:
    return placement_profile(tiles=3, seed=7)


def parse(raw: dict):
    return parse_placement_profile(json.dumps(raw).encode(), "placement-1.json")


def test_loads_every_tile_sorted_with_labels_as_text(raw):
    profile = parse(raw)
    assert profile.start == START and profile.end == END and profile.tile_count == 3
    assert profile.tiles.column("logical").to_pylist() == [t["logical"] for t in raw["tiles"]]
    assert profile.tiles.column("physical").to_pylist() == [t["physical"] for t in raw["tiles"]]
    kinds_seen = set()
    for position, tile in enumerate(raw["tiles"]):
        rows = profile.tile_rows(position).to_pylist()
        want = sorted(tile["allocations"], key=lambda r: (r["first"], r["start"], r["last"]))
        assert [(r["start"], r["end"], r["payload_end"], r["first"], r["last"], r["shards"]) for r in rows] == [
            (r["start"], r["end"], r["payload_end"], r["first"], r["last"], r["shards"]) for r in want
        ]
        assert [profile.labels[r["label"]] for r in rows] == [raw["labels"][r["label"]] for r in want]
        assert [KINDS[r["kind"]] for r in rows] == [r["kind"] for r in want]
        kinds_seen |= {r["kind"] for r in want}
    assert kinds_seen == set(KINDS)
    assert HOSTILE_LABEL in profile.labels  # kept verbatim: escaping is the views' job
    assert looks_like_placement_profile(json.dumps(raw, indent=1).encode()[:4096])
    assert not looks_like_placement_profile(b'{"version": 1, "timeline": {}}')


def test_tile_figures_match_the_simple_count(raw):
    profile = parse(raw)
    for position, tile in enumerate(raw["tiles"]):
        rows = TileRows.of(profile, position)
        allocations = tile["allocations"]
        assert rows.placed_top == placed_top(allocations)
        assert rows.live_lower_bound() == live_lower_bound(allocations)
        assert rows.aperture == HOST
        # free: the tile memory minus the image data below the aperture and the loader's tail
        assert rows.free_ranges(START, END) == ((HOST[0], TAIL[0]),)
        assert int((~rows.fixed).sum()) == sum(not is_fixed(r) for r in allocations)


def test_tile_problem_holds_the_compiler_placement_and_tilescope_places_it(raw):
    profile = parse(raw)
    rows = TileRows.of(profile, 1)
    problem, _movable = tile_problem(profile, rows)
    movable_rows = sorted(
        (r["start"], r["end"], r["first"], r["last"]) for r in raw["tiles"][1]["allocations"] if not is_fixed(r)
    )
    assert (
        sorted((s, e, q.first, q.last) for q, (s, e) in zip(problem.requests, problem.assigned_root_spans.values()))
        == movable_rows
    )
    assert problem.host_scratch_range == HOST and problem.ranges == ((HOST[0], TAIL[0]),)
    result = solved(problem, 10.0)
    assert result.verdict == "placed"
    spans = [result.spans[q.roots[0][0]] for q in problem.requests]
    # an independent check: inside the ranges, sizes kept, no two rows live together share a byte,
    # persistent and start-of-program rows out of the aperture
    for q, (s, e) in zip(problem.requests, spans):
        assert HOST[0] <= s and e <= TAIL[0] and e - s == q.bytes and s % 4 == 0
        assert not (s < 524_288 < e)
        if q.first == 0 or q.last == MAX_EVENT:
            assert not (s < HOST[1] and e > HOST[0])
    for i, (a, (s1, e1)) in enumerate(zip(problem.requests, spans)):
        for b, (s2, e2) in list(zip(problem.requests, spans))[i + 1 :]:
            if a.first <= b.last and b.first <= a.last:
                assert not (s1 < e2 and s2 < e1)
    live, _ = live_lower_bound(raw["tiles"][1]["allocations"])
    assert result.height >= address_bound(problem.ranges, live) >= HOST[0] + live


def broken(raw: dict, change) -> str:
    doc = copy.deepcopy(raw)
    change(doc)
    with pytest.raises(InputError) as info:
        parse(doc)
    return str(info.value)


def rows_of(doc: dict, tile: int) -> list[dict]:
    return doc["tiles"][tile]["allocations"]


@pytest.mark.parametrize(
    "change, where, what",
    [
        (lambda d: rows_of(d, 1)[3].update(label=10_000), "$.tiles[1].allocations[3].label", "an index into labels"),
        (lambda d: rows_of(d, 0)[2].update(kind="<b>tensor</b>"), "$.tiles[0].allocations[2].kind", "one of parameter"),
        (
            lambda d: rows_of(d, 2)[5].update(payload_end=rows_of(d, 2)[5]["end"] + 1),
            "$.tiles[2].allocations[5]",
            "start ≤ payload_end ≤ end",
        ),
        (lambda d: rows_of(d, 0)[1].update(first=9, last=3), "$.tiles[0].allocations[1]", "first ≤ last"),
        (
            lambda d: rows_of(d, 0)[0].update(end=END + 32, payload_end=END + 32),
            "$.tiles[0].allocations[0]",
            "inside the file's",
        ),
        (lambda d: rows_of(d, 1)[0].pop("start"), "$.tiles[1].allocations[0].start", "a field `start`"),
        (lambda d: rows_of(d, 1)[0].update(start=-5), "$.tiles[1].allocations[0].start", ">= 0"),
        (lambda d: d["tiles"][2].update(logical=0), "$.tiles[2].logical", "a logical index not used before"),
        (lambda d: d.update(schema_version=2), "$.schema_version", "schema version 1"),
        (lambda d: d.pop("schema_version"), "$.schema_version", "a field `schema_version`"),
    ],
)
def test_bad_files_are_located(raw, change, where, what):
    message = broken(raw, change)
    assert message.startswith("placement-1.json: ") and f"at {where}:" in message and what in message, message
    assert "\n" not in message


def test_not_json_and_not_an_object():
    with pytest.raises(InputError, match=r"placement-1.json: at byte 32 .line 1, column 33.: expected more JSON"):
        parse_placement_profile(b'{"schema_version": 1, "tiles": [', "placement-1.json")
    with pytest.raises(InputError, match="a JSON object"):
        parse_placement_profile(b"[1, 2]", "placement-1.json")


def test_tile_estimate_from_runs():
    """A dense tile_usage written by hand, its runs, and the estimate read back for each tile."""
    import pyarrow as pa

    from tilescope.derived.tile_estimate import TileEstimate

    usage = [  # step → tile → (standard, interleaved)
        [(5, 1), (5, 1), (0, 0), (7, 0)],
        [(0, 0), (0, 0), (0, 0), (0, 0)],
        [(2, 9), (3, 9), (3, 9), (3, 9)],
    ]
    runs = {"step": [], "tile_start": [], "tile_stop": [], "usage_standard": [], "usage_interleaved": []}
    for step, row in enumerate(usage):
        t = 0
        while t < len(row):
            stop = t
            while stop < len(row) and row[stop] == row[t]:
                stop += 1
            if row[t] != (0, 0):  # all-zero runs are not stored
                for k, v in zip(runs, (step, t, stop, *row[t])):
                    runs[k].append(v)
            t = stop
    table = pa.table(runs)
    for tile in range(4):
        estimate = TileEstimate.of(table, 3, tile)
        assert estimate.standard.tolist() == [usage[s][tile][0] for s in range(3)]
        assert estimate.interleaved.tolist() == [usage[s][tile][1] for s in range(3)]
    assert TileEstimate.of(table, 3, 3).peak == (12, 2)  # 3 + 9 at step 2 beats 7 at step 0
    assert TileEstimate.of(table, 3, 0).peak == (11, 2)
    assert "exactly the placement's live lower bound" in TileEstimate.of(table, 3, 0).sentence(11, 40)


def test_tile_estimate_of_a_v2_profile(tmp_path):
    """A v2 profile written by the spec's own generator (``profile_generator``), loaded by the
    v2/v3 loader: each tile's estimate is its recorded ``tile_usage`` column of the raw JSON."""
    from profile_generator import program_18, write

    from tilescope.derived.tile_estimate import TileEstimate
    from tilescope.loaders.memory_profile import load_memory_profile

    path = write(program_18(), 2, tmp_path / "p.memory_profile.json")
    raw = json.loads(path.read_text())
    profile = load_memory_profile(path)
    steps = raw["timeline"]["steps"]
    for tile in range(raw["tile_count"]):
        estimate = TileEstimate.of(profile.step_tiles, len(steps), tile)
        assert estimate.standard.tolist() == [s["tile_usage"][tile][0] for s in steps]
        assert estimate.interleaved.tolist() == [s["tile_usage"][tile][1] for s in steps]


def test_no_tiles_and_a_tile_without_allocations():
    empty = parse_placement_profile(
        b'{"schema_version": 1, "start": 0, "end": 10, "labels": [], "tiles": []}', "e.json"
    )
    assert empty.tile_count == 0 and empty.allocations.num_rows == 0
    one = parse_placement_profile(
        b'{"schema_version": 1, "start": 0, "end": 10, "labels": [], "tiles": [{"logical": 5, "physical": 9, "allocations": []}]}',
        "e.json",
    )
    assert one.tiles.to_pylist() == [{"logical": 5, "physical": 9, "first_row": 0, "rows": 0}]
    rows = TileRows.of(one, 0)
    assert rows.placed_top == 0 and rows.live_lower_bound() == (0, 0) and rows.free_ranges(0, 10) == ((0, 10),)
