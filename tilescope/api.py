"""The notebook API: each function mirrors a CLI command and returns the object the command
prints, to be looked at or driven from Python (README "In a notebook"). None imports Panel.

- ``open(path)`` ↔ ``tilescope summary PATH``: the opened file, of whatever kind it is
  (``derived.opening.open_file``: an ``OpenedProfile``, an ``OpenedSearchState``, …).
- ``compare(a, b)`` ↔ ``tilescope compare A B``: the two plans compared
  (``derived.compare.Comparison``: ``.delta``, ``.changed_values``, ``.attribution(...)``).
- ``solve(problem, time_limit)`` ↔ ``tilescope solve FILE``: one tile's placement problem placed
  with proof (``planner.solver.SolveResult``: ``.verdict`` placed / infeasible / unknown,
  ``.starts``, ``.height``, ``.lower_bound``, ``.proof``).
- ``explore(path)`` ↔ ``tilescope serve PATH``: the explorer's page as a cell's output
  (``app.notebook``; imports Panel when called).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tilescope.derived.compare import Comparison
    from tilescope.models.edits import TilingEdit
    from tilescope.models.placement_problem import PlacementProblem
    from tilescope.planner.solver import SolveResult

__all__ = ["compare", "open", "solve"]


def open(path: str | Path, *, use_cache: bool = True) -> Any:
    """The file at ``path`` opened as the kind it is (a memory profile planned, a search state
    parsed, …); raises ``models.errors.InputError`` naming the file on bad input."""
    from tilescope.derived.opening import open_file

    return open_file(Path(path).expanduser(), use_cache=use_cache)


def compare(
    a: str | Path | Any,
    b: str | Path | Any | None = None,
    *,
    edits_a: Sequence[TilingEdit] = (),
    edits_b: Sequence[TilingEdit] = (),
) -> Comparison:
    """``a``'s plan against ``b``'s (paths, or profiles ``open`` returned); ``b`` omitted: ``a``
    against itself edited by ``edits_b``. ``edits_a``/``edits_b``: tiling edits applied to each
    side first (``models.edits.TilingEdit``; ``loaders.edit_sets.load_edit_set`` reads a file of them)."""
    from tilescope.derived.compare import CompareSide, compare_plans
    from tilescope.derived.opening import OpenedProfile
    from tilescope.models.errors import TilescopeError
    from tilescope.planner.edits import apply_edits

    def profile(x) -> OpenedProfile:
        opened = x if isinstance(x, OpenedProfile) else open(x)
        if not isinstance(opened, OpenedProfile):
            raise TilescopeError(
                f"{opened.name}: a {opened.kind.replace('_', ' ')}, not a memory profile: nothing to compare"
            )
        return opened

    def side(opened: OpenedProfile, edits: Sequence[TilingEdit]) -> CompareSide:
        if not edits:
            return CompareSide(opened.profile, opened.arrays, opened.plan)
        return CompareSide.edited(opened.profile, opened.arrays, apply_edits(opened.arrays, opened.plan, list(edits)))

    if b is None and not edits_b:
        raise TilescopeError("compare: give b, or edits_b to compare a with a edited")
    first = profile(a)
    second = first if b is None else profile(b)
    return compare_plans(side(first, edits_a), side(second, edits_b))


def solve(
    problem: str | Path | PlacementProblem, time_limit: float = 60.0, *, capacity: int | None = None
) -> SolveResult:
    """Place ``problem`` — a ``PlacementProblem``, or a file as ``tilescope solve`` reads it (a
    placement constraint dump, or a MiniMalloc CSV with ``capacity`` in bytes) — within
    ``time_limit`` seconds: *placed* (re-checked), *infeasible* (with its proof) or *unknown*."""
    from tilescope.models.placement_problem import PlacementProblem
    from tilescope.planner.solver import solve as solve_problem

    if not isinstance(problem, PlacementProblem):
        from tilescope.cli.solve import load_problem

        problem, _ = load_problem(str(Path(problem).expanduser()), capacity)
    return solve_problem(problem, time_limit)
