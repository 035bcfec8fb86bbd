"""Untrusted text on its way into HTML (numbers are written by ``tilescope.models.format``)."""

from __future__ import annotations

import html


def esc(text: object) -> str:
    """Escape text from a file before it reaches HTML."""
    return html.escape(str(text), quote=True)
