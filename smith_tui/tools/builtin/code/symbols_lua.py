"""Lua symbols: named functions, methods (``a:b``), module functions (``M.f``), constants.

Lua has no braces to count, so nesting is read from the name itself
(``M.sub.f`` has parent ``M.sub``) and indentation marks local helpers
defined inside other functions. Long comments and long strings are skipped.
"""

from __future__ import annotations

import re

from smith_tui.tools.builtin.code.symbol import Symbol, signature_of

_NAME = r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?::[A-Za-z_]\w*)?"
_FUNCTION = re.compile(rf"(local\s+)?function\s+({_NAME})\s*\(")
_ASSIGNED = re.compile(rf"(local\s+)?({_NAME})\s*=\s*function\s*\(")
_CONSTANT = re.compile(r"(?:local\s+)?([A-Z][A-Z0-9_]+)\s*(?:<const>\s*)?=(?!=)")
_LONG_OPEN = re.compile(r"(?:--)?\[(=*)\[")


def _split(name: str) -> tuple[str | None, str, str]:
    """Return (parent, short name, kind) of a Lua function name."""
    if ":" in name:
        parent, _, short = name.rpartition(":")
        return parent, short, "method"
    if "." in name:
        parent, _, short = name.rpartition(".")
        return parent, short, "function"
    return None, name, "function"


def extract(lines: list[str]) -> list[Symbol]:
    """Symbols of a Lua source given as lines."""
    symbols: list[Symbol] = []
    long_close: str | None = None
    for number, raw in enumerate(lines, start=1):
        if long_close is not None:
            if long_close in raw:
                long_close = None
            continue
        stripped = raw.lstrip()
        if stripped.startswith("--") and not stripped.startswith("--["):
            continue
        opened = _LONG_OPEN.search(raw)
        if opened is not None:
            close = "]" + opened.group(1) + "]"
            if close not in raw[opened.end() :]:
                long_close = close
            if opened.start() == len(raw) - len(stripped):
                continue
        indent = len(raw) - len(stripped)
        match = _FUNCTION.match(stripped) or _ASSIGNED.match(stripped)
        if match is not None:
            parent, short, kind = _split(match.group(2))
            depth = (1 if parent else 0) + (1 if indent and not parent else 0)
            symbols.append(Symbol(short, kind, number, depth, parent, signature_of(stripped)))
            continue
        if indent == 0 and (match := _CONSTANT.match(stripped)):
            symbols.append(
                Symbol(match.group(1), "constant", number, 0, None, signature_of(stripped))
            )
    return symbols
