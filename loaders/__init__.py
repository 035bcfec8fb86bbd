"""Planner outputs → validated records → Arrow tables."""
