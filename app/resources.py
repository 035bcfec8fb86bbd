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
    _remember_component_resources()
    if notebook:
        pn.extension(*EXTENSIONS, notifications=False, sizing_mode="stretch_width", inline=True)
    else:
        # No browser info (``pn.state.browser_info``: nothing here reads it): its model sent the
        # browser's language, time zone, pixel ratio… back to the server, seven messages a session.
        pn.extension(*EXTENSIONS, notifications=False, sizing_mode="stretch_width", browser_info=False)


def _remember_component_resources() -> None:
    """Panel lists, for every page it serves, the stylesheets and scripts of every custom component
    class it knows (``Resources.extra_resources``): with panel_material_ui's ~120 classes that is
    thousands of class-property reads and file checks, ~45 ms of CPU per session (issue #26: a
    quarter of what a session cost before its page was built). The list depends only on which
    classes exist and are loaded and on the resource mode and path, so it is computed once per
    such combination in this process and reused (a class imported later changes the key)."""
    from panel.io import resources as panel_resources

    cls = panel_resources.Resources
    if getattr(cls.extra_resources, "_tilescope_remembered", False):
        return
    compute = cls.extra_resources
    remembered: dict[tuple, list] = {}

    def extra_resources(self, resources, resource_type):
        from panel.io.state import state
        from panel.reactive import ReactiveCustomBase, ReactiveMetaBase

        key = (
            resource_type,
            self.mode,
            self.absolute,
            getattr(self, "root_url", None),
            state.rel_path,
            tuple(resources),
            frozenset(_subclasses(ReactiveCustomBase)),
            frozenset(ReactiveMetaBase._loaded_extensions),
            None if state._extensions is None else tuple(state._extensions),
            tuple(panel_resources.extension_dirs),
        )
        added = remembered.get(key)
        if added is None:
            before = len(resources)
            compute(self, resources, resource_type)
            remembered[key] = list(resources[before:])
        else:
            resources.extend(added)

    extra_resources._tilescope_remembered = True  # type: ignore[attr-defined]
    extra_resources.__wrapped__ = compute  # type: ignore[attr-defined]
    cls.extra_resources = extra_resources  # type: ignore[method-assign]


def _subclasses(root: type) -> set[type]:
    found: set[type] = set()
    stack: list[type] = [root]
    while stack:
        subclasses: list[type] = type.__subclasses__(stack.pop())
        for sub in subclasses:
            if sub not in found:
                found.add(sub)
                stack.append(sub)
    return found
