"""The floor of ``benchmarks.bench_browser``: a minimal Panel page whose button sets a text.

Served by ``panel serve benchmarks/floor_page.py`` from the same machine, clicked in the same
browser: one click, one message to the server, one change sent back and drawn. Nothing the app
does in answer to a click can be cheaper, so the app's interactions are given as multiples of it.
"""

import panel as pn

clicks = pn.pane.HTML('<span data-testid="floor-text">0</span>', margin=10)
button = pn.widgets.Button(label="set the text", css_classes=["floor-button"])


def on_click(_event) -> None:
    count = int(clicks.object.split(">")[1].split("<")[0]) + 1
    clicks.object = f'<span data-testid="floor-text">{count}</span>'


button.on_click(on_click)
pn.Column(button, clicks).servable(title="floor")
