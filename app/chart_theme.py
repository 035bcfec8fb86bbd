"""The page's charts themed on the server as panel_material_ui themes them in the browser, so that
the browser has nothing to send back (issue #26: a session's server CPU).

panel_material_ui's page script themes every Bokeh axis, grid, legend, title and figure when it is
drawn (``apply_bokeh_theme`` in its ``utils.js``: the Material palette's text, muted text, grid
and axis inks, the Roboto font stack, the "minimal" chart style with no axis lines). Each value it
sets that differs from the model's is a property change, and BokehJS sends every change back to
the server: ~30 ``PATCH-DOC`` messages per session after the first screen's two charts were drawn,
each parsed, applied and dispatched on the server's loop, for nothing (the server never reads
them). The server's own theme for the page's document carries the same values, so the script's
``setv`` finds them already set and sends nothing; only what it appends every time (the toolbar's
and tooltips' highlight stylesheets) and Bokeh's own layout figures (a plot's inner and outer size)
still come back.

The values are those the script computes for the light and the dark Material themes (read from
the messages it sent: ``rgba(0, 0, 0, 0.22)`` and so on); they include, and override,
panel_material_ui's own ``MATERIAL_THEME`` for Bokeh, which Panel applied to each figure's
models before (and which the script overrode in the browser anyway). ``app/main.py`` gives a
served session's document the theme of its page's mode after the page is built (so the page
script keeps theming everything itself: a chart shown in the other mode is still right), and again
when the mode changes.
"""

from __future__ import annotations

from bokeh.themes import Theme
from panel_material_ui.theme import MATERIAL_THEME

__all__ = ["CHART_THEMES", "is_chart_theme", "theme_charts"]

FONT = '"Roboto", "Helvetica", "Arial", sans-serif'


def _attrs(dark: bool) -> dict:
    text = "#fff" if dark else "rgba(0, 0, 0, 0.87)"
    muted = "rgba(255, 255, 255, 0.7)" if dark else "rgba(0, 0, 0, 0.6)"
    channel = "255, 255, 255" if dark else "0, 0, 0"
    grid = f"rgba({channel}, {0.12 if dark else 0.1})"
    axis = f"rgba({channel}, {0.28 if dark else 0.22})"
    surface = "#121212" if dark else "#fff"  # (the paper at elevation 0, where the page's charts sit)
    ours: dict[str, dict[str, object]] = {
        "Axis": {
            "axis_line_color": axis,
            "major_tick_line_color": axis,
            "minor_tick_line_color": axis,
            "axis_line_alpha": 0,
            "major_tick_line_alpha": 0,
            "minor_tick_line_alpha": 0,
            "major_label_text_color": muted,
            "major_label_text_font": FONT,
            "major_label_text_font_size": "0.925em",
            "major_label_text_font_style": "normal",
            "axis_label_text_color": text,
            "axis_label_text_font": FONT,
            "axis_label_text_font_size": "1em",
            "axis_label_text_font_style": "normal",
            "axis_label_standoff": 12,
        },
        "Legend": {
            "background_fill_color": surface,
            "border_line_alpha": 0,
            "background_fill_alpha": 0,
            "label_text_color": text,
            "label_text_font": FONT,
            "label_text_font_size": "0.95em",
            "label_text_font_style": "normal",
            "title_text_color": muted,
            "title_text_font": FONT,
            "title_text_font_size": "0.95em",
            "title_text_font_style": "normal",
            "spacing": 8,
            "label_standoff": 8,
            "glyph_width": 14,
            "glyph_height": 14,
        },
        "Title": {"text_color": text, "text_font": FONT, "text_font_size": "1.05em", "text_font_style": "normal"},
        "Grid": {"grid_line_color": grid, "grid_line_alpha": 1},
        "Plot": {
            "background_fill_color": surface,
            "border_fill_color": surface,
            "outline_line_color": text,
            "outline_line_alpha": 0.25 if dark else 0,
        },
    }
    merged: dict[str, dict[str, object]] = {name: dict(values) for name, values in MATERIAL_THEME["attrs"].items()}
    for name, values in ours.items():
        merged.setdefault(name, {}).update(values)
    return merged


def _theme(dark: bool) -> Theme:
    theme = Theme(json={"attrs": _attrs(dark)})
    theme.tilescope_charts = True  # type: ignore[attr-defined]
    return theme


CHART_THEMES = {False: _theme(False), True: _theme(True)}  # light, dark (never changed after import)


def is_chart_theme(theme) -> bool:
    """Whether ``theme`` is one of ``CHART_THEMES`` (a document themed here)."""
    return bool(getattr(theme, "tilescope_charts", False))


def theme_charts(doc, dark: bool) -> None:
    """Theme ``doc``'s charts as the page script does in ``dark`` or light mode (module doc). Every
    model of the document takes the theme's values at once, every model added later as it joins."""
    if doc is not None and doc.theme is not CHART_THEMES[bool(dark)]:
        doc.theme = CHART_THEMES[bool(dark)]
