"""Tests for the engine layer."""
