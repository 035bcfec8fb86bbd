"""The planner's saved search (docs/formats.md §3), as ``loaders.search_state`` reads it.

Everything here is already validated: ids refer to values and operations of the graph, every
format has been applied to its value's shape (``shard_bytes`` is the per-tile figure of
docs/formats.md §2), and the chosen plan of each operation has been located among its alternatives.
The Arrow tables are built from these records by ``loaders.search_tables.search_state_tables``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .tiling import TensorFormat

# A planner option as read from the ``PipelineConfig`` Debug text: ``None`` → None, ``Some(x)`` → x,
# a unit variant → its name, a list of those → a list; anything structured keeps its Debug text.
OptionValue = None | bool | int | float | str | list

# The versions read (docs/compiler-formats.md §3): 1 (the sample), 3 (adds nothing at the top but
# keeps ``mapping`` and ``mapping_checked``) and 8 (``recipe.options``; no ``mapping``). Versions
# 2 and 4–7 were not read from the compiler's source, so they are refused rather than guessed.
SEARCH_STATE_VERSIONS = (1, 3, 8)
# Top-level keys of a version 8 file, exactly, in the order the compiler writes them.
V8_KEYS = ("version", "context", "recipe", "alternatives", "inputs", "visited", "attempts")
# ``recipe.options`` of version 8, in declaration order.
V8_OPTIONS = (
    "cast_before_copies",
    "reuse_cast_inputs",
    "packing_rows",
    "parallel_reductions",
    "disjoint_copy_sources",
    "tile_mapping",
)

# Which spelling of the input formats the explorer uses. Both are read and must agree.
INPUT_FORMAT_SOURCE = "$.inputs"


@dataclass(frozen=True, slots=True)
class GraphInput:
    name: str
    kind: str  # ``Host``, … (the Debug variant name)
    value: int
    shape: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Operation:
    id: int
    inputs: tuple[int, ...]
    results: tuple[int, ...]
    kind_name: str  # ``FlashAttention``
    kind: str  # the full Debug text: ``FlashAttention(AttentionOptions { causal: false, ... })``


@dataclass(frozen=True, slots=True)
class ComputeGraph:
    inputs: tuple[GraphInput, ...]
    operations: tuple[Operation, ...]
    outputs: tuple[int, ...]
    shapes: Mapping[int, tuple[int, ...]]  # every value of the graph, by value id, in id order

    def operation(self, operation_id: int) -> Operation:
        for operation in self.operations:
            if operation.id == operation_id:
                return operation
        raise KeyError(operation_id)

    def producer(self, value: int) -> int | None:
        """The operation whose results include ``value`` (None for graph inputs)."""
        for operation in self.operations:
            if value in operation.results:
                return operation.id
        return None

    def graph_input(self, value: int) -> GraphInput | None:
        for graph_input in self.inputs:
            if graph_input.value == value:
                return graph_input
        return None


@dataclass(frozen=True, slots=True)
class InputFormat:
    """The format a value arrives in (``$.inputs`` and ``PipelineConfig.inputs``)."""

    value: int
    shape: tuple[int, ...]
    format: TensorFormat
    shard_bytes: int
    # "inputs and context" when both spellings hold it (they are checked equal), else the one that does.
    source: str
    json_path: str  # where the format used is written


@dataclass(frozen=True, slots=True)
class Requirement:
    """The format a plan needs for one input, or produces for its output."""

    role: str  # "input" or "output"
    position: int | None  # index in ``requirements.inputs``; None for the output
    value: int | None  # the operation's input/result it applies to; None when the output is not one value
    shape: tuple[int, ...] | None
    format: TensorFormat
    shard_bytes: int | None  # None only when ``value`` is None
    local_staging: str | None
    materialization: str | None
    json_path: str


@dataclass(frozen=True, slots=True)
class Plan:
    """One candidate plan of an operation (an entry of ``$.alternatives.<op>``)."""

    operation: int
    index: int  # position in ``$.alternatives.<op>``
    operator_kind: str  # ``FlashAttention``
    operator: str  # the operator in Debug spelling
    dispatch_kind: str | None  # ``Attention`` (the dispatch enum's variant), None if not a tagged enum
    # Dispatch parameters flattened, nested keys joined by '_': ``query_key_rows``, ``materialized``…
    dispatch: Mapping[str, object]
    dispatch_paths: Mapping[str, str]  # column name → its path inside the dispatch, for docs
    inputs: tuple[Requirement, ...]
    output: Requirement
    output_aliasing: str | None
    deferred_output: str | None  # Debug spelling; None when null


@dataclass(frozen=True, slots=True)
class OperationPlans:
    operation: int
    alternatives: tuple[Plan, ...]
    chosen: int | None  # index of the recipe's plan among ``alternatives``; None when it has none

    @property
    def chosen_plan(self) -> Plan | None:
        return None if self.chosen is None else self.alternatives[self.chosen]


@dataclass(frozen=True, slots=True)
class RecipeOptions:
    """``recipe.options`` of a version 8 file (the compiler's ``planner::recipe::Options``)."""

    cast_before_copies: bool
    reuse_cast_inputs: bool
    packing_rows: int
    parallel_reductions: int
    disjoint_copy_sources: bool
    tile_mapping: tuple[int, ...]  # device tile of each tile (empty: the baseline, no remapping)


@dataclass(frozen=True, slots=True)
class RecipePlan:
    """One operation's plan in a recipe, located among that operation's ``$.alternatives``."""

    operation: int
    alternative: int | None  # its index among ``$.alternatives.<op>``; None: equal to none of them
    plan: Plan


@dataclass(frozen=True)
class Recipe:
    """A recipe: ``$.recipe`` (the incumbent) or an entry of ``$.visited``. Its plans are in
    ``plans`` for a visited recipe; the incumbent's are ``SearchState.plans`` (chosen alternatives).

    ``settings`` is every other setting as written (Debug spelling, file order): version 1/3 keep
    them on the recipe itself, version 8 in ``recipe.options`` (then also typed, ``options``). The
    typed v1 fields are those of the v1 sample; a version 3 or 8 recipe leaves them empty or None."""

    open_boundaries: tuple[str, ...]
    cast_before_copies: tuple[tuple[int, int], ...]  # v1: ordinal cast sites [source operation, ordinal]
    packing_rows: str | None
    parallel_reductions: int | None
    disjoint_copy_sources: bool | None
    in_place_casts: str | None
    settings: tuple[tuple[str, str], ...] = ()
    options: RecipeOptions | None = None  # version 8
    plans: Mapping[int, RecipePlan] = field(default_factory=dict)
    json_path: str = "$.recipe"


@dataclass(frozen=True, slots=True)
class SearchBookkeeping:
    visited: int  # length of ``$.visited``
    mapping: str | None  # ``$.mapping`` (versions 1–3) in Debug spelling; None when null or absent (v8)
    mapping_checked: bool | None  # versions 1–3; None in version 8 (no such key)
    attempts: int | None


@dataclass(frozen=True)
class SearchState:
    source: str  # the file's name as the user gave it
    version: int
    graph: ComputeGraph
    options: Mapping[str, OptionValue]  # ``PipelineConfig`` fields other than ``inputs``
    option_text: Mapping[str, str]  # the same fields' Debug text, as written
    input_formats: Mapping[int, InputFormat]  # by value id
    plans: Mapping[int, OperationPlans]  # by operation id, for every operation of the graph
    recipe: Recipe
    bookkeeping: SearchBookkeeping
    context_rest: tuple[str, ...]  # context lines after the PipelineConfig (``None`` in the sample)
    # ``$.visited``: recipes already tried, in file order. The file records no cost, verdict or
    # rejection reason for them (docs/compiler-formats §3.1).
    visited: tuple[Recipe, ...] = ()

    @property
    def tile_count(self) -> int:
        return int(self.options["tile_count"])  # type: ignore[arg-type]  # checked by the loader

    @property
    def tile_memory_budget_bytes(self) -> int:
        return int(self.options["tile_memory_budget_bytes"])  # type: ignore[arg-type]

    def arrival(self, value: int) -> InputFormat | Requirement | None:
        """The format ``value`` arrives in: its input format, else its producer's chosen output."""
        if value in self.input_formats:
            return self.input_formats[value]
        producer = self.graph.producer(value)
        if producer is None:
            return None
        plan = self.plans[producer].chosen_plan
        if plan is None or plan.output.value != value:
            return None
        return plan.output
