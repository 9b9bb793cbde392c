"""JSON from the model, decoded without following hostile nesting.

Python's JSON decoder recurses once per level of nesting: ``[`` repeated 100,000
times raises ``RecursionError`` (not the ``ValueError`` callers catch), and so do
the walkers that would later visit such a value. :func:`load_json` refuses a text
nested deeper than :data:`MAX_JSON_DEPTH` *before* decoding it, with
:class:`NestingTooDeep` — a ``ValueError``, so every ``except ValueError`` that
handles broken JSON handles this too. The check is one pass of C-speed scans:
string literals are removed, then only the brackets left are counted.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_JSON_DEPTH = 64
"""The deepest nesting (objects and arrays, counted together) accepted in a tool
call's arguments or in a JSON text a tool argument carries. Real arguments stay
under ten levels; the decoder and the walkers after it are safe far beyond 64."""

# A string literal, or an unterminated one (to the end of the text, a lone backslash
# included): every quote that starts a match consumes all it scanned, so the scan is
# linear whatever the text (a pattern that can fail after a long scan is quadratic).
_STRING = re.compile(r'"[^"\\]*+(?:\\(?:.|\Z)[^"\\]*+)*+(?:"|\Z)', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


class NestingTooDeep(ValueError):
    """A JSON text nests objects and arrays deeper than the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"nested deeper than {limit} levels")
        self.limit = limit


def nesting_depth_over(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``text`` (JSON, valid or not) opens more than ``limit`` levels at once.

    Brackets inside string literals do not count. Text that is cut inside a string
    may count a few of that string's brackets; it is not valid JSON either way.
    """
    if text.count("[") + text.count("{") <= limit:
        return False  # cannot be deeper than the number of openings
    depth = 0
    for match in _BRACKETS.finditer(_STRING.sub("", text)):
        if match.group() in "[{":
            depth += 1
            if depth > limit:
                return True
        elif depth:
            depth -= 1
    return False


def load_json(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)``, refusing nesting deeper than ``limit`` first.

    Raises :class:`NestingTooDeep` or ``json.JSONDecodeError`` (both ``ValueError``).
    """
    if isinstance(text, bytes | bytearray):
        text = text.decode("utf-8", "replace")
    if nesting_depth_over(text, limit):
        raise NestingTooDeep(limit)
    return json.loads(text)
