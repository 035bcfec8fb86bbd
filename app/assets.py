"""The app's stylesheets and scripts, which live as files in ``app/static/`` (not in Python strings)."""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"


def static_text(name: str) -> str:
    """The text of ``app/static/<name>`` (read once per process, at import: it never changes)."""
    return (STATIC / name).read_text(encoding="utf-8")


BUTTONS_CSS = static_text("buttons.css")  # primary/success buttons' text readable on both themes
INK_CSS = static_text("ink.css")  # the theme's ink and status colours: --ts-ink, --ts-muted, --ts-bad, --ts-good


def themed_css(name: str) -> str:
    """``app/static/<name>`` after ``ink.css``: a pane's stylesheet with the theme's ink variables it
    uses (each pane is its own shadow root, so each needs the variables on its own ``:host``)."""
    return INK_CSS + static_text(name)
