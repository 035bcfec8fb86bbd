"""What the search-state view shows, computed from a parsed ``SearchState`` (no Panel): per
operation the formats its chosen plan requires beside the formats its inputs arrive in, the
alternatives as a table, and the scatter's points; the text of a refused tiling count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tilescope.loaders.search_tables import search_state_tables
from tilescope.models.format import fmt_bytes, fmt_signed_bytes
from tilescope.models.lazy import lazy
from tilescope.models.search_schemas import PLANS_FIXED
from tilescope.models.search_state import InputFormat, Requirement, SearchState
from tilescope.models.tiling import TensorFormat, TensorTiling
from tilescope.planner.shards import axis_blocks
from tilescope.planner.tiling_rules import REPLICAS, RULE_MIN_REPLICAS, RULE_TILE_COUNT, Violation

from .values import tiling_summary

OUTPUT_KEY = "output"  # the editor target of an operation's output requirement
CHOSEN_MARK = "★ chosen"
ALTERNATIVE = "alternative"
CHOSEN = "chosen"
RANK = "rank"
COST = "cost"
BASIS_REQUIREMENTS = "shard bytes of its requirements (inputs and output, per tile)"
BASIS_SCRATCH = (
    "estimated per-tile scratch of one dispatch block: the operand and result blocks of the query·key and "
    "probability·value products, cut by the dispatch's rows / columns / inner counts (padded dimensions from the dispatch)"
)


@dataclass(frozen=True, eq=False)
class SearchData:
    """A search state and what its view shows, per operation computed on first use."""

    state: SearchState
    _per_operation: dict = field(default_factory=dict, repr=False)

    @staticmethod
    def of(state: SearchState) -> SearchData:
        return SearchData(state)

    @lazy
    def plans_table(self) -> pa.Table:
        return search_state_tables(self.state)["plans"]

    @lazy
    def visited(self) -> list:
        """How each visited recipe differs from the incumbent (``derived.search_visited.VisitedRow``)."""
        from .search_visited import visited_rows  # (it imports this module)

        return visited_rows(self.state)

    def pairs(self, operation_id: int) -> list[FormatPair]:
        return self._kept(("pairs", operation_id), lambda: format_pairs(self.state, operation_id))

    def alternatives(self, operation_id: int) -> Alternatives:
        return self._kept(
            ("alternatives", operation_id), lambda: alternatives_of(self.state, self.plans_table, operation_id)
        )

    def _kept(self, key, build):
        found = self._per_operation.get(key)
        if found is None:
            found = self._per_operation[key] = build()
        return found


def format_figures(fmt: TensorFormat, shard: int | None) -> str:
    """``3,040 B (3.0 KiB) on 4 tiles``: bytes of one shard (per tile) and the tiles it spans."""
    tiles = fmt.layout.tiling.tile_count
    per_tile = "unknown bytes" if shard is None else fmt_bytes(shard)
    return f"{per_tile} on {tiles:,} tile{'s' if tiles != 1 else ''}"


def format_detail(fmt: TensorFormat) -> str:
    layout = fmt.layout
    return f"{fmt.precision} · {layout.order} · {layout.memory_class} · {tiling_summary(layout.tiling)}"


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
            key=str(r.position),
            label=value_label(state, r.value),
            value=r.value,
            shape=r.shape,
            arrives=state.arrival(r.value) if r.value is not None else None,
            required=r,
        )
        for r in plan.inputs
    ]
    out = plan.output
    pairs.append(
        FormatPair(
            key=OUTPUT_KEY,
            label=value_label(state, out.value),
            value=out.value,
            shape=out.shape,
            arrives=None,
            required=out,
        )
    )
    return pairs


def costliest_conversion(pairs: list[FormatPair]) -> str | None:
    """The key of the input whose conversion adds the most bytes per tile (the one worth exploring first)."""
    growth = [
        (pair.required.shard_bytes - pair.arrives.shard_bytes, -i, pair.key)
        for i, pair in enumerate(pairs)
        if pair.converts
        and pair.arrives is not None  # (converts says so; spelled out for the type checker)
        and pair.shape is not None
        and pair.required.shard_bytes is not None
        and pair.arrives.shard_bytes is not None
    ]
    return max(growth)[2] if growth else None


@dataclass(frozen=True)
class Alternatives:
    """The alternatives of one operation as a table: one row per alternative, in file order."""

    frame: pd.DataFrame  # columns: alternative, chosen (mark text), dispatch columns, varying requirement bytes
    titles: dict[str, str]  # column → its header text (untrusted: escape before HTML)
    numeric: list[str]  # numeric columns the scatter can use, best first
    chosen_row: int | None  # position of the chosen alternative in ``frame``
    same_requirements: bool  # every alternative requires the same formats
    basis: str | None = None  # what ``rank`` ranks by (BASIS_REQUIREMENTS, BASIS_SCRATCH), None: nothing to estimate

    @property
    def chosen_rank(self) -> int | None:
        if self.chosen_row is None or self.basis is None:
            return None
        return int(self.frame[RANK].iloc[self.chosen_row])


def _plain(value) -> object:
    """A cell for display: lists as ``[-4, None]``; everything else as it is."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return (
            "["
            + ", ".join("None" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in value)
            + "]"
        )
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
    for i, dispatch_field in enumerate(dispatch):
        column = f"d{i}"  # safe column ids; the file's names are only titles
        values = rows[dispatch_field.name].to_pylist()
        if pa.types.is_list(dispatch_field.type):
            values = [None if v is None else _plain(v) for v in values]
        elif pa.types.is_integer(dispatch_field.type) or pa.types.is_floating(dispatch_field.type):
            values = pd.array(values, dtype="Int64" if pa.types.is_integer(dispatch_field.type) else "Float64")
            numeric.append(column)
        columns[column] = values
        titles[column] = dispatch_field.name

    # Requirement bytes per tile, shown only where alternatives differ (in the sample they do not).
    alternatives = op_plans.alternatives
    first = requirement_signature(alternatives[0]) if alternatives else None
    same = all(requirement_signature(p) == first for p in alternatives)
    if not same:
        for position in range(len(alternatives[0].inputs)):
            column = f"in{position}_bytes"
            columns[column] = pd.array(
                [p.inputs[position].shard_bytes if position < len(p.inputs) else None for p in alternatives],
                dtype="Int64",
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
    costs, basis = alternative_costs(state, operation_id, same)
    if basis is not None:
        # rank 1 = least bytes; ties share the better rank (so the rank says how many are strictly better)
        frame.insert(2, RANK, pd.Series(costs).rank(method="min").astype("int64").to_numpy())
        frame.insert(3, COST, costs)
        titles[RANK], titles[COST] = RANK, "B/tile (estimate)"
        numeric = [*numeric[:-1], COST, ALTERNATIVE]
    chosen_row = None
    if op_plans.chosen is not None:
        at = np.flatnonzero(frame[ALTERNATIVE].to_numpy() == op_plans.chosen)
        chosen_row = int(at[0]) if at.size else None
    return Alternatives(frame, titles, numeric, chosen_row, same, basis)


def _ceil(a: int, b: int) -> int:
    return -(-int(a) // max(int(b), 1))


def _block_bytes(m: int, n: int, k: int, rows: int, columns: int, inner: int, element: int) -> int:
    """One block of an m×k by k×n product cut rows × columns × inner: its two operand blocks and its result block."""
    mb, nb, kb = _ceil(m, rows), _ceil(n, columns), _ceil(k, inner)
    return element * (mb * kb + kb * nb + mb * nb)


def alternative_costs(state: SearchState, operation_id: int, same_requirements: bool) -> tuple[np.ndarray, str | None]:
    """Bytes per tile of each alternative (file order) by what the file lets us estimate, and which
    estimate it is: the requirements' shard bytes when the alternatives' requirements differ; else,
    for an attention whose dispatch gives its block counts, the per-tile scratch of one dispatch
    block (``BASIS_SCRATCH``); else nothing (None)."""
    plans = state.plans[operation_id].alternatives
    if not plans:
        return np.zeros(0, dtype=np.int64), None
    if not same_requirements:
        totals = [sum(r.shard_bytes or 0 for r in (*p.inputs, p.output)) for p in plans]
        return np.array(totals, dtype=np.int64), BASIS_REQUIREMENTS
    costs = [_attention_block_bytes(p) for p in plans]
    if any(c is None for c in costs):
        return np.zeros(len(plans), dtype=np.int64), None
    return np.array(costs, dtype=np.int64), BASIS_SCRATCH


ATTENTION_DISPATCH = (
    "query_key_rows",
    "query_key_columns",
    "query_key_inner",
    "probability_value_rows",
    "probability_value_columns",
    "probability_value_inner",
)


def _positive_int(x: object) -> bool:
    return isinstance(x, int) and x > 0


def _attention_block_bytes(plan) -> int | None:
    """Query [.., Lq, D] · key [.., Lk, D]ᵀ, then probabilities [.., Lq, Lk] · value [.., Lk, Dv]; the
    dispatch pads D and Dv (``padded_*_dimension``) and the key rows to ``key_block_rows``."""
    d = plan.dispatch or {}
    if len(plan.inputs) < 3 or not all(_positive_int(d.get(k)) for k in ATTENTION_DISPATCH):
        return None
    shapes = [r.shape for r in plan.inputs[:3]]
    if any(shape is None or len(shape) < 2 for shape in shapes):
        return None
    (lq, width), (lk, _), (_, value_width) = shapes[0][-2:], shapes[1][-2:], shapes[2][-2:]
    width = max(int(d.get("padded_query_dimension") or width), 1)
    value_width = max(int(d.get("padded_value_dimension") or value_width), 1)
    key_block = d.get("key_block_rows")
    keys = _ceil(lk, key_block) * key_block if isinstance(key_block, int) and key_block > 0 else lk
    element = plan.inputs[0].format.precision.element_bytes
    qk = _block_bytes(lq, keys, width, d["query_key_rows"], d["query_key_columns"], d["query_key_inner"], element)
    pv = _block_bytes(
        lq,
        value_width,
        keys,
        d["probability_value_rows"],
        d["probability_value_columns"],
        d["probability_value_inner"],
        element,
    )
    return qk + pv


def scatter_data(alts: Alternatives, x: str, y: str) -> tuple[dict, dict]:
    """One point per distinct (x, y) with how many alternatives sit there, and the chosen point."""
    frame = alts.frame[list(dict.fromkeys([ALTERNATIVE, x, y]))].dropna()  # x or y may be the index column
    at: dict[tuple[float, float], list[int]] = {}
    for alternative, px, py in zip(frame[ALTERNATIVE].tolist(), frame[x].tolist(), frame[y].tolist()):
        at.setdefault((float(px), float(py)), []).append(int(alternative))
    keys = sorted(at)
    counts = [len(at[k]) for k in keys]
    rank_of = dict(zip(alts.frame[ALTERNATIVE].tolist(), alts.frame[RANK].tolist())) if alts.basis else {}
    points = {
        "x": [k[0] for k in keys],
        "y": [k[1] for k in keys],
        "count": counts,
        "examples": [", ".join(map(str, at[k][:8])) + (", …" if len(at[k]) > 8 else "") for k in keys],
        "size": [7 + 3.5 * math.sqrt(n) for n in counts],
        # the best rank among the alternatives a point stands for (0 when nothing is ranked)
        "rank": [min(rank_of[a] for a in at[k]) if rank_of else 0 for k in keys],
    }
    chosen: dict[str, list] = {"x": [], "y": [], "alternative": []}
    if alts.chosen_row is not None:
        row = alts.frame.iloc[alts.chosen_row]
        if not (pd.isna(row[x]) or pd.isna(row[y])):
            chosen = {"x": [float(row[x])], "y": [float(row[y])], "alternative": [int(row[ALTERNATIVE])]}
    return points, chosen


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
        changes.append(
            "re-tiled" + (f" ({tiles_before:,} → {tiles_after:,} tiles)" if tiles_before != tiles_after else "")
        )
    before, after = pair.arrives.shard_bytes, pair.required.shard_bytes
    if before is not None and after is not None:
        changes.append("same bytes per tile" if before == after else f"{fmt_signed_bytes(after - before)} per tile")
    return "converted: " + "; ".join(changes)


def refusal_text(
    shape: Sequence[int], tiling: TensorTiling, handle: int | str, count: int, violation: Violation, tile_limit: int
) -> str:
    """Why one count of a required format's tiling is refused, in the editor's words."""
    if handle == REPLICAS:
        what = f"{count} replica{'s' if count != 1 else ''}"
        if violation.rule == RULE_MIN_REPLICAS:
            return f"{what} refused: a tiling needs at least 1 replica"
    else:
        axis = tiling.axes[int(handle)]
        what = f"axis {handle} ({axis.axis}): {count} partition{'s' if count != 1 else ''}"
    if violation.rule == RULE_TILE_COUNT:
        edited = tiling.with_replicas(count) if handle == REPLICAS else tiling.with_partitions(int(handle), count)
        factors = " × ".join(str(a.partitions) for a in edited.axes) or "1"
        return (
            f"{what} refused: the tiling would span {factors} × {edited.replicas} replica"
            f"{'s' if edited.replicas != 1 else ''} = {edited.tile_count:,} tiles, more than the config's {tile_limit:,}"
        )
    if violation.axis == handle and handle != REPLICAS:
        blocks = axis_blocks(shape, tiling)[int(handle)]
        block_size = tiling.axes[int(handle)].block_size
        return (
            f"{what} refused: the axis has {blocks:,} block{'s' if blocks != 1 else ''} of {block_size:,} "
            f"element{'s' if block_size != 1 else ''}, so it takes 1 to {blocks:,} partitions"
        )
    return f"{what} refused: {violation.rule} ({violation.detail})"
