"""The words of the notices a turn shows (retries, warnings, compactions, how it ended, the
output of the slash commands typed around it).

One place for them, so the live transcript and one rebuilt from the store (a restart,
``--continue``, an edit saved in inspect) say the same thing: the live side formats
engine events, the rebuilt side the turn's stored record (``stop_reason``, ``error`` and
the ``notices`` list the engine keeps, see ``engine.active_conversation``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: ``(text, style)`` of one notice line.
NoticeLine = tuple[str, str]


def retry_notice(attempt: int, delay_s: float, reason: str) -> NoticeLine:
    """The line of a request that is tried again."""
    return f"Retrying in {delay_s:.1f}s (attempt {attempt}): {reason}", "warning"


def budget_notice(message: str) -> NoticeLine:
    """The line of a budget nearly used up."""
    return f"Budget: {message}", "warning"


def compaction_notice(
    reason: str, summarised: int, kept: int, tokens_before: int, tokens_after: int
) -> NoticeLine:
    """The line marking where the context was compacted during a turn and what it kept."""
    why = {"auto": "the context window filled up", "overflow": "the server refused a long request"}
    return (
        f"Context compacted ({why.get(reason, reason)}): {summarised} older "
        f"messages summarised, the newest {kept} kept as they are "
        f"(about {tokens_before} → {tokens_after} tokens). "
        "The pager still shows the whole history."
    ), "info"


def command_notice(text: str, ok: bool) -> NoticeLine:
    """The line of a slash command's output."""
    return text, "info" if ok else "error"


def turn_end_notice(stop_reason: str | None, error: Mapping[str, Any] | None) -> NoticeLine | None:
    """The line after a turn that did not complete (``None`` when it did)."""
    if stop_reason == "error":
        message = (error or {}).get("message") or "the turn failed"
        return f"Error: {message}", "error"
    if stop_reason == "cancelled":
        return "Turn cancelled.", "warning"
    if stop_reason == "budget_exhausted":
        return "Stopped: the step budget for this turn is used up.", "warning"
    return None


def stored_notice(data: Mapping[str, Any]) -> NoticeLine | None:
    """The line of a notice kept in a turn record (``None`` for one this version cannot read)."""
    kind = data.get("kind")
    if kind == "retry":
        attempt, delay, reason = data.get("attempt"), data.get("delay_s"), data.get("reason")
        if isinstance(attempt, int) and isinstance(delay, int | float) and isinstance(reason, str):
            return retry_notice(attempt, float(delay), reason)
    elif kind == "budget" and isinstance(data.get("message"), str):
        return budget_notice(data["message"])
    elif kind == "scope" and isinstance(data.get("message"), str):
        return data["message"], "warning"
    elif kind == "compacted":
        keys = ("summarised", "kept", "tokens_before", "tokens_after")
        numbers = [n for n in (data.get(key) for key in keys) if isinstance(n, int)]
        if isinstance(data.get("reason"), str) and len(numbers) == len(keys):
            return compaction_notice(str(data["reason"]), *numbers)
    elif kind == "command" and isinstance(data.get("text"), str):
        return command_notice(data["text"], data.get("ok") is not False)
    return None
