"""smith_tui.app package."""
