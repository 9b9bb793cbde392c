"""The text of a dispatch's tool call in the editor: the sub-agent's step log, then its
report written for people (the raw report JSON is what the model gets, not the user).

The same lines are built live (from engine events) and when a session is loaded again
(from the stored messages), so a reloaded card reads as it did.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from smith_tui.dispatch.report_schema import FIELDS

LIST_TITLES = {
    "changes": "Changes",
    "verification": "Verification",
    "findings": "Findings",
    "evidence": "Evidence",
    "limitations": "Limitations",
}
"""The report's list fields, in the order shown, with their headings."""


def started(role: str, task: str) -> str:
    """The log's first line."""
    return f"{role} started: {task}"


def step(title: str) -> str:
    """A call the sub-agent made (``→ read notes.txt``)."""
    return f"→ {title}"


def step_done(name: str, ok: bool, summary: str) -> str:
    """How one of its calls ended (``report``'s result is the report: shown once, below)."""
    mark = "✓" if ok else "✗"
    return f"  {mark} {name}" if name == "report" else f"  {mark} {name}: {summary}"


def turn_ended(role: str, stop_reason: str) -> str:
    """The sub-agent's turn ended."""
    return f"{role} turn ended: {stop_reason}"


def finished(role: str, status: str, summary: str) -> str:
    """The report's headline: ``explorer ok: The parser lives in src/parse.py.``"""
    return f"{role} {status}: {summary}"


def report_text(result: Mapping[str, Any]) -> str:
    """The report's fields for people: a Markdown list under each heading, the error and
    whether it was cancelled; the status and summary are the headline (:func:`finished`)."""
    parts: list[str] = []
    for name, title in LIST_TITLES.items():
        if name not in FIELDS:
            continue
        items = [str(item) for item in result.get(name) or [] if str(item).strip()]
        if items:
            parts.append(f"{title}:\n" + "\n".join(f"- {item}" for item in items))
    error = str(result.get("error") or "").strip()
    if error:
        parts.append(f"Error: {error}")
    if result.get("cancelled"):
        parts.append("(cancelled)")
    return "\n\n".join(parts)


def card_text(log: list[str], role: str, result: Mapping[str, Any]) -> str:
    """The card's final text: the step log, then the report."""
    status = str(result.get("status") or "?")
    summary = str(result.get("summary") or "").strip()
    lines = [*log, "", finished(role, status, summary)]
    report = report_text(result)
    if report:
        lines += ["", report]
    return "\n".join(lines)
