"""Normalise how a child turn ended into the parent's dispatch result (seed: Result)."""

from __future__ import annotations

from typing import Any

from smith_tui.dispatch.job import DispatchJob
from smith_tui.dispatch.report_schema import ReportError, normalize_report


def dispatch_result(
    job: DispatchJob,
    *,
    stop_reason: str,
    report: dict[str, Any] | None,
    usage: dict[str, int],
    error: str | None = None,
    loop: str | None = None,
) -> dict[str, Any]:
    """Build the normalised result for ``job``; a child without a report is ``blocked``."""
    if report is not None:
        try:
            result = normalize_report(report, job.target_role)
        except ReportError as exc:
            result = {"status": "blocked", "summary": f"the child's report was invalid: {exc}"}
    elif loop:
        result = {"status": "blocked", "summary": f"the {job.target_role} was stopped: {loop}"}
    elif stop_reason == "cancelled":
        result = {
            "status": "blocked",
            "summary": f"the {job.target_role} was cancelled before it reported",
            "cancelled": True,
        }
    else:
        why = f" ({error})" if error else ""
        result = {
            "status": "blocked",
            "summary": (
                f"the {job.target_role} stopped without calling report "
                f"(stop reason: {stop_reason}){why}"
            ),
        }
    if error and "error" not in result and report is None:
        result["error"] = error
    result["job_id"] = job.job_id
    result["role"] = job.target_role
    result["usage"] = dict(usage)
    return result
