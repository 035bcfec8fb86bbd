"""``tilescope summary FILE [--json]``: what a memory profile or a search state holds, briefly.

For a search state the JSON is::

    {"kind": "search_state", "tile_count": …, "tile_memory_budget_bytes": …,
     "operations": [{"id": …, "kind": …, "alternatives": N, "chosen_alternative": INDEX,
                     "inputs": [{"value": …, "shape": […],
                                 "arrives": {"tile_count": …, "shard_bytes": …},
                                 "required": {"tile_count": …, "shard_bytes": …}}],
                     "output": {"tile_count": …, "shard_bytes": …}}]}

``kind`` of an operation is its variant name (``FlashAttention``). A value "arrives" in its input
format, or, when another operation produces it, in that operation's chosen output format; a format
the file does not give is null, and so are ``required``/``output`` of an operation without a plan.
A memory profile is summarised by ``tilescope.derived.profile_summary.memory_profile_summary``.
"""

from __future__ import annotations

import json
from typing import Any

from tilescope.models.format import count_of, fmt_bytes, terminal_text
from tilescope.models.search_state import INPUT_FORMAT_SOURCE, InputFormat, Requirement, SearchState


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile or a search state")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def run(args) -> int:
    # Loaders are imported here: the CLI imports every subcommand module at start-up.
    from tilescope.cli.inputs import open_any
    from tilescope.derived.opening import OpenedProfile

    opened = open_any(args.file, quiet=args.quiet)
    if isinstance(opened, OpenedProfile):
        from tilescope.derived.profile_summary import memory_profile_summary

        summary = memory_profile_summary(opened)
        text = _generic_text(args.file, "memory profile", summary)
    else:
        summary = search_state_summary(opened.search_state)
        text = search_state_text(opened.search_state)
    print(json.dumps(summary) if args.json else text)
    return 0


# ----------------------------------------------------------------------------- search state


def _figures(placed: InputFormat | Requirement | None) -> dict | None:
    if placed is None:
        return None
    return {"tile_count": placed.format.layout.tiling.tile_count, "shard_bytes": placed.shard_bytes}


def search_state_summary(state: SearchState) -> dict:
    """The ``--json`` summary of a search state (the contract in the module doc)."""
    operations = []
    for op in state.graph.operations:
        plans = state.plans[op.id]
        plan = plans.chosen_plan
        operations.append(
            {
                "id": op.id,
                "kind": op.kind_name,
                "alternatives": len(plans.alternatives),
                "chosen_alternative": plans.chosen,
                "inputs": [
                    {
                        "value": value,
                        "shape": list(state.graph.shapes[value]),
                        "arrives": _figures(state.arrival(value)),
                        "required": _figures(plan.inputs[i]) if plan else None,
                    }
                    for i, value in enumerate(op.inputs)
                ],
                "output": _figures(plan.output) if plan else None,
            }
        )
    return {
        "kind": "search_state",
        "tile_count": state.tile_count,
        "tile_memory_budget_bytes": state.tile_memory_budget_bytes,
        "operations": operations,
    }


def _figures_text(figures: dict | None) -> str:
    if figures is None:
        return "unknown"
    return f"{fmt_bytes(figures['shard_bytes'])} per tile on {count_of(figures['tile_count'], 'tile')}"


def search_state_text(state: SearchState) -> str:
    """A few lines for a person: the budget, then each operation's inputs as they arrive and are required."""
    summary = search_state_summary(state)
    n_ops = len(summary["operations"])
    lines = [
        f"{terminal_text(state.source)}: search state, {count_of(n_ops, 'operation')} on "
        f"{count_of(summary['tile_count'], 'tile')}, tile memory budget {fmt_bytes(summary['tile_memory_budget_bytes'])}"
    ]
    sources = {f.source for f in state.input_formats.values()}
    if sources == {"inputs and context"}:
        lines.append(f"input formats: {INPUT_FORMAT_SOURCE}, equal to PipelineConfig.inputs in $.context")
    elif sources:
        lines.append(f"input formats: {INPUT_FORMAT_SOURCE} where given, else PipelineConfig.inputs in $.context")
    for op in summary["operations"]:
        chosen = op["chosen_alternative"]
        choice = "no plan chosen" if chosen is None else f"alternative {chosen} of {op['alternatives']} chosen"
        lines.append(f"operation {op['id']} {terminal_text(op['kind'])}: {choice}")
        for entry in op["inputs"]:
            graph_input = state.graph.graph_input(entry["value"])
            name = terminal_text(graph_input.name) if graph_input else f"value {entry['value']}"
            lines.append(
                f"  {name} (value {entry['value']}, shape {entry['shape']}): arrives {_figures_text(entry['arrives'])}, "
                f"required {_figures_text(entry['required'])}"
            )
        lines.append(f"  output: {_figures_text(op['output'])}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- memory profile


def _is_bytes(key: str) -> bool:
    """Keys of byte figures in a summary: ``*_bytes`` and the peaks (``peak.standard``, ...)."""
    return key.endswith("_bytes") or key.startswith("peak.")


def _scalar_text(key: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        return value if isinstance(value, str) else json.dumps(value)
    if _is_bytes(key):
        return fmt_bytes(value)
    return str(value) if key.endswith("_step") else f"{value:,}"  # a step is an index, not an amount


def _generic_text(path: str, kind: str, summary: dict) -> str:
    """Plain lines for a summary dict whose layout this module does not own: scalars as
    ``key: value`` (byte figures as ``models.format`` writes them), nested objects one level
    deep, lists by length."""
    lines = [f"{terminal_text(path)}: {kind}"]

    def show(key: str, value: Any, depth: int = 0) -> None:
        if isinstance(value, dict) and depth == 0:
            for sub, item in value.items():
                show(f"{key}.{sub}", item, depth + 1)
        elif isinstance(value, (dict, list)):
            lines.append(f"  {key}: {count_of(len(value), 'entry', 'entries')}")
        else:
            lines.append(f"  {key}: {terminal_text(_scalar_text(key, value))}")

    for key, value in summary.items():
        if key != "kind":
            show(key, value)
    return "\n".join(lines)
