"""The memory model (docs/formats.md §2): pure numpy/pyarrow, never imports panel or bokeh."""
