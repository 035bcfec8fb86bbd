"""The summary's placement block: per region the placed top, the lower bound, the fragmentation,
the capacity and whether it fits (``planner.placement``), with the capacity rule we chose
(docs/formats.md §5). After what-if edits each figure reads ``before → after (difference)``.

Every figure carries a ``data-testid`` whose text is only the figure: ``ts-placed-standard``,
``ts-lower-bound-standard``, ``ts-fragmentation-standard``, ``ts-capacity-standard``,
``ts-fits-standard`` (and ``…-interleaved``), ``ts-overflow-bytes``; the rule under the grid:
``ts-capacity-rule``.
"""

from __future__ import annotations

from tilescope.app.format import esc
from tilescope.app.state import SessionState
from tilescope.models.errors import TilescopeError
from tilescope.models.format import fmt_bytes, fmt_change
from tilescope.planner.placement import REGION_NAMES, Placement, RegionPlacement

FIGURES = (
    ("placed", "placed"),
    ("lower_bound", "lower bound"),
    ("fragmentation", "fragmentation"),
    ("capacity", "capacity"),
)


def _figure(testid: str, before: int, after: int) -> str:
    changed = " changed" if int(before) != int(after) else ""
    return f'<span class="ts-fig{changed}" data-testid="{testid}">{esc(fmt_change(before, after))}</span>'


def _share(fragmentation: int, lower_bound: int) -> str:
    """Fragmentation as a share of the lower bound (nothing when the bound is 0)."""
    if not lower_bound:
        return ""
    return f' <span class="note">({fragmentation / lower_bound:.3%} of the bound)</span>'


def _fits(region: str, now: RegionPlacement, before: RegionPlacement) -> str:
    word, cls = ("yes", "ok") if now.fits else ("no", "bad")
    change = "" if now.fits == before.fits else f" (was {'yes' if before.fits else 'no'})"
    rule = (
        f"placed {now.placed:,} ≤ capacity {now.capacity:,}"
        if now.fits
        else f"placed {now.placed:,} > capacity {now.capacity:,}"
    )
    return f'<span class="{cls}" data-testid="ts-fits-{region}" title="{esc(rule)}">{word}{esc(change)}</span>'


def _rows(now: Placement, before: Placement) -> str:
    """One row per figure, one column per region."""
    head = "".join(f"<th>{esc(r)}</th>" for r in REGION_NAMES)
    rows = [f'<tr><td class="k"></td>{head}</tr>']
    for field, label in FIGURES:
        cells = []
        for region in REGION_NAMES:
            a, b = now.regions[region], before.regions[region]
            cell = _figure(f"ts-{field.replace('_', '-')}-{region}", getattr(b, field), getattr(a, field))
            if field == "fragmentation":
                cell += _share(a.fragmentation, a.lower_bound)
            cells.append(f"<td>{cell}</td>")
        rows.append(f'<tr><td class="k">{esc(label)}</td>{"".join(cells)}</tr>')
    fits = "".join(f"<td>{_fits(r, now.regions[r], before.regions[r])}</td>" for r in REGION_NAMES)
    rows.append(f'<tr><td class="k">within capacity</td>{fits}</tr>')
    verdicts = "".join(f"<td>{verdict_html(r, now.regions[r])}</td>" for r in REGION_NAMES)
    rows.append(f'<tr><td class="k">verdict</td>{verdicts}</tr>')
    return "".join(rows)


VERDICT_CLASS = {"placed": "ok", "infeasible": "bad"}  # "unknown": plain


def verdict_html(region: str, figures: RegionPlacement, testid: str | None = "ts-verdict") -> str:
    """The region's verdict against its capacity (``planner.placement_exact.region_verdict``), its
    proof on hover; ``infeasible by N B`` when a bound proves it. ``testid``: its ``data-testid``
    prefix (None: none)."""
    word = figures.verdict
    if word == "infeasible" and figures.deficit_bytes:
        word = f"infeasible by {fmt_bytes(figures.deficit_bytes)}"
    cls = VERDICT_CLASS.get(figures.verdict, "note")
    tag = f' data-testid="{testid}-{region}"' if testid else ""
    return f'<span class="{cls}"{tag} title="{esc(figures.proof)}">{esc(word)}</span>'


def proofs_html(now: Placement) -> str:
    """Each region's verdict and its proof, one line each."""
    return "".join(
        f'<div class="note ts-proof" data-testid="ts-proof-{r}"><b>{esc(r)}</b>: {verdict_html(r, now.regions[r], None)} — '
        f"{esc(now.regions[r].proof)}</div>"
        for r in REGION_NAMES
    )


# Inline, in the profile line where the placement's one line comes (its length, so the lines wrap
# alike): a block here (a heading and a note) pushed the timeline 36 px down and back at every edit.
PENDING = (
    '<span class="ts-placement-pending" data-testid="ts-placement-pending">placement ▸ placing the '
    "allocations (in the background)…</span>"
)


def placements(state: SessionState) -> tuple[Placement | None, Placement | None, str]:
    """(now, before, refused): the current plan's placement and the file plan's, None while they are
    computed in the background (``SessionState.result``); ``refused`` says why there is none."""
    data = state.data
    try:
        return state.result(data, "placement"), state.result(data.base, "placement"), ""
    except TilescopeError as exc:
        return None, None, str(exc)


def placement_summary_html(state: SessionState) -> str:
    """The block for the summary's grid (all text escaped); a refused placement says why instead.
    A large plan's placement is computed in the background (``SessionState.result``): until it is
    ready, the block says so. Its line gives no second fit verdict: the summary's one "fits"
    (``derived.fit_verdict``) names the placement's solver state beside the estimate."""
    now, before, refused = placements(state)
    if refused:
        return (
            "<div><h3>Placement (per tile)</h3>"
            f'<div class="bad" data-testid="ts-placement-error">placement refused: {esc(refused)}</div></div>'
        )
    if now is None or before is None:
        return PENDING
    overflow = now.standard_contiguous_overflow_bytes
    # One line in the summary (it must leave the timeline in view), the figures one click away.
    line = "fragmentation " + " / ".join(f"{now.regions[r].fragmentation:,} B {r}" for r in REGION_NAMES)
    return (
        '<details class="ts-placement" data-testid="ts-placement-summary">'
        f"<summary>placement ▸ {esc(line)}</summary>"
        f"<table>{_rows(now, before)}"
        f'<tr><td class="k">contiguous overflow</td><td><span class="ts-fig" data-testid="ts-overflow-bytes">{esc(fmt_bytes(overflow))}</span>'
        f' <span class="note">(from the file; not counted)</span></td><td></td></tr></table>{proofs_html(now)}{capacity_rule_html(now)}</details>'
    )


def capacity_rule_html(now: Placement) -> str:
    """The capacity and fits rule, under the placement figures."""
    return (
        f'<div class="note ts-rule" data-testid="ts-capacity-rule">placement capacity and fits, our reading '
        f"(docs/formats.md §5): {esc(now.capacity_rule)}</div>"
    )
