"""The tilescope explorer: a Panel app (``panel serve app``)."""
