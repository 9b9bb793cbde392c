"""What a finished hook said, read by Claude Code's contract (README, Hooks).

* exit 0: the turn goes on; a JSON object on stdout may decide (below), other stdout is
  added context for ``UserPromptSubmit``, ``SessionStart`` and ``SubagentStart``;
* exit 2: blocks what the event can block, with stderr as the reason;
* any other exit, a timeout, a hook that cannot start: a notice; the turn goes on.

JSON keys read: ``continue: false`` (+ ``stopReason``) stops the turn;
``decision: "block"`` + ``reason`` blocks; ``hookSpecificOutput.permissionDecision``
(``allow``/``deny``/``ask``) + ``permissionDecisionReason`` for ``PreToolUse`` (the older
top-level ``decision: "approve"``/``"block"`` too); ``hookSpecificOutput.decision.behavior``
(``allow``/``deny``) + ``message`` for ``PermissionRequest``;
``hookSpecificOutput.additionalContext`` for context; ``systemMessage`` as a notice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from smith_tui.engine.hooks.hook_runner import HookProcess

Decision = Literal["allow", "deny", "ask"]
Outcome = Literal[
    "ok", "blocked", "allowed", "denied", "ask", "stopped", "notice", "timeout", "cancelled"
]

BLOCKING_EVENTS = frozenset(
    {
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "Stop",
        "SubagentStop",
        "PreCompact",
    }
)
"""The events exit 2 (or ``decision: "block"``) blocks; for the others it is a notice."""

CONTEXT_EVENTS = frozenset({"UserPromptSubmit", "SessionStart", "SubagentStart"})
"""The events whose plain stdout (exit 0) is added context."""

_MAX_SHOWN = 4000
"""Most characters of a reason or context taken from one hook (the rest is cut)."""


@dataclass(frozen=True)
class HookVerdict:
    """One hook's answer."""

    outcome: Outcome
    reason: str = ""
    """Why it blocked, denied, asked or stopped (for the model, or the user)."""
    context: str = ""
    """Text added to what the model reads."""
    decision: Decision | None = None
    stop: bool = False
    """``continue: false``: the turn ends."""
    notice: str = ""
    """What the user should see (a failing hook, a ``systemMessage``)."""

    @property
    def blocks(self) -> bool:
        """Whether it blocks what its event can block (a deny included)."""
        return self.outcome in ("blocked", "denied") or self.decision == "deny"


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + " […]"


def _json_object(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _text(value: Any) -> str:
    return _cut(value) if isinstance(value, str) else ""


def read_verdict(event: str, run: HookProcess, command: str) -> HookVerdict:
    """The verdict of ``run`` (a hook of ``event``)."""
    if run.cancelled:
        return HookVerdict("cancelled", notice=f"hook {command!r} was cancelled with the turn")
    if run.timed_out:
        return HookVerdict("timeout", notice=f"hook {command!r} was stopped: it ran too long")
    if run.exit_code is None:
        return HookVerdict("notice", notice=f"hook {command!r} could not start: {run.start_error}")
    if run.exit_code == 2:
        reason = _cut(run.stderr) or f"hook {command!r} exited 2 without saying why"
        if event in BLOCKING_EVENTS:
            outcome: Outcome = (
                "denied" if event in ("PreToolUse", "PermissionRequest") else "blocked"
            )
            return HookVerdict(
                outcome, reason=reason, decision="deny" if outcome == "denied" else None
            )
        return HookVerdict("notice", notice=reason)
    if run.exit_code != 0:
        detail = _cut(run.stderr) or "no message"
        return HookVerdict("notice", notice=f"hook {command!r} exited {run.exit_code}: {detail}")
    data = _json_object(run.stdout)
    if data is None:
        context = _cut(run.stdout) if event in CONTEXT_EVENTS else ""
        return HookVerdict("ok", context=context)
    return _from_json(event, data)


def _from_json(event: str, data: dict[str, Any]) -> HookVerdict:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    context = _text(specific.get("additionalContext"))
    notice = _text(data.get("systemMessage"))
    if data.get("continue") is False:
        reason = _text(data.get("stopReason")) or "a hook stopped the turn"
        return HookVerdict("stopped", reason=reason, stop=True, context=context, notice=notice)
    decision: Decision | None = None
    reason = ""
    if event == "PreToolUse":
        raw = specific.get("permissionDecision")
        reason = _text(specific.get("permissionDecisionReason"))
        if raw is None:  # the older top-level form
            raw = {"approve": "allow", "block": "deny"}.get(str(data.get("decision")))
            reason = reason or _text(data.get("reason"))
        decisions: dict[Any, Decision] = {"allow": "allow", "deny": "deny", "ask": "ask"}
        decision = decisions.get(raw)
    elif event == "PermissionRequest":
        chosen = specific.get("decision")
        behavior = chosen.get("behavior") if isinstance(chosen, dict) else None
        if isinstance(chosen, dict) and behavior in ("allow", "deny"):
            decision = "allow" if behavior == "allow" else "deny"
            reason = _text(chosen.get("message"))
    elif data.get("decision") == "block" and event in BLOCKING_EVENTS:
        return HookVerdict(
            "blocked",
            reason=_text(data.get("reason")) or "a hook blocked it",
            context=context,
            notice=notice,
        )
    outcomes: dict[Decision | None, Outcome] = {
        "allow": "allowed",
        "deny": "denied",
        "ask": "ask",
        None: "ok",
    }
    if decision == "deny" and not reason:
        reason = "a hook denied it"
    return HookVerdict(
        outcomes[decision], reason=reason, context=context, decision=decision, notice=notice
    )
