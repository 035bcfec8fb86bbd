"""A comparison as one JSON object (``tilescope compare --json``; the report and the app use the
same fields). Every figure is the planner's recomputation, never a figure copied from a file."""

from __future__ import annotations

from .compare import FIGURES, CompareSide, Comparison


def side_json(side: CompareSide, file: str | None = None) -> dict:
    p = side.plan.peaks
    header = side.profile.header
    out = {
        "file": file if file is not None else side.profile.source,
        "scope": header.get("scope"),
        "edits": [e.to_json() for e in side.edits],
        "values": side.arrays.n_values,
        "steps": side.arrays.n_steps,
        "peak": {"standard": p.standard, "interleaved": p.interleaved, "total": p.total},
        "exchange_rows": p.exchange_rows,
        "effective_peak_bytes": p.effective_peak_bytes,
        "fits_budget": p.fits_budget,
        "standard_peak_step": p.standard_step,
        "interleaved_peak_step": p.interleaved_step,
        "total_peak_step": p.total_step,
    }
    return out


def _step_json(side: CompareSide, step: int, sources: list, operations: list) -> dict:
    return {"index": step, "source": sources[step], "operation": operations[step]}


def unmatched_steps_json(comparison: Comparison) -> dict:
    out = {}
    for key, side, steps in (
        ("a", comparison.a, comparison.steps.unmatched_a),
        ("b", comparison.b, comparison.steps.unmatched_b),
    ):
        table = side.profile.steps
        sources, operations = table.column("source").to_pylist(), table.column("operation").to_pylist()
        out[key] = [_step_json(side, int(s), sources, operations) for s in steps.tolist()]
    return out


def unmatched_values_json(comparison: Comparison) -> dict:
    match = comparison.values
    return {
        "a": [
            {"id": int(comparison.a.arrays.value_ids[match.a_row[e]]), "name": str(match.name[e])}
            for e in match.only_a.tolist()
        ],
        "b": [
            {"id": int(comparison.b.arrays.value_ids[match.b_row[e]]), "name": str(match.name[e])}
            for e in match.only_b.tolist()
        ],
    }


def comparison_json(comparison: Comparison, file_a: str | None = None, file_b: str | None = None) -> dict:
    steps, match = comparison.steps, comparison.values
    return {
        "a": side_json(comparison.a, file_a),
        "b": side_json(comparison.b, file_b),
        "delta": comparison.delta.to_json(),
        "steps": steps.mode,
        "matched_steps": int(steps.matched.size),
        "matched_values": int(match.matched.sum()),
        "values": [v.to_json() for v in comparison.changed_values],
        "attribution": {figure: comparison.attribution(figure).to_json() for figure in FIGURES},
        "unmatched_values": unmatched_values_json(comparison),
        "unmatched_steps": unmatched_steps_json(comparison),
    }
