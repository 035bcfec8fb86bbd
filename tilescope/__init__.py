"""tilescope: command line and reports."""
