"""Textual stylesheets, shipped as package data."""
