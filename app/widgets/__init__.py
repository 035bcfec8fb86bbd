"""Widgets the views are built from (no view logic here); each module holds one, imported from it."""

__all__: list[str] = []
