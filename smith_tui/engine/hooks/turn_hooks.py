"""The hooks at a turn's ends (the turn driver calls these).

:func:`opening_context` runs before the first request: ``SessionStart`` (once per
session) and ``UserPromptSubmit`` for a top-level turn, ``SubagentStart`` for a
dispatched one. What they print is added to the user message; a blocked prompt is not
sent (:class:`PromptBlocked`, the reason is for the user). :func:`run_to_stop` runs the
loop and then ``Stop`` (``SubagentStop``): a hook that blocks the stop hands its reason
to the model as a new user message and the loop goes on, at most
:data:`~smith_tui.engine.hooks.hook_set.MAX_STOP_BLOCKS` times.
"""

from __future__ import annotations

from typing import Any

from smith_tui.engine.hooks.hook_set import MAX_STOP_BLOCKS, Asker, Hooks
from smith_tui.engine.messages import TranscriptMessage
from smith_tui.engine.turn.loop import TurnLoop
from smith_tui.engine.turn.stop import TurnResult


class PromptBlocked(Exception):
    """A ``UserPromptSubmit`` hook refused the prompt (exit 2 or ``decision: block``)."""


def _with_context(content: Any, context: str, label: str) -> Any:
    note = f"\n\n[{label}]\n{context}"
    if isinstance(content, str):
        return content + note
    if isinstance(content, list):  # content parts (an image attached)
        return [*content, {"type": "text", "text": note.strip()}]
    return content


async def opening_context(hooks: Hooks, prompt: str, user: TranscriptMessage, asker: Asker) -> None:
    """Run the opening hooks; add their context to ``user`` (raises :class:`PromptBlocked`)."""
    if asker.job_id is None:
        answer = await hooks.prompt_submitted(prompt, asker)
        if answer.blocked or answer.stop:
            raise PromptBlocked(
                f"a UserPromptSubmit hook blocked the prompt (it was not sent): "
                f"{answer.reason or 'no reason given'}"
            )
        label = "hook context"
    else:
        answer = await hooks.subagent_start(prompt, asker)
        label = "SubagentStart hook context"
    if answer.context:
        user["content"] = _with_context(user.get("content"), answer.context, label)


async def run_to_stop(hooks: Hooks | None, loop: TurnLoop, asker: Asker) -> TurnResult:
    """``loop.run()``, kept going while a ``Stop``/``SubagentStop`` hook blocks the end."""
    result = await loop.run()
    if hooks is None:
        return result
    event = "Stop" if asker.job_id is None else "SubagentStop"
    for blocks in range(MAX_STOP_BLOCKS):
        if result.stop_reason != "completed":
            return result
        answer = await hooks.stopping(result.text, blocks > 0, asker)
        # A terminal tool (a sub-agent's report) has ended the turn for good.
        if result.terminal is not None or answer.stop or not answer.blocked:
            return result
        loop.user_message = {
            "role": "user",
            "content": f"[{event} hook] {answer.reason or 'keep going'}",
            "metadata": {"hook": event},
        }
        result = await loop.run()
    return result
