"""smith_tui.dispatch package."""
