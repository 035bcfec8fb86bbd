"""Panel's Tabulator that keeps rows sent while it is drawn (``Table``), and with named header
filters (``LabelledTabulator``).

**Rows sent while the table is drawn.** Panel's browser side (1.9) drops a change of the rows that
arrives while Tabulator is still building the table (``setData`` returns at once then) and builds it
from the rows it was drawn with: a table filled just after it is shown stayed empty for good on a
loaded machine (CI: the Tiles tab opened from the URL, ``test_tileview_browser``).
``app/static/table_late_rows.js``, a ``CustomJS`` on the source's ``data``, sets them once it is built.

Tabulator draws each column's header filter as a bare ``<input>`` with no label, so a screen reader
announces "edit text" eight times over (axe: ``label``, critical). ``LabelledTabulator`` gives each
filter ``aria-label="filter <column title>"`` through Tabulator's ``elementAttributes``; the filter's
type and its matching stay exactly as ``header_filters=True`` makes them (a number box matching
``=``, a text box matching ``like``): Panel's browser side turns ``headerFilter: true`` into the
column's editor type and drops any params given with it, so the editor type is named here instead.
"""

from __future__ import annotations

import panel as pn
from bokeh.models import CustomJS

from tilescope.app.assets import static_text

__all__ = ["LabelledTabulator", "Table"]

LATE_ROWS_JS = static_text("table_late_rows.js")

# Bokeh cell editor → the header filter Panel's browser side would make of ``headerFilter: true``
FILTER_OF_EDITOR = {"IntEditor": "number", "NumberEditor": "number", "StringEditor": "input", "TextEditor": "textarea"}


class Table(pn.widgets.Tabulator):
    """``pn.widgets.Tabulator`` whose rows reach the browser even when sent while it is drawn."""

    def _get_model(self, doc, root=None, parent=None, comm=None):
        model = super()._get_model(doc, root, parent, comm)
        model.source.js_on_change("data", CustomJS(args={"table": model}, code=LATE_ROWS_JS))
        return model


class LabelledTabulator(Table):
    """``Table`` whose header filters are named for screen readers."""

    def _get_filter_spec(self, column):
        spec = super()._get_filter_spec(column)
        kind = spec.get("headerFilter")
        params = dict(spec.get("headerFilterParams") or {})
        if kind is True:
            editor = column.editor
            name = type(editor).__name__
            if name not in FILTER_OF_EDITOR or getattr(editor, "completions", None):
                return spec  # (a list or a custom editor: left as Panel makes it)
            kind = spec["headerFilter"] = FILTER_OF_EDITOR[name]
            if kind == "number":
                params["step"] = editor.step
        if kind in ("input", "number", "textarea"):
            title = (self.titles or {}).get(column.field) or column.title or column.field
            params["elementAttributes"] = {**params.get("elementAttributes", {}), "aria-label": f"filter {title}"}
            spec["headerFilterParams"] = params
        return spec
