"""The search-state view: the planner's saved search for a graph (docs/formats.md §3).

What it shows, top to bottom:
- the graph: inputs, operations and outputs with their shapes;
- the config's key figures (tile count, tile memory budget, reservation, the other byte budgets) and
  the remaining options as written;
- per operation (a picker when the graph has several): the chosen plan among its alternatives, as
  a sortable table of the dispatch parameters (the chosen row marked, pinned on top and tinted) and
  a scatter of the alternatives over two numeric parameters the user picks (chosen one starred);
- per input, the format it arrives in beside the format the plan requires (tile count and bytes
  per tile), so a conversion and its cost are visible;
- a tiling editor on a required format: the drag bands and numeric inputs of
  ``app.tiling_widget.TilingWidget``; shard bytes follow live (``planner.shards.shard_bytes``) and an
  invalid count is refused with the rule it breaks, shown at its handle.

Construct as ``SearchStateView(search_state=<models.search_state.SearchState>)``, or, as the app
does, ``SearchStateView(state=<app.state.SessionState>)`` whose ``search_state`` holds the file's
bytes (parsed here; a file that does not validate shows its located one-line error).
``SearchStateView.from_path(path)`` loads a file.

Edits here are explorations of one required format; they are kept per view (per session) and do
not change the file or the plan. Rules an edit must keep (docs/formats.md §2, "Invariants"):
1 <= partitions <= blocks on each axis (``planner.shards.axis_blocks``), replicas >= 1, and the
tiling's tile count (product of partitions times replicas) at most the config's ``tile_count``.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import panel as pn
import param
import pyarrow as pa
import pyarrow.compute as pc
from bokeh.core.properties import value as text_value
from bokeh.models import ColumnDataSource, HoverTool, PlainText
from bokeh.plotting import figure

from tilescope.loaders.search_state import load_search_state, parse_search_state
from tilescope.loaders.search_tables import search_state_tables
from tilescope.models.search_schemas import PLANS_FIXED
from tilescope.models.search_state import InputFormat, Requirement, SearchState
from tilescope.models.tiling import TensorFormat, TensorTiling
from tilescope.planner.shards import ShapeMismatch, axis_blocks, shard_bytes

from .format import esc
from tilescope.models.format import fmt_bytes, fmt_signed_bytes, shorten
from .state import SessionState, error_text
from .tiling_widget import REPLICAS_KEY, TilingWidget, axis_bands, count_inputs

OUTPUT_KEY = "output"  # the editor target of an operation's output requirement
CHOSEN_MARK = "★ chosen"
ALTERNATIVE = "alternative"
CHOSEN = "chosen"
# Key figures of the PipelineConfig, in the order shown; other `*_bytes` options are listed as bytes too.
KEY_FIGURES = (
    ("tile_count", "tile count"),
    ("tile_memory_budget_bytes", "tile memory budget"),
    ("standard_memory_reservation_bytes", "standard memory reservation"),
    ("exchange_table_budget_bytes", "exchange table budget"),
)

CSS = """
.ts-sv { font-size: 13px; line-height: 1.45; color: #1f2933; }
.ts-sv h3 { margin: 4px 0 6px; font-size: 15px; }
.ts-sv h4 { margin: 2px 0 4px; font-size: 13.5px; }
.ts-sv table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
.ts-sv th { text-align: left; font-weight: 600; color: #52606d; padding: 2px 14px 2px 0; white-space: nowrap; border-bottom: 1px solid #d9e2ec; }
.ts-sv td { padding: 3px 14px 3px 0; vertical-align: top; white-space: nowrap; }
.ts-sv td.k { color: #52606d; }
.ts-sv .ts-note { color: #7b8794; font-size: 12px; white-space: normal; }
.ts-sv .ts-debug { font-family: ui-monospace, monospace; font-size: 12px; color: #52606d; white-space: normal; overflow-wrap: anywhere; }
.ts-sv .ts-big { font-weight: 600; }
.ts-sv .ts-conv { color: #9a3412; font-weight: 600; }
.ts-sv .ts-same { color: #1a7f37; }
.ts-sv .ts-arrow { color: #7b8794; padding: 3px 10px; }
.ts-sv .ts-grid { display: flex; gap: 36px; flex-wrap: wrap; align-items: flex-start; }
.ts-sv .ts-choice { font-size: 14px; }
.ts-sv .ts-choice b { color: #b45309; }
.ts-sv .ts-error { color: #b71c1c; background: #fdecea; border: 1px solid #f5c6cb; border-radius: 4px; padding: 6px 10px;
  font-family: ui-monospace, monospace; font-size: 12.5px; white-space: pre-wrap; word-break: break-all; }
.ts-sv table.ts-formats td .ts-note { white-space: nowrap; }
.ts-sv table.ts-formats td .ts-debug { max-width: 440px; }
.ts-sv table.ts-formats td.ts-conv, .ts-sv table.ts-formats td.ts-same { white-space: normal; max-width: 380px; }
.ts-sv tr.ts-edited td { background: #fff4c2; }
"""
# Tabulator lays the frozen-rows holder inline after the header cells, so a table wider than its
# box pushes the pinned (chosen) row out of sight to the right; a block puts it under the header.
TABLE_CSS = ".tabulator-header .tabulator-frozen-rows-holder { display: block !important; }"
CHOSEN_ROW_STYLE = "background-color: #fde68a; font-weight: 600"


# ----------------------------------------------------------------------------- loading


@lru_cache(maxsize=4)
def _parsed(digest: str, data: bytes, source: str) -> SearchState:
    """A process-wide cache of immutable parsed states, keyed by the content's digest: the app may
    build the view more than once for one load."""
    return parse_search_state(data, source)


def parse_cached(data: bytes, source: str) -> SearchState:
    return _parsed(hashlib.sha256(data).hexdigest(), data, source)


# ----------------------------------------------------------------------------- figures (no Panel)


def format_figures(fmt: TensorFormat, shard: int | None) -> str:
    """``3,040 B (3.0 KiB) on 4 tiles``: bytes of one shard (per tile) and the tiles it spans."""
    tiles = fmt.layout.tiling.tile_count
    per_tile = "unknown bytes" if shard is None else fmt_bytes(shard)
    return f"{per_tile} on {tiles:,} tile{'s' if tiles != 1 else ''}"


def tiling_text(tiling: TensorTiling) -> str:
    """``FromEnd(2)÷16 · FromEnd(3)÷4 · FromEnd(1)÷1``, replicas when more than one."""
    parts = [f"{a.axis}÷{a.partitions}" for a in tiling.axes] or ["untiled"]
    if tiling.replicas != 1:
        parts.append(f"×{tiling.replicas} replicas")
    return " · ".join(parts)


def format_detail(fmt: TensorFormat) -> str:
    layout = fmt.layout
    return f"{fmt.precision} · {layout.order} · {layout.memory_class} · {tiling_text(layout.tiling)}"


@dataclass(frozen=True)
class FormatPair:
    """One input of an operation (or its output): the format it arrives in and the one required."""

    key: str  # "0", "1", … (input position) or OUTPUT_KEY
    label: str  # the graph input's name, else "value N" (untrusted)
    value: int | None
    shape: tuple[int, ...] | None
    arrives: InputFormat | Requirement | None  # None for the output, or when the file does not say
    required: Requirement

    @property
    def converts(self) -> bool:
        return self.arrives is not None and self.arrives.format != self.required.format


def value_label(state: SearchState, value: int | None) -> str:
    if value is None:
        return "several results"
    graph_input = state.graph.graph_input(value)
    return graph_input.name if graph_input is not None else f"value {value}"


def format_pairs(state: SearchState, operation_id: int) -> list[FormatPair]:
    """Inputs of the chosen plan of ``operation_id``, then its output; empty without a chosen plan."""
    plan = state.plans[operation_id].chosen_plan
    if plan is None:
        return []
    pairs = [
        FormatPair(
            key=str(r.position), label=value_label(state, r.value), value=r.value, shape=r.shape,
            arrives=state.arrival(r.value) if r.value is not None else None, required=r,
        )
        for r in plan.inputs
    ]
    out = plan.output
    pairs.append(FormatPair(key=OUTPUT_KEY, label=value_label(state, out.value), value=out.value, shape=out.shape,
                            arrives=None, required=out))
    return pairs


def costliest_conversion(pairs: list[FormatPair]) -> str | None:
    """The key of the input whose conversion adds the most bytes per tile (the one worth exploring first)."""
    growth = [
        (pair.required.shard_bytes - pair.arrives.shard_bytes, -i, pair.key)
        for i, pair in enumerate(pairs)
        if pair.converts and pair.shape is not None and pair.required.shard_bytes is not None
    ]
    return max(growth)[2] if growth else None


def tiling_refusal(shape: Sequence[int], tiling: TensorTiling, key: str, count: int, tile_limit: int) -> str | None:
    """Why setting handle ``key`` ("0", "1", … or "replicas") to ``count`` is refused; None if allowed."""
    if key == REPLICAS_KEY:
        if count < 1:
            return f"{count} replicas refused: a tiling needs at least 1 replica"
        edited = tiling.with_replicas(count)
        what = f"{count} replica{'s' if count != 1 else ''}"
    else:
        position = int(key)
        axis = tiling.axes[position]
        blocks = axis_blocks(shape, tiling)[position]
        what = f"axis {position} ({axis.axis}): {count} partition{'s' if count != 1 else ''}"
        if not 1 <= count <= blocks:
            return (
                f"{what} refused: the axis has {blocks:,} block{'s' if blocks != 1 else ''} of {axis.block_size:,} "
                f"element{'s' if axis.block_size != 1 else ''}, so it takes 1 to {blocks:,} partitions"
            )
        edited = tiling.with_partitions(position, count)
    if edited.tile_count > tile_limit:
        factors = " × ".join(str(a.partitions) for a in edited.axes) or "1"
        return (
            f"{what} refused: the tiling would span {factors} × {edited.replicas} replica"
            f"{'s' if edited.replicas != 1 else ''} = {edited.tile_count:,} tiles, more than the config's {tile_limit:,}"
        )
    return None


def apply_count(tiling: TensorTiling, key: str, count: int) -> TensorTiling:
    return tiling.with_replicas(count) if key == REPLICAS_KEY else tiling.with_partitions(int(key), count)


def valid_counts(shape: Sequence[int], tiling: TensorTiling, key: str, candidates: Sequence[int], tile_limit: int) -> list[int]:
    return [n for n in candidates if tiling_refusal(shape, tiling, key, n, tile_limit) is None]


def format_axis_bands(shape: Sequence[int], tiling: TensorTiling, tile_limit: int) -> list[dict]:
    """The widget's bands for a search-state format: accepted counts follow ``valid_counts``."""
    return axis_bands(shape, tiling, lambda position, stops: valid_counts(shape, tiling, str(position), stops, tile_limit))


def replica_stops(tiling: TensorTiling, tile_limit: int) -> list[int]:
    """Every replica count up to twice what the config allows (so the refused zone shows)."""
    per_replica = max(math.prod(a.partitions for a in tiling.axes), 1)
    most = max(tile_limit // per_replica, 1)
    return list(range(1, max(min(2 * most, tile_limit), tiling.replicas, 1) + 1))


# ----------------------------------------------------------------------------- alternatives (no Panel)


@dataclass(frozen=True)
class Alternatives:
    """The alternatives of one operation as a table: one row per alternative, in file order."""

    frame: pd.DataFrame  # columns: alternative, chosen (mark text), dispatch columns, varying requirement bytes
    titles: dict[str, str]  # column → its header text (untrusted: escape before HTML)
    numeric: list[str]  # numeric columns the scatter can use, best first
    chosen_row: int | None  # position of the chosen alternative in ``frame``
    same_requirements: bool  # every alternative requires the same formats


def _plain(value) -> object:
    """A cell for display: lists as ``[-4, None]``; everything else as it is."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join("None" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in value) + "]"
    return value


def requirement_signature(plan) -> tuple:
    """What a plan requires, without where the file writes it (``json_path`` differs per alternative)."""
    return tuple(
        (r.value, r.format, r.shard_bytes, r.local_staging, r.materialization) for r in (*plan.inputs, plan.output)
    )


def alternatives_of(state: SearchState, plans: pa.Table, operation_id: int) -> Alternatives:
    rows = plans.filter(pc.equal(plans["operation_id"], operation_id))
    dispatch = [f for f in rows.schema if f.name not in PLANS_FIXED.names]
    op_plans = state.plans[operation_id]
    columns: dict[str, object] = {
        ALTERNATIVE: rows["alternative"].to_numpy(),
        CHOSEN: [CHOSEN_MARK if c else "" for c in rows["chosen"].to_pylist()],
    }
    titles = {ALTERNATIVE: ALTERNATIVE, CHOSEN: CHOSEN}
    numeric = []
    for i, field in enumerate(dispatch):
        column = f"d{i}"  # safe column ids; the file's names are only titles
        values = rows[field.name].to_pylist()
        if pa.types.is_list(field.type):
            values = [None if v is None else _plain(v) for v in values]
        elif pa.types.is_integer(field.type) or pa.types.is_floating(field.type):
            values = pd.array(values, dtype="Int64" if pa.types.is_integer(field.type) else "Float64")
            numeric.append(column)
        columns[column] = values
        titles[column] = field.name

    # Requirement bytes per tile, shown only where alternatives differ (in the sample they do not).
    alternatives = op_plans.alternatives
    first = requirement_signature(alternatives[0]) if alternatives else None
    same = all(requirement_signature(p) == first for p in alternatives)
    if not same:
        for position in range(len(alternatives[0].inputs)):
            column = f"in{position}_bytes"
            columns[column] = pd.array(
                [p.inputs[position].shard_bytes if position < len(p.inputs) else None for p in alternatives], dtype="Int64"
            )
            titles[column] = f"{value_label(state, alternatives[0].inputs[position].value)} B/tile"
            numeric.append(column)
        columns["out_bytes"] = pd.array([p.output.shard_bytes for p in alternatives], dtype="Int64")
        titles["out_bytes"] = "output B/tile"
        numeric.append("out_bytes")

    frame = pd.DataFrame(columns)
    # The parameters that vary most make the most telling axes; the alternative index is the fallback.
    spread = {c: frame[c].nunique(dropna=True) for c in numeric}
    numeric = sorted(numeric, key=lambda c: -spread[c]) + [ALTERNATIVE]
    at = np.flatnonzero(frame[ALTERNATIVE].to_numpy() == op_plans.chosen) if op_plans.chosen is not None else []
    return Alternatives(frame, titles, numeric, int(at[0]) if len(at) else None, same)


def scatter_data(alts: Alternatives, x: str, y: str) -> tuple[dict, dict]:
    """One point per distinct (x, y) with how many alternatives sit there, and the chosen point."""
    frame = alts.frame[list(dict.fromkeys([ALTERNATIVE, x, y]))].dropna()  # x or y may be the index column
    at: dict[tuple[float, float], list[int]] = {}
    for alternative, px, py in zip(frame[ALTERNATIVE].tolist(), frame[x].tolist(), frame[y].tolist()):
        at.setdefault((float(px), float(py)), []).append(int(alternative))
    keys = sorted(at)
    counts = [len(at[k]) for k in keys]
    points = {
        "x": [k[0] for k in keys],
        "y": [k[1] for k in keys],
        "count": counts,
        "examples": [", ".join(map(str, at[k][:8])) + (", …" if len(at[k]) > 8 else "") for k in keys],
        "size": [7 + 3.5 * math.sqrt(n) for n in counts],
    }
    chosen = {"x": [], "y": [], "alternative": []}
    if alts.chosen_row is not None:
        row = alts.frame.iloc[alts.chosen_row]
        if not (pd.isna(row[x]) or pd.isna(row[y])):
            chosen = {"x": [float(row[x])], "y": [float(row[y])], "alternative": [int(row[ALTERNATIVE])]}
    return points, chosen


def chosen_row_styles(frame: pd.DataFrame) -> pd.DataFrame:
    """Cell styles for the table: the chosen row tinted (whole frame at once; row-wise is slow)."""
    styles = pd.DataFrame("", index=frame.index, columns=frame.columns)
    if CHOSEN in frame:
        styles.loc[frame[CHOSEN] != ""] = CHOSEN_ROW_STYLE
    return styles


# ----------------------------------------------------------------------------- HTML (all file text escaped)


def _shape(shape: Sequence[int] | None) -> str:
    return "—" if shape is None else "[" + ", ".join(str(int(d)) for d in shape) + "]"


def graph_html(state: SearchState) -> str:
    g = state.graph
    inputs = "".join(
        f"<tr><td>{esc(i.name)}</td><td>{esc(i.kind)}</td><td>value {i.value}</td><td>{esc(_shape(i.shape))}</td></tr>" for i in g.inputs
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
        elif name == "tile_count":
            text = f"{int(value):,} tiles"
        else:
            text = fmt_bytes(int(value))
        rows.append(f"<tr><td class='k'>{esc(label)}</td><td class='ts-big' data-figure='{esc(name)}'>{esc(text)}</td></tr>")
    for name, value in options.items():
        if name in shown or not name.endswith("_bytes") or not isinstance(value, int) or isinstance(value, bool):
            continue
        shown.add(name)
        rows.append(f"<tr><td class='k'>{esc(name)}</td><td data-figure='{esc(name)}'>{esc(fmt_bytes(value))}</td></tr>")
    others = "".join(
        f"<tr><td class='k'>{esc(name)}</td><td class='ts-debug'>{esc(shorten(text, 200))}</td></tr>"
        for name, text in state.option_text.items()
        if name not in shown
    )
    recipe, book = state.recipe, state.bookkeeping
    recipe_text = (
        f"recipe: {sum(1 for p in state.plans.values() if p.chosen is not None)} plan(s); cast before copies "
        f"{list(recipe.cast_before_copies)}; parallel reductions {recipe.parallel_reductions}; "
        f"search: {book.visited:,} visited, {book.attempts} attempts"
    )
    rest = "".join(f"<div class='ts-debug'>{esc(shorten(line, 300))}</div>" for line in state.context_rest)
    return (
        "<div class='ts-sv' data-testid='ts-search-config'><h3>Pipeline config</h3><div class='ts-grid'>"
        f"<table>{''.join(rows)}</table>"
        f"<details><summary>{len(state.option_text) - len(shown)} more options</summary><table>{others}</table></details>"
        f"<div class='ts-note'>{esc(recipe_text)}{'<br>context after the config:' if rest else ''}{rest}</div>"
        "</div></div>"
    )


def _format_cell(fmt: TensorFormat, shard: int | None, testid: str) -> str:
    return (
        f"<div class='ts-big' data-testid='{testid}'>{esc(format_figures(fmt, shard))}</div>"
        f"<div class='ts-debug'>{esc(format_detail(fmt))}</div>"
    )


def conversion_text(pair: FormatPair) -> str:
    """What changes between the arriving and the required format, and its cost per tile."""
    if pair.arrives is None:
        return ""
    if not pair.converts:
        return "same format: no conversion"
    a, r = pair.arrives.format, pair.required.format
    changes = []
    if a.precision != r.precision:
        changes.append(f"precision {a.precision} → {r.precision}")
    if a.layout.order != r.layout.order:
        changes.append(f"order {a.layout.order} → {r.layout.order}")
    if a.layout.memory_class != r.layout.memory_class:
        changes.append(f"memory class {a.layout.memory_class} → {r.layout.memory_class}")
    if a.layout.tiling != r.layout.tiling:
        tiles_before, tiles_after = a.layout.tiling.tile_count, r.layout.tiling.tile_count
        changes.append("re-tiled" + (f" ({tiles_before:,} → {tiles_after:,} tiles)" if tiles_before != tiles_after else ""))
    before, after = pair.arrives.shard_bytes, pair.required.shard_bytes
    if before is not None and after is not None:
        changes.append("same bytes per tile" if before == after else f"{fmt_signed_bytes(after - before)} per tile")
    return "converted: " + "; ".join(changes)


def formats_html(pairs: list[FormatPair]) -> str:
    if not pairs:
        return "<div class='ts-sv'><p>This operation has no chosen plan.</p></div>"
    rows = []
    for pair in pairs:
        name = f"{esc(pair.label)}<div class='ts-note'>{'output' if pair.key == OUTPUT_KEY else 'input ' + pair.key}" \
               f"{'' if pair.value is None else f', value {pair.value}'}, shape {esc(_shape(pair.shape))}</div>"
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


# ----------------------------------------------------------------------------- the view


class SearchStateView(pn.viewable.Viewer):
    """The search-state view (see the module doc for how to construct it)."""

    search_state = param.ClassSelector(class_=SearchState, default=None, allow_None=True)
    state = param.ClassSelector(class_=SessionState, default=None, allow_None=True, doc="the app's session, if any")

    def __init__(self, **params):
        super().__init__(**params)
        self.error = ""
        if self.search_state is None and self.state is not None and self.state.search_state is not None:
            try:
                self.search_state = parse_cached(bytes(self.state.search_state), self.state.source or "<search state>")
            except Exception as exc:  # bad input: the located one-line message, never a traceback
                self.error = error_text(exc)
                self.state.error = self.error
        self._edits: dict[tuple[int, str], TensorTiling] = {}  # (operation, target key) → edited required tiling
        self._counts: dict[str, int] = {}  # handle key → the count the shown tiling has
        self._inputs_key = None
        if self.search_state is None:
            message = self.error or "No search state is open."
            self._layout = pn.Column(
                pn.pane.HTML(f"<div class='ts-sv'><div class='ts-error' data-testid='ts-search-error'>{esc(message)}</div></div>",
                             stylesheets=[CSS], sizing_mode="stretch_width"),
                sizing_mode="stretch_width",
            )
            return
        self._build()

    @classmethod
    def from_path(cls, path: str | Path) -> "SearchStateView":
        return cls(search_state=load_search_state(path))

    def __panel__(self):
        return self._layout

    # ------------------------------------------------------------------ building

    def _build(self) -> None:
        s = self.search_state
        self._plans_table = search_state_tables(s)["plans"]
        self.tile_limit = s.tile_count
        html = dict(stylesheets=[CSS], sizing_mode="stretch_width")
        n_ops = len(s.graph.operations)
        self.header = pn.pane.HTML(
            f"<div class='ts-sv' data-testid='ts-search-header'><h3>Search state: {esc(s.source)}</h3>"
            f"{n_ops} operation{'s' if n_ops != 1 else ''} · {s.tile_count:,} tiles · "
            f"tile memory budget {esc(fmt_bytes(s.tile_memory_budget_bytes))}</div>", **html,
        )
        self.graph_pane = pn.pane.HTML(graph_html(s), **html)
        self.config_pane = pn.pane.HTML(config_html(s), **html)

        self.operation_select = pn.widgets.Select(
            label="Operation", options={f"operation {op.id}: {op.kind_name}": op.id for op in s.graph.operations},
            width=320, visible=n_ops > 1,
        )
        self.choice_pane = pn.pane.HTML("", **html)
        self.formats_pane = pn.pane.HTML("", **html)

        self.table = pn.widgets.Tabulator(
            pd.DataFrame(), show_index=False, disabled=True, selectable=1, height=400, layout="fit_data_table", pagination=None,
            sizing_mode="stretch_width", header_align="left", stylesheets=[TABLE_CSS],
        )
        self.table.param.watch(self._on_table_selection, "selection")
        self.table.style.apply(chosen_row_styles, axis=None)
        self.x_select = pn.widgets.Select(label="x axis", width=220, css_classes=["ts-x-axis"])
        self.y_select = pn.widgets.Select(label="y axis", width=220, css_classes=["ts-y-axis"])
        self.x_select.param.watch(self._on_axes, "value")
        self.y_select.param.watch(self._on_axes, "value")
        self._points = ColumnDataSource({"x": [], "y": [], "count": [], "examples": [], "size": []})
        self._chosen = ColumnDataSource({"x": [], "y": [], "alternative": []})
        self._selected = ColumnDataSource({"x": [], "y": [], "alternative": []})
        self.chart = pn.pane.Bokeh(self._figure(), width=980, height=420, sizing_mode="fixed")

        self.edit_target = pn.widgets.Select(label="Required format to re-tile", width=320)
        self.edit_target.param.watch(lambda _: self._refresh_editor(), "value")
        self.widget = TilingWidget(sizing_mode="stretch_width", min_height=120)
        self.widget.param.watch(self._on_committed, "committed")
        self.edit_figures = pn.pane.HTML("", **html)
        self.reset_button = pn.widgets.Button(label="Reset this format", width=150)
        self.reset_button.on_click(lambda _: self.reset_edit())

        self.operation_select.param.watch(lambda _: self._show_operation(), "value")
        self._layout = pn.Column(
            self.header,
            self.graph_pane,
            self.config_pane,
            self._rule(),
            self.operation_select,
            self.choice_pane,
            self.formats_pane,
            pn.pane.HTML("<div class='ts-sv'><h4>Alternatives</h4></div>", **html),
            self.table,
            pn.Row(self.x_select, self.y_select, pn.pane.HTML(
                "<div class='ts-sv ts-note' style='margin-top:22px'>Each circle is a set of alternatives with these two "
                "parameter values (bigger: more of them); the star is the chosen plan; a row picked in the table is ringed.</div>",
                stylesheets=[CSS], width=520)),
            self.chart,
            self._rule(),
            pn.pane.HTML("<div class='ts-sv'><h4>Tiling editor: try another tiling of a required format</h4></div>", **html),
            pn.Row(self.edit_target, pn.Column(pn.Spacer(height=18), self.reset_button)),
            self.widget,
            self.edit_figures,
            sizing_mode="stretch_width",
            css_classes=["ts-search-view"],
        )
        self._show_operation()

    @staticmethod
    def _rule():
        # Not pn.layout.Divider: its stylesheet comes from a CDN, unreachable offline.
        return pn.pane.HTML("<hr style='border: 0; border-top: 1px solid #d9e2ec; margin: 6px 0'>", sizing_mode="stretch_width")

    def _figure(self):
        fig = figure(width=980, height=420, tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="above")
        points = fig.scatter("x", "y", source=self._points, size="size", fill_color="#60a5fa", fill_alpha=0.45,
                             line_color="#1e3a8a", line_alpha=0.6, legend_label="alternatives (size: how many)")
        fig.scatter("x", "y", source=self._selected, size=22, marker="diamond", fill_alpha=0, line_color="#0f766e",
                    line_width=3, legend_label="selected row")
        fig.scatter("x", "y", source=self._chosen, size=24, marker="star", fill_color="#f59e0b", line_color="#92400e",
                    line_width=1.5, legend_label="chosen")
        # Tooltip labels are fixed text; values are numbers and digit lists only.
        fig.add_tools(HoverTool(renderers=[points], tooltips=[("x", "@x"), ("y", "@y"), ("alternatives", "@count"),
                                                             ("indices", "@examples")]))
        legend = fig.legend[0]
        legend.label_text_font_size = "11px"
        fig.add_layout(legend, "right")  # outside the plot: it never hides a point
        self._fig = fig
        return fig

    # ------------------------------------------------------------------ one operation

    @property
    def operation_id(self) -> int:
        return int(self.operation_select.value)

    def _show_operation(self) -> None:
        s = self.search_state
        if self.operation_select.value is None:  # a graph without operations has no plans to show
            self.pairs, self.alternatives = [], None
            self.choice_pane.object = "<div class='ts-sv' data-testid='ts-search-choice'>The graph has no operations.</div>"
            self.edit_target.options = {}
            self._refresh_editor()
            return
        op = s.graph.operation(self.operation_id)
        plans = s.plans[op.id]
        self.pairs = format_pairs(s, op.id)
        self.alternatives = alternatives_of(s, self._plans_table, op.id)
        n = len(plans.alternatives)
        if plans.chosen is None:
            choice = f"operation {op.id} <b>{esc(op.kind_name)}</b>: no plan chosen among <span data-testid='ts-search-count'>{n}</span> alternatives"
        else:
            plan = plans.chosen_plan
            choice = (
                f"operation {op.id} <b>{esc(op.kind_name)}</b>: chosen plan is alternative "
                f"<b data-testid='ts-search-chosen'>{plans.chosen}</b> of <span data-testid='ts-search-count'>{n}</span> "
                f"<span class='ts-note'>(dispatch {esc(plan.dispatch_kind or '—')}; output aliasing {esc(plan.output_aliasing or '—')})</span>"
            )
        same = (
            f"All {n} alternatives require the same formats; they differ only in their dispatch parameters."
            if self.alternatives.same_requirements else "Alternatives differ in the formats they require: see the B/tile columns."
        )
        self.choice_pane.object = f"<div class='ts-sv ts-choice' data-testid='ts-search-choice'>{choice}<div class='ts-note'>{esc(same)}</div></div>"
        self.formats_pane.object = formats_html(self.pairs)
        self._show_table()
        self._show_axes()
        targets = {f"{p.label} ({'output' if p.key == OUTPUT_KEY else 'input ' + p.key})": p.key for p in self.pairs if p.shape is not None}
        self.edit_target.options = targets
        first = costliest_conversion(self.pairs) or next(iter(targets.values()), None)
        if self.edit_target.value == first:
            self._refresh_editor()
        else:
            self.edit_target.value = first

    def _show_table(self) -> None:
        alts = self.alternatives
        frame = alts.frame
        chosen = alts.chosen_row
        text_columns = [c for c in frame.columns if frame[c].dtype == object and c != CHOSEN]
        self.table.param.update(
            value=frame,
            titles={c: esc(t) for c, t in alts.titles.items()},  # Tabulator writes titles as HTML
            formatters={c: {"type": "plaintext"} for c in text_columns},
            frozen_rows=[chosen] if chosen is not None else [],
            selection=[],
        )
        # Scrolled, not paged: the chosen row stays pinned on top (Tabulator pages tables over 200 rows by default).
        self.table.pagination = None

    def _show_axes(self) -> None:
        alts = self.alternatives
        options = {alts.titles[c]: c for c in alts.numeric}
        x = alts.numeric[0]
        y = alts.numeric[1] if len(alts.numeric) > 1 else alts.numeric[0]
        with param.parameterized.discard_events(self.x_select), param.parameterized.discard_events(self.y_select):
            self.x_select.param.update(options=options, value=x)
            self.y_select.param.update(options=options, value=y)
        self._draw_chart()

    def _on_axes(self, *_):
        self._draw_chart()

    def _draw_chart(self) -> None:
        x, y = self.x_select.value, self.y_select.value
        if x is None or y is None:
            return
        points, chosen = scatter_data(self.alternatives, x, y)
        titles = self.alternatives.titles
        with pn.io.unlocked():  # Bokeh models changed from a callback: send the changes with the session's lock
            self._points.data = points
            self._chosen.data = chosen
            self._selected.data = self._selected_point()
            self._fig.xaxis.axis_label = PlainText(text=titles[x])  # PlainText: never read as TeX
            self._fig.yaxis.axis_label = PlainText(text=titles[y])
            if chosen["alternative"]:
                self._fig.legend.items[2].label = text_value(f"chosen: alternative {chosen['alternative'][0]}")

    def _selected_point(self) -> dict:
        rows = self.table.selection
        x, y = self.x_select.value, self.y_select.value
        frame = self.alternatives.frame
        if not rows or x is None or y is None or rows[0] >= len(frame):
            return {"x": [], "y": [], "alternative": []}
        row = frame.iloc[rows[0]]
        if pd.isna(row[x]) or pd.isna(row[y]):
            return {"x": [], "y": [], "alternative": []}
        return {"x": [float(row[x])], "y": [float(row[y])], "alternative": [int(row[ALTERNATIVE])]}

    def _on_table_selection(self, *_):
        with pn.io.unlocked():
            self._selected.data = self._selected_point()

    # ------------------------------------------------------------------ tiling editor

    def _target(self) -> FormatPair | None:
        key = self.edit_target.value
        return next((p for p in self.pairs if p.key == key), None)

    def tiling_of(self, key: str) -> TensorTiling:
        """The required tiling of target ``key`` as edited here (the plan's when not edited)."""
        pair = next(p for p in self.pairs if p.key == key)
        return self._edits.get((self.operation_id, key), pair.required.format.layout.tiling)

    def edited_shard_bytes(self, key: str) -> int:
        pair = next(p for p in self.pairs if p.key == key)
        return shard_bytes(pair.shape, pair.required.format.precision.element_bytes, self.tiling_of(key))

    def _refresh_editor(self) -> None:
        pair = self._target()
        if pair is None:
            self.widget.param.update(axes=[], show_replicas=False, inputs=[], disabled=True, message="", message_axis="")
            self.edit_figures.object = "<div class='ts-sv ts-note'>Nothing to re-tile: no required format with a known shape.</div>"
            return
        tiling = self.tiling_of(pair.key)
        try:
            bands = format_axis_bands(pair.shape, tiling, self.tile_limit)
        except ShapeMismatch as exc:
            self.widget.param.update(axes=[], show_replicas=False, inputs=[], disabled=True)
            self.edit_figures.object = f"<div class='ts-sv'><div class='ts-error'>{esc(exc)}</div></div>"
            return
        stops = replica_stops(tiling, self.tile_limit)
        self._counts = {str(k): band["partitions"] for k, band in enumerate(bands)}
        self._counts[REPLICAS_KEY] = int(tiling.replicas)
        self._sync_inputs(pair.key, len(bands))
        self.widget.param.update(
            axes=bands,
            replicas=int(tiling.replicas),
            replica_counts=stops,
            valid_replica_counts=valid_counts(pair.shape, tiling, REPLICAS_KEY, stops, self.tile_limit),
            max_replicas=max(self.tile_limit // max(math.prod(a.partitions for a in tiling.axes), 1), 1),
            tile_product=math.prod(a.partitions for a in tiling.axes),
            device_tiles=self.tile_limit,
            show_replicas=True,
            disabled=False,
        )
        self.reset_button.disabled = (self.operation_id, pair.key) not in self._edits
        self.edit_figures.object = self._edit_figures_html(pair, tiling)

    def _edit_figures_html(self, pair: FormatPair, tiling: TensorTiling) -> str:
        element = pair.required.format.precision.element_bytes
        edited = shard_bytes(pair.shape, element, tiling)
        required = pair.required.shard_bytes
        is_edited = (self.operation_id, pair.key) in self._edits
        rows = []
        if pair.arrives is not None:
            rows.append(("arrives in", format_figures(pair.arrives.format, pair.arrives.shard_bytes), tiling_text(pair.arrives.format.layout.tiling), ""))
        rows.append(("plan requires", format_figures(pair.required.format, required), tiling_text(pair.required.format.layout.tiling), ""))
        change = "" if not is_edited or required is None else f"{fmt_signed_bytes(edited - required)} per tile vs the plan"
        tiles = tiling.tile_count
        rows.append((
            "edited" if is_edited else "edited (no change yet)",
            f"{fmt_bytes(edited)} on {tiles:,} tile{'s' if tiles != 1 else ''}",
            f"{tiling_text(tiling)} ({tiles:,} of {self.tile_limit:,} tiles)", change,
        ))
        body = "".join(
            f"<tr{' class=ts-edited' if label.startswith('edited') and is_edited else ''}><td class='k'>{esc(label)}</td>"
            f"<td class='ts-big' data-testid='ts-edit-{esc(label.split()[0])}'>{esc(figure)}</td>"
            f"<td class='ts-debug'>{esc(detail)}</td><td>{esc(note)}</td></tr>"
            for label, figure, detail, note in rows
        )
        return (
            f"<div class='ts-sv' data-testid='ts-search-edit-figures'><table>{body}</table>"
            "<div class='ts-note'>An exploration: the plan and the file are unchanged. Allowed: 1 to blocks partitions per axis, "
            f"at least 1 replica, at most {self.tile_limit:,} tiles (the config's tile count).</div></div>"
        )

    def _sync_inputs(self, key: str, n_axes: int) -> None:
        """One IntInput per band (axes, then replicas); rebuilt when the target changes, else updated."""
        keys = [*(str(k) for k in range(n_axes)), REPLICAS_KEY]
        identity = (self.operation_id, key, n_axes)
        inputs = list(self.widget.inputs)
        if self._inputs_key != identity or len(inputs) != len(keys):
            self._inputs_key = identity
            self.widget.inputs = count_inputs(keys, self._counts, self._on_typed)
            return
        for handle, field in zip(keys, inputs):
            if field.value != self._counts[handle]:
                field.value = self._counts[handle]

    @property
    def count_inputs(self) -> list:
        """The numeric inputs beside the bands: one per axis, then replicas."""
        return list(self.widget.inputs)

    def _on_typed(self, key: str, count) -> None:
        if count is None or self._counts.get(key) == count:
            return
        self.commit(key, int(count))

    def _on_committed(self, event) -> None:
        committed = event.new or {}
        try:
            key, count = str(committed["axis"]), int(committed["count"])
        except (KeyError, TypeError, ValueError):
            return
        self.commit(key, count)

    def commit(self, key: str, count: int) -> str | None:
        """Set handle ``key`` ("0", "1", … or "replicas") of the shown target to ``count``.
        Returns why it was refused (also shown at the handle), or None."""
        pair = self._target()
        if pair is None or key not in self._counts:
            return None
        tiling = self.tiling_of(pair.key)
        refusal = tiling_refusal(pair.shape, tiling, key, count, self.tile_limit)
        if refusal is not None:
            self.widget.param.update(message=refusal, message_axis=key, revision=self.widget.revision + 1)
            self._sync_inputs(pair.key, len(tiling.axes))  # the typed count snaps back too
            return refusal
        edited = apply_count(tiling, key, count)
        target = (self.operation_id, pair.key)
        if edited == pair.required.format.layout.tiling:
            self._edits.pop(target, None)
        else:
            self._edits[target] = edited
        self.widget.param.update(message="", message_axis="", revision=self.widget.revision + 1)
        self._refresh_editor()
        return None

    def reset_edit(self) -> None:
        pair = self._target()
        if pair is not None:
            self._edits.pop((self.operation_id, pair.key), None)
            self.widget.param.update(message="", message_axis="", revision=self.widget.revision + 1)
            self._refresh_editor()
