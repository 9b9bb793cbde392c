"""One model request of a turn: :class:`ModelRequests`.

Build the request (:func:`smith_tui.engine.prompt.build_messages`: context window, wire
form, state snapshot) → call the model with retries (both layers of
:func:`~smith_tui.engine.retry.call_with_retries`) while its stream becomes events. The
transcript is compacted first when it fills the window
(:class:`smith_tui.engine.compaction.Compactor`), and a request the server refuses as too
long is compacted and sent once more.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from smith_tui.engine import events as ev
from smith_tui.engine.compaction import (
    AUTO_MIN_SHARE,
    CompactionContext,
    CompactionError,
    Compactor,
)
from smith_tui.engine.errors import AgentError, AgentFailure
from smith_tui.engine.messages import TranscriptMessage
from smith_tui.engine.prompt import RequestBudget, build_messages
from smith_tui.engine.retry import Attempt, call_with_retries
from smith_tui.engine.turn.frame import Turn, TurnServices
from smith_tui.llm import CONTEXT_OVERFLOW, ChatRequest, ChatResponse, StreamHandlers, WireMessage

log = logging.getLogger(__name__)


class _StreamForwarder:
    """Turns the client's stream callbacks into engine events for one attempt."""

    def __init__(self, turn: Turn, emit: Callable[[ev.Event], None], attempt: Attempt):
        self.turn = turn
        self.emit = emit
        self.attempt = attempt
        self.text: list[str] = []
        self._streaming = False

    def handlers(self) -> StreamHandlers:
        """The handlers to pass to ``chat_stream``."""
        return StreamHandlers(
            on_text=self.on_text, on_reasoning=self.on_reasoning, on_tool_delta=self.on_tool_delta
        )

    def _mark(self) -> None:
        self.attempt.output_shown = True
        if not self._streaming:
            self._streaming = True
            self.emit(
                ev.StatusChanged(
                    status="streaming", role=self.turn.role_name, job_id=self.turn.job_id
                )
            )

    def on_text(self, delta: str) -> None:
        if not delta:
            return
        self._mark()
        self.text.append(delta)
        self.emit(
            ev.TextDelta(
                turn_id=self.turn.turn_id,
                text=delta,
                role=self.turn.role_name,
                job_id=self.turn.job_id,
            )
        )

    def on_reasoning(self, delta: str) -> None:
        if not delta:
            return
        self._mark()
        self.emit(
            ev.ReasoningDelta(
                turn_id=self.turn.turn_id,
                text=delta,
                role=self.turn.role_name,
                job_id=self.turn.job_id,
            )
        )

    def on_tool_delta(self, delta: Any) -> None:
        self._mark()


def _is_empty(response: ChatResponse) -> bool:
    return not (response.content or "").strip() and not response.tool_calls


