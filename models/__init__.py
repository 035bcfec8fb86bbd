"""Typed records and Arrow table schemas shared by the loaders, the planner and the app."""
