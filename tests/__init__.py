"""Test suite of Agent Smith TUI."""
