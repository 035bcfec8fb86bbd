"""``tilescope compare A [B] [--json] [--edits-a E] [--edits-b E] [--top N]``: two memory plans
side by side (``tilescope.derived.compare``).

Argument rules:

- ``A B``: the plan of A's file against the plan of B's file. ``--edits-a E`` applies the edit set
  E to A's tilings first, ``--edits-b E`` to B's (each set is validated against its own file).
- ``A --edits-b E`` (B omitted): A against A edited by E (A is loaded once). ``--edits-a`` may be
  given too (A edited one way against A edited another). B omitted without ``--edits-b`` is an
  error: there would be nothing to compare.
- Every figure is recomputed by the planner from the files' tilings, never copied from them.
- ``--json`` prints ``derived.compare_json.comparison_json``: ``a``, ``b`` (``file``, ``scope``,
  ``edits``, ``peak`` {standard, interleaved, total}, ``effective_peak_bytes``, ``fits_budget``,
  the three peak steps), ``delta``, ``steps`` (``"same"``/``"aligned"``), ``values`` (every changed
  pair and every unmatched value), ``attribution`` (``total``, ``standard``, ``interleaved``: its
  parts, ``scratch_delta`` and ``exchange_rows_delta`` add up to the figure's delta),
  ``unmatched_values`` and ``unmatched_steps`` (``{"a": [...], "b": [...]}``).
- The text form prints the peaks as A | B | Δ, the ``--top`` largest changed values and each
  peak's attribution as a short table (the JSON lists everything).
- Bad input, an invalid edit set or a missing B exits 2 with one line on stderr.
"""

from __future__ import annotations

import json

from tilescope.cli.inputs import open_profile
from tilescope.loaders.edit_sets import load_edit_set
from tilescope.models.edits import EDIT_SET_FORMAT
from tilescope.models.errors import TilescopeError
from tilescope.models.format import fmt_bytes, fmt_signed_bytes, shorten, terminal_text

NAME_CHARS = 48


def add_arguments(parser) -> None:
    parser.add_argument("a", metavar="A", help="a memory profile")
    parser.add_argument("b", metavar="B", nargs="?", help="another memory profile (omitted: A again, with --edits-b)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--edits-a", metavar="EDITS.json", help="an edit set applied to A before comparing")
    parser.add_argument("--edits-b", metavar="EDITS.json", help="an edit set applied to B (to A when B is omitted)")
    parser.add_argument(
        "--top", type=int, default=10, metavar="N", help="changed values and parts shown in the text form (default 10)"
    )
    parser.epilog = EDIT_SET_FORMAT  # the edit-set file's reference (models.edits)


def _side(profile, arrays, plan, edits_path: str | None, flag: str):
    from tilescope.derived.compare import CompareSide
    from tilescope.planner.edits import EditError, apply_edits

    if not edits_path:
        return CompareSide(profile, arrays, plan)
    edits = load_edit_set(edits_path)
    try:
        whatif = apply_edits(arrays, plan, edits)
    except EditError as exc:
        raise TilescopeError(f"{edits_path} ({flag}): {exc}") from None
    return CompareSide.edited(profile, arrays, whatif)


def comparison_of(args):
    """The two sides the arguments name (module doc), compared."""
    from tilescope.derived.compare import compare_plans

    if args.b is None and not args.edits_b:
        raise TilescopeError("compare: give B, or --edits-b EDITS.json to compare A with A edited")
    if args.top < 0:
        raise TilescopeError(f"--top: expected a count ≥ 0, found {args.top}")
    opened_a = open_profile(args.a, quiet=getattr(args, "quiet", False))
    profile_a, arrays_a, plan_a = opened_a.profile, opened_a.arrays, opened_a.plan
    if args.b is None:
        profile_b, arrays_b, plan_b = profile_a, arrays_a, plan_a
    else:
        opened_b = open_profile(args.b, quiet=getattr(args, "quiet", False))
        profile_b, arrays_b, plan_b = opened_b.profile, opened_b.arrays, opened_b.plan
    side_a = _side(profile_a, arrays_a, plan_a, args.edits_a, "--edits-a")
    side_b = _side(profile_b, arrays_b, plan_b, args.edits_b, "--edits-b")
    return compare_plans(side_a, side_b)


def run(args) -> int:
    from tilescope.derived.compare_json import comparison_json

    comparison = comparison_of(args)
    file_b = args.b if args.b is not None else args.a
    if args.json:
        print(json.dumps(comparison_json(comparison, args.a, file_b)))
    else:
        print(comparison_text(comparison, args.a, file_b, args.top))
    return 0


# ----------------------------------------------------------------------------- text form


def _name(text: str) -> str:
    return shorten(terminal_text(text), NAME_CHARS)


def _side_line(key: str, side, file: str) -> str:
    scope = side.profile.header.get("scope") or ""
    line = f"{key}: {terminal_text(file)} (scope {terminal_text(scope)})"
    if side.edits:
        line += "; edited: " + "; ".join(e.describe() for e in side.edits)
    return line


def _row(label: str, a: str, b: str, delta: str) -> str:
    return f"{label:<18}{a:<36}{b:<36}{delta}"


