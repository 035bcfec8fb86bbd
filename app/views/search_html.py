"""The search-state view's HTML: the graph, the config, the recipe, the visited recipes and the formats
table (all file text escaped)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from tilescope.app.format import esc
from tilescope.derived.search_rows import (
    CHOSEN,
    OUTPUT_KEY,
    FormatPair,
    conversion_text,
    format_detail,
    format_figures,
    value_label,
)
from tilescope.derived.search_visited import NO_REASON, VisitedRow, mapping_text, setting_text
from tilescope.models.format import fmt_bytes, shorten
from tilescope.models.search_state import SearchState
from tilescope.models.tiling import TensorFormat

# Key figures of the PipelineConfig, in the order shown; other `*_bytes` options are listed as bytes too.
KEY_FIGURES = (
    ("tile_count", "tile count"),
    ("tile_memory_budget_bytes", "tile memory budget"),
    ("standard_memory_reservation_bytes", "standard memory reservation"),
    ("exchange_table_budget_bytes", "exchange table budget"),
)
# Tabulator lays the frozen-rows holder inline after the header cells, so a table wider than its
# box pushes the pinned (chosen) row out of sight to the right; a block puts it under the header.
TABLE_CSS = ".tabulator-header .tabulator-frozen-rows-holder { display: block !important; }"
CHOSEN_ROW_STYLE = (
    "background-color: #fde68a; color: #1f2933; font-weight: 600"  # dark ink on pale yellow in either theme
)


def chosen_row_styles(frame: pd.DataFrame) -> pd.DataFrame:
    """Cell styles for the table: the chosen row tinted (whole frame at once; row-wise is slow)."""
    styles = pd.DataFrame("", index=frame.index, columns=frame.columns)
    if CHOSEN in frame:
        styles.loc[frame[CHOSEN] != ""] = CHOSEN_ROW_STYLE
    return styles


def _shape(shape: Sequence[int] | None) -> str:
    return "—" if shape is None else "[" + ", ".join(str(int(d)) for d in shape) + "]"


def graph_html(state: SearchState) -> str:
    g = state.graph
    inputs = "".join(
        f"<tr><td>{esc(i.name)}</td><td>{esc(i.kind)}</td><td>value {i.value}</td><td>{esc(_shape(i.shape))}</td></tr>"
        for i in g.inputs
    )

    def values(ids: Sequence[int]) -> str:
        return ", ".join(f"{esc(value_label(state, v))} {esc(_shape(g.shapes[v]))}" for v in ids)

    operations = "".join(
        f"<tr><td>{op.id}</td><td title='{esc(op.kind)}'><b>{esc(op.kind_name)}</b></td><td>{values(op.inputs)}</td>"
        f"<td>→ {values(op.results)}</td></tr>"
        f"<tr><td></td><td colspan='3' class='ts-debug'>{esc(shorten(op.kind, 400))}</td></tr>"
        for op in g.operations
    )
    outputs = "".join(
        f"<tr><td>value {v}</td><td>{esc(_shape(g.shapes[v]))}</td>"
        f"<td>{'from operation ' + str(g.producer(v)) if g.producer(v) is not None else 'a graph input'}</td></tr>"
        for v in g.outputs
    )
    return (
        "<div class='ts-sv' data-testid='ts-search-graph'><h3>Graph</h3><div class='ts-grid'>"
        f"<div><h4>Inputs</h4><table><tr><th>name</th><th>kind</th><th>value</th><th>shape</th></tr>{inputs}</table></div>"
        f"<div><h4>Operations</h4><table><tr><th>id</th><th>kind</th><th>inputs</th><th>results</th></tr>{operations}</table></div>"
        f"<div><h4>Outputs</h4><table><tr><th>value</th><th>shape</th><th></th></tr>{outputs}</table></div>"
        "</div></div>"
    )


def config_html(state: SearchState) -> str:
    options = state.options
    rows = []
    shown = set()
    for name, label in KEY_FIGURES:
        value = options.get(name)
        if name not in options:
            continue
        shown.add(name)
        if value is None:
            text = "none"
        elif not isinstance(value, int):  # (the loader reads these four as integers: anything else as written)
            text = str(value)
        elif name == "tile_count":
            text = f"{value:,} tiles"
        else:
            text = fmt_bytes(value)
        rows.append(
            f"<tr><td class='k'>{esc(label)}</td><td class='ts-big' data-figure='{esc(name)}'>{esc(text)}</td></tr>"
        )
    for name, value in options.items():
        if name in shown or not name.endswith("_bytes") or not isinstance(value, int) or isinstance(value, bool):
            continue
        shown.add(name)
        rows.append(
            f"<tr><td class='k'>{esc(name)}</td><td data-figure='{esc(name)}'>{esc(fmt_bytes(value))}</td></tr>"
        )
    others = "".join(
        f"<tr><td class='k'>{esc(name)}</td><td class='ts-debug'>{esc(shorten(text, 200))}</td></tr>"
        for name, text in state.option_text.items()
        if name not in shown
    )
    rest = "".join(f"<div class='ts-debug'>{esc(shorten(line, 300))}</div>" for line in state.context_rest)
    return (
        "<div class='ts-sv' data-testid='ts-search-config'><h3>Pipeline config</h3><div class='ts-grid'>"
        f"<table>{''.join(rows)}</table>"
        f"<details><summary>{len(state.option_text) - len(shown)} more options</summary><table>{others}</table></details>"
        f"<div class='ts-note'>{'context after the config (the tile-mapping argument):' if rest else ''}{rest}</div>"
        "</div></div>"
    )


def _mapping_words(text: str | None) -> str:
    """``$.mapping`` (Debug text of a list of tiles, or None) in words."""
    if text is None:
        return "none"
    found = re.fullmatch(r"\[\s*(\d+(?:\s*,\s*\d+)*)?\s*\]", text)
    if found is None:
        return shorten(text, 160)
    return mapping_text([int(t) for t in found.group(1).split(",")] if found.group(1) else [])


def recipe_html(state: SearchState) -> str:
    """The incumbent recipe: each operation's plan, the open boundaries, every setting, and the
    search's bookkeeping."""
    recipe, book = state.recipe, state.bookkeeping
    plans = "".join(
        f"<tr><td class='k'>operation {op}</td><td data-testid='ts-recipe-plan-{op}'>"
        + (f"alternative {p.chosen} of {len(p.alternatives):,}" if p.chosen is not None else "no plan")
        + "</td></tr>"
        for op, p in state.plans.items()
    )
    boundaries = ", ".join(f"value {esc(b)}" for b in recipe.open_boundaries) or "none"
    where = "recipe.options" if recipe.options is not None else "the recipe"
    settings = "".join(
        f"<tr><td class='k'>{esc(name)}</td><td data-testid='ts-recipe-setting-{esc(name)}'>{esc(setting_text(name, text, recipe))}</td></tr>"
        for name, text in recipe.settings
    )
    notes = []
    if state.version == 1 and recipe.cast_before_copies:
        notes.append("cast_before_copies holds ordinal cast sites [source operation, ordinal] (version 1).")
    if state.version == 3:
        notes.append("Version 3 settings are shown as written (their shapes were not read from the compiler).")
    if state.version == 8:
        mapping = "the tile mapping is recipe.options.tile_mapping (version 8 has no top-level mapping)"
    else:
        checked = {True: "yes", False: "no", None: "not given"}[book.mapping_checked]
        mapping = f"mapping {_mapping_words(book.mapping)}; mapping checked: {checked}"
    bookkeeping = (
        f"{book.attempts if book.attempts is not None else 'unknown'} attempts; {book.visited:,} visited; {mapping}"
    )
    return (
        f"<div class='ts-sv' data-testid='ts-search-recipe'><h3>Recipe (the incumbent) · version {state.version} file</h3>"
        "<div class='ts-grid'>"
        f"<div><h4>Plans</h4><table>{plans}</table><h4>Open boundaries</h4><div data-testid='ts-recipe-boundaries'>{boundaries}</div></div>"
        f"<div><h4>Settings ({esc(where)})</h4><table>{settings}</table></div>"
        "</div>"
        + "".join(f"<div class='ts-note'>{esc(n)}</div>" for n in notes)
        + f"<div class='ts-note' data-testid='ts-search-bookkeeping'>search: {esc(bookkeeping)}</div></div>"
    )


