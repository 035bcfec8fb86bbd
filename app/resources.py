"""Panel's extensions and where its resources come from: always this server (or, in a notebook,
the notebook's own output), never a CDN, so a page works with no network at all."""
from __future__ import annotations

import panel as pn

EXTENSIONS = ("tabulator", "filedropper")


def configure_panel() -> None:
    """Load the extensions the views use, with every script and stylesheet served locally."""
    pn.extension(*EXTENSIONS, notifications=False, sizing_mode="stretch_width")
