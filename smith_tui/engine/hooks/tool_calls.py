"""``PreToolUse`` and ``PostToolUse`` around one tool call (the turn loop calls these).

:func:`gate_call` runs before the call: a deny (exit 2, ``permissionDecision: deny``)
refuses it with the hook's reason for the model; ``allow`` and ``ask`` are handed to the
permission gate through the call's services (``hook_permission``): allow skips a
question but never a deny rule, ask asks even where the rules allow. ``continue: false``
refuses the call and ends the turn. :func:`after_call` runs after it: a block's reason
and any added context reach the model with the result.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from smith_tui.engine.hooks.hook_set import Asker, Hooks, tool_response
from smith_tui.engine.hooks.verdict import Decision
from smith_tui.tools.executor import decode_arguments
from smith_tui.tools.spec import ToolError, ToolResult


@dataclass(frozen=True)
class ToolGate:
    """What ``PreToolUse`` said about one call."""

    tool_input: Any
    refusal: str | None = None
    """Set when the call must not run: what the model reads."""
    permission: Decision | None = None
    """``allow`` or ``ask`` for the permission gate."""


def _input(arguments: Any) -> Any:
    try:
        return decode_arguments(arguments)
    except ToolError:
        return arguments  # the executor answers the bad arguments; the hook sees them raw


async def gate_call(hooks: Hooks, name: str, arguments: Any, asker: Asker) -> ToolGate:
    """Run ``PreToolUse`` for the call ``name(arguments)``."""
    tool_input = _input(arguments)
    answer = await hooks.before_tool(name, tool_input, asker)
    if answer.stop:
        if asker.cancel is not None:
            asker.cancel.cancel(f"a PreToolUse hook stopped the turn: {answer.reason}")
        return ToolGate(tool_input, refusal=f"a PreToolUse hook stopped the turn: {answer.reason}")
    if answer.blocked:
        why = answer.reason or "no reason given"
        return ToolGate(tool_input, refusal=f"blocked by a PreToolUse hook: {why}")
    permission = answer.decision if answer.decision in ("allow", "ask") else None
    return ToolGate(tool_input, permission=permission)


async def after_call(hooks: Hooks, gate: ToolGate, result: ToolResult, asker: Asker) -> ToolResult:
    """Run ``PostToolUse`` for a call that ran; its reason and context join the result.

    A call the permission gate refused, or one cancelled, did not run: no hook then.
    """
    if result.cancelled or result.metadata.get("error_code") == "permission_denied":
        return result
    response = tool_response(result.content, result.ok, result.error, result.metadata)
    answer = await hooks.after_tool(result.name, gate.tool_input, response, asker)
    notes = []
    if answer.blocked or answer.stop:
        notes.append(f"[PostToolUse hook] {answer.reason or 'a hook flagged this result'}")
    if answer.context:
        notes.append(f"[PostToolUse hook context] {answer.context}")
    if answer.stop and asker.cancel is not None:
        asker.cancel.cancel(f"a PostToolUse hook stopped the turn: {answer.reason}")
    if not notes:
        return result
    return replace(result, content="\n\n".join([result.content, *notes]))
