"""tilescope: explore the memory plans of a tile-based accelerator compiler (command line, app, reports)."""

from tilescope.models.version import __version__  # noqa: F401
