"""The Placement tab: every allocation at its address per region (``app.views.addresses``,
``derived.addresses``) above the tile map of the selected step (``app.views.tile_map``,
``derived.tile_map``), both of the plan's placement (``planner.placement``)."""

from __future__ import annotations

import panel as pn

from tilescope.app.state import SessionState
from tilescope.app.views.addresses import AddressesView
from tilescope.app.views.tile_map import TileMapView

__all__ = ["PlacementTab"]


class PlacementTab(pn.viewable.Viewer):
    """Every allocation at its address per region, and the tile map of the selected step."""

    def __init__(self, state: SessionState):
        super().__init__()
        self.addresses, self.tile_map = AddressesView(state=state), TileMapView(state=state)

    def set_shown(self, shown: bool) -> None:
        self.addresses.set_shown(shown)
        self.tile_map.set_shown(shown)

    def __panel__(self):
        return pn.Column(self.addresses, self.tile_map, sizing_mode="stretch_width")