def _peak_table(comparison) -> list[str]:
    pa, pb, d = comparison.a.plan.peaks, comparison.b.plan.peaks, comparison.delta
    lines = [_row("", "A", "B", "Δ (B − A)")]
    for label, x, y, sx, sy, delta in (
        ("standard peak", pa.standard, pb.standard, pa.standard_step, pb.standard_step, d.standard),
        ("interleaved peak", pa.interleaved, pb.interleaved, pa.interleaved_step, pb.interleaved_step, d.interleaved),
        ("total peak", pa.total, pb.total, pa.total_step, pb.total_step, d.total),
    ):
        lines.append(_row(label, f"{fmt_bytes(x)} @{sx}", f"{fmt_bytes(y)} @{sy}", fmt_signed_bytes(delta)))
    lines.append(
        _row(
            "effective peak",
            fmt_bytes(pa.effective_peak_bytes),
            fmt_bytes(pb.effective_peak_bytes),
            fmt_signed_bytes(d.effective_peak_bytes),
        )
    )
    yes = lambda f: "yes" if f else "NO"  # noqa: E731
    lines.append(_row("fits budget", yes(pa.fits_budget), yes(pb.fits_budget), ""))
    return lines


def _matching_lines(comparison) -> list[str]:
    steps, match = comparison.steps, comparison.values
    if steps.mode == "same":
        step_line = f"steps: same sequence of (source, operation), matched by index ({steps.n_a:,} steps)"
    else:
        step_line = (
            f"steps: aligned by longest common subsequence of (source, operation): {steps.matched.size:,} matched, "
            f"{steps.unmatched_a.size:,} only in A, {steps.unmatched_b.size:,} only in B"
        )
    changed = sum(1 for v in comparison.changed_values if v.status == "changed")
    value_line = (
        f"values: matched by name and order of appearance: {int(match.matched.sum()):,} matched "
        f"({changed:,} changed), {match.only_a.size:,} only in A, {match.only_b.size:,} only in B"
    )
    return [step_line, value_line]


def _value_lines(comparison, top: int) -> list[str]:
    diffs = comparison.changed_values
    if not diffs:
        return ["changed values: none"]
    lines = [f"changed values ({len(diffs):,}; largest |Δ| first{'' if len(diffs) <= top else f', top {top}'}):"]
    for v in diffs[:top]:
        ids = f"[{'—' if v.a_id is None else v.a_id} → {'—' if v.b_id is None else v.b_id}]"
        a_bytes = "absent" if v.a_bytes is None else f"{v.a_bytes:,} B"
        b_bytes = "absent" if v.b_bytes is None else f"{v.b_bytes:,} B"
        lines.append(f"  {fmt_signed_bytes(v.delta_bytes):<26}{_name(v.name)} {ids}: {a_bytes} → {b_bytes}")
        if v.status == "changed" and v.a_tiling != v.b_tiling:
            lines.append(f"  {'':<26}  tiling {v.a_tiling} → {v.b_tiling}")
        elif v.status == "changed":
            from tilescope.derived.compare_values import changes_text

            lines.append(f"  {'':<26}  {changes_text(v.changes) or 'bytes only'}")
    if len(diffs) > top:
        lines.append(f"  … {len(diffs) - top:,} more (--json lists them all)")
    return lines


def _attribution_lines(comparison, figure: str, top: int) -> list[str]:
    a = comparison.attribution(figure)
    lines = [f"{figure} peak: A step {a.a_step} → B step {a.b_step}, {fmt_signed_bytes(a.delta)}"]
    if a.delta == 0 and not a.parts and a.scratch_delta == 0 and a.exchange_rows_delta == 0:
        return lines + ["  the same values live with the same bytes"]
    for p in a.parts[:top]:
        ids = f"[{'—' if p.a_id is None else p.a_id} → {'—' if p.b_id is None else p.b_id}]"
        lines.append(f"  {fmt_signed_bytes(p.bytes):<26}{_name(p.name)} {ids}: live {p.a_bytes:,} B → {p.b_bytes:,} B")
    rest = a.parts[top:]
    if rest:
        lines.append(f"  {fmt_signed_bytes(sum(p.bytes for p in rest)):<26}{len(rest):,} more values")
    lines.append(f"  {fmt_signed_bytes(a.scratch_delta):<26}scratch")
    if figure != "interleaved":
        lines.append(f"  {fmt_signed_bytes(a.exchange_rows_delta):<26}exchange rows")
    lines.append(
        f"  {'= ' + fmt_signed_bytes(a.parts_total + a.scratch_delta + a.exchange_rows_delta):<26}"
        f"({len(a.parts):,} values with a part, {a.live_unchanged:,} live at both unchanged)"
    )
    return lines


def comparison_text(comparison, file_a: str, file_b: str, top: int = 10) -> str:
    lines = [
        _side_line("A", comparison.a, file_a),
        _side_line("B", comparison.b, file_b),
        *_matching_lines(comparison),
        "",
    ]
    lines += _peak_table(comparison) + [""]
    lines += _value_lines(comparison, top) + [
        "",
        "attribution (each peak's Δ = Σ values' live bytes at B's peak step − at A's + scratch + exchange rows):",
    ]
    for figure in ("total", "standard", "interleaved"):
        lines += _attribution_lines(comparison, figure, top)
    return "\n".join(lines)
