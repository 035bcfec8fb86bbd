"""Search state (docs/formats.md §3; versions 1, 3 and 8 of docs/compiler-formats.md §3) →
validated ``SearchState`` (``models.search_state``).

The file is one JSON object. Its ``context`` holds Rust ``Debug`` text, one value per line: the
``ComputeGraph``, the ``PipelineConfig`` and a third value (``None`` in the sample, kept as text),
read by ``loaders.search_context``. The rest is serde JSON: the formats (``loaders.search_formats``)
and the plans and bookkeeping (``loaders.search_plans``), the recipe and the visited recipes
in the shape of the file's version (``loaders.search_recipes``). Both spellings of a format
become the one tiling model (``models.tiling``) through ``loaders.layouts``. The Arrow tables are
built by ``loaders.search_tables.search_state_tables``.

Choices made here (docs/formats.md leaves them open):
- Input formats are written twice: ``PipelineConfig.inputs`` (Debug) and ``$.inputs`` (serde).
  The serde spelling is the one used (``INPUT_FORMAT_SOURCE``); a value both spell must get equal
  formats, else the file is rejected at the first difference. A value only one of them spells is
  taken from that one, and the ``formats`` table's ``source`` column says which.
- The chosen plan (``$.recipe.plans.<op>``) is located among ``$.alternatives.<op>`` by comparing
  the JSON objects (key order ignored). The first equal alternative is taken; none equal is an error.
- A plan's output requirement applies to the operation's only result; with several results its
  ``value_id`` and ``shard_bytes`` are null.

Every malformed input raises ``InputError`` with a JSON path (``$.recipe.plans.0.requirements…``)
or, inside the context, ``$.context line N`` followed by the position or the Debug field path.
An object naming a key twice is refused at the second (``loaders.json_scan``).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from tilescope.models.errors import InputError, describe
from tilescope.models.search_state import SEARCH_STATE_VERSIONS, V8_KEYS, SearchState

from .json_fields import as_object, field_of
from .json_input import read_bytes
from .json_scan import decode_error, nesting_error, refuse_deep_nesting, refuse_duplicate_keys
from .layouts import parse_debug_at
from .search_context import CONFIG_LINE, GRAPH_LINE, context_lines, read_config, read_graph
from .search_formats import FormatCache, read_input_formats
from .search_plans import read_bookkeeping, read_plans
from .search_recipes import read_recipe, read_visited


def _decode(data: bytes) -> dict:
    try:
        top = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise decode_error(data, exc) from None
    except RecursionError:  # msgspec decodes nested JSON recursively
        raise nesting_error(data) from None
    refuse_deep_nesting(data)
    refuse_duplicate_keys(data)
    if not isinstance(top, dict):
        raise InputError("$", "a JSON object (a search state)", describe(top))
    if "timeline" in top:
        raise InputError("$", "a search state", "a memory profile")
    version = field_of(top, "version", "$")
    if isinstance(version, bool) or not isinstance(version, int) or version not in SEARCH_STATE_VERSIONS:
        raise InputError(
            "$.version",
            f"version {', '.join(map(str, SEARCH_STATE_VERSIONS[:-1]))} or {SEARCH_STATE_VERSIONS[-1]}",
            describe(version),
        )
    if version == 8:
        # The compiler writes exactly these keys; a `mapping` here is a version 3 file mislabelled.
        for key in top:
            if key not in V8_KEYS:
                raise InputError(
                    f"$.{key}", f"only the keys of a version 8 search state ({', '.join(V8_KEYS)})", f"a key `{key}`"
                )
        for key in V8_KEYS:
            field_of(top, key, "$")
    return top


def parse_search_state(data: bytes, source: str = "<search state>") -> SearchState:
    """Validate and read a search state's bytes. Errors name ``source``."""
    data = bytes(data)  # (a small file: any bytes-like input becomes bytes)
    try:
        top = _decode(data)
        lines = context_lines(top)
        graph = read_graph(parse_debug_at(lines[0], f"$.context line {GRAPH_LINE}"))
        options, texts, debug_formats = read_config(parse_debug_at(lines[1], f"$.context line {CONFIG_LINE}"))
        for n, line in enumerate(lines[2:], start=CONFIG_LINE + 1):
            parse_debug_at(line, f"$.context line {n}")  # checked, kept as written
        formats = FormatCache()
        input_formats = read_input_formats(top, debug_formats, graph, formats)
        recipe = as_object(field_of(top, "recipe", "$"), "$.recipe")
        plans = read_plans(recipe, top, graph, formats)
        version = int(top["version"])
        tile_count = int(options["tile_count"])  # type: ignore[arg-type]  # checked by read_config
        return SearchState(
            source=source,
            version=version,
            graph=graph,
            options=options,
            option_text=texts,
            input_formats=input_formats,
            plans=plans,
            recipe=read_recipe(recipe, "$.recipe", version, graph, tile_count),
            bookkeeping=read_bookkeeping(top),
            context_rest=tuple(lines[2:]),
            visited=read_visited(top, version, graph, plans, formats, tile_count),
        )
    except RecursionError:
        # The recursive readers here and in loaders.layouts give up on very deep nesting (the
        # Debug parser refuses text nested past debug_text.MAX_DEPTH first).
        raise InputError("$", "JSON nested a few hundred levels deep at most", "deeper nesting", file=source) from None
    except InputError as exc:
        raise exc.in_file(source) from None


def load_search_state(path: str | Path) -> SearchState:
    """Read ``*.search_state.json``. Input formats come from ``$.inputs`` (see the module doc)."""
    return parse_search_state(read_bytes(path), str(path))
