"""Sending a ``ColumnDataSource`` only the columns that changed.

Assigning ``source.data`` sends every column. After an edit the timeline's points are mostly the
same steps with new byte figures: the steps, operations, sources and counts are unchanged, and on
a 92.5 MB profile they were half of a 250 kB message. ``update_columns`` compares the new columns
with what the source holds: same length, it sends only the columns that differ (Bokeh's
``data.update`` is one ``ColumnDataChanged`` event naming those columns); another length or
another set of columns, it replaces the data.
"""

from __future__ import annotations

import numpy as np
from bokeh.models import ColumnDataSource


def _same(old, new) -> bool:
    if isinstance(old, np.ndarray) and isinstance(new, np.ndarray):
        return old.shape == new.shape and old.dtype == new.dtype and np.array_equal(old, new)
    if isinstance(old, np.ndarray) or isinstance(new, np.ndarray):
        return False
    return list(old) == list(new)


def update_columns(source: ColumnDataSource, data: dict) -> list[str]:
    """Give ``source`` ``data``, sending only the changed columns; returns the columns sent."""
    current = source.data
    lengths = {len(column) for column in data.values()}
    if set(current) != set(data) or len(lengths) > 1 or {len(column) for column in current.values()} != lengths:
        source.data = data
        return list(data)
    changed = {name: column for name, column in data.items() if not _same(current[name], column)}
    if changed:
        current.update(changed)
    return list(changed)
