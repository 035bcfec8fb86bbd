"""Served by tests/test_table_rows_browser.py: two tables, tilescope's ``Table`` and Panel's own
Tabulator, each filled with the same three rows when the button is pressed."""

import pandas as pd
import panel as pn

from tilescope.app.widgets.tables import Table


def empty() -> pd.DataFrame:
    return pd.DataFrame({"total": pd.Series([], dtype="int64")})


tables = {
    "ts-table": Table(empty(), pagination="local", page_size=15, height=200, disabled=True, css_classes=["ts-table"]),
    "plain-table": pn.widgets.Tabulator(
        empty(), pagination="local", page_size=15, height=200, disabled=True, css_classes=["plain-table"]
    ),
}
fill = pn.widgets.Button(name="fill", css_classes=["fill"])


def on_fill(_event) -> None:
    for table in tables.values():
        table.value = pd.DataFrame({"total": [18_432, 16_384, 400]})


fill.on_click(on_fill)
pn.Column(fill, *tables.values()).servable()
