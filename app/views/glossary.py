"""The glossary under the timeline: every word of ``models.glossary``, defined once."""

from __future__ import annotations

from tilescope.app.format import esc
from tilescope.models.glossary import GLOSSARY


def glossary_html() -> str:
    items = "".join(f"<dt>{esc(term)}</dt><dd>{esc(text)}</dd>" for term, text in GLOSSARY.items())
    return f'<details class="ts-glossary" data-testid="ts-glossary"><summary>What the figures mean</summary><dl>{items}</dl></details>'


def term_html(term: str, shown: str | None = None) -> str:
    """``shown`` (default the term) with the term's definition on hover."""
    return f'<abbr class="ts-term" title="{esc(GLOSSARY[term])}">{esc(shown or term)}</abbr>'
