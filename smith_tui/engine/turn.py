"""The tool loop of one turn (docs/DESIGN.md §5.5): :class:`TurnLoop`.

Each round: build the request (:func:`smith_tui.engine.prompt.build_messages`: context
window, wire form, state snapshot) → call the model with retries
(:meth:`TurnLoop._request`) → record the assistant message
(:meth:`TurnLoop._record_reply`) → execute its tool calls in order, budget, repeat and
cancellation checked before each (:class:`_CallRunner`) → record the results
(:meth:`TurnLoop._record_results`) → stop or go on (:meth:`TurnLoop._decide`). Before a
request the transcript is compacted when it fills the window
(:class:`smith_tui.engine.compaction.Compactor`), and a request the server refuses as too
long is compacted and sent once more (:meth:`TurnLoop._request`). The
assistant message is handed to the recorder before its tools start and the results as
soon as they are in, so a crash loses at most the model reply in flight, and a call
whose tool was running is on record (repair answers it on resume). Before each request and
before a reply's tools start, a paused turn holds (:meth:`TurnLoop._gate`,
:mod:`smith_tui.engine.turn_control`).

Turns are started by :class:`smith_tui.engine.driver.TurnDriver`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol, cast

from pydantic import BaseModel, ConfigDict, Field

from smith_tui.cancel import CancelToken
from smith_tui.config import DEFAULT_TOOL_STEP_BUDGET, SmithConfig
from smith_tui.config.service_options import DispatchOptions
from smith_tui.engine import events as ev
from smith_tui.engine.compaction import (
    AUTO_MIN_SHARE,
    CompactionContext,
    CompactionError,
    Compactor,
)
from smith_tui.engine.errors import AgentError, AgentFailure, normalize
from smith_tui.engine.hooks.hook_set import Asker
from smith_tui.engine.hooks.tool_calls import after_call, gate_call
from smith_tui.engine.messages import TranscriptMessage
from smith_tui.engine.prompt import RequestBudget, build_messages
from smith_tui.engine.retry import Attempt, RetryPolicy, call_with_retries
from smith_tui.engine.spend_limits import SpendMeter, call_cost
from smith_tui.engine.turn_control import Gate, TurnControl
from smith_tui.engine.usage_ledger import UsageTracker
from smith_tui.engine.window import CHARS_PER_TOKEN, WindowSettings
from smith_tui.llm import (
    CONTEXT_OVERFLOW,
    ChatRequest,
    ChatResponse,
    StreamHandlers,
    ToolCall,
    WireMessage,
    WireToolCall,
    build_tool_result_message,
)
from smith_tui.llm.nesting import load_json
from smith_tui.tools.builtin.memory import save_scratchpad
from smith_tui.tools.executor import execute_tool_call
from smith_tui.tools.registry import ToolRegistry
from smith_tui.tools.spec import ToolContext, ToolResult

log = logging.getLogger(__name__)

#: Scratchpad key prefix of a tool output too big for the window (``tool-output/<call_id>``).
TOOL_OUTPUT_KEY = "tool-output/"

#: Stop a dispatched child turn when the same call (name and arguments) comes this many times
#: in a row (docs/DESIGN.md §5.7).
CHILD_REPEAT_LIMIT = 3
#: Stop a top-level turn when the same call (name and arguments) comes this many times in a row.
TOP_REPEAT_LIMIT = 5


class TurnRecorder(Protocol):
    """Where a turn persists what happens (implemented over the store)."""

    def user_message(self, setup: TurnSetup, message: TranscriptMessage) -> None:
        """Persist the user message that opened the turn."""

    def round(
        self,
        setup: TurnSetup,
        round_no: int,
        messages: list[TranscriptMessage],
        usage: Mapping[str, float] | None,
    ) -> None:
        """Persist one part of a round in one transaction.

        A round with tool calls arrives in two parts: the assistant message (with the
        round's ``usage``: token counts, and ``cost`` in dollars when known) before any tool
        starts, then its tool results (``usage`` None)
        once they all finished. A round without tool calls arrives whole. A recorder may
        set each message's stored ``position`` on the dicts (compaction anchors on it).
        """

    def request_snapshot(
        self, setup: TurnSetup, model: str, system_prompt: str, tools: list[dict[str, Any]]
    ) -> None:
        """Keep the debug snapshot of one outgoing request."""


class TurnSettings(BaseModel):
    """The settings a turn reads, taken once from the validated config when it begins.

    Frozen and typed; every default is the schema's (``TurnSettings()`` has no step
    budget and no repeat guard, for a loop run on its own).
    """

    model_config = ConfigDict(frozen=True)

    window: WindowSettings = Field(default_factory=WindowSettings)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    step_budget: int | None = None
    repeat_limit: int | None = None
    """Stop when the same tool call (name and arguments) repeats this many times in a row."""
    max_parallel: int = Field(default_factory=lambda: DispatchOptions().max_parallel)
    """How many calls of one parallel batch run at once (``services.dispatch.max_parallel``)."""

    @classmethod
    def from_config(cls, config: SmithConfig, *, child: bool = False) -> TurnSettings:
        """The settings of a top-level turn, or of a dispatched child's (``child``)."""
        dispatch = config.services.dispatch
        if child:
            budget = dispatch.child_step_budget
        else:
            budget = config.tool_step_budget or DEFAULT_TOOL_STEP_BUDGET
        return cls(
            window=WindowSettings.from_config(config),
            retry=RetryPolicy.from_config(config),
            step_budget=budget,
            repeat_limit=CHILD_REPEAT_LIMIT if child else TOP_REPEAT_LIMIT,
            max_parallel=dispatch.max_parallel,
        )


