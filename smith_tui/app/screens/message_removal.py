"""What deleting one stored message takes, so the transcript stays valid for the next request.

An assistant message with tool calls goes together with its tool results (a result
without its call is rejected by servers). A tool result alone is refused: its call would
be left without an answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from smith_tui.store import Message


@dataclass(frozen=True)
class RemovalPlan:
    """The message ids to delete and the question to ask, or why it cannot be done."""

    ids: tuple[int, ...] = ()
    question: str = ""
    refusal: str = ""

    @property
    def allowed(self) -> bool:
        """Whether anything may be deleted."""
        return not self.refusal and bool(self.ids)


def _call_ids(message: Message) -> set[str]:
    return {str(call.get("id")) for call in message.tool_calls or [] if call.get("id")}


def plan_removal(messages: Sequence[Message], message_id: int) -> RemovalPlan:
    """Plan deleting the message ``message_id`` of the conversation ``messages``."""
    target = next((m for m in messages if m.id == message_id), None)
    if target is None:
        return RemovalPlan(refusal="That message is gone already; the list was refreshed.")
    if target.role == "tool":
        owner = next(
            (m for m in messages if m.role == "assistant" and target.tool_call_id in _call_ids(m)),
            None,
        )
        if owner is not None:
            return RemovalPlan(
                refusal=(
                    f"Message #{target.position} is the result of a tool call made by assistant "
                    f"message #{owner.position}; a call without its result would make the "
                    "transcript invalid. Delete that assistant message (its results go with "
                    "it) or edit this result instead."
                )
            )
        return RemovalPlan(
            (target.id,), f"Delete tool result #{target.position} (it answers no call)?"
        )
    call_ids = _call_ids(target)
    if target.role == "assistant" and call_ids:
        results = [m for m in messages if m.role == "tool" and m.tool_call_id in call_ids]
        count = len(results)
        noun = "tool result" if count == 1 else "tool results"
        return RemovalPlan(
            (target.id, *(m.id for m in results)),
            f"Delete assistant message #{target.position} with its {len(call_ids)} tool "
            f"call(s) and their {count} {noun}? This cannot be undone.",
        )
    return RemovalPlan(
        (target.id,),
        f"Delete {target.role} message #{target.position}? This cannot be undone.",
    )
