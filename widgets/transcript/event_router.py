"""Map top-level engine events onto the transcript's methods."""

from __future__ import annotations

from typing import Any, Protocol

from smith_tui.engine import events as ev
from smith_tui.engine.attachments import display_text
from smith_tui.engine.checkpoints import NOTICE_COMMAND
from smith_tui.widgets.transcript.turn_notices import (
    budget_notice,
    command_notice,
    compaction_notice,
    retry_notice,
    turn_end_notice,
)


class Transcript(Protocol):
    """The transcript methods events map onto (the transcript module imports this one)."""

    @property
    def streaming(self) -> bool: ...
    def begin_assistant(self, role: str) -> object: ...
    def append_text(self, text: str) -> object: ...
    def append_reasoning(self, text: str) -> object: ...
    def end_assistant(self) -> object: ...
    def reset_stream(self) -> object: ...
    def add_user(self, prompt: str, images: list[dict[str, Any]] | None = None) -> object: ...
    def add_tool_call(self, call_id: str, name: str, arguments: str) -> object: ...
    def tool_output(self, call_id: str, text: str) -> object: ...
    def finish_tool_call(
        self,
        call_id: str,
        ok: bool,
        duration_s: float,
        summary: str,
        content: str,
        metadata: dict[str, Any],
    ) -> object: ...
    def add_notice(self, text: str, style: str = "info") -> object: ...
    def add_turn_changes(self, data: dict[str, Any]) -> object: ...


def route_event(transcript: Transcript, event: Any) -> None:
    """Show one top-level event in ``transcript`` (events it does not show are ignored)."""
    t = transcript
    if isinstance(event, ev.TextDelta):
        if not t.streaming:
            t.begin_assistant(event.role)
        t.append_text(event.text)
    elif isinstance(event, ev.ReasoningDelta):
        if not t.streaming:
            t.begin_assistant(event.role)
        t.append_reasoning(event.text)
    elif isinstance(event, ev.AssistantMessage):
        if not t.streaming and (event.content or event.reasoning):
            # The answer came without deltas (a non-streaming call).
            t.begin_assistant(event.role)
            t.append_reasoning(event.reasoning)
            t.append_text(event.content)
        t.end_assistant()
    elif isinstance(event, ev.StreamReset):
        t.reset_stream()
    elif isinstance(event, ev.TurnStarted):
        t.end_assistant()
        metadata: dict[str, Any] = {"prompt": event.prompt, "attachments": event.attachments}
        images = [a for a in event.attachments if a.get("kind") == "image"]
        t.add_user(display_text(event.prompt, metadata), images)
    elif isinstance(event, ev.ToolCallStarted):
        t.end_assistant()
        t.add_tool_call(event.call_id, event.name, event.arguments)
    elif isinstance(event, ev.ToolOutputDelta):
        t.tool_output(event.call_id, event.text)
    elif isinstance(event, ev.ToolCallFinished):
        metadata = dict(event.metadata)
        if event.cancelled:
            metadata["cancelled"] = True
        content = event.content or (event.error or "")
        t.finish_tool_call(
            event.call_id, event.ok, event.duration_s, event.summary, content, metadata
        )
    elif isinstance(event, ev.RetryScheduled):
        t.add_notice(*retry_notice(event.attempt, event.delay_s, event.reason))
    elif isinstance(event, ev.TurnFinished):
        t.end_assistant()
        _turn_finished(t, event)
    elif isinstance(event, ev.CommandOutput):
        if event.command == NOTICE_COMMAND and event.ok and event.data.get("files"):
            t.add_turn_changes(event.data)  # the turn's mark: files changed, a key for the diff
        elif event.text:
            t.add_notice(*command_notice(event.text, event.ok))
    elif isinstance(event, ev.ContextCompacted) and event.reason != "manual":
        # /compact prints its own output
        t.add_notice(
            *compaction_notice(
                event.reason, event.summarised, event.kept, event.tokens_before, event.tokens_after
            )
        )
    elif isinstance(event, ev.BudgetWarning):
        t.add_notice(*budget_notice(event.message))
    elif isinstance(event, ev.ScopeWarning):
        t.add_notice(event.message, "warning")
    elif isinstance(event, ev.SandboxStatus) and event.notice:
        t.add_notice(event.notice, "error" if event.mode == "on" else "warning")


def _turn_finished(t: Transcript, event: ev.TurnFinished) -> None:
    line = turn_end_notice(event.stop_reason, event.error)
    if line is not None:
        t.add_notice(*line)
