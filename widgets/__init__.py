"""Textual widgets of Agent Smith TUI (installed as smith_tui.widgets)."""
