"""Untrusted text on its way into HTML (numbers are written by ``tilescope.models.format``)."""

from __future__ import annotations

import html
import re


def esc(text: object) -> str:
    """Escape text from a file before it reaches HTML."""
    return html.escape(str(text), quote=True)


def esc_name(text: object) -> str:
    """``esc`` for a value's name, with a line-break opportunity (``<wbr>``) after each ``.``, ``/``
    and ``_``: a long dotted name such as ``vit.encoder.layer0.attention.output.weight`` wraps
    between its parts in a narrow column instead of in the middle of a word."""
    return re.sub(r"([./_])", r"\1<wbr>", esc(text))


def esc_figure(text: object) -> str:
    """``esc`` for a formatted figure (``206,032 B (201.2 KiB) → …``), each part (the bytes, the
    bracketed unit, "→ after") in a ``ts-nb`` span the page's CSS keeps on one line: in a narrow
    column the figure breaks between its parts, never inside a number. Its text is unchanged."""
    return " ".join(f'<span class="ts-nb">{esc(part)}</span>' for part in re.split(r" (?=[(→])", str(text)))
