"""The one place tilescope's version is written: pyproject.toml reads it, the CLI prints it
(``--version``) and every Parquet file records it. A module of the lowest layer, so any may import it."""

__version__ = "0.1.0"
