"""The compare form of the report (``tilescope report A --compare B``): CSV tables and the JSON of a
``derived.compare.Comparison``; bytes out, no drawing.

- ``compare_values.csv``: every changed matched value and every unmatched one (``status``
  ``changed``/``only_a``/``only_b``), largest ``|delta_bytes|`` first, with both tilings and what
  changed;
- ``compare_attribution.csv``: per figure (``total``, ``standard``, ``interleaved``) one ``peak``
  row (A's and B's peak and the delta), then its ``part`` rows (one per value whose bytes live at
  the peak steps differ), a ``scratch`` row and an ``exchange_rows`` row: the ``delta_bytes`` of
  a figure's part, scratch and exchange_rows rows add up to its peak row's;
- ``compare_steps.csv``: the aligned step axis, one row per position: each side's step (empty
  where it has none), its usage per region, and the difference where both have a step;
- ``compare.json``: ``derived.compare_json.comparison_json``, everything ``tilescope compare
  --json`` prints.

Every CSV goes through ``report.csv_safe``.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from tilescope.derived.compare import FIGURES, Comparison
from tilescope.derived.compare_data import changed_values_columns
from tilescope.derived.compare_json import comparison_json

from .csv_safe import to_csv_bytes

COMPARE_PNG = "compare.png"
COMPARE_VALUES_CSV = "compare_values.csv"
COMPARE_ATTRIBUTION_CSV = "compare_attribution.csv"
COMPARE_STEPS_CSV = "compare_steps.csv"
COMPARE_JSON = "compare.json"
COMPARE_NAMES = (COMPARE_PNG, COMPARE_VALUES_CSV, COMPARE_ATTRIBUTION_CSV, COMPARE_STEPS_CSV, COMPARE_JSON)


def compare_values_table(comparison: Comparison) -> pa.Table:
    columns = changed_values_columns(comparison)  # the columns the app's table shows
    text, number = pa.string(), pa.int64()
    types = {
        "status": text,
        "name": text,
        "a_id": number,
        "b_id": number,
        "a_bytes": number,
        "b_bytes": number,
        "delta_bytes": number,
        "a_tiling": text,
        "b_tiling": text,
        "changes": text,
    }
    return pa.table({key: pa.array(columns[key], kind) for key, kind in types.items()})


def compare_attribution_table(comparison: Comparison) -> pa.Table:
    rows: list[dict] = []
    for figure in FIGURES:
        a = comparison.attribution(figure)
        base = {"figure": figure, "a_step": a.a_step, "b_step": a.b_step}
        rows.append(
            {
                **base,
                "kind": "peak",
                "rank": None,
                "name": None,
                "a_id": None,
                "b_id": None,
                "a_bytes": a.a_peak,
                "b_bytes": a.b_peak,
                "delta_bytes": a.delta,
            }
        )
        for rank, p in enumerate(a.parts, 1):
            rows.append(
                {
                    **base,
                    "kind": "part",
                    "rank": rank,
                    "name": p.name,
                    "a_id": p.a_id,
                    "b_id": p.b_id,
                    "a_bytes": p.a_bytes,
                    "b_bytes": p.b_bytes,
                    "delta_bytes": p.bytes,
                }
            )
        rows.append(
            {
                **base,
                "kind": "scratch",
                "rank": None,
                "name": None,
                "a_id": None,
                "b_id": None,
                "a_bytes": a.a_scratch,
                "b_bytes": a.b_scratch,
                "delta_bytes": a.scratch_delta,
            }
        )
        rows.append(
            {
                **base,
                "kind": "exchange_rows",
                "rank": None,
                "name": None,
                "a_id": None,
                "b_id": None,
                "a_bytes": a.a_exchange_rows,
                "b_bytes": a.b_exchange_rows,
                "delta_bytes": a.exchange_rows_delta,
            }
        )
    schema = pa.schema(
        [
            ("figure", pa.string()),
            ("kind", pa.string()),
            ("rank", pa.int64()),
            ("name", pa.string()),
            ("a_id", pa.int64()),
            ("b_id", pa.int64()),
            ("a_step", pa.int64()),
            ("b_step", pa.int64()),
            ("a_bytes", pa.int64()),
            ("b_bytes", pa.int64()),
            ("delta_bytes", pa.int64()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)


def _present(column: np.ndarray, mask: np.ndarray) -> pa.Array:
    return pa.array(column, pa.int64(), mask=~mask)


def compare_steps_table(comparison: Comparison) -> pa.Table:
    o = comparison.overlay
    has_a, has_b = o.a_step >= 0, o.b_step >= 0
    return pa.table(
        {
            "position": pa.array(np.arange(o.n_positions), pa.int64()),
            "a_step": _present(o.a_step, has_a),
            "b_step": _present(o.b_step, has_b),
            "a_usage_standard": _present(o.a_standard, has_a),
            "a_usage_interleaved": _present(o.a_interleaved, has_a),
            "b_usage_standard": _present(o.b_standard, has_b),
            "b_usage_interleaved": _present(o.b_interleaved, has_b),
            "delta_standard": _present(o.delta("standard"), o.matched),
            "delta_interleaved": _present(o.delta("interleaved"), o.matched),
            "delta_total": _present(o.delta("total"), o.matched),
        }
    )


def compare_tables(comparison: Comparison, file_a: str | None = None, file_b: str | None = None) -> dict[str, bytes]:
    """The CSVs and the JSON, by file name (``COMPARE_NAMES`` order, without the PNG)."""
    return {
        COMPARE_VALUES_CSV: to_csv_bytes(compare_values_table(comparison)),
        COMPARE_ATTRIBUTION_CSV: to_csv_bytes(compare_attribution_table(comparison)),
        COMPARE_STEPS_CSV: to_csv_bytes(compare_steps_table(comparison)),
        COMPARE_JSON: (json.dumps(comparison_json(comparison, file_a, file_b), indent=1) + "\n").encode(),
    }
