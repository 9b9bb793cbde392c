"""Fuzzy file-name scoring: the query's characters must appear in order (a subsequence).

Matched characters earn more when they follow the previous match directly,
somewhat more when they start a word (after ``/ _ - .`` or a lower→upper case
change); skipped characters cost a little. A query found inside the file's base name scores far above one that
only matches across folders, and an exact base name beats everything.
"""

from __future__ import annotations

import re

_BOUNDARY = frozenset("/_-. ")
_BASENAME_BONUS = 100.0
_EXACT_BONUS = 1000.0
_STEM_BONUS = 500.0


def prefilter(query: str) -> re.Pattern[str]:
    """A regex matching (case-insensitively) exactly the paths that contain every term."""
    lookaheads = "".join(
        "(?=.*?" + ".*?".join(re.escape(ch) for ch in term) + ")" for term in query.split()
    )
    return re.compile(lookaheads, re.IGNORECASE | re.DOTALL)


def _subsequence_score(query: str, text: str) -> float | None:
    """Best-effort score of ``query`` as a subsequence of ``text`` (both as given)."""
    lower = text.lower()
    first = lower.find(query[0])
    if first < 0:
        return None
    best: float | None = None
    # Try a few starting points: greedy matching from the earliest one can miss
    # a better run that starts later (e.g. "cli" in "client/cli.py").
    start = first
    for _ in range(8):
        score = _greedy(query, text, lower, start)
        if score is None:
            break
        if best is None or score > best:
            best = score
        start = lower.find(query[0], start + 1)
        if start < 0:
            break
    return best


def _greedy(query: str, text: str, lower: str, start: int) -> float | None:
    score = 0.0
    previous = -2
    position = start
    for ch in query:
        index = lower.find(ch, position)
        if index < 0:
            return None
        score += 1.0
        if index == previous + 1:
            score += 8.0
        elif index == 0 or text[index - 1] in _BOUNDARY:
            score += 6.0
        elif text[index].isupper() and text[index - 1].islower():
            score += 5.0
        if previous >= 0:
            score -= 0.1 * (index - previous - 1)
        previous = index
        position = index + 1
    return score - 0.02 * start


def score_path(query: str, path: str) -> float | None:
    """Score ``path`` for ``query`` (whitespace separates terms that must all match).

    Returns ``None`` if some term is not a subsequence of the path.
    """
    basename = path.rsplit("/", 1)[-1]
    stem = basename.split(".", 1)[0].lower()
    total = 0.0
    for term in query.lower().split():
        in_name = None if "/" in term else _subsequence_score(term, basename)
        if in_name is not None:
            total += in_name + _BASENAME_BONUS
            if term == basename.lower():
                total += _EXACT_BONUS
            elif term == stem:
                total += _STEM_BONUS
            elif basename.lower().startswith(term):
                total += 50.0
            continue
        in_path = _subsequence_score(term, path)
        if in_path is None:
            return None
        total += in_path
    return total - 0.05 * len(path)
