"""smith_tui.engine package."""
