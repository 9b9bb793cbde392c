"""A validated dispatch job (seed: Job)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from smith_tui.cancel import CancelToken
from smith_tui.tools.spec import ToolError

TRANSCRIPT_KEYS = ("transcript", "messages", "history")


@dataclass(frozen=True)
class DispatchJob:
    """One unit of delegated work for a child role."""

    job_id: str
    parent_turn_id: str
    target_role: str
    task: str
    user_request_summary: str
    role_instructions: str
    files: tuple[str, ...] = ()
    cancel: CancelToken = field(default_factory=CancelToken, compare=False, repr=False)
    model: str | None = None


def new_job_id() -> str:
    """Mint a job id (url-safe, never contains ``:``)."""
    return "job-" + secrets.token_hex(5)


def build_job(
    args: dict[str, Any],
    *,
    parent_role: str,
    parent_turn_id: str,
    parent_cancel: CancelToken,
    check_dispatch: Any,
) -> DispatchJob:
    """Validate the dispatch arguments and build a job; raise ToolError saying what is wrong."""
    target = args.get("target_role")
    if not isinstance(target, str) or not target:
        raise ToolError("`target_role` is required: one of worker, explorer")
    if not check_dispatch(parent_role, target):
        raise ToolError(
            f"the {parent_role} role may not dispatch to {target!r}; allowed targets: "
            "worker (changes code), explorer (reads and researches)",
            code="dispatch_denied",
        )
    task = args.get("task")
    if not isinstance(task, str) or not task.strip():
        raise ToolError("`task` must be a non-empty string saying what the child should do")
    context = args.get("context") or {}
    if not isinstance(context, dict):
        raise ToolError(
            "`context` must be an object with user_request_summary and role_instructions"
        )
    raw = [key for key in TRANSCRIPT_KEYS if key in context]
    if raw and not args.get("allow_raw_transcript"):
        raise ToolError(
            f"`context` carries a raw transcript ({', '.join(raw)}); summarise what the child "
            "needs in user_request_summary instead, or set allow_raw_transcript: true"
        )
    files = args.get("files") or []
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ToolError("`files` must be a list of path strings")
    model = args.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ToolError("`model` must be a non-empty model id when given")
    return DispatchJob(
        job_id=new_job_id(),
        parent_turn_id=parent_turn_id,
        target_role=target,
        task=task.strip(),
        user_request_summary=str(context.get("user_request_summary") or "").strip(),
        role_instructions=str(context.get("role_instructions") or "").strip(),
        files=tuple(sorted(set(files))),
        cancel=parent_cancel.child(),
        model=model,
    )


def child_prompt(job: DispatchJob) -> str:
    """Return the user message a child turn starts from."""
    parts = [f"# Task\n{job.task}"]
    if job.user_request_summary:
        parts.append(f"# What the user asked for\n{job.user_request_summary}")
    if job.role_instructions:
        parts.append(f"# Instructions\n{job.role_instructions}")
    if job.files:
        parts.append("# Files to start from\n" + "\n".join(f"- {f}" for f in job.files))
    parts.append("When you are done (or blocked), call the `report` tool exactly once.")
    return "\n\n".join(parts)
