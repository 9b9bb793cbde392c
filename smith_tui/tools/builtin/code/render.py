"""Fitting ranked result blocks into a character budget."""

from __future__ import annotations

from collections.abc import Sequence

from smith_tui.tools.output_budget import budget_text

MAX_LINE_CHARS = 240
"""Source lines longer than this are shortened in results (minified files, data)."""


def plural(count: int, noun: str) -> str:
    """``"1 file"``, ``"2 files"``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def clip_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """Return one source line without its newline, shortened to ``limit`` characters."""
    text = text.rstrip("\r\n")
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def fit_blocks(
    header: str,
    blocks: Sequence[str],
    max_chars: int,
    *,
    unit: str,
    hint: str = "narrow the request to see them",
) -> tuple[str, int]:
    """Join ``header`` and as many whole ``blocks`` as fit in ``max_chars``.

    Blocks are kept in order (best first); the rest are dropped whole and a
    closing note says how many ``unit`` were left out. Returns the text and the
    number of blocks shown. A first block too large on its own is cut in the
    middle with :func:`budget_text`.
    """
    parts = [header]
    used = len(header) + 1
    shown = 0
    reserve = 160  # room for the closing note
    for block in blocks:
        cost = len(block) + 1
        if used + cost > max_chars - reserve:
            if shown == 0:
                room = max(200, max_chars - used - reserve)
                parts.append(budget_text(block, room))
                shown = 1
            break
        parts.append(block)
        used += cost
        shown += 1
    left = len(blocks) - shown
    if left > 0:
        left_chars = sum(len(b) + 1 for b in blocks[shown:])
        parts.append(
            f"[… {left} more {unit} ({left_chars} characters) left out to fit the "
            f"{max_chars}-character budget; {hint} …]"
        )
    return "\n".join(parts), shown
