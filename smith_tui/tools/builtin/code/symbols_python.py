"""Python symbols: classes, functions, methods, top-level constants and type aliases.

Nesting follows indentation. Lines inside triple-quoted strings and
continuation lines inside open brackets are skipped, so docstrings and
multi-line signatures cannot fake or break a definition.
"""

from __future__ import annotations

import re

from smith_tui.tools.builtin.code.symbol import Symbol, signature_of

_DEF = re.compile(r"(?:async\s+)?def\s+([A-Za-z_]\w*)\s*[(\[]")
_CLASS = re.compile(r"class\s+([A-Za-z_]\w*)\s*[(:\[]")
_CONSTANT = re.compile(r"([A-Z_][A-Z0-9_]+)\s*(?::[^=]+)?=(?!=)")
_ALIAS = re.compile(
    r"(?:type\s+([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*="
    r"|([A-Za-z_]\w*)\s*:\s*(?:typing\.)?TypeAlias\s*=)"
)
_TOKEN = re.compile(r"\"\"\"|'''|[\"'#()\[\]{}]")


class _Scanner:
    """Tracks open triple-quoted strings and bracket depth across lines."""

    def __init__(self) -> None:
        self.in_triple: str | None = None
        self.brackets = 0

    def feed(self, line: str) -> None:
        pos = 0
        while True:
            if self.in_triple is not None:
                end = line.find(self.in_triple, pos)
                if end < 0:
                    return
                pos = end + 3
                self.in_triple = None
                continue
            match = _TOKEN.search(line, pos)
            if match is None:
                return
            token = match.group()
            pos = match.end()
            if token == "#":
                return
            if token in ('"""', "'''"):
                self.in_triple = token
            elif token in ('"', "'"):
                pos = _skip_string(line, pos, token)
            elif token in "([{":
                self.brackets += 1
            else:
                self.brackets = max(0, self.brackets - 1)


def _skip_string(line: str, pos: int, quote: str) -> int:
    while True:
        end = line.find(quote, pos)
        if end < 0:
            return len(line)
        backslashes = 0
        while end - backslashes - 1 >= pos and line[end - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return end + 1
        pos = end + 1


def extract(lines: list[str]) -> list[Symbol]:
    """Symbols of a Python source given as lines."""
    symbols: list[Symbol] = []
    stack: list[tuple[int, Symbol]] = []  # (indent, open class or def)
    scanner = _Scanner()
    for number, raw in enumerate(lines, start=1):
        starts_in_code = scanner.in_triple is None and scanner.brackets == 0
        scanner.feed(raw)
        if not starts_in_code:
            continue
        stripped = raw.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(raw.expandtabs(8)) - len(stripped.expandtabs(8))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else None
        depth = len(stack)
        parent_name = parent.qualified if parent else None
        if match := _DEF.match(stripped):
            kind = "method" if parent is not None and parent.kind == "class" else "function"
            symbol = Symbol(
                match.group(1), kind, number, depth, parent_name, signature_of(stripped)
            )
            symbols.append(symbol)
            stack.append((indent, symbol))
        elif match := _CLASS.match(stripped):
            symbol = Symbol(
                match.group(1), "class", number, depth, parent_name, signature_of(stripped)
            )
            symbols.append(symbol)
            stack.append((indent, symbol))
        elif indent == 0 and (match := _ALIAS.match(stripped)):
            name = match.group(1) or match.group(2)
            symbols.append(Symbol(name, "type", number, 0, None, signature_of(stripped)))
        elif indent == 0 and (match := _CONSTANT.match(stripped)):
            symbols.append(
                Symbol(match.group(1), "constant", number, 0, None, signature_of(stripped))
            )
    return symbols
