"""What the placement-profile view says of one tile (``TileFigures``): the compiler's placed top,
the live lower bound and the lowest address it allows, tilescope's answer on the same allocations,
each difference in a sentence. Pure Python: no Panel, no Bokeh.
"""

from __future__ import annotations

from tilescope.models.format import fmt_bytes

from .placement_opened import APP_TIME_LIMIT_S, OpenedPlacementProfile, Solved
from .placement_profile_view import PROBLEM_CAVEAT, address_bound, tile_problem


class TileFigures:
    """What the figures line says of one tile: the compiler's top, the live bound, tilescope's answer."""

    def __init__(self, opened: OpenedPlacementProfile, position: int):
        self.rows = rows = opened.tile(position)
        self.problem, self.movable = tile_problem(opened.profile, rows)
        self.placed_top = rows.placed_top
        self.live, self.live_event = rows.live_lower_bound()
        self.bound = address_bound(self.problem.ranges, self.live)

    def sentences(self, result: Solved | None, error: str = "") -> list[tuple[str, str]]:
        """(data-testid, sentence) pairs."""
        r = self.rows
        n = int(self.movable.size)
        event = "after the program" if self.live_event == 4294967295 else f"event {self.live_event:,}"
        out = [
            (
                "ts-pp-placed",
                f"The compiler placed tile {r.logical}'s {n:,} allocations up to address {self.placed_top:,} (its highest end).",
            ),
            (
                "ts-pp-bound",
                (
                    f"At {event}, {fmt_bytes(self.live)} are live; the free ranges below address {self.bound:,} hold just that, "
                    f"so no placement of them ends lower: the compiler's top is {self.placed_top - self.bound:,} B above that bound."
                ),
            ),
        ]
        if error:
            out.append(("ts-pp-solver", f"tilescope's solver did not answer: {error}"))
        elif result is None:
            out.append(("ts-pp-solver", f"tilescope's solver is running (time limit {APP_TIME_LIMIT_S:g} s)…"))
        elif result.verdict == "placed" and result.height is not None:
            diff = self.placed_top - result.height
            how = (
                f"{diff:,} B below the compiler's top"
                if diff > 0
                else f"{-diff:,} B above the compiler's top"
                if diff < 0
                else "exactly the compiler's top"
            )
            out.append(
                (
                    "ts-pp-solver",
                    (
                        f"tilescope placed them up to address {result.height:,}: {how}, "
                        f"{result.height - self.bound:,} B above the bound ({result.proof})."
                    ),
                )
            )
        elif result.verdict == "infeasible":
            out.append(("ts-pp-solver", f"tilescope says no placement exists: {result.proof}."))
        else:
            best = f" (its best placement ends at {result.height:,})" if result.height else ""
            out.append(("ts-pp-solver", f"tilescope's verdict is unknown{best}: {result.proof}."))
        out.append(("ts-pp-caveat", PROBLEM_CAVEAT))
        return out
