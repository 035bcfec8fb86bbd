"""The page's URL and keyboard, in the browser (``app/static/page_controls.js``).

``query`` is the URL's query string for the session's shareable state (``app.url_state``): the
page sets it after each change and the browser pushes it onto its history; the back button sends
the older query back (``on_restore``), and the page restores that state. Keys pressed while the
focus is not in a text field, a tab or a button reach ``on_key`` (``ArrowLeft``, ``ArrowRight``,
``Home``, ``End``, ``p``).

The theme: on opening, the browser sends the theme kept from the last visit (``localStorage``),
else the system's ``prefers-color-scheme``, to ``on_theme``; ``dark`` is the page's theme, and the
browser keeps it whenever it changes from what it sent (the user's toggle). Nothing is drawn.
"""

from __future__ import annotations

from collections.abc import Callable

import param
from panel.custom import JSComponent

from tilescope.app.assets import STATIC
from tilescope.app.one_message import one_message

KEYS = ("ArrowLeft", "ArrowRight", "Home", "End", "p")


class PageControls(JSComponent):
    query = param.String(default="", doc="the URL's query (with its '?') for the current state")
    dark = param.Boolean(default=False, doc="the page's theme is dark (kept by the browser for the next visit)")

    _esm = STATIC / "page_controls.js"

    def __init__(
        self,
        on_key: Callable[[str], None],
        on_restore: Callable[[str], None],
        on_theme: Callable[[bool], None] | None = None,
        **params,
    ):
        params.setdefault("height", 0)
        params.setdefault("width", 0)
        params.setdefault("margin", 0)
        super().__init__(**params)
        self._on_key, self._on_restore, self._on_theme = on_key, on_restore, on_theme

    def clear_filters(self, css_class: str) -> None:
        """Empty the header filters of the table with ``css_class`` in the browser (the browser then
        sends the table its empty filters, as if the user had)."""
        self._send_msg({"clear_filters": css_class})

    @one_message
    def _handle_msg(self, msg) -> None:
        if not isinstance(msg, dict):
            return
        key = msg.get("key")
        if isinstance(key, str) and key in KEYS:
            self._on_key(key)
        restore = msg.get("restore")
        if isinstance(restore, str):
            self._on_restore(restore)
        theme = msg.get("theme")
        if theme in ("dark", "light") and self._on_theme is not None:
            self._on_theme(theme == "dark")