@dataclass
class TurnSetup:
    """Everything fixed for the duration of one turn."""

    turn_id: str
    conversation_id: str
    role: str
    model: str
    system_prompt: str
    config: Mapping[str, Any]
    """The effective config snapshot, as tools see it (the loop reads ``settings``)."""
    cancel: CancelToken
    cwd: Path
    settings: TurnSettings = field(default_factory=TurnSettings)
    context_window: int = 128_000
    max_output_tokens: int | None = None
    job_id: str | None = None
    usage_scope: tuple[str, str] | None = None
    """``(conversation_id, turn_id)`` usage is recorded under (the parent's, for a child turn)."""
    project_id: str | None = None
    project_root: Path | None = None
    services: Mapping[str, Any] = field(default_factory=dict)
    pricing: Mapping[str, float] | None = None
    """The model's catalog prices (dollars per token), used when the provider reports no cost."""
    spend: SpendMeter | None = None
    """The top-level turn's spend against the ``budget`` limits (its children share it)."""
    tools: frozenset[str] | None = None
    """The only tools offered (``None``: all the role may use); a call to another is refused."""
    control: TurnControl | None = None
    """Pause / step / resume of this turn (``None``: it never holds)."""


class ChatStreamer(Protocol):
    """The model client the loop streams from (an ``LLMClient``, or a test double)."""

    async def chat_stream(self, request: ChatRequest, handlers: StreamHandlers, /) -> ChatResponse:
        """Stream one completion, calling ``handlers`` as its pieces arrive."""
        ...


@dataclass
class TurnDeps:
    """The collaborators of the loop."""

    llm: ChatStreamer
    registry: ToolRegistry
    emit: Callable[[ev.Event], None]
    recorder: TurnRecorder
    usage: UsageTracker = field(default_factory=UsageTracker)
    now: Callable[[], datetime] = lambda: datetime.now().astimezone()


@dataclass
class TurnResult:
    """How a turn ended."""

    stop_reason: ev.StopReason
    text: str = ""
    error: AgentError | None = None
    terminal: ToolResult | None = None
    rounds: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    loop_detected: str | None = None


def _handoff_text(results: Sequence[ToolResult]) -> str:
    """The text a hand-off turn ends with: the sub-agent's summary (or the error)."""
    first = results[0] if results else None
    if first is None:
        return ""
    dispatch = first.metadata.get("dispatch") if first.metadata else None
    if isinstance(dispatch, dict) and dispatch.get("summary"):
        return str(dispatch["summary"])
    return first.error or first.content


def _summary(result: ToolResult) -> str:
    first = (result.error or result.content or "").strip().splitlines()
    line = first[0] if first else ""
    return line[:120]


