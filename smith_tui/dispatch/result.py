"""Normalise how a child turn ended into the parent's dispatch result (docs/DESIGN.md §5.7)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from smith_tui.dispatch.job import DispatchJob
from smith_tui.dispatch.report_schema import ReportError, normalize_report
from smith_tui.engine.events import StopReason

LAST_TEXT_CHARS = 600


ChildStopReason = StopReason | Literal["timeout"]
"""How a child turn ended: as any turn, or ``timeout`` (``child_timeout_s`` passed first)."""


@dataclass
class ChildOutcome:
    """How a child turn ended, as the runner reports it."""

    stop_reason: ChildStopReason
    report: dict[str, Any] | None
    usage: dict[str, int]
    conversation_id: str | None = None
    error: str | None = None
    loop: str | None = None
    """The loop guard's message when the child was stopped for repeating a call."""
    text: str = ""
    """The child's last assistant text (shown to the parent when there is no report)."""
    timed_out: float | None = None
    """The deadline in seconds, when the child was cancelled for running past it."""
    worktree: dict[str, Any] | None = None
    """The child's worktree: branch, base and diff (:func:`~smith_tui.tools.worktrees.describe`)."""


def _clip(text: str, limit: int = LAST_TEXT_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _without_report(job: DispatchJob, outcome: ChildOutcome) -> dict[str, Any]:
    who = job.target_role
    if outcome.timed_out is not None:
        result: dict[str, Any] = {
            "status": "blocked",
            "summary": (
                f"the {who} was cancelled at its deadline of {outcome.timed_out:g} s "
                "(services.dispatch.child_timeout_s) before it reported"
            ),
        }
    elif outcome.loop:
        why = outcome.loop.removeprefix("stopped: ")
        result = {
            "status": "blocked",
            "summary": f"the {who} was stopped for looping before it reported: {why}",
            "error": f"loop: {why}",
        }
    elif outcome.stop_reason == "cancelled":
        result = {
            "status": "blocked",
            "summary": f"the {who} was cancelled before it reported",
            "cancelled": True,
        }
    elif outcome.stop_reason == "budget_exhausted" and "(budget." in (outcome.error or ""):
        # A token or cost limit of the parent's turn (engine/spend_limits.py), not the step budget.
        result = {
            "status": "blocked",
            "summary": f"the {who} stopped before it reported: {outcome.error or 'budget'}",
        }
    elif outcome.stop_reason == "budget_exhausted":
        result = {
            "status": "blocked",
            "summary": f"the {who} used up its tool step budget before calling report",
        }
    elif outcome.stop_reason == "completed":
        result = {
            "status": "blocked",
            "summary": f"the {who} stopped without calling report",
        }
    else:
        result = {
            "status": "blocked",
            "summary": f"the {who} failed before it reported (stop reason: {outcome.stop_reason})",
        }
    if outcome.error and "error" not in result:
        result["error"] = outcome.error
    if outcome.text.strip():
        result["summary"] += f"; its last message: {_clip(outcome.text)}"
    return result


def dispatch_result(job: DispatchJob, outcome: ChildOutcome) -> dict[str, Any]:
    """Build the normalised result for ``job``; a child without a report is ``blocked``."""
    if outcome.report is not None:
        try:
            result = normalize_report(outcome.report, job.target_role)
        except ReportError as exc:
            result = normalize_report(
                {"status": "blocked", "summary": f"the child's report was invalid: {exc}"},
                job.target_role,
            )
    else:
        result = normalize_report(_without_report(job, outcome), job.target_role)
    result["job_id"] = job.job_id
    result["role"] = job.target_role
    result["usage"] = dict(outcome.usage)
    if outcome.worktree is not None:
        result["worktree"] = dict(outcome.worktree)
    return result
