"""Sending a few changed cells of a Tabulator, on any page of a remotely paginated one."""

from __future__ import annotations

import panel as pn


def patch_cells(table: pn.widgets.Tabulator, patch: dict[str, list[tuple[int, object]]]) -> None:
    """``table.patch(patch)``: set cells given as (row position in ``table.value``, new value).

    Panel (1.9) filters a remotely paginated table's patch to the rows of the page shown but
    sends them at their positions in the whole table, which the page's source (one page of rows)
    refuses from page 2 on: ``IndexError``, and the view stops following the plan. There the cells
    are set in the frame and the page is sent again (a page of rows, no more).
    """
    if not patch:
        return
    if table.pagination != "remote" or table.page <= 1:
        table.patch(patch)
        return
    frame = table.value
    for column, cells in patch.items():
        rows = [row for row, _ in cells]
        frame.iloc[rows, frame.columns.get_loc(column)] = [value for _, value in cells]
    table.param.trigger("value")
