"""Search states of versions 8 and 3 (docs/compiler-formats.md §3) written from the v1 sample's
content: its graph, config, alternatives and inputs, with a recipe of the later shape and visited
recipes that each differ from the incumbent in a known way (``VISITED_CHANGES``).

The compiler's own files of those versions are not public; these follow the shapes the spec read
from ``planner/checkpoint.rs`` and ``planner/recipe.rs``. Tests compute what they expect from the
written JSON themselves (never from tilescope's reader).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_data" / "flash_attention.search_state.json"
if not SAMPLE.exists():
    SAMPLE = REPO.parent / "shared" / "samples" / "flash_attention.search_state.json"

OPERATION = "0"
INCUMBENT_ALTERNATIVE = 128  # the sample's chosen plan (docs/formats.md §3)
OTHER_ALTERNATIVE = 57
ROTATION = 5  # the incumbent's tile mapping: tile t → (t + 5) mod tiles

# What each visited recipe changes from the incumbent, in file order.
VISITED_CHANGES = (
    "another alternative",  # operation 0's plan is alternative 57
    "options",  # cast_before_copies off, packing_rows 4
    "open boundary added",  # value 0 joins the open boundaries
    "plan outside the alternatives",  # alternative 128 with query_key.rows 97
    "nothing",  # a copy of the incumbent
    "tile mapping",  # no remapping (an empty tile_mapping)
)


def sample() -> dict:
    return json.loads(SAMPLE.read_text())


def _v8_context(raw: dict, mapping: list[int] | None) -> str:
    graph, config, _ = raw["context"].split("\n")
    # Newer graphs no longer carry the value registry and the sequence counter (spec §3.2).
    graph = re.sub(r", values: \{[^}]*\}", "", graph).replace(", next_sequence: 0", "")
    third = "None" if mapping is None else "Some([" + ", ".join(map(str, mapping)) + "])"
    return f"{graph}\n{config}\n{third}"


def _options(tiles: int, **changes) -> dict:
    options = {
        "cast_before_copies": True,
        "reuse_cast_inputs": False,
        "packing_rows": 0,
        "parallel_reductions": 0,
        "disjoint_copy_sources": False,
        "tile_mapping": [(t + ROTATION) % tiles for t in range(tiles)],
    }
    options.update(changes)
    return options


def v8_document(raw: dict | None = None) -> dict:
    """A version 8 search state: the sample's content, the recipe and six visited recipes."""
    raw = copy.deepcopy(raw or sample())
    tiles = int(re.search(r"PipelineConfig \{ tile_count: (\d+)", raw["context"]).group(1))
    alternatives = raw["alternatives"][OPERATION]
    incumbent_plan = alternatives[INCUMBENT_ALTERNATIVE]

    def recipe(plan=incumbent_plan, boundaries=(3,), **options) -> dict:
        return {
            "plans": {OPERATION: copy.deepcopy(plan)},
            "open_boundaries": list(boundaries),
            "options": _options(tiles, **options),
        }

    outside = copy.deepcopy(incumbent_plan)
    outside["dispatch"]["Attention"]["query_key"]["rows"] = 97  # no alternative has 97 rows
    visited = [
        recipe(plan=alternatives[OTHER_ALTERNATIVE]),
        recipe(cast_before_copies=False, packing_rows=4),
        recipe(boundaries=(0, 3)),
        recipe(plan=outside),
        recipe(),
        recipe(tile_mapping=[]),
    ]
    assert len(visited) == len(VISITED_CHANGES)
    mapping = [(t + ROTATION) % tiles for t in range(tiles)]
    return {
        "version": 8,
        "context": _v8_context(raw, mapping),
        "recipe": recipe(),
        "alternatives": raw["alternatives"],
        "inputs": raw["inputs"],
        "visited": visited,
        "attempts": 23,
    }


def v3_document(raw: dict | None = None) -> dict:
    """A version 3 search state: settings on the recipe (named cast sites, a cast-storage policy),
    ``mapping`` and ``mapping_checked`` at the top, one visited recipe."""
    raw = copy.deepcopy(raw or sample())
    tiles = int(re.search(r"PipelineConfig \{ tile_count: (\d+)", raw["context"]).group(1))
    plan = raw["recipe"]["plans"][OPERATION]
    mapping = [(t + ROTATION) % tiles for t in range(tiles)]

    def recipe(parallel: int) -> dict:
        return {
            "plans": {OPERATION: copy.deepcopy(plan)},
            "open_boundaries": [],
            "cast_before_copies": [],
            "cast_storage": None,
            "packing_rows": None,
            "parallel_reductions": parallel,
            "disjoint_copy_sources": False,
        }

    return {
        "version": 3,
        "context": raw["context"],
        "recipe": recipe(0),
        "alternatives": raw["alternatives"],
        "inputs": raw["inputs"],
        "visited": [recipe(2)],
        "mapping": mapping,
        "mapping_checked": True,
        "attempts": 17,
    }


def write(document: dict, path: Path) -> Path:
    """Compact JSON, as the compiler writes it."""
    path.write_text(json.dumps(document, separators=(",", ":")))
    return path
