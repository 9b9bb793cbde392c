"""smith_tui.config package."""
