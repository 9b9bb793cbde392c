"""Heuristic, line-based symbol extraction: the language table and the entry points.

Extraction never parses a file properly; it recognises definition lines with
regular expressions and tracks nesting by indentation (Python, Lua) or brace
depth (C, JavaScript/TypeScript, Go, Rust). It is fast and good enough to
answer "where is X defined" and "what is in this file".
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import PurePath

from smith_tui.tools.builtin.code.symbol import KINDS, Symbol, signature_of
from smith_tui.tools.files import open_regular_file, read_capped

LANGUAGE_BY_SUFFIX: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".lua": "lua",
    ".c": "c",
    ".h": "c",
    ".cc": "c",
    ".cpp": "c",
    ".cxx": "c",
    ".hpp": "c",
    ".hh": "c",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".go": "go",
    ".rs": "rust",
}
"""File suffix → language name for the files symbols are extracted from."""

__all__ = [
    "KINDS",
    "LANGUAGE_BY_SUFFIX",
    "MAX_FILE_BYTES",
    "Symbol",
    "extract_symbols",
    "language_for",
    "read_source",
    "signature_of",
    "symbols_of_file",
]

MAX_FILE_BYTES = 2 * 1024 * 1024
"""Files larger than this are not scanned for symbols (generated code, bundles)."""


def language_for(path: str | PurePath) -> str | None:
    """The language of ``path`` judged by its suffix, or ``None`` if unsupported."""
    return LANGUAGE_BY_SUFFIX.get(PurePath(path).suffix.lower())


Extractor = Callable[[list[str]], list[Symbol]]


#: language → (module of ``smith_tui.tools.builtin.code``, function): imported when a file of that
#: language is first scanned, not with the tool's schema (every run loads that; the
#: extractors' patterns cost ~10 ms to import).
_EXTRACTORS: dict[str, tuple[str, str]] = {
    "python": ("symbols_python", "extract"),
    "lua": ("symbols_lua", "extract"),
    "c": ("symbols_braces", "extract_c"),
    "javascript": ("symbols_braces", "extract_js"),
    "typescript": ("symbols_braces", "extract_js"),
    "go": ("symbols_braces", "extract_go"),
    "rust": ("symbols_braces", "extract_rust"),
}


def extract_symbols(text: str, language: str) -> list[Symbol]:
    """Return the symbols of ``text`` written in ``language``, in line order."""
    where = _EXTRACTORS.get(language)
    if where is None:
        raise ValueError(f"no symbol extractor for {language!r}")
    module = importlib.import_module(f"smith_tui.tools.builtin.code.{where[0]}")
    extractor: Extractor = getattr(module, where[1])
    return extractor(text.splitlines())


def read_source(path: str | PurePath) -> str | None:
    """Read a text file for symbol extraction; ``None`` if too big, binary or unreadable.

    Only a regular file is opened (never a FIFO, device or socket, nor a
    symlink: callers pass resolved paths or paths rg listed without following
    links), and at most ``MAX_FILE_BYTES + 1`` bytes are read.
    """
    try:
        fd = open_regular_file(os.fspath(path))
        try:
            data = read_capped(fd, MAX_FILE_BYTES + 1)
        finally:
            os.close(fd)
    except OSError:
        return None
    if len(data) > MAX_FILE_BYTES or b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def symbols_of_file(path: str | PurePath) -> list[Symbol] | None:
    """Symbols of the file at ``path``; ``None`` for unsupported or unreadable files."""
    language = language_for(path)
    if language is None:
        return None
    text = read_source(path)
    if text is None:
        return None
    return extract_symbols(text, language)