VISITED_SHOWN = 200


def visited_html(rows: list[VisitedRow]) -> str:
    """The visited recipes, each with how it differs from the incumbent."""
    if not rows:
        body = "<div class='ts-note'>No visited recipes in the file.</div>"
    else:
        lines = []
        for row in rows[:VISITED_SHOWN]:
            parts = row.parts
            what = "nothing: the same recipe as the incumbent" if not parts else "<br>".join(esc(p) for p in parts)
            lines.append(
                f"<tr data-testid='ts-visited-row' data-index='{row.index}'><td>{row.index}</td>"
                f"<td class='{'ts-same' if not parts else 'ts-differs'}'>{what}</td></tr>"
            )
        more = f"<div class='ts-note'>and {len(rows) - VISITED_SHOWN:,} more</div>" if len(rows) > VISITED_SHOWN else ""
        body = f"<table class='ts-visited'><tr><th>#</th><th>differs from the incumbent in</th></tr>{''.join(lines)}</table>{more}"
    return (
        f"<div class='ts-sv' data-testid='ts-search-visited'><h3>Visited recipes (<span data-testid='ts-visited-count'>{len(rows):,}</span>)</h3>"
        f"<div class='ts-note'>{esc(NO_REASON)}</div>{body}</div>"
    )


def _format_cell(fmt: TensorFormat, shard: int | None, testid: str) -> str:
    return (
        f"<div class='ts-big' data-testid='{testid}'>{esc(format_figures(fmt, shard))}</div>"
        f"<div class='ts-debug'>{esc(format_detail(fmt))}</div>"
    )


