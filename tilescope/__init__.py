"""tilescope: explore the memory plans of a tile-based accelerator compiler (command line, app, reports)."""

__version__ = "0.1.0"  # the one place the version is written (pyproject.toml reads it)
