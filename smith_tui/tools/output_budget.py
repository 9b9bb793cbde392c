"""Character budgets for tool output: keep the head and tail, say what was cut."""

from __future__ import annotations


def budget_text(text: str, max_chars: int, *, head_fraction: float = 0.5) -> str:
    """Return ``text`` if it fits ``max_chars``; otherwise its head and tail with a note.

    The note names how many characters (and lines) were left out, so the model
    knows the output is incomplete and can ask for a narrower window.
    """
    if max_chars <= 0 or len(text) <= max_chars:
        return text
    head_len = int(max_chars * head_fraction)
    tail_len = max_chars - head_len
    head = text[:head_len]
    tail = text[len(text) - tail_len :] if tail_len else ""
    cut = text[head_len : len(text) - tail_len]
    note = (
        f"\n[… {len(cut)} of {len(text)} characters ({cut.count(chr(10))} lines) "
        f"cut from the middle …]\n"
    )
    return head + note + tail
