"""A search state's recipes (docs/compiler-formats.md §3): the incumbent ``$.recipe`` apart from its
plans, and each entry of ``$.visited`` with its plans, in the shape of the file's version.

- Version 1 (the sample): the settings sit on the recipe (``cast_before_copies`` as ordinal pairs
  ``[source operation, ordinal]``, ``packing_rows``, ``parallel_reductions``,
  ``disjoint_copy_sources``, ``in_place_casts``).
- Version 3: the settings sit on the recipe too, but their shapes changed (named cast sites, a
  cast-storage policy) and were not read from the compiler: they are kept as written (Debug text)
  and only the fields whose type is known from versions 1 and 8 are typed when they have it.
- Version 8: ``recipe.options`` holds six typed settings (``models.search_state.V8_OPTIONS``);
  ``open_boundaries`` are value ids of the graph.

A visited recipe's plan is located among ``$.alternatives.<op>`` by comparing the JSON objects (key
order ignored), as the incumbent's is; one equal to none of them is read and checked as a plan at
its own path (the alternatives are the incumbent's, so another recipe may hold a plan outside them).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import msgspec

from tilescope.models.errors import InputError, describe
from tilescope.models.search_state import V8_OPTIONS, ComputeGraph, OperationPlans, Recipe, RecipeOptions, RecipePlan

from .json_fields import as_integer, as_list, as_object, debug_text_of, field_of, optional_boolean, optional_integer
from .layouts import serde_to_debug_text
from .search_formats import FormatCache
from .search_plans import operation_ids, read_plan

U16_MAX = 65_535  # the compiler's tile ids and packing rows are u16


def _settings(recipe: dict, skip: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((key, serde_to_debug_text(value)) for key, value in recipe.items() if key not in skip)


def _boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(path, "true or false", describe(value))
    return value


def read_v1_recipe(recipe: dict, path: str) -> Recipe:
    pairs = []
    for i, pair in enumerate(as_list(field_of(recipe, "cast_before_copies", path, []), f"{path}.cast_before_copies")):
        where = f"{path}.cast_before_copies[{i}]"
        items = as_list(pair, where, "a pair [a, b]")
        if len(items) != 2:
            raise InputError(where, "a pair [a, b]", describe(items))
        pairs.append((as_integer(items[0], f"{where}[0]"), as_integer(items[1], f"{where}[1]")))
    boundaries = as_list(field_of(recipe, "open_boundaries", path, []), f"{path}.open_boundaries")
    return Recipe(
        open_boundaries=tuple(serde_to_debug_text(b) for b in boundaries),
        cast_before_copies=tuple(pairs),
        packing_rows=debug_text_of(recipe.get("packing_rows")),
        parallel_reductions=optional_integer(recipe.get("parallel_reductions"), f"{path}.parallel_reductions"),
        disjoint_copy_sources=optional_boolean(recipe.get("disjoint_copy_sources"), f"{path}.disjoint_copy_sources"),
        in_place_casts=debug_text_of(recipe.get("in_place_casts")),
        settings=_settings(recipe, ("plans", "open_boundaries")),
        json_path=path,
    )


def read_v3_recipe(recipe: dict, path: str) -> Recipe:
    boundaries = as_list(field_of(recipe, "open_boundaries", path, []), f"{path}.open_boundaries")
    parallel = recipe.get("parallel_reductions")
    disjoint = recipe.get("disjoint_copy_sources")
    return Recipe(
        open_boundaries=tuple(serde_to_debug_text(b) for b in boundaries),
        cast_before_copies=(),
        packing_rows=debug_text_of(recipe.get("packing_rows")),
        parallel_reductions=optional_integer(parallel, f"{path}.parallel_reductions"),
        disjoint_copy_sources=optional_boolean(disjoint, f"{path}.disjoint_copy_sources"),
        in_place_casts=None,
        settings=_settings(recipe, ("plans", "open_boundaries")),
        json_path=path,
    )


def read_v8_options(value: Any, path: str, tile_count: int) -> RecipeOptions:
    options = as_object(value, path, f"an object ({', '.join(V8_OPTIONS)})")
    for key in V8_OPTIONS:
        field_of(options, key, path)
    mapping = as_list(options["tile_mapping"], f"{path}.tile_mapping", "a list of device tiles (empty: no remapping)")
    if mapping and len(mapping) != tile_count:
        raise InputError(f"{path}.tile_mapping", f"no entries or one per tile ({tile_count:,})", describe(mapping))
    tiles = []
    for i, tile in enumerate(mapping):
        if isinstance(tile, bool) or not isinstance(tile, int) or not 0 <= tile < tile_count:
            raise InputError(f"{path}.tile_mapping[{i}]", f"a device tile from 0 to {tile_count - 1:,}", describe(tile))
        tiles.append(tile)
    packing = as_integer(options["packing_rows"], f"{path}.packing_rows")
    if packing > U16_MAX:
        raise InputError(f"{path}.packing_rows", f"an integer from 0 to {U16_MAX}", describe(packing))
    return RecipeOptions(
        cast_before_copies=_boolean(options["cast_before_copies"], f"{path}.cast_before_copies"),
        reuse_cast_inputs=_boolean(options["reuse_cast_inputs"], f"{path}.reuse_cast_inputs"),
        packing_rows=packing,
        parallel_reductions=as_integer(options["parallel_reductions"], f"{path}.parallel_reductions"),
        disjoint_copy_sources=_boolean(options["disjoint_copy_sources"], f"{path}.disjoint_copy_sources"),
        tile_mapping=tuple(tiles),
    )


def read_recipe(recipe: dict, path: str, version: int, graph: ComputeGraph, tile_count: int) -> Recipe:
    """A recipe's settings (not its plans) in the shape of ``version``."""
    if version == 8:
        return read_v8_recipe(recipe, path, graph, tile_count)
    if version == 3:
        return read_v3_recipe(recipe, path)
    return read_v1_recipe(recipe, path)


