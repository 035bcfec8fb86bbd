"""One fit verdict for a plan, from its two checks: the planner's estimate and the placement.

- **The estimate** is the compiler's own ``fits_budget`` rule (spec compiler-formats.md §1.3,
  ``planner.model.Peaks.fits_budget``): effective peak ≤ budget and interleaved peak ≤ the
  interleaved budget. It is what the compiler applies when it chooses a plan.
- **The placement** comes later in the compiler, per tile, and fails the build when it cannot place
  every allocation. Ours (``planner.placement``) gives each region a solver verdict: *placed*,
  *infeasible* (proved: its peak usage exceeds the most capacity the rule can leave it) or
  *unknown* (our placement ends above the capacity, but nothing proves a better one cannot fit).

The verdict: ``no`` when the estimate fails (the compiler rejects the plan) or a region is proved
infeasible (the build would fail at placement); ``yes`` when the estimate passes and every region is
placed; otherwise ``unknown`` (a region unknown), or the estimate's word with the placement still
``pending`` or ``refused``. The summary, the editor and the PNG report all show this one verdict with
both figures side by side.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilescope.models.format import fmt_bytes
from tilescope.planner.model import Peaks, ProfileArrays
from tilescope.planner.placement import REGION_NAMES, Placement


@dataclass(frozen=True)
class FitVerdict:
    word: str  # "yes" | "no" | "unknown"
    estimate_fits: bool
    placement: str  # "placed" | "infeasible" | "unknown" | "pending" | "refused"
    estimate_text: str  # "effective peak … ≤ budget …; interleaved peak … ≤ …"
    placed_text: str  # "standard placed … ≤ capacity … (placed); interleaved …" or why there is none
    reason: str  # the rule that decided the word
    short: str  # for the summary's row: effective peak vs budget, the deciding region's placed vs capacity

    @property
    def css(self) -> str:
        return {"yes": "ok", "no": "bad"}.get(self.word, "note")

    def lines(self) -> list[str]:
        """The verdict, the two figures and the rule, one line each (the report, the CLI)."""
        return [f"fits: {self.word} — {self.reason}", f"estimate: {self.estimate_text}", f"placed: {self.placed_text}"]


def _estimate_text(peaks: Peaks, arrays: ProfileArrays) -> str:
    eff, inter = int(peaks.effective_peak_bytes), int(peaks.interleaved)
    budget, inter_budget = int(arrays.budget_bytes), int(arrays.interleaved_budget_bytes)
    return (
        f"effective peak {fmt_bytes(eff)} {'≤' if eff <= budget else '>'} budget {fmt_bytes(budget)}; "
        f"interleaved peak {fmt_bytes(inter)} {'≤' if inter <= inter_budget else '>'} {fmt_bytes(inter_budget)}"
    )


def _placed_text(placement: Placement) -> str:
    parts = []
    for name in REGION_NAMES:
        r = placement.regions[name]
        sign = "≤" if r.placed <= r.capacity else ">"
        parts.append(f"{name} placed {fmt_bytes(r.placed)} {sign} capacity {fmt_bytes(r.capacity)} ({r.verdict})")
    return "; ".join(parts)


def fit_verdict(peaks: Peaks, arrays: ProfileArrays, placement: Placement | None, refused: str = "") -> FitVerdict:
    """The one verdict (module doc). ``placement``: None while it is computed (``pending``), or when
    ``refused`` says why it could not be made."""
    estimate = bool(peaks.fits_budget)
    estimate_text = _estimate_text(peaks, arrays)
    if placement is None:
        state = "refused" if refused else "pending"
        placed_text = f"placement refused: {refused}" if refused else "placement pending (computed in the background)"
        word = "yes" if estimate else "no"
        reason = (
            "the compiler's estimate (fits_budget) "
            + ("passes" if estimate else "fails")
            + f"; the placement is {state}, so this is the estimate's word alone"
        )
        eff, budget = int(peaks.effective_peak_bytes), int(arrays.budget_bytes)
        short = f"estimate {eff:,} {'≤' if eff <= budget else '>'} {budget:,} B · placement {state}"
        return FitVerdict(word, estimate, state, estimate_text, placed_text, reason, short)
    verdicts = {placement.regions[name].verdict for name in REGION_NAMES}
    state = "infeasible" if "infeasible" in verdicts else "unknown" if "unknown" in verdicts else "placed"
    placed_text = _placed_text(placement)
    if not estimate:
        word, reason = ("no", "the compiler's estimate (fits_budget) fails: it rejects the plan before placing it")
    elif state == "infeasible":
        word, reason = (
            "no",
            (
                "the estimate passes, but a region's peak usage exceeds the most capacity it can have: "
                "the compiler's per-tile placement cannot place it and fails the build"
            ),
        )
    elif state == "unknown":
        word, reason = (
            "unknown",
            (
                "the estimate passes, but our placement ends above a region's capacity and nothing "
                "proves a better one cannot fit: the compiler's placement may fail the build"
            ),
        )
    else:
        word, reason = ("yes", "the estimate passes and every allocation is placed within its region's capacity")
    # the region that decides (the first not placed), else standard's figure
    region = next(
        (placement.regions[n] for n in REGION_NAMES if placement.regions[n].verdict != "placed"), placement.standard
    )
    eff, budget = int(peaks.effective_peak_bytes), int(arrays.budget_bytes)
    short = (
        f"estimate {eff:,} {'≤' if eff <= budget else '>'} {budget:,} B · placed {region.name} {region.placed:,} "
        f"{'≤' if region.placed <= region.capacity else '>'} {region.capacity:,} B ({region.verdict})"
    )
    return FitVerdict(word, estimate, state, estimate_text, placed_text, reason, short)