class _StreamForwarder:
    """Turns the client's stream callbacks into engine events for one attempt."""

    def __init__(self, setup: TurnSetup, emit: Callable[[ev.Event], None], attempt: Attempt):
        self.setup = setup
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
                ev.StatusChanged(status="streaming", role=self.setup.role, job_id=self.setup.job_id)
            )

    def on_text(self, delta: str) -> None:
        if not delta:
            return
        self._mark()
        self.text.append(delta)
        self.emit(
            ev.TextDelta(
                turn_id=self.setup.turn_id,
                text=delta,
                role=self.setup.role,
                job_id=self.setup.job_id,
            )
        )

    def on_reasoning(self, delta: str) -> None:
        if not delta:
            return
        self._mark()
        self.emit(
            ev.ReasoningDelta(
                turn_id=self.setup.turn_id,
                text=delta,
                role=self.setup.role,
                job_id=self.setup.job_id,
            )
        )

    def on_tool_delta(self, delta: Any) -> None:
        self._mark()


def _is_empty(response: ChatResponse) -> bool:
    return not (response.content or "").strip() and not response.tool_calls


class TurnLoop:
    """The tool loop of one turn: request, record the round, execute its calls, decide.

    One instance runs one turn (:meth:`run`); the transcript it grows starts as a
    copy of ``history``.
    """

    def __init__(
        self,
        setup: TurnSetup,
        deps: TurnDeps,
        history: Sequence[TranscriptMessage],
        user_message: TranscriptMessage | None,
        handoff: ChatResponse | None = None,
    ) -> None:
        self.setup = setup
        self.handoff = handoff
        """A reply made by the runtime, not the model (``@name``: a dispatch to that
        sub-agent): its calls run as the first round, and the turn ends after them."""
        self.deps = deps
        self.transcript: list[TranscriptMessage] = list(history)
        self.user_message = user_message
        self.usage: dict[str, int] = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        self.tools = [
            spec
            for spec in deps.registry.llm_specs(setup.role)
            if setup.tools is None or spec["function"]["name"] in setup.tools
        ]
        self.budget = RequestBudget.of(
            setup.system_prompt,
            self.tools,
            setup.context_window,
            setup.max_output_tokens,
            setup.settings.window,
        )
        self.compactor = Compactor(
            CompactionContext(
                conversation_id=setup.conversation_id,
                llm=deps.llm,
                model=setup.model,
                budget=self.budget,
                window=setup.settings.window,
                emit=deps.emit,
                store=setup.services.get("store"),
                project_id=setup.project_id,
                role=setup.role,
                job_id=setup.job_id,
                turn_id=setup.turn_id,
                cancel=setup.cancel,
                retry=setup.settings.retry,
                max_output_tokens=setup.max_output_tokens,
                hooks=setup.services.get("hooks"),
            )
        )
        self.calls = _CallRunner(setup, deps)
        self.round_no = 0
        self.last_text = ""
        self.shown: list[str] = []
        """The text the current model call has streamed so far (kept if the call fails)."""

    async def run(self) -> TurnResult:
        """Run rounds until completion, cancellation, error or budget exhaustion."""
        if self.user_message is not None:
            self._add([self.user_message])
            self.deps.recorder.user_message(self.setup, self.user_message)
        while True:
            await self._gate("request")
            if self.setup.cancel.is_cancelled():
                return self._end("cancelled", self.last_text, normalize("cancelled"))
            spent = self.setup.spend.exhausted() if self.setup.spend is not None else None
            if spent is not None:
                error = AgentError("budget_exhausted", "budget_exhausted", spent)
                return self._end("budget_exhausted", self.last_text, error)
            self.round_no += 1
            handoff, self.handoff = self.handoff, None
            if handoff is not None:
                response = handoff
            else:
                self._emit(ev.StatusChanged, status="thinking")
                try:
                    response = await self._request()
                except (AgentFailure, asyncio.CancelledError) as exc:
                    return self._request_failed(exc, "".join(self.shown))
            calls = self._record_reply(response)
            if not calls:
                return self._end("completed", response.content or "")
            await self._gate("tools")  # a cancel while held: the runner runs none of them
            outcome = await self.calls.run(calls)
            self._record_results(calls, outcome)
            result = self._decide(outcome)
            if result is not None:
                return result
            if handoff is not None:
                return self._end("completed", _handoff_text(outcome.results))

    async def _gate(self, at: Gate) -> None:
        """Hold here while the turn is paused (:mod:`smith_tui.engine.turn_control`),
        reporting the hold and how it went on."""
        control = self.setup.control
        if control is None:
            return

        def held() -> None:
            self._emit(ev.TurnPaused, turn_id=self.setup.turn_id, at=at, rounds=self.round_no)

        how = await control.gate(at, self.setup.cancel, held)
        if how is not None:
            self._emit(ev.TurnResumed, turn_id=self.setup.turn_id, how=how)

    # -- one round ------------------------------------------------------------------------
    async def _request(self) -> ChatResponse:
        """Send the transcript; return the first usable reply.

        The transcript is compacted first when it passes ``compact_threshold_pct``. A
        request the server refuses as too long (``context_overflow``) is compacted and
        sent once more; when it still does not fit, the turn stops with what to do.
        """
        if not self.compactor.auto_failed and self.compactor.over_threshold(self.transcript):
            try:
                await self.compactor.compact(
                    self.transcript,
                    reason="auto",
                    min_older_tokens=int(self.setup.context_window * AUTO_MIN_SHARE),
                )
            except CompactionError as exc:
                self.compactor.auto_failed = True  # the window's drop step does the rest
                log.warning("automatic compaction skipped: %s", exc)
        try:
            return await self._send()
        except AgentFailure as exc:
            if exc.error.code != CONTEXT_OVERFLOW:
                raise
            first = exc.error
        try:
            await self.compactor.compact(self.transcript, reason="overflow")
        except CompactionError as exc:
            raise AgentFailure(self._overflow_error(first, str(exc))) from None
        try:
            return await self._send()
        except AgentFailure as exc:
            if exc.error.code != CONTEXT_OVERFLOW:
                raise
            raise AgentFailure(self._overflow_error(exc.error, None)) from None

    def _overflow_error(self, error: AgentError, why_not: str | None) -> AgentError:
        """The error that ends a turn whose request does not fit, saying what to do."""
        setup = self.setup
        tried = (
            f"compacting the conversation was not possible ({why_not})"
            if why_not
            else "it still did not fit after compacting the conversation"
        )
        message = (
            f"the request is too long for {setup.model} (context window "
            f"{setup.context_window} tokens): {tried}. Start a new conversation (/new), "
            "choose a model with a larger window (/model ID), or ask for something that "
            "reads less at once (a smaller file, a narrower command)."
        )
        return AgentError(
            error.kind, CONTEXT_OVERFLOW, message, origin=error.origin, data=error.data
        )

    async def _send(self) -> ChatResponse:
        """Send the (compacted) transcript, inside both retry layers."""
        setup = self.setup
        self.shown = []
        messages = build_messages(
            setup.system_prompt,
            self.compactor.view(self.transcript),
            self.deps.now(),
            context_window=setup.context_window,
            window=setup.settings.window,
            budget=self.budget,
        )
        self.deps.recorder.request_snapshot(setup, setup.model, setup.system_prompt, self.tools)
        return await call_with_retries(
            functools.partial(self._attempt, messages),
            _is_empty,
            setup.settings.retry,
            setup.cancel,
            self._on_retry,
            self._on_reset,
        )

    async def _attempt(self, messages: list[WireMessage], attempt: Attempt) -> ChatResponse:
        """One model call; its stream becomes events, its text so far is ``self.shown``."""
        setup = self.setup
        self._emit(
            ev.LLMRequestStarted, turn_id=setup.turn_id, model=setup.model, attempt=attempt.number
        )
        forwarder = _StreamForwarder(setup, self.deps.emit, attempt)
        self.shown = forwarder.text
        request = ChatRequest(
            model=setup.model,
            messages=messages,
            tools=self.tools or None,
            stream=True,
            max_new_tokens=setup.max_output_tokens or None,
            cancel=setup.cancel,
        )
        return await self.deps.llm.chat_stream(request, forwarder.handlers())

    def _on_retry(self, layer: str, attempt: int, delay: float, reason: str) -> None:
        self._emit(
            ev.RetryScheduled,
            turn_id=self.setup.turn_id,
            attempt=attempt,
            delay_s=delay,
            reason=reason,
            layer=layer,
        )

    def _on_reset(self, reason: str) -> None:
        self._emit(ev.StreamReset, turn_id=self.setup.turn_id, reason=reason)

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
            self.deps.recorder.round(self.setup, self.round_no, [message], None)
        text = shown or self.last_text
        if isinstance(exc, asyncio.CancelledError):
            self._end("cancelled", text, error)
            raise exc
        if error.kind == "cancelled":
            return self._end("cancelled", text, error)
        return self._end("error", text, error)

    def _record_reply(self, response: ChatResponse) -> list[ToolCall]:
        """Count the reply's usage and put the assistant message on record; return its calls.

        The message goes on record before any of its tools starts: if the process dies
        while a tool runs, the stored call is an orphan that repair answers on resume (it
        may have had effects) instead of a call that never happened.
        """
        setup, deps = self.setup, self.deps
        calls = _unique_call_ids(response.tool_calls, self.transcript)
        counts = deps.usage.add(setup.role, response.usage, job_id=setup.job_id)
        for key, value in counts.items():
            self.usage[key] += value
        cost = call_cost(response.usage, setup.pricing)
        deps.usage.add_cost(setup.role, cost)
        self._emit(
            ev.UsageUpdated,
            turn_id=setup.turn_id,
            model=setup.model,
            delta=counts,
            totals=deps.usage.totals(),
            context_tokens=counts["input_tokens"] + counts["output_tokens"],
            context_window=setup.context_window,
            cost=cost,
        )
        if setup.spend is not None:
            setup.spend.add(counts["total_tokens"], cost, job_id=setup.job_id)
        assistant = assistant_message(response)
        self._emit(
            ev.AssistantMessage,
            turn_id=setup.turn_id,
            content=response.content or "",
            reasoning=response.reasoning or "",
            tool_calls=[call.to_wire() for call in calls],
        )
        self.last_text = response.content or self.last_text
        self._add([assistant])
        recorded: dict[str, float] = dict(counts)
        if cost is not None:
            recorded["cost"] = cost
        deps.recorder.round(setup, self.round_no, [assistant], recorded)
        return calls

    def _record_results(self, calls: list[ToolCall], outcome: _RoundOutcome) -> None:
        """Append and record the round's tool results (one per call, in call order)."""
        messages = [
            tool_message(call, res) for call, res in zip(calls, outcome.results, strict=True)
        ]
        self._keep_oversized(messages)
        self._add(messages)
        self.deps.recorder.round(self.setup, self.round_no, messages, None)

    def _decide(self, outcome: _RoundOutcome) -> TurnResult | None:
        """End the turn after a round of calls, or ``None`` to go on."""
        if outcome.stop == "cancelled":
            return self._end("cancelled", self.last_text, normalize("cancelled"))
        if outcome.terminal is not None:
            return self._end("completed", self.last_text, terminal=outcome.terminal)
        if outcome.stop == "budget_exhausted":
            budget = self.setup.settings.step_budget
            if self.setup.job_id is None:
                how = "raise it with /config set tool_step_budget N"
            else:
                how = "raise services.dispatch.child_step_budget in the config file"
            return self._end(
                "budget_exhausted",
                self.last_text,
                AgentError(
                    "budget_exhausted",
                    "budget_exhausted",
                    f"the tool step budget ({budget}) is used up; {how}",
                ),
            )
        if outcome.stop == "loop":
            return self._end(
                "error",
                self.last_text,
                AgentError("policy", "repeated_tool_call", outcome.loop_message or "repeated call"),
                loop_detected=outcome.loop_message,
            )
        return None

    def _keep_oversized(self, messages: list[TranscriptMessage]) -> None:
        """Save outputs of a round too big for the window under ``tool-output/<call_id>``.

        When the round's results take more than half of what the window leaves for the
        history, the window will cut them in the request; each big one (over
        ``tool_output_elide_over_chars``) without a recall key is saved whole in the
        scratchpad first, so the cut marker can name the key that gives it back.
        """
        store = self.setup.services.get("store")
        if store is None:
            return
        window = self.setup.settings.window
        room = self.budget.context_window * window.trim_threshold_pct / 100 - self.budget.overhead
        sizes = [len(m.get("content") or "") for m in messages]
        if sum(sizes) <= max(0.0, room) * CHARS_PER_TOKEN / 2:
            return
        for message, size in zip(messages, sizes, strict=True):
            if size <= window.tool_output_elide_over_chars or message.get("recall_key"):
                continue
            key = TOOL_OUTPUT_KEY + str(message.get("tool_call_id"))
            try:
                save_scratchpad(
                    store, self.setup.conversation_id, key, message.get("content") or ""
                )
            except Exception:
                log.exception("saving the whole output of %s failed", key)
                continue
            message["recall_key"] = key

    # -- helpers --------------------------------------------------------------------------
    def _add(self, messages: list[TranscriptMessage]) -> None:
        self.transcript.extend(messages)

    def _emit(self, kind: type[ev.Event], **fields: Any) -> None:
        """Emit an event of ``kind`` as this turn's role (and job)."""
        self.deps.emit(kind(role=self.setup.role, job_id=self.setup.job_id, **fields))

    def _end(
        self,
        stop: ev.StopReason,
        text: str = "",
        error: AgentError | None = None,
        *,
        terminal: ToolResult | None = None,
        loop_detected: str | None = None,
    ) -> TurnResult:
        status: ev.Status = "idle" if stop == "completed" else "error"
        if stop == "cancelled":
            status = "cancelled"
        self._emit(ev.StatusChanged, status=status)
        return TurnResult(
            stop,
            text,
            error,
            terminal=terminal,
            rounds=self.round_no,
            usage=dict(self.usage),
            loop_detected=loop_detected,
        )


