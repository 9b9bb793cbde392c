"""smith_tui.llm package."""