class ModelRequests:
    """Sends a turn's transcript to its model: compaction, retries and the stream's events.

    ``shown`` is the text the current model call has streamed so far (kept by the loop
    when the call fails).
    """

    def __init__(self, turn: Turn, services: TurnServices, tools: list[dict[str, Any]]) -> None:
        self.turn = turn
        self.services = services
        self.tools = tools
        self.budget = RequestBudget.of(
            turn.system_prompt,
            tools,
            turn.context_window,
            turn.max_output_tokens,
            turn.settings.window,
        )
        self.compactor = Compactor(
            CompactionContext(
                conversation_id=turn.conversation_id,
                llm=services.llm,
                model=turn.model,
                budget=self.budget,
                window=turn.settings.window,
                emit=services.emit,
                store=services.store,
                project_id=turn.scope.project_id,
                role=turn.role_name,
                job_id=turn.job_id,
                turn_id=turn.turn_id,
                cancel=turn.cancel,
                retry=turn.settings.retry,
                max_output_tokens=turn.max_output_tokens,
                hooks=services.hooks,
            )
        )
        self.shown: list[str] = []

    async def send(self, transcript: list[TranscriptMessage]) -> ChatResponse:
        """Send the transcript; return the first usable reply.

        The transcript is compacted first when it passes ``compact_threshold_pct``. A
        request the server refuses as too long (``context_overflow``) is compacted and
        sent once more; when it still does not fit, the turn stops with what to do.
        """
        if not self.compactor.auto_failed and self.compactor.over_threshold(transcript):
            try:
                await self.compactor.compact(
                    transcript,
                    reason="auto",
                    min_older_tokens=int(self.turn.context_window * AUTO_MIN_SHARE),
                )
            except CompactionError as exc:
                self.compactor.auto_failed = True  # the window's drop step does the rest
                log.warning("automatic compaction skipped: %s", exc)
        try:
            return await self._send(transcript)
        except AgentFailure as exc:
            if exc.error.code != CONTEXT_OVERFLOW:
                raise
            first = exc.error
        try:
            await self.compactor.compact(transcript, reason="overflow")
        except CompactionError as exc:
            raise AgentFailure(self._overflow_error(first, str(exc))) from None
        try:
            return await self._send(transcript)
        except AgentFailure as exc:
            if exc.error.code != CONTEXT_OVERFLOW:
                raise
            raise AgentFailure(self._overflow_error(exc.error, None)) from None

    def _overflow_error(self, error: AgentError, why_not: str | None) -> AgentError:
        """The error that ends a turn whose request does not fit, saying what to do."""
        turn = self.turn
        tried = (
            f"compacting the conversation was not possible ({why_not})"
            if why_not
            else "it still did not fit after compacting the conversation"
        )
        message = (
            f"the request is too long for {turn.model} (context window "
            f"{turn.context_window} tokens): {tried}. Start a new conversation (/new), "
            "choose a model with a larger window (/model ID), or ask for something that "
            "reads less at once (a smaller file, a narrower command)."
        )
        return AgentError(
            error.kind, CONTEXT_OVERFLOW, message, origin=error.origin, data=error.data
        )

    async def _send(self, transcript: list[TranscriptMessage]) -> ChatResponse:
        """Send the (compacted) transcript, inside both retry layers."""
        turn = self.turn
        self.shown = []
        messages = build_messages(
            turn.system_prompt,
            self.compactor.view(transcript),
            self.services.now(),
            context_window=turn.context_window,
            window=turn.settings.window,
            budget=self.budget,
        )
        self.services.recorder.request_snapshot(turn, turn.model, turn.system_prompt, self.tools)
        return await call_with_retries(
            functools.partial(self._attempt, messages),
            _is_empty,
            turn.settings.retry,
            turn.cancel,
            self._on_retry,
            self._on_reset,
        )

    async def _attempt(self, messages: list[WireMessage], attempt: Attempt) -> ChatResponse:
        """One model call; its stream becomes events, its text so far is ``self.shown``."""
        turn = self.turn
        self._emit(
            ev.LLMRequestStarted, turn_id=turn.turn_id, model=turn.model, attempt=attempt.number
        )
        forwarder = _StreamForwarder(turn, self.services.emit, attempt)
        self.shown = forwarder.text
        request = ChatRequest(
            model=turn.model,
            messages=messages,
            tools=self.tools or None,
            stream=True,
            max_new_tokens=turn.max_output_tokens or None,
            cancel=turn.cancel,
        )
        return await self.services.llm.chat_stream(request, forwarder.handlers())

    def _on_retry(self, layer: str, attempt: int, delay: float, reason: str) -> None:
        self._emit(
            ev.RetryScheduled,
            turn_id=self.turn.turn_id,
            attempt=attempt,
            delay_s=delay,
            reason=reason,
            layer=layer,
        )

    def _on_reset(self, reason: str) -> None:
        self._emit(ev.StreamReset, turn_id=self.turn.turn_id, reason=reason)

    def _emit(self, kind: type[ev.Event], **fields: Any) -> None:
        self.services.emit(kind(role=self.turn.role_name, job_id=self.turn.job_id, **fields))
