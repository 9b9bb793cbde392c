"""Tests for the built-in tools."""
