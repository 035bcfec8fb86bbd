"""The two placement files the app opens beside profiles and search states, opened and immutable
(shared by sessions like ``derived.opening.OpenedProfile``), with what their views derive computed on
first use and kept:

- ``OpenedPlacementDump``: a tile's placement problem (``loaders.placement_dump``, §4 of
  compiler-formats.md): its ``geometry`` (``derived.placement_problem_view``) and the compiler's own
  placement (``assigned_root_spans``).
- ``OpenedPlacementProfile``: where the compiler placed every allocation of every tile
  (``loaders.placement_profile``, §5): per tile, its rows (``derived.placement_profile_view``).

``solved(problem, time_limit)`` runs tilescope's solver (``planner.solver``) on a problem and gives
what the views show of its answer (``Solved``): the verdict in words, its proof, and the placement
as spans by root. The app calls it in a load worker, never on a session's event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tilescope.models.format import fmt_bytes
from tilescope.models.lazy import lazy
from tilescope.models.placement_problem import PlacementProblem
from tilescope.models.placement_profile import PlacementProfile

from .placement_problem_view import ProblemGeometry
from .placement_profile_view import TileRows

APP_TIME_LIMIT_S = 10.0  # the app's solve: long enough for the fixtures (milliseconds), short enough to wait for


@dataclass(frozen=True, eq=False)
class Solved:
    """What tilescope's solver said about a problem, for the views and exports."""

    verdict: str  # "placed" | "infeasible" | "unknown"
    headline: str  # one line: "placed", "infeasible by 16,328 B", "unknown (best height …)"
    proof: str  # why the verdict holds (or why it is unknown)
    spans: dict  # root id → (start, end) of its group; empty unless some requests were placed
    height: int | None  # the highest end of the placement (None: nothing placed)
    lower_bound: int | None  # the solver's live-byte lower bound
    seconds: float
    nodes: int


def solved(problem: PlacementProblem, time_limit: float = APP_TIME_LIMIT_S, progress=None) -> Solved:
    """Solve ``problem`` with tilescope's solver within ``time_limit`` seconds (module doc);
    ``progress(stage, fraction)`` is called between search rounds (the load pool's stops it)."""
    from tilescope.planner.solver import root_spans, solve  # (numba compiles the search on first use)

    result = solve(problem, time_limit, progress)
    spans = {int(k): (int(v[0]), int(v[1])) for k, v in root_spans(problem, result).items()}
    height = result.height if result.height is not None else result.best_height
    if result.verdict == "placed":
        headline = "placed"
    elif result.verdict == "infeasible":
        headline = f"infeasible by {fmt_bytes(int(result.deficit_bytes))}" if result.deficit_bytes else "infeasible"
    else:
        headline = f"unknown (best height: address {int(height):,})" if height else "unknown"
    return Solved(
        result.verdict,
        headline,
        str(result.proof or ""),
        spans,
        None if height is None else int(height),
        None if result.lower_bound is None else int(result.lower_bound),
        float(result.seconds),
        int(result.nodes),
    )


@dataclass(frozen=True, eq=False)
class OpenedPlacementDump:
    kind: ClassVar[str] = "placement_dump"
    name: str
    problem: PlacementProblem

    @lazy
    def geometry(self) -> ProblemGeometry:
        return ProblemGeometry.of(self.problem)


@dataclass(frozen=True, eq=False)
class OpenedPlacementProfile:
    kind: ClassVar[str] = "placement_profile"
    name: str
    profile: PlacementProfile

    def tile(self, position: int) -> TileRows:
        """The rows of the tile at ``position`` (built once per tile and kept)."""
        cache = self.__dict__.setdefault("_tiles", {})
        rows = cache.get(position)
        if rows is None:
            rows = cache[position] = TileRows.of(self.profile, position)
        return rows


# ---------------------------------------------------------------------- openers (derived.opening.FILE_KINDS)


def open_placement_dump(found, progress=None) -> OpenedPlacementDump:
    """A placement dump from what ``derived.opening.recognise`` read (``found``: its source and bytes)."""
    from tilescope.loaders.placement_dump import load_placement_dump

    name = found.source.name
    return OpenedPlacementDump(name, load_placement_dump(found.bytes(), name))


def open_placement_profile(found, progress=None) -> OpenedPlacementProfile:
    """A placement profile from what ``derived.opening.recognise`` read."""
    from tilescope.loaders.placement_profile import parse_placement_profile

    name = found.source.name
    return OpenedPlacementProfile(name, parse_placement_profile(found.bytes(), name))


def is_placement_dump(fields: dict) -> bool:
    """A dump's top level (§4): ``requests`` and ``ranges``, no profile's ``timeline``."""
    return "requests" in fields and "ranges" in fields and "timeline" not in fields


def is_placement_profile(fields: dict) -> bool:
    """A placement profile's top level (§5): ``schema_version`` and ``tiles``."""
    return "schema_version" in fields and "tiles" in fields


def prepare_dump(opened: OpenedPlacementDump) -> None:
    """What the dump's page reads first, computed in the load worker."""
    opened.geometry  # noqa: B018


def prepare_placement_profile(opened: OpenedPlacementProfile) -> None:
    if opened.profile.tile_count:
        opened.tile(0)