def assistant_message(response: ChatResponse) -> TranscriptMessage:
    """The assistant message of ``response`` as the transcript keeps it.

    The wire part comes from the client (:meth:`ChatResponse.to_wire_message`, without
    reasoning); the content stays a string even when the model only called tools, the
    reasoning text and details are kept locally (never sent back, see
    :mod:`smith_tui.engine.prompt`), and broken tool-call arguments are replaced (see
    :func:`_transcript_calls`).
    """
    # A new dict of the client's; the local keys are added below.
    message = cast(TranscriptMessage, response.to_wire_message(include_reasoning=False))
    message["content"] = response.content or ""
    metadata: dict[str, Any] = {}
    if message.get("tool_calls"):
        message["tool_calls"], broken = _transcript_calls(message["tool_calls"])
        if broken:
            metadata["raw_arguments"] = broken
    if response.reasoning:
        message["reasoning"] = response.reasoning
    if response.reasoning_details:
        metadata["reasoning_details"] = response.reasoning_details
    if metadata:
        message["metadata"] = metadata
    return message


def tool_message(call: ToolCall, result: ToolResult) -> TranscriptMessage:
    """The tool message that answers ``call`` with ``result``, as the transcript keeps it
    (the client's result message, with the tool's name and our metadata)."""
    message = cast(TranscriptMessage, build_tool_result_message(call.id, result.content))
    message["name"] = result.name
    message["metadata"] = {
        "ok": result.ok,
        "duration_s": round(result.duration_s, 3),
        "mutation_state": result.mutation_state,
        **({"cancelled": True} if result.cancelled else {}),
    }
    exit_code = result.metadata.get("exit_code")
    if isinstance(exit_code, int) and not isinstance(exit_code, bool):
        message["metadata"]["exit_code"] = exit_code  # a reloaded row still shows ✗ exit 1
    recall_key = result.metadata.get("recall_key")
    if recall_key:
        message["recall_key"] = recall_key
    return message


