"""Textual widgets of Agent Smith TUI (installed as smith_tui.widgets)."""

from smith_tui.widgets import textual_fixes

textual_fixes.apply()
