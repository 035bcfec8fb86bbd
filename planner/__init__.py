"""The memory model (formats.md §2): pure numpy/pyarrow, never imports panel or bokeh."""