def _unique_call_ids(
    calls: list[ToolCall], transcript: Sequence[Mapping[str, Any]]
) -> list[ToolCall]:
    """Rename a call whose id an earlier message already used (some servers start their ids
    from zero in every reply): a transcript that repeats an id is refused by every request
    after it."""
    if not calls:
        return calls
    used = {
        call.get("id")
        for message in transcript
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or ()
    }
    for call in calls:
        base = call.id
        suffix = 0
        while call.id in used:
            suffix += 1
            call.id = f"{base}_{suffix}"
        used.add(call.id)
    return calls


def _transcript_calls(
    calls: list[WireToolCall],
) -> tuple[list[WireToolCall], dict[str, str]]:
    """The calls as the transcript keeps them, and the raw arguments of the broken ones.

    Arguments that are not a JSON object (cut-off or malformed JSON from the model, or
    nested too deeply to decode safely: :func:`~smith_tui.llm.nesting.load_json`) are
    kept as ``"{}"``: strict providers refuse a request whose history holds them. The tool
    still ran with the raw text and answered with the parse error, and the raw text stays
    in the message metadata.
    """
    kept: list[WireToolCall] = []
    broken: dict[str, str] = {}
    for call in calls:
        arguments = call["function"]["arguments"]
        try:
            valid = isinstance(load_json(arguments or "{}"), dict)
        except (TypeError, ValueError):
            valid = False
        if valid:
            kept.append(call)
            continue
        broken[call["id"]] = arguments
        kept.append({**call, "function": {**call["function"], "arguments": "{}"}})
    return kept, broken


