"""What the placement-profile view shows of one tile (``models.placement_profile``), computed once:
its rows as rectangles (events on x, addresses on y), the compiler's placed top, the live lower
bound, and the same allocations as a ``models.placement_problem.PlacementProblem`` for tilescope's
solver.

Which rows the placement moved: every row but the fixed reservations — support rows, and padding
that spans the whole program (the loader-inaccessible tail). The host exchange aperture (a support
row at event 0 and again at 4294967295, borrowed in between) stays free for the problem and is its
host scratch range. The problem leaves out what the profile does not record (``PROBLEM_CAVEAT``):
each request gets alignment 4 (the compiler's floor), the class its label names, no conflicts, and
Repeat members are placed one by one.

Pure numpy and pyarrow: no Panel, no Bokeh.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilescope.models.placement_problem import INTERLEAVED, STANDARD, PlacementProblem, PlacementRequest, RequestClass
from tilescope.models.placement_profile import KINDS, PROGRAM_END, PlacementProfile

SUPPORT, PADDING = KINDS.index("support"), KINDS.index("padding")
ALIGNMENT = 4  # the compiler's floor for a group's alignment; the profile does not record the real one
PROBLEM_CAVEAT = (
    "The profile records neither alignments nor conflicts: tilescope's problem aligns every allocation to 4 bytes, "
    "takes the class its label names, has no conflict edges and places Repeat members one by one, so it is looser "
    "than the compiler's."
)


@dataclass(frozen=True, eq=False)
class TileRows:
    """One tile's rows, sorted by (first, start, last) as loaded, with what the views draw."""

    logical: int
    physical: int
    start: np.ndarray  # int64 addresses
    end: np.ndarray
    payload_end: np.ndarray
    first: np.ndarray  # int64 events (PROGRAM_END: after the program)
    last: np.ndarray
    kind: np.ndarray  # int8 codes into KINDS
    label: np.ndarray  # int32 indices into the profile's labels
    fixed: np.ndarray  # bool: a reservation the placement does not move
    aperture: tuple[int, int] | None  # the host exchange aperture's [start, end), when borrowed
    end_event: int  # the x drawn for event PROGRAM_END: one past the last finite event

    @classmethod
    def of(cls, profile: PlacementProfile, position: int) -> TileRows:
        table = profile.tile_rows(position)
        col = {
            name: table.column(name).to_numpy()
            for name in ("start", "end", "payload_end", "first", "last", "kind", "label")
        }
        kind, first, last = col["kind"], col["first"], col["last"]
        support = kind == SUPPORT
        whole = (first == 0) & (last == PROGRAM_END)
        # The aperture: a support range written at event 0 and again at the end (borrowed between).
        at_start = {
            (int(s), int(e))
            for s, e, f, la, k in zip(col["start"], col["end"], first, last, support)
            if k and f == la == 0
        }
        at_end = {
            (int(s), int(e))
            for s, e, f, la, k in zip(col["start"], col["end"], first, last, support)
            if k and f == la == PROGRAM_END
        }
        both = sorted(at_start & at_end)
        finite = np.concatenate((first[first != PROGRAM_END], last[last != PROGRAM_END]))
        tiles = profile.tiles
        return cls(
            logical=int(tiles.column("logical")[position].as_py()),
            physical=int(tiles.column("physical")[position].as_py()),
            start=col["start"],
            end=col["end"],
            payload_end=col["payload_end"],
            first=first,
            last=last,
            kind=kind,
            label=col["label"],
            fixed=support | ((kind == PADDING) & whole),
            aperture=both[0] if both else None,
            end_event=int(finite.max(initial=0)) + 1,
        )

    @property
    def size(self) -> int:
        return int(self.start.size)

    def x_of(self, events: np.ndarray) -> np.ndarray:
        """Events as drawn: PROGRAM_END at ``end_event``."""
        return np.where(events == PROGRAM_END, self.end_event, events)

    @property
    def placed_top(self) -> int:
        """The compiler's highest end among the rows it placed (0 when it placed none)."""
        movable = ~self.fixed
        return int(self.end[movable].max()) if movable.any() else 0

    def live_lower_bound(self) -> tuple[int, int]:
        """(most bytes of placed rows live at one event, the first such event). Any placement of
        these rows holds that many bytes at that event, whatever their addresses."""
        movable = ~self.fixed
        first, last, size = (self.first[movable], self.last[movable], (self.end - self.start)[movable])
        if size.size == 0:
            return 0, 0
        events = np.unique(first)  # live bytes only rise where a row starts
        live = np.array([int(size[(first <= e) & (last >= e)].sum()) for e in events])
        k = int(np.argmax(live))
        return int(live[k]), int(events[k])

    def free_ranges(self, start: int, end: int) -> tuple[tuple[int, int], ...]:
        """[start, end) minus every fixed row but the aperture (which the problem keeps, as its host range)."""
        taken = sorted(
            (int(s), int(e))
            for s, e, f in zip(self.start, self.end, self.fixed)
            if f and e > s and (int(s), int(e)) != self.aperture
        )
        out, at = [], start
        for s, e in taken:
            if s > at:
                out.append((at, min(s, end)))
            at = max(at, e)
        if at < end:
            out.append((at, end))
        return tuple((s, e) for s, e in out if e > s)


def address_bound(ranges: tuple[tuple[int, int], ...], live: int) -> int:
    """The lowest address A such that the free ranges below A hold ``live`` bytes: no placement of
    the tile's rows ends below it."""
    left = live
    for s, e in ranges:
        if left <= e - s:
            return s + left
        left -= e - s
    return ranges[-1][1] if ranges else 0


def request_class(label: str) -> RequestClass:
    """The memory class a tensor label names on its last line (``… · Ipu21Interleaved``)."""
    return INTERLEAVED if label.rsplit("\n", 1)[-1].rstrip().endswith("Interleaved") else STANDARD


def tile_problem(profile: PlacementProfile, rows: TileRows) -> tuple[PlacementProblem, np.ndarray]:
    """The tile's placed rows as a placement problem (module doc), and the row of each request.
    ``assigned_root_spans`` holds the compiler's own placement (request i is root i)."""
    movable = np.flatnonzero(~rows.fixed)
    requests = []
    for i, r in enumerate(movable.tolist()):
        requests.append(
            PlacementRequest(
                index=i,
                roots=((i, 0),),
                request_class=request_class(profile.labels[int(rows.label[r])]),
                first=int(rows.first[r]),
                last=int(rows.last[r]),
                bytes=int(rows.end[r] - rows.start[r]),
                alignment=ALIGNMENT,
            )
        )
    problem = PlacementProblem(
        name=f"{profile.source} tile {rows.logical}",
        kind="dump",
        requests=tuple(requests),
        ranges=rows.free_ranges(profile.start, profile.end),
        tile=rows.logical,
        placed=True,
        host_scratch_range=rows.aperture,
        assigned_root_spans={i: (int(rows.start[r]), int(rows.end[r])) for i, r in enumerate(movable.tolist())},
    )
    return problem, movable
