"""The tool loop of one turn (docs/DESIGN.md §5.5): :class:`TurnLoop`.

:meth:`TurnLoop.run` records the prompt; then, while no guard stops it
(:mod:`smith_tui.engine.turn.guards`), it sends the transcript
(:class:`~smith_tui.engine.turn.model_requests.ModelRequests`), records the reply, runs its calls
(:class:`~smith_tui.engine.turn.calls.CallRunner`) and records their results; it ends
with a :class:`~smith_tui.engine.turn.stop.Stop`. The assistant message is handed to the
recorder before its tools start and the results as soon as they are in, so a crash loses
at most the model reply in flight, and a call whose tool was running is on record (repair
answers it on resume). Before each request and before a reply's tools start, a paused
turn holds (:meth:`TurnLoop._hold`, :mod:`smith_tui.engine.turn_control`).

Turns are started by :class:`smith_tui.engine.turn.driver.TurnDriver`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from smith_tui.engine import events as ev
from smith_tui.engine.errors import AgentFailure, normalize
from smith_tui.engine.messages import TranscriptMessage
from smith_tui.engine.spend_limits import call_cost
from smith_tui.engine.turn.calls import CallRunner
from smith_tui.engine.turn.frame import Turn, TurnServices
from smith_tui.engine.turn.guards import Cancellation, Guards, RepeatGuard, SpendLimit, StepBudget
from smith_tui.engine.turn.model_requests import ModelRequests
from smith_tui.engine.turn.replies import (
    assistant_message,
    handoff_text,
    tool_message,
    unique_call_ids,
)
from smith_tui.engine.turn.settings import CHILD_REPEAT_LIMIT, TOP_REPEAT_LIMIT, TurnSettings
from smith_tui.engine.turn.stop import Stop, TurnResult
from smith_tui.engine.turn_control import Gate
from smith_tui.engine.window import CHARS_PER_TOKEN
from smith_tui.llm import ChatResponse, ToolCall
from smith_tui.tools.builtin.memory import save_scratchpad
from smith_tui.tools.spec import ToolResult

__all__ = [
    "CHILD_REPEAT_LIMIT",
    "TOOL_OUTPUT_KEY",
    "TOP_REPEAT_LIMIT",
    "TurnLoop",
    "TurnResult",
    "TurnSettings",
]

log = logging.getLogger(__name__)

#: Scratchpad key prefix of a tool output too big for the window (``tool-output/<call_id>``).
TOOL_OUTPUT_KEY = "tool-output/"


class TurnLoop:
    """The tool loop of one turn: request, record the reply, run its calls, record them.

    One instance runs one turn (:meth:`run`, again when a ``Stop`` hook keeps it going:
    its guards keep counting); the transcript it grows starts as a copy of
    ``turn.history``.
    """

    def __init__(
        self,
        turn: Turn,
        services: TurnServices,
        user_message: TranscriptMessage | None,
        handoff: ChatResponse | None = None,
    ) -> None:
        self.turn = turn
        self.services = services
        self.handoff = handoff
        """A reply made by the runtime, not the model (``@name``: a dispatch to that
        sub-agent): its calls run as the first round, and the turn ends after them."""
        self.transcript: list[TranscriptMessage] = list(turn.history)
        self.user_message = user_message
        self.usage: dict[str, int] = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        tools = [
            spec
            for spec in services.registry.llm_specs(turn.role_name)
            if turn.tools is None or spec["function"]["name"] in turn.tools
        ]
        self.requests = ModelRequests(turn, services, tools)
        settings = turn.settings
        self.guards = Guards(
            Cancellation(turn.cancel),
            SpendLimit(services.spend),
            StepBudget(settings.step_budget, child=not turn.top_level),
            RepeatGuard(settings.repeat_limit),
        )
        self.calls = CallRunner(turn, services, self.guards)
        self.round_no = 0
        self.last_text = ""

    async def run(self) -> TurnResult:
        """Run rounds until completion, cancellation, error or budget exhaustion."""
        self._record_prompt()
        while True:
            await self._hold("request")
            stop = self.guards.before_request()
            if stop is not None:
                return self._end(stop)
            self.round_no += 1
            handoff, self.handoff = self.handoff, None
            try:
                response = handoff if handoff is not None else await self._request()
            except (AgentFailure, asyncio.CancelledError) as exc:
                return self._request_failed(exc, "".join(self.requests.shown))
            calls = self._record_reply(response)
            if not calls:
                return self._end(Stop.completed(), response.content or "")
            await self._hold("tools")  # a cancel while held: the runner runs none of them
            done = await self.calls.run(calls)
            results = done.in_order()
            self._record_results(calls, results)
            if done.stop is not None:
                return self._end(done.stop)
            if handoff is not None:
                return self._end(Stop.completed(), handoff_text(results))

    # -- the steps ------------------------------------------------------------------------
    def _record_prompt(self) -> None:
        """Put the message that opens this run on record (the prompt, a hook's reply)."""
        if self.user_message is not None:
            self._add([self.user_message])
            self.services.recorder.user_message(self.turn, self.user_message)

    async def _hold(self, at: Gate) -> None:
        """Hold here while the turn is paused (:mod:`smith_tui.engine.turn_control`),
        reporting the hold and how it went on."""
        control = self.turn.control
        if control is None:
            return

        def held() -> None:
            self._emit(ev.TurnPaused, turn_id=self.turn.turn_id, at=at, rounds=self.round_no)

        how = await control.gate(at, self.turn.cancel, held)
        if how is not None:
            self._emit(ev.TurnResumed, turn_id=self.turn.turn_id, how=how)

    async def _request(self) -> ChatResponse:
        """Ask the model for its next reply."""
        self._emit(ev.StatusChanged, status="thinking")
        return await self.requests.send(self.transcript)

    def _request_failed(self, exc: BaseException, shown: str) -> TurnResult:
        """Keep what the failed request showed, and end the turn (re-raise a task cancel)."""
        error = normalize(exc)
        if shown.strip():
            message: TranscriptMessage = {
                "role": "assistant",
                "content": shown,
                "metadata": {"partial": True, "stop": error.code},
            }
            self._add([message])
            self.services.recorder.round(self.turn, self.round_no, [message], None)
        text = shown or self.last_text
        if isinstance(exc, asyncio.CancelledError):
            self._end(Stop("cancelled", error), text)
            raise exc
        return self._end(Stop.failed(error), text)

    def _record_reply(self, response: ChatResponse) -> list[ToolCall]:
        """Count the reply's usage and put the assistant message on record; return its calls.

        The message goes on record before any of its tools starts: if the process dies
        while a tool runs, the stored call is an orphan that repair answers on resume (it
        may have had effects) instead of a call that never happened.
        """
        turn, services = self.turn, self.services
        calls = unique_call_ids(response.tool_calls, self.transcript)
        counts = services.usage.add(turn.role_name, response.usage, job_id=turn.job_id)
        for key, value in counts.items():
            self.usage[key] += value
        cost = call_cost(response.usage, turn.pricing)
        services.usage.add_cost(turn.role_name, cost)
        self._emit(
            ev.UsageUpdated,
            turn_id=turn.turn_id,
            model=turn.model,
            delta=counts,
            totals=services.usage.totals(),
            context_tokens=counts["input_tokens"] + counts["output_tokens"],
            context_window=turn.context_window,
            cost=cost,
        )
        if services.spend is not None:
            services.spend.add(counts["total_tokens"], cost, job_id=turn.job_id)
        assistant = assistant_message(response)
        self._emit(
            ev.AssistantMessage,
            turn_id=turn.turn_id,
            content=response.content or "",
            reasoning=response.reasoning or "",
            tool_calls=[call.to_wire() for call in calls],
        )
        self.last_text = response.content or self.last_text
        self._add([assistant])
        recorded: dict[str, float] = dict(counts)
        if cost is not None:
            recorded["cost"] = cost
        services.recorder.round(turn, self.round_no, [assistant], recorded)
        return calls

    def _record_results(self, calls: list[ToolCall], results: Sequence[ToolResult]) -> None:
        """Append and record the round's tool results (one per call, in call order)."""
        messages = [tool_message(call, res) for call, res in zip(calls, results, strict=True)]
        self._keep_oversized(messages)
        self._add(messages)
        self.services.recorder.round(self.turn, self.round_no, messages, None)

    def _keep_oversized(self, messages: list[TranscriptMessage]) -> None:
        """Save outputs of a round too big for the window under ``tool-output/<call_id>``.

        When the round's results take more than half of what the window leaves for the
        history, the window will cut them in the request; each big one (over
        ``tool_output_elide_over_chars``) without a recall key is saved whole in the
        scratchpad first, so the cut marker can name the key that gives it back.
        """
        store = self.services.store
        if store is None:
            return
        window = self.turn.settings.window
        budget = self.requests.budget
        room = budget.context_window * window.trim_threshold_pct / 100 - budget.overhead
        sizes = [len(m.get("content") or "") for m in messages]
        if sum(sizes) <= max(0.0, room) * CHARS_PER_TOKEN / 2:
            return
        for message, size in zip(messages, sizes, strict=True):
            if size <= window.tool_output_elide_over_chars or message.get("recall_key"):
                continue
            key = TOOL_OUTPUT_KEY + str(message.get("tool_call_id"))
            try:
                save_scratchpad(store, self.turn.conversation_id, key, message.get("content") or "")
            except Exception:
                log.exception("saving the whole output of %s failed", key)
                continue
            message["recall_key"] = key

    def _end(self, stop: Stop, text: str | None = None) -> TurnResult:
        """End the turn with ``stop``: show its status and return the result (``text``:
        what the turn says, else the last reply's text)."""
        self._emit(ev.StatusChanged, status=stop.status)
        return TurnResult(
            stop.reason,
            self.last_text if text is None else text,
            stop.error,
            terminal=stop.terminal,
            rounds=self.round_no,
            usage=dict(self.usage),
            loop_detected=stop.loop_detected,
        )

    # -- helpers --------------------------------------------------------------------------
    def _add(self, messages: list[TranscriptMessage]) -> None:
        self.transcript.extend(messages)

    def _emit(self, kind: type[ev.Event], **fields: Any) -> None:
        """Emit an event of ``kind`` as this turn's role (and job)."""
        self.services.emit(kind(role=self.turn.role_name, job_id=self.turn.job_id, **fields))