def formats_html(pairs: list[FormatPair]) -> str:
    if not pairs:
        return "<div class='ts-sv'><p>This operation has no chosen plan.</p></div>"
    rows = []
    for pair in pairs:
        name = (
            f"{esc(pair.label)}<div class='ts-note'>{'output' if pair.key == OUTPUT_KEY else 'input ' + pair.key}"
            f"{'' if pair.value is None else f', value {pair.value}'}, shape {esc(_shape(pair.shape))}</div>"
        )
        if pair.key == OUTPUT_KEY:
            arrives = "<span class='ts-note'>produced by this operation</span>"
        elif pair.arrives is None:
            arrives = "<span class='ts-note'>not given by the file</span>"
        else:
            arrives = _format_cell(pair.arrives.format, pair.arrives.shard_bytes, f"ts-arrives-{pair.key}")
        required = _format_cell(pair.required.format, pair.required.shard_bytes, f"ts-required-{pair.key}")
        conversion = conversion_text(pair)
        css = "ts-conv" if pair.converts else "ts-same"
        rows.append(
            f"<tr data-key='{esc(pair.key)}'><td>{name}</td><td>{arrives}</td><td class='ts-arrow'>→</td><td>{required}</td>"
            f"<td class='{css}' data-testid='ts-conversion-{esc(pair.key)}'>{esc(conversion)}</td></tr>"
        )
    return (
        "<div class='ts-sv' data-testid='ts-search-formats'><h4>Formats: as they arrive → as the chosen plan requires</h4>"
        "<table class='ts-formats'><tr><th>input</th><th>arrives in</th><th></th><th>plan requires (output: produces)</th><th>conversion</th></tr>"
        f"{''.join(rows)}</table>"
        "<div class='ts-note'>bytes are per tile: the largest shard (docs/formats.md §2)</div></div>"
    )
