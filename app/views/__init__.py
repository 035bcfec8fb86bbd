"""One Viewer class per view; each takes ``state=`` (an ``app.state.SessionState``)."""
