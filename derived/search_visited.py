"""How each visited recipe of a search state (``$.visited``) differs from the incumbent
(``$.recipe``): the operations whose plan differs (which alternative each is, or that it is none of
them, and the dispatch parameters that differ), the open boundaries added and removed, and the
settings that differ. The compiler's ``Recipe::changes`` reports the same three parts.

The file records no cost, verdict or rejection reason per visited recipe (docs/compiler-formats.md
§3.1): nothing here says why a recipe was not kept, and the view says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilescope.models.format import shorten
from tilescope.models.search_state import Plan, Recipe, SearchState

from .search_rows import requirement_signature

NO_REASON = (
    "The file records no cost, verdict or rejection reason for a visited recipe (it lists the recipes the search has "
    "already tried, so that it does not try them again): what follows is only how each differs from the incumbent."
)


def mapping_text(tiles: tuple[int, ...] | list[int]) -> str:
    """A tile mapping in words: empty, the identity, a rotation, a permutation or neither."""
    n = len(tiles)
    if n == 0:
        return "none (empty: no remapping)"
    shifts = {(t - i) % n for i, t in enumerate(tiles)}
    if shifts == {0}:
        return f"the identity on {n:,} tiles"
    if len(shifts) == 1:
        return f"a rotation by {shifts.pop():,} of {n:,} tiles (tile t → (t + {(tiles[0]) % n:,}) mod {n:,})"
    repeated = n - len(set(tiles))
    if repeated == 0:
        return f"a permutation of {n:,} tiles (tile 0 → {tiles[0]:,}, tile 1 → {tiles[1]:,}, …)" if n > 1 else "1 tile"
    return f"{n:,} entries, not a permutation: {repeated:,} repeat a tile"


def setting_text(name: str, text: str, recipe: Recipe) -> str:
    """A setting as shown: a tile mapping in words, anything else as written (shortened)."""
    if name == "tile_mapping" and recipe.options is not None:
        return mapping_text(recipe.options.tile_mapping)
    return shorten(text, 160)


@dataclass(frozen=True)
class PlanChange:
    """One operation whose plan differs between the incumbent and a visited recipe."""

    operation: int
    incumbent: int | None  # the incumbent's alternative; None when it has no plan for the operation
    visited: int | None  # the visited recipe's alternative; None: no plan, or one outside the alternatives
    has_plan: bool  # the visited recipe has a plan for the operation
    dispatch: tuple[tuple[str, object, object], ...]  # (parameter, incumbent's, visited's) that differ
    requirements_differ: bool  # the two plans require different formats

    def text(self) -> str:
        before = "no plan" if self.incumbent is None else f"alternative {self.incumbent}"
        if not self.has_plan:
            after = "no plan"
        elif self.visited is None:
            after = "a plan outside the alternatives"
        else:
            after = f"alternative {self.visited}"
        parts = [f"{name} {a} → {b}" for name, a, b in self.dispatch[:6]]
        if len(self.dispatch) > 6:
            parts.append(f"{len(self.dispatch) - 6} more")
        if self.requirements_differ:
            parts.append("other required formats")
        detail = f" ({'; '.join(parts)})" if parts else ""
        return f"operation {self.operation}: {before} → {after}{detail}"


@dataclass(frozen=True)
class SettingChange:
    name: str
    incumbent: str  # as shown (``setting_text``); "absent" when the recipe lacks it
    visited: str


@dataclass(frozen=True)
class VisitedRow:
    """One visited recipe against the incumbent."""

    index: int  # position in ``$.visited``
    plans: tuple[PlanChange, ...]
    boundaries_added: tuple[str, ...]
    boundaries_removed: tuple[str, ...]
    settings: tuple[SettingChange, ...]

    @property
    def same_as_incumbent(self) -> bool:
        return not (self.plans or self.boundaries_added or self.boundaries_removed or self.settings)

    @property
    def parts(self) -> list[str]:
        """What differs, one phrase per part (empty when nothing does)."""
        out = [change.text() for change in self.plans]
        if self.boundaries_added:
            out.append("open boundaries added: value " + ", ".join(self.boundaries_added))
        if self.boundaries_removed:
            out.append("open boundaries removed: value " + ", ".join(self.boundaries_removed))
        out.extend(f"{s.name}: {s.incumbent} → {s.visited}" for s in self.settings)
        return out


def _dispatch_changes(a: Plan | None, b: Plan | None) -> tuple[tuple[str, object, object], ...]:
    if a is None or b is None:
        return ()
    keys = list(dict.fromkeys([*a.dispatch, *b.dispatch]))
    return tuple((k, a.dispatch.get(k), b.dispatch.get(k)) for k in keys if a.dispatch.get(k) != b.dispatch.get(k))


def visited_row(state: SearchState, index: int, recipe: Recipe) -> VisitedRow:
    incumbent = state.recipe
    changes = []
    operations = sorted({op for op, plans in state.plans.items() if plans.chosen is not None} | set(recipe.plans))
    for op in operations:
        mine = state.plans[op].chosen_plan if op in state.plans else None
        theirs = recipe.plans.get(op)
        chosen = state.plans[op].chosen if op in state.plans else None
        if theirs is not None and theirs.alternative is not None and theirs.alternative == chosen:
            continue
        if theirs is None and mine is None:
            continue
        other = theirs.plan if theirs is not None else None
        changes.append(
            PlanChange(
                operation=op,
                incumbent=chosen,
                visited=theirs.alternative if theirs is not None else None,
                has_plan=theirs is not None,
                dispatch=_dispatch_changes(mine, other),
                requirements_differ=mine is not None
                and other is not None
                and requirement_signature(mine) != requirement_signature(other),
            )
        )
    before, after = set(incumbent.open_boundaries), set(recipe.open_boundaries)
    mine_settings, their_settings = dict(incumbent.settings), dict(recipe.settings)
    settings = [
        SettingChange(
            name,
            setting_text(name, mine_settings[name], incumbent) if name in mine_settings else "absent",
            setting_text(name, their_settings[name], recipe) if name in their_settings else "absent",
        )
        for name in dict.fromkeys([*mine_settings, *their_settings])
        if mine_settings.get(name) != their_settings.get(name)
    ]
    return VisitedRow(
        index=index,
        plans=tuple(changes),
        boundaries_added=tuple(sorted(after - before, key=_boundary_order)),
        boundaries_removed=tuple(sorted(before - after, key=_boundary_order)),
        settings=tuple(settings),
    )


def _boundary_order(text: str) -> tuple[int, int | str]:
    return (0, int(text)) if text.isdigit() else (1, text)


def visited_rows(state: SearchState) -> list[VisitedRow]:
    """Every visited recipe against the incumbent, in file order."""
    return [visited_row(state, i, recipe) for i, recipe in enumerate(state.visited)]
