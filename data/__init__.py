"""Data files (prompt profiles) shipped with smith_tui."""