def _repeat_key(call: ToolCall) -> str:
    """Identify a call by name and arguments (JSON arguments compared by value)."""
    arguments = call.arguments
    try:
        arguments = json.dumps(load_json(arguments), sort_keys=True)
    except (TypeError, ValueError):
        pass
    return json.dumps([call.name, arguments])


_Halt = Literal["cancelled", "budget_exhausted", "loop", "terminal"]
"""Why a round stopped running its calls."""


@dataclass
class _RoundOutcome:
    results: list[ToolResult]
    stop: _Halt | None
    terminal: ToolResult | None
    loop_message: str | None


_NOT_RUN: dict[_Halt, tuple[str, str]] = {
    "cancelled": ("the turn was cancelled before this call ran", "cancelled"),
    "budget_exhausted": (
        "the tool step budget is used up; this call did not run",
        "budget_exhausted",
    ),
    "loop": ("not run: the turn was stopped for repeating a call", "repeated_call"),
    "terminal": ("not run: the turn already ended with a terminal tool", "skipped"),
}
"""Why a call after the round stopped did not run: (reason, error code)."""


def _not_run(call: ToolCall, reason: str, code: str) -> ToolResult:
    """The result of a call that did not run."""
    return ToolResult(
        call_id=call.id,
        name=call.name,
        ok=False,
        content=f"error: {reason}",
        error=reason,
        cancelled=code == "cancelled",
        metadata={"error_code": code},
    )


