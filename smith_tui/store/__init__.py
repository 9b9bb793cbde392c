"""smith_tui.store package."""
