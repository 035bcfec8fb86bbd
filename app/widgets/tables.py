"""Panel's Tabulator with named header filters.

Tabulator draws each column's header filter as a bare ``<input>`` with no label, so a screen reader
announces "edit text" eight times over (axe: ``label``, critical). ``LabelledTabulator`` gives each
filter ``aria-label="filter <column title>"`` through Tabulator's ``elementAttributes``; the filter's
type and its matching stay exactly as ``header_filters=True`` makes them (a number box matching
``=``, a text box matching ``like``): Panel's browser side turns ``headerFilter: true`` into the
column's editor type and drops any params given with it, so the editor type is named here instead.
"""

from __future__ import annotations

import panel as pn

__all__ = ["LabelledTabulator"]

# Bokeh cell editor → the header filter Panel's browser side would make of ``headerFilter: true``
FILTER_OF_EDITOR = {"IntEditor": "number", "NumberEditor": "number", "StringEditor": "input", "TextEditor": "textarea"}


class LabelledTabulator(pn.widgets.Tabulator):
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