def read_v8_recipe(recipe: dict, path: str, graph: ComputeGraph, tile_count: int) -> Recipe:
    field_of(recipe, "plans", path)
    boundaries = []
    for i, item in enumerate(
        as_list(field_of(recipe, "open_boundaries", path), f"{path}.open_boundaries", "a list of value ids")
    ):
        vid = as_integer(item, f"{path}.open_boundaries[{i}]")
        if vid not in graph.shapes:
            raise InputError(f"{path}.open_boundaries[{i}]", "a value of the graph", describe(vid))
        boundaries.append(str(vid))
    opath = f"{path}.options"
    raw = as_object(field_of(recipe, "options", path), opath, f"an object ({', '.join(V8_OPTIONS)})")
    options = read_v8_options(raw, opath, tile_count)
    return Recipe(
        open_boundaries=tuple(boundaries),
        cast_before_copies=(),
        packing_rows=str(options.packing_rows),
        parallel_reductions=options.parallel_reductions,
        disjoint_copy_sources=options.disjoint_copy_sources,
        in_place_casts=None,
        settings=_settings(raw, ()) + _settings(recipe, ("plans", "open_boundaries", "options")),
        options=options,
        json_path=path,
    )


class _Locator:
    """Finds a plan among an operation's alternatives by its JSON (key order ignored), each
    alternative encoded once."""

    def __init__(self, alternatives: dict) -> None:
        self._alternatives = alternatives
        self._encoded: dict[str, dict[bytes, int]] = {}

    def index(self, key: str, plan: Any) -> int | None:
        table = self._encoded.get(key)
        if table is None:
            table = {}
            for i, candidate in enumerate(self._alternatives.get(key) or []):
                table.setdefault(msgspec.json.encode(candidate, order="sorted"), i)
            self._encoded[key] = table
        return table.get(msgspec.json.encode(plan, order="sorted"))


def read_visited(
    top: dict,
    version: int,
    graph: ComputeGraph,
    plans: dict[int, OperationPlans],
    formats: FormatCache,
    tile_count: int,
) -> tuple[Recipe, ...]:
    """``$.visited``: every recipe with its plans (each located among the alternatives, or read)."""
    listed = as_list(top.get("visited", []), "$.visited", "a list of recipes")
    alternatives = top.get("alternatives")
    locate = _Locator(alternatives if isinstance(alternatives, dict) else {})
    out = []
    for i, item in enumerate(listed):
        path = f"$.visited[{i}]"
        entry = as_object(item, path, "a recipe object (plans, open_boundaries, …)")
        recipe = read_recipe(entry, path, version, graph, tile_count)
        found: dict[int, RecipePlan] = {}
        ppath = f"{path}.plans"
        for op_id, key, value in operation_ids(as_object(field_of(entry, "plans", path), ppath), ppath, graph):
            index = locate.index(key, value)
            if index is not None and index < len(plans[op_id].alternatives):
                found[op_id] = RecipePlan(op_id, index, plans[op_id].alternatives[index])
            else:
                found[op_id] = RecipePlan(
                    op_id, None, read_plan(value, f"{ppath}.{key}", graph.operation(op_id), -1, graph, formats)
                )
        out.append(replace(recipe, plans=found))
    return tuple(out)
