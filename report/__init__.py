"""The exported report of a memory plan, for the app's Export view and ``tilescope report``:
``tables`` (CSV files and edits.json), ``png`` (one PNG), ``files`` (the whole set, written
atomically). Pure: loaders/planner/derived output in, bytes out; no browser, no Panel, no Bokeh."""
