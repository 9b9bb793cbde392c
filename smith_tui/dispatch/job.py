"""A validated dispatch job (docs/DESIGN.md §5.7).

:func:`build_job` checks the ``dispatch`` arguments and the parent → target
edge (``check_dispatch``), mints the job id and derives the child's cancel
token from the parent's. The parent role is a validation input only and is
not kept on the job.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from smith_tui.cancel import CancelToken
from smith_tui.engine.roles import UnknownRoleError, child_role_names, resolve_role
from smith_tui.engine.turn_control import TurnControl
from smith_tui.tools.spec import ToolError

CHILD_ROLES = ("worker", "explorer")
"""The built-in child roles (sub-agents from agent files come on top: ``child_role_names``)."""
TRANSCRIPT_KEYS = ("transcript", "messages", "history", "conversation")
CONTEXT_FIELDS = ("user_request_summary", "role_instructions")


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
    control: TurnControl = field(default_factory=TurnControl, compare=False, repr=False)
    """Pause / step / resume of the child's turn (below the parent turn's control)."""
    model: str | None = None
    transcript: str | None = None
    """A raw transcript excerpt, only when the parent flagged ``allow_raw_transcript``."""
    worktree: bool | None = None
    """Run in a worktree of its own (``None``: as ``services.dispatch.worktree`` says)."""


def new_job_id() -> str:
    """Mint a job id (url-safe, never contains ``:``)."""
    return "job-" + secrets.token_hex(5)


def _bad(message: str, code: str = "invalid_arguments") -> ToolError:
    return ToolError(message, code=code)


def _target_role(args: dict[str, Any], parent_role: str, check: Callable[[str, str], bool]) -> str:
    allowed = [role for role in child_role_names() if check(parent_role, role)]
    if not allowed:
        raise _bad(
            f"the {parent_role} role cannot dispatch sub-agents; do the work yourself "
            "and finish with report",
            "dispatch_denied",
        )
    raw = args.get("target_role")
    if not isinstance(raw, str) or not raw.strip():
        raise _bad(f"`target_role` is required: one of {', '.join(allowed)}")
    try:
        target = resolve_role(raw.strip()).name
    except UnknownRoleError:
        raise _bad(f"unknown `target_role` {raw!r}; use one of {', '.join(allowed)}") from None
    if not check(parent_role, target):
        raise _bad(
            f"the {parent_role} role may not dispatch to {target}; use one of "
            f"{', '.join(allowed)} (worker changes code, explorer reads and researches)",
            "dispatch_denied",
        )
    return target


def _flag(value: Any, name: str) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise _bad(f"`{name}` must be true or false, got {value!r:.60}")


def _looks_like_messages(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(m, dict) and "role" in m and "content" in m for m in value)
    )


def render_transcript(value: Any) -> str:
    """Render a raw transcript (messages or text) as plain text for a child prompt."""
    if isinstance(value, str):
        return value.strip()
    if _looks_like_messages(value):
        lines = []
        for message in value:
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            lines.append(f"{message.get('role')}: {text}")
        return "\n".join(lines)
    return json.dumps(value, ensure_ascii=False, indent=1)


def _context(args: dict[str, Any]) -> tuple[str, str, str | None]:
    """Return (user_request_summary, role_instructions, transcript) from ``args``."""
    context = args.get("context")
    if not isinstance(context, dict):
        raise _bad(
            "`context` must be an object with user_request_summary (the user's request in a "
            "sentence or two) and role_instructions (constraints for the child)"
            + ("" if context is None else f"; got {type(context).__name__}")
        )
    raw = {key: context[key] for key in TRANSCRIPT_KEYS if context.get(key)}
    raw.update({key: args[key] for key in TRANSCRIPT_KEYS if args.get(key)})
    raw.update({key: v for key, v in context.items() if _looks_like_messages(v)})
    allow_raw = _flag(args.get("allow_raw_transcript"), "allow_raw_transcript")
    if raw and not allow_raw:
        raise _bad(
            f"a raw transcript was passed ({', '.join(sorted(raw))}); the child runs in its own "
            "context, so summarise what it needs in context.user_request_summary and "
            "context.role_instructions, or set allow_raw_transcript: true to send it anyway"
        )
    values = []
    for name in CONTEXT_FIELDS:
        value = context.get(name)
        if value is not None and not isinstance(value, str):
            raise _bad(f"`context.{name}` must be a string, got {type(value).__name__}")
        values.append((value or "").strip())
    if not values[0]:
        raise _bad(
            "`context.user_request_summary` must say, in a sentence or two, what the user asked "
            "for (the child cannot see this conversation)"
        )
    transcript = "\n\n".join(render_transcript(v) for v in raw.values()) if raw else None
    return values[0], values[1], transcript or None


def _files(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(f, str) for f in items):
        raise _bad("`files` must be a list of path strings")
    return tuple(sorted({f.strip() for f in items if f.strip()}))


def build_job(
    args: dict[str, Any],
    *,
    parent_role: str,
    parent_turn_id: str,
    parent_cancel: CancelToken,
    check_dispatch: Callable[[str, str], bool],
    parent_control: TurnControl | None = None,
) -> DispatchJob:
    """Validate the dispatch arguments and build a job; raise ToolError saying what is wrong."""
    target = _target_role(args, parent_role, check_dispatch)
    task = args.get("task")
    if not isinstance(task, str) or not task.strip():
        raise _bad("`task` must be a non-empty string saying what the child should do")
    summary, instructions, transcript = _context(args)
    files = _files(args.get("files"))
    model = args.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise _bad("`model` must be a non-empty model id when given")
    return DispatchJob(
        job_id=new_job_id(),
        parent_turn_id=parent_turn_id,
        target_role=target,
        task=task.strip(),
        user_request_summary=summary,
        role_instructions=instructions,
        files=files,
        cancel=parent_cancel.child(),
        control=parent_control.child() if parent_control is not None else TurnControl(),
        model=model.strip() if model else None,
        transcript=transcript,
        worktree=None if args.get("worktree") is None else _flag(args["worktree"], "worktree"),
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
    if job.transcript:
        parts.append(f"# Conversation excerpt (from the parent)\n{job.transcript}")
    parts.append("When you are done (or blocked), call the `report` tool exactly once.")
    return "\n\n".join(parts)
