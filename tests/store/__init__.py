"""Tests of the store layer (real SQLite files in tmp_path)."""
