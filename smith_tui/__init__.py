"""Agent Smith TUI: a full-screen terminal coding agent."""

__version__ = "0.1.0"
