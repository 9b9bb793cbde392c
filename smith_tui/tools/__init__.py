"""smith_tui.tools package."""
