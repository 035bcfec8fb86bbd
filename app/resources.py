"""Panel's extensions and where its resources come from: always this server (or, in a notebook,
the notebook's own output), never a CDN, so a page works with no network at all.

Served (``panel serve app``, ``make run``, ``tests/browser_support.py``): ``BOKEH_RESOURCES=server``
is set for the server process by the Makefile and the test server alike, and again here in case
the app is served by hand, so every script and stylesheet comes from the server's ``/static``.
In a notebook, ``inline=True`` puts them into the output itself.
"""

from __future__ import annotations

import os

import panel as pn

EXTENSIONS = ("tabulator", "filedropper")
RESOURCES_ENV = {"BOKEH_RESOURCES": "server"}


def configure_panel(notebook: bool = False) -> None:
    """Load the extensions the views use, with every script and stylesheet served locally."""
    for key, value in RESOURCES_ENV.items():
        os.environ.setdefault(key, value)
    if notebook:
        pn.extension(*EXTENSIONS, notifications=False, sizing_mode="stretch_width", inline=True)
    else:
        pn.extension(*EXTENSIONS, notifications=False, sizing_mode="stretch_width")
