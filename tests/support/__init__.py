"""Test support: the scripted Chat-Completions server and fixtures."""
