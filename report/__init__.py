"""The ``tilescope`` report: PNG and CSV files of a plan, for the app and the CLI."""
