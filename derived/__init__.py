"""Derived data: what the views, the CLI and the reports show, computed from a profile and a plan."""
