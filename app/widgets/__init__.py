"""Widgets the views are built from (no view logic here)."""