class _CallRunner:
    """Executes the tool calls of a turn's rounds, keeping the step budget and repeat guard.

    Calls run in order; a run of consecutive parallel calls forms one batch that runs
    concurrently (at most ``max_parallel`` at once). Every call passes the same checks
    (cancel, budget, repeat) before it starts.
    """

    def __init__(self, setup: TurnSetup, deps: TurnDeps) -> None:
        self.setup = setup
        self.deps = deps
        self.steps_left = setup.settings.step_budget
        self.repeat_key: str | None = None
        self.repeat_count = 0
        self.denied: dict[str, int] = {}
        """Times each call (name and arguments) was refused by the permission gate in this
        turn: a denied call asked again counts toward the repeat guard even when other
        calls came between."""
        self.repeat_denied = False
        self.semaphore = asyncio.Semaphore(setup.settings.max_parallel)

    async def run(self, calls: list[ToolCall]) -> _RoundOutcome:
        """Execute one round's calls; every call gets a result, run or not."""
        results: list[ToolResult | None] = [None] * len(calls)
        stop: _Halt | None = None
        terminal: ToolResult | None = None
        loop_message: str | None = None
        steps_used = 0
        index = 0
        while index < len(calls):
            if stop is not None:
                if results[index] is None:
                    results[index] = _not_run(calls[index], *_NOT_RUN[stop])
                index += 1
                continue
            batch: list[int] = []
            while index + len(batch) < len(calls):
                candidate = index + len(batch)
                if batch and not (
                    self._parallel(calls[batch[0]]) and self._parallel(calls[candidate])
                ):
                    break
                why = self._admit(calls[candidate], steps_used + len(batch))
                if why == "loop":
                    loop_message = self._loop_message(calls[candidate])
                    results[candidate] = _not_run(calls[candidate], loop_message, "repeated_call")
                if why is not None:
                    stop = why
                    break
                batch.append(candidate)
            if not batch:
                continue
            batch_results = await self._run_batch([calls[i] for i in batch])
            for i, res in zip(batch, batch_results, strict=True):
                results[i] = res
            steps_used += len(batch)
            index = batch[-1] + 1
            spec = self.deps.registry.get(calls[batch[0]].name)
            res = batch_results[0]
            if (
                len(batch) == 1
                and spec is not None
                and spec.is_terminal
                and res.ok
                and stop is None
            ):
                terminal = res
                stop = "terminal"
            if self.setup.cancel.is_cancelled() and stop is None:
                stop = "cancelled"
        if self.steps_left is not None:
            self.steps_left -= steps_used
        return _RoundOutcome(
            results=[r for r in results if r is not None],
            stop=None if stop == "terminal" else stop,
            terminal=terminal,
            loop_message=loop_message,
        )

    def _parallel(self, call: ToolCall) -> bool:
        spec = self.deps.registry.get(call.name)
        return spec is not None and spec.parallel

    def _admit(self, call: ToolCall, planned: int) -> _Halt | None:
        """Check one call before it runs; return why it may not run, or None."""
        if self.setup.cancel.is_cancelled():
            return "cancelled"
        if self.steps_left is not None and planned >= self.steps_left:
            return "budget_exhausted"
        key = _repeat_key(call)
        if key == self.repeat_key:
            self.repeat_count += 1
        else:
            self.repeat_key, self.repeat_count = key, 1
        limit = self.setup.settings.repeat_limit
        denied = self.denied.get(key, 0)
        self.repeat_denied = denied + 1 > self.repeat_count
        if limit and max(self.repeat_count, denied + 1) >= limit:
            return "loop"
        return None

    def _loop_message(self, call: ToolCall) -> str:
        if self.repeat_denied:
            return (
                f"stopped: {call.name} was asked for again with the same arguments after "
                f"{self.denied.get(_repeat_key(call), 0)} denials in this turn"
            )
        return (
            f"stopped: {call.name} was called {self.repeat_count} times "
            "in a row with the same arguments"
        )

    async def _run_batch(self, batch: list[ToolCall]) -> list[ToolResult]:
        if len(batch) == 1:
            return [await self._run_one(batch[0])]
        return list(await asyncio.gather(*(self._run_one(call) for call in batch)))

    async def _run_one(self, call: ToolCall) -> ToolResult:
        setup, emit = self.setup, self.deps.emit
        if setup.tools is not None and call.name not in setup.tools:
            reason = f"{call.name} is not offered in this turn (the command's allowed-tools)"
            return _not_run(call, reason, "tool_not_offered")
        role, job = setup.role, setup.job_id
        emit(
            ev.ToolCallStarted(
                turn_id=setup.turn_id,
                call_id=call.id,
                name=call.name,
                arguments=call.arguments,
                role=role,
                job_id=job,
            )
        )
        emit(ev.StatusChanged(status="tool", detail=call.name, role=role, job_id=job))
        hooks = setup.services.get("hooks")
        asker = Asker(role, job, setup.turn_id, call.id, setup.cancel)
        gate = await gate_call(hooks, call.name, call.arguments, asker) if hooks else None

        def on_output(text: str) -> None:
            emit(
                ev.ToolOutputDelta(
                    turn_id=setup.turn_id, call_id=call.id, text=text, role=role, job_id=job
                )
            )

        ctx = ToolContext(
            role=role,
            turn_id=setup.turn_id,
            cwd=setup.cwd,
            cancel=setup.cancel.child(),
            config=setup.config,
            conversation_id=setup.conversation_id,
            project_id=setup.project_id,
            project_root=setup.project_root,
            services={
                **setup.services,
                "call_id": call.id,
                "job_id": job,
                "hook_permission": gate.permission if gate else None,
            },
            on_output=on_output,
        )
        async with self.semaphore:
            started = time.monotonic()
            if gate is not None and gate.refusal is not None:
                res = _not_run(call, gate.refusal, "hook_denied")
            else:
                res = await execute_tool_call(
                    self.deps.registry, call.id, call.name, call.arguments, ctx
                )
                if gate is not None and hooks is not None:
                    res = await after_call(hooks, gate, res, asker)
        if res.metadata.get("error_code") == "permission_denied":
            key = _repeat_key(call)
            self.denied[key] = self.denied.get(key, 0) + 1
        emit(
            ev.ToolCallFinished(
                turn_id=setup.turn_id,
                call_id=call.id,
                name=call.name,
                ok=res.ok,
                duration_s=res.duration_s or time.monotonic() - started,
                summary=_summary(res),
                content=res.content,
                error=res.error,
                cancelled=res.cancelled,
                metadata=res.metadata,
                role=role,
                job_id=job,
            )
        )
        return res
