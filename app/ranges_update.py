"""Charts whose server re-samples the visible window on every zoom or pan (``RangesUpdate``).

Bokeh sends ``RangesUpdate`` for a wheel zoom only when its level-of-detail mode ends: a check
``lod_timeout`` ms after the last wheel notch (500 ms by default), so every notch waited half a
second before the server even heard of it (the timeline's zoom took ~530 ms on the sample, most of
it this wait). ``settle_quickly`` shortens that wait to ``SETTLE_MS``: a quick run of notches
still sends one event once the wheel rests, and the server's re-sampling (a few milliseconds)
starts at once.
"""

from __future__ import annotations

from bokeh.models import Plot

SETTLE_MS = 20  # after the last wheel notch, before RangesUpdate is sent (Bokeh: 500)


def settle_quickly(fig: Plot) -> Plot:
    """``fig`` sending ``RangesUpdate`` ``SETTLE_MS`` after a wheel zoom rests (module doc)."""
    fig.lod_timeout = SETTLE_MS
    return fig
